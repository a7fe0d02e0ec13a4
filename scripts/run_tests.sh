#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
#
# The one test command. README.md and .ci/run call exactly this script.
#
# For each TensorFlow environment of the matrix it makes (or reuses, while the
# pinned requirements file is unchanged) a virtualenv, installs the package
# from a freshly built wheel, and runs the whole pytest suite from outside the
# source tree, so a packaging mistake fails the run. Then it runs
# `bazel test //...` against the TF 2.21 environment.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/run_tests.sh [options] [-- PYTEST_ARGS...]

PYTEST_ARGS may name test files or node ids relative to the repository
(e.g. -- tests/version_test.py); then only those run.

Runs the test suite in every TensorFlow environment, then the Bazel targets.

Options:
  --env NAMES     comma-separated subset of: tf221,tf215,bazel (default: all)
  --setup-only    create/refresh the virtualenvs and print their paths; no tests
  --venv-path ENV print the virtualenv path of ENV (creating it if missing)
  -k EXPR         pass `-k EXPR` to pytest (select tests by name)
  -h, --help      this help

Environment:
  CMP_CACHE_DIR   where virtualenvs and built wheels are cached
                  (default: ~/.cache/contrib_mixed_precision)
  PYTHON          the Python 3.11 used to create virtualenvs (default: python3)

Exit status is non-zero if any environment failed.
EOF
}

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CMP_CACHE_DIR:-$HOME/.cache/contrib_mixed_precision}"
PYTHON="${PYTHON:-python3}"
ENVS="tf221,tf215,bazel"
SETUP_ONLY=0
PRINT_VENV=""
PYTEST_ARGS=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --env) ENVS="$2"; shift 2 ;;
    --env=*) ENVS="${1#*=}"; shift ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    --venv-path) PRINT_VENV="$2"; shift 2 ;;
    -k) PYTEST_ARGS+=(-k "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; PYTEST_ARGS+=("$@"); break ;;
    *) echo "run_tests.sh: unknown option '$1'. See --help." >&2; exit 2 ;;
  esac
done

log() { echo "[run_tests] $*" >&2; }

# Scratch space for this run (wheel, logs); removed on exit.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

# pip_q PYTHON ARGS...: quiet pip. Drops the "Location '...' is ignored"
# warnings that a machine-wide find-links setting pointing at a missing
# directory prints on every call; everything else still reaches stderr.
pip_q() {
  local py="$1"; shift
  "$py" -m pip -q "$@" 2> >(grep -vE "^Location '.*' is ignored" >&2) >&2
}

# venv_for ENV: echo the path of ENV's virtualenv, creating it when its pinned
# requirements (or the interpreter) changed since it was built.
venv_for() {
  local env="$1" req="$REPO/requirements/$1.txt"
  if [[ ! -f "$req" ]]; then
    echo "run_tests.sh: no requirements file for environment '$env' ($req)." >&2
    return 2
  fi
  local key
  key="$( (cat "$req"; "$PYTHON" -c 'import sys; print(sys.version)') \
          | sha256sum | cut -c1-12)"
  local venv="$CACHE/venvs/$env-$key"
  if [[ ! -f "$venv/.complete" ]]; then
    log "$env: creating virtualenv $venv"
    rm -rf "$venv"
    mkdir -p "$CACHE/venvs"
    "$PYTHON" -m venv "$venv"
    pip_q "$venv/bin/python" install --upgrade pip
    pip_q "$venv/bin/python" install -r "$req"
    touch "$venv/.complete"
  fi
  # After the creation step, so that a venv made before an extra setup existed
  # (or changed) gets it too: each extra_setup_<env>.sh is idempotent and
  # returns at once when its work is already done.
  if [[ -x "$REPO/scripts/extra_setup_$env.sh" ]]; then
    "$REPO/scripts/extra_setup_$env.sh" "$venv" >&2
  fi
  echo "$venv"
}

# build_wheel VENV: build the package wheel once per run and set $WHEEL to
# its path. Call it directly, not in $(...), or the result is lost.
WHEEL=""
build_wheel() {
  local venv="$1"
  if [[ -z "$WHEEL" ]]; then
    local dir="$SCRATCH/wheel" src="$SCRATCH/wheel/src"
    mkdir -p "$src"
    # Build from a copy of the tracked and unignored files (those that still
    # exist), so no build/ or *.egg-info litter lands in the tree.
    if ! (cd "$REPO" && git ls-files -z --cached --others --exclude-standard \
          | while IFS= read -r -d '' f; do
              if [[ -f $f ]]; then printf '%s\0' "$f"; fi
            done \
          | xargs -0 -r cp --parents -t "$src"); then
      log "git ls-files failed; copying the whole tree instead"
      cp -r "$REPO/." "$src"
    fi
    log "building the wheel"
    pip_q "$venv/bin/python" wheel --no-deps --no-build-isolation -w "$dir" "$src"
    WHEEL="$(ls "$dir"/contrib_mixed_precision-*.whl)"
  fi
}

if [[ -n "$PRINT_VENV" ]]; then
  venv_for "$PRINT_VENV"
  exit 0
fi

declare -a SUMMARY=()
STATUS=0

run_pytest_env() {
  local env="$1" venv out rc line
  venv="$(venv_for "$env")"
  if [[ $SETUP_ONLY == 1 ]]; then
    echo "$env: $venv"
    return 0
  fi
  build_wheel "$venv"
  pip_q "$venv/bin/python" install --force-reinstall --no-deps "$WHEEL"
  out="$SCRATCH/run-$env"
  mkdir -p "$out"
  log "$env: pytest ($("$venv/bin/python" -c \
      'import tensorflow as tf; print("TF", tf.__version__)' 2>/dev/null))"
  # Test paths given after `--` (tests/x_test.py, tests/x_test.py::Case) are
  # relative to the repository; pytest runs elsewhere, so make them absolute.
  # Without any, run the whole tests/ directory.
  local -a targets=() args=()
  local a
  for a in "${PYTEST_ARGS[@]}"; do
    if [[ $a != -* && $a != /* && -e "$REPO/${a%%::*}" ]]; then
      targets+=("$REPO/$a")
    elif [[ $a == /* && -e "${a%%::*}" ]]; then
      targets+=("$a")
    else
      args+=("$a")
    fi
  done
  [[ ${#targets[@]} -gt 0 ]] || targets=("$REPO/tests")
  set +e
  # Run from an empty directory: `import contrib_mixed_precision` must resolve
  # to the installed wheel, never to the source tree.
  (cd "$out" && CMP_TEST_ENV="$env" CMP_EXPECT_INSTALLED=1 \
     PATH="$venv/bin:$PATH" \
     "$venv/bin/python" -m pytest -c "$REPO/pytest.ini" --rootdir "$REPO" \
       -p no:cacheprovider --durations=10 "${targets[@]}" "${args[@]}" 2>&1 \
     | tee "$out/pytest.log")
  rc=${PIPESTATUS[0]}
  set -e
  line="$(grep -E '^=+ .*(passed|failed|error|skipped|no tests ran).* =+$' \
          "$out/pytest.log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')"
  if [[ $rc == 5 ]]; then rc=1; line="no tests ran"; fi
  SUMMARY+=("$env: $([[ $rc == 0 ]] && echo PASS || echo FAIL) ($line)")
  [[ $rc == 0 ]] || STATUS=1
}

run_bazel() {
  local venv
  venv="$(venv_for tf221)"
  [[ $SETUP_ONLY == 1 ]] && return 0
  if ! command -v bazel >/dev/null 2>&1; then
    "$REPO/scripts/install_system_deps.sh" >&2
  fi
  if ! command -v bazel >/dev/null 2>&1; then
    log "bazel: not found, and scripts/install_system_deps.sh did not install it"
    SUMMARY+=("bazel: FAIL (bazel not installed)")
    STATUS=1
    return 0
  fi
  log "bazel: bazel test //... (Python: $venv/bin/python)"
  local start=$SECONDS
  set +e
  # The venv's bin/ first on PATH: Bazel's autodetecting Python toolchain runs
  # the first `python3` there, and .bazelrc passes PATH through to tests.
  (cd "$REPO" && PATH="$venv/bin:$PATH" bazel test //... 2>&1 \
     | tee "$SCRATCH/bazel.log" | grep -vE '^(INFO|Loading|Analyzing)' )
  local rc=${PIPESTATUS[0]}
  set -e
  log "bazel: finished in $((SECONDS - start))s"
  local n
  n="$(cd "$REPO" && PATH="$venv/bin:$PATH" bazel query 'tests(//...)' \
        2>/dev/null | wc -l)"
  SUMMARY+=("bazel: $([[ $rc == 0 ]] && echo PASS || echo FAIL) ($n test targets)")
  [[ $rc == 0 ]] || STATUS=1
}

IFS=',' read -r -a ENV_LIST <<< "$ENVS"
for env in "${ENV_LIST[@]}"; do
  case "$env" in
    tf221|tf215) run_pytest_env "$env" ;;
    bazel) run_bazel ;;
    *) echo "run_tests.sh: unknown environment '$env' (tf221, tf215, bazel)." >&2
       exit 2 ;;
  esac
done

if [[ $SETUP_ONLY == 0 ]]; then
  echo
  echo "==== contrib_mixed_precision test summary ===="
  printf '%s\n' "${SUMMARY[@]}"
fi
exit $STATUS
