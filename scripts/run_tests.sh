#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
#
# The one test command. README.md and .ci/run call exactly this script.
#
# It installs nox (requirements/nox.txt) into a cached virtualenv and runs the
# matrix of noxfile.py: for each TensorFlow environment of
# requirements/environments.toml a cached virtualenv, the package installed
# from a wheel built once per run, and pytest from outside the source tree;
# then `bazel test //...`. This script only bootstraps nox and translates
# options; the matrix itself is in noxfile.py.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/run_tests.sh [options] [-- PYTEST_ARGS...]

Runs the test suite in every TensorFlow environment of
requirements/environments.toml, then the Bazel targets.

PYTEST_ARGS may name test files or node ids relative to the repository
(e.g. -- tests/version_test.py); then only those run, even in an
environment whose core suite leaves them out.

Options:
  --env NAMES     comma-separated subset of the environments (tf215 ...
                  tf221, tf215_py39, tf221_py313, tf_nightly) and `bazel`;
                  default: all. `python3 scripts/ci_matrix.py` lists them.
                  tf215_py39 and tf221_py313 run in Debian chroots
                  (scripts/chroot_env.sh; needs root).
  --setup-only    create/refresh the virtualenvs and print their paths
  --venv-path ENV print the virtualenv path of ENV (creating it if missing)
  -k EXPR         pass `-k EXPR` to pytest (select tests by name)
  -h, --help      this help

Environment:
  CMP_CACHE_DIR   where virtualenvs and built wheels are cached
                  (default: ~/.cache/contrib_mixed_precision)
  PYTHON          the Python 3.11 that runs nox and makes the virtualenvs
                  (default: python3); the chroots bring their own

Exit status is non-zero if any environment failed.
EOF
}

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CMP_CACHE_DIR="${CMP_CACHE_DIR:-$HOME/.cache/contrib_mixed_precision}"
PYTHON="${PYTHON:-python3}"
PYTEST_ARGS=()
VENV_PATH_OF=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --env) export CMP_ENVS="$2"; shift 2 ;;
    --env=*) export CMP_ENVS="${1#*=}"; shift ;;
    --setup-only) export CMP_SETUP_ONLY=1; shift ;;
    --venv-path) VENV_PATH_OF="$2"; shift 2 ;;
    -k) PYTEST_ARGS+=(-k "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; PYTEST_ARGS+=("$@"); break ;;
    *) echo "run_tests.sh: unknown option '$1'. See --help." >&2; exit 2 ;;
  esac
done

# The top-level `python`, before the first table (an environment's own
# `python` is the Python of its chroot).
want="$(sed -nE '/^\[/q; s/^python = "([0-9.]+)".*/\1/p' \
        "$REPO/requirements/environments.toml")"
have="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$have" != "$want" ]]; then
  echo "run_tests.sh: the matrix is built with Python $want, but" \
       "PYTHON=$PYTHON is Python $have. Set PYTHON to a Python $want." >&2
  exit 2
fi

# nox itself: a virtualenv keyed on its lock file and the interpreter.
key="$( (cat "$REPO/requirements/nox.txt"; "$PYTHON" -c \
          'import sys; print(sys.version)') | sha256sum | cut -c1-12)"
NOX_VENV="$CMP_CACHE_DIR/venvs/nox-$key"
if [[ ! -f "$NOX_VENV/.complete" ]]; then
  echo "[run_tests] installing nox into $NOX_VENV" >&2
  rm -rf "$NOX_VENV"
  "$PYTHON" -m venv "$NOX_VENV"
  # The grep drops the "Location '...' is ignored" noise of a machine-wide
  # find-links setting that points at a missing directory.
  "$NOX_VENV/bin/python" -m pip install -q --no-deps \
    -r "$REPO/requirements/nox.txt" \
    2> >(grep -vE "^(WARNING: )?Location '.*' is ignored" >&2) >&2
  touch "$NOX_VENV/.complete"
fi

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
export CMP_SUMMARY_FILE="$SCRATCH/summary"
: > "$CMP_SUMMARY_FILE"

if [[ -n "$VENV_PATH_OF" ]]; then
  export CMP_ENVS="$VENV_PATH_OF" CMP_SETUP_ONLY=1
  export CMP_VENV_PATH_FILE="$SCRATCH/venv-path"
  if [[ "$VENV_PATH_OF" == *,* ]]; then
    echo "run_tests.sh: --venv-path takes one environment." >&2
    exit 2
  fi
  "$NOX_VENV/bin/python" -m nox -f "$REPO/noxfile.py" >&2
  cat "$CMP_VENV_PATH_FILE"; echo
  exit 0
fi

status=0
"$NOX_VENV/bin/python" -m nox -f "$REPO/noxfile.py" -- "${PYTEST_ARGS[@]}" || status=$?

if [[ -s "$CMP_SUMMARY_FILE" ]]; then
  echo
  if [[ "${CMP_SETUP_ONLY:-0}" == 1 ]]; then
    echo "==== contrib_mixed_precision virtualenvs ===="
  else
    echo "==== contrib_mixed_precision test summary ===="
  fi
  cat "$CMP_SUMMARY_FILE"
fi
exit "$status"
