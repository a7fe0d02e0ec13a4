#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
#
# The one test command. README.md and .ci/run call exactly this script.
#
# It installs nox (requirements/nox.txt) into a cached virtualenv and runs the
# matrix of noxfile.py: for each TensorFlow environment of
# requirements/environments.toml a cached virtualenv, the package installed
# from a wheel built once per run, and pytest from outside the source tree;
# then `bazel test //...`. This script only bootstraps nox, translates
# options, and leaves out (SKIP) the environments this machine cannot run
# (scripts/ci_matrix.py decides); the matrix itself is in noxfile.py.
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
  --quick         the contributor's five-minute check: the core suite on
                  the newest TensorFlow release only (its environment:
                  `python3 scripts/ci_matrix.py quick`); CI runs the rest
  --plan          print what a run would do here (run, SKIP or FAIL each
                  environment, and why) and exit; installs nothing
  --setup-only    create/refresh the virtualenvs and print their paths
  --venv-path ENV print the virtualenv path of ENV (creating it if missing)
  -k EXPR         pass `-k EXPR` to pytest (select tests by name)
  -h, --help      this help

Environment:
  CMP_CACHE_DIR   where virtualenvs and built wheels are cached
                  (default: ~/.cache/contrib_mixed_precision)
  PYTHON          the Python 3.11 that runs nox and makes the virtualenvs
                  (default: python3); the chroots bring their own

An environment whose prerequisites this machine lacks is skipped: the
Debian chroots need root (and debootstrap), `bazel` needs bazel. The summary
names each skipped one, why, and the command that runs it. An environment
named with --env is never skipped, and neither is any under CI=true: a
missing prerequisite then fails it.

Ctrl-C stops the run, prints the summary so far and removes its temporary
files.

uv, not pip, installs the environments' locks; it is given pip's index,
extra indexes, find-links, proxy and certificate (pip config list), so a
machine where pip works needs no uv configuration (see docs/testing.md).

Exit status: 0 when every environment that ran passed (skipped ones do not
count); 1 when one failed; 130 after Ctrl-C; 2 for a usage error.
EOF
}

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CMP_CACHE_DIR="${CMP_CACHE_DIR:-$HOME/.cache/contrib_mixed_precision}"
PYTHON="${PYTHON:-python3}"
PYTEST_ARGS=()
VENV_PATH_OF=""
PLAN_ONLY=0
QUICK=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --env) export CMP_ENVS="$2"; shift 2 ;;
    --env=*) export CMP_ENVS="${1#*=}"; shift ;;
    --quick) QUICK=1; shift ;;
    --plan) PLAN_ONLY=1; shift ;;
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

if [[ "$QUICK" == 1 ]]; then
  if [[ -n "${CMP_ENVS:-}" ]]; then
    echo "run_tests.sh: --quick picks its environment itself; leave out" \
         "--env." >&2
    exit 2
  fi
  CMP_ENVS="$("$PYTHON" "$REPO/scripts/ci_matrix.py" quick)" || exit 2
  export CMP_ENVS CMP_QUICK=1
fi

if [[ -n "$VENV_PATH_OF" ]]; then
  if [[ "$VENV_PATH_OF" == *,* ]]; then
    echo "run_tests.sh: --venv-path takes one environment." >&2
    exit 2
  fi
  export CMP_ENVS="$VENV_PATH_OF" CMP_SETUP_ONLY=1
fi

# What this machine can run: one line per environment, "ACTION<tab>NAME
# <tab>LABEL<tab>REASON<tab>COMMAND", ACTION being run, skip or fail.
plan="$("$PYTHON" "$REPO/scripts/ci_matrix.py" plan \
        ${CMP_ENVS:+--env "$CMP_ENVS"})" || exit 2
RUN=() NOT_RUN=()
status=0
while IFS=$'\t' read -r action name label reason enable; do
  case "$action" in
    run) RUN+=("$name") ;;
    skip) NOT_RUN+=("$label: SKIP ($reason; to run it: $enable)") ;;
    fail) NOT_RUN+=("$label: FAIL ($reason; to run it: $enable)")
          status=1 ;;
  esac
  if [[ "$PLAN_ONLY" == 1 ]]; then
    case "$action" in
      run) echo "$label: run" ;;
      *) echo "${NOT_RUN[-1]}" ;;
    esac
  elif [[ "$action" != run ]]; then
    echo "[run_tests] ${NOT_RUN[-1]}" >&2
  fi
done <<< "$plan"
if [[ "$PLAN_ONLY" == 1 ]]; then
  exit "$status"
fi
if [[ -n "$VENV_PATH_OF" && "$status" != 0 ]]; then
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

# Ctrl-C reaches nox (and pytest) too, as one process group: they stop and
# write their summary lines. The trap only keeps this script alive until
# they have, to print the summary and remove its files.
interrupted=0
trap 'interrupted=1' INT TERM HUP

if [[ -n "$VENV_PATH_OF" ]]; then
  export CMP_VENV_PATH_FILE="$SCRATCH/venv-path"
  "$NOX_VENV/bin/python" -m nox -f "$REPO/noxfile.py" >&2 || exit 1
  cat "$CMP_VENV_PATH_FILE"; echo
  exit 0
fi

if [[ ${#RUN[@]} -gt 0 ]]; then
  rc=0
  CMP_ENVS="$(IFS=,; echo "${RUN[*]}")" \
    "$NOX_VENV/bin/python" -m nox -f "$REPO/noxfile.py" \
    -- "${PYTEST_ARGS[@]}" || rc=$?
  [[ "$rc" == 0 ]] || status=1
fi
if [[ "$interrupted" == 1 ]]; then
  # The environments nox did not reach (its own lines name theirs).
  for name in "${RUN[@]}"; do
    grep -q "^$name " "$CMP_SUMMARY_FILE" || echo "$name: not run" \
      "(interrupted)" >> "$CMP_SUMMARY_FILE"
  done
fi
printf '%s\n' "${NOT_RUN[@]}" >> "$CMP_SUMMARY_FILE"
sed -i '/^$/d' "$CMP_SUMMARY_FILE"

if [[ -s "$CMP_SUMMARY_FILE" ]]; then
  echo
  if [[ "${CMP_SETUP_ONLY:-0}" == 1 ]]; then
    echo "==== contrib_mixed_precision virtualenvs ===="
  else
    echo "==== contrib_mixed_precision test summary ===="
  fi
  cat "$CMP_SUMMARY_FILE"
  if [[ "$interrupted" == 1 ]]; then
    echo "==== interrupted (Ctrl-C) ===="
  fi
fi
if [[ "$interrupted" == 1 ]]; then
  exit 130
fi
exit "$status"
