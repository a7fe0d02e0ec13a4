#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Installs Horovod (TensorFlow + Gloo, no MPI) into the TF 2.15 virtualenv, for
# tests/horovod_test.py. noxfile.py (scripts/run_tests.sh) calls it with the
# venv path.
#
# Horovod ships no wheels: pip builds it from source against the installed
# TensorFlow (about 5 minutes on 2 cores). The built wheel is cached under
# $CMP_CACHE_DIR/wheels/, keyed by the exact Horovod, TensorFlow and Python
# versions and the platform, so only the first run pays for the build.
#
# Idempotent and cheap when Horovod is already installed: safe to call on every
# run, which is how an existing venv (made before this script existed) gets it.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/extra_setup_tf215.sh VENV

Builds (or reuses the cached wheel of) Horovod 0.28.1 with TensorFlow and Gloo
support and installs it into the virtualenv VENV. Needs cmake and a C++
compiler (scripts/install_system_deps.sh installs them).

Environment:
  CMP_CACHE_DIR        cache root (default: ~/.cache/contrib_mixed_precision);
                       wheels go to $CMP_CACHE_DIR/wheels/
  CMP_SKIP_HOROVOD=1   do nothing (tests/horovod_test.py then skips, outside
                       CI; under CI=true it fails)
  HOROVOD_VERSION      default 0.28.1
EOF
}

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" || $# -ne 1 ]]; then
  usage
  [[ $# -eq 1 ]] && exit 0 || exit 2
fi

VENV="$1"
PY="$VENV/bin/python"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CMP_CACHE_DIR:-$HOME/.cache/contrib_mixed_precision}"
HVD_VERSION="${HOROVOD_VERSION:-0.28.1}"

log() { echo "[extra_setup_tf215] $*" >&2; }

if [[ "${CMP_SKIP_HOROVOD:-0}" == 1 ]]; then
  log "CMP_SKIP_HOROVOD=1: not installing Horovod"
  exit 0
fi
if [[ ! -x "$PY" ]]; then
  echo "extra_setup_tf215.sh: no python in virtualenv '$VENV'." >&2
  exit 2
fi

# The cache key: everything the compiled extension is bound to. Read from
# the installed distributions' metadata directories, not by importing
# TensorFlow or running pip (seconds each): noxfile.py calls this every time.
site="$(ls -d "$VENV"/lib/python3*/site-packages 2>/dev/null | head -n 1)"
tf_dist="$(ls -d "$site"/tensorflow_cpu-*.dist-info \
             "$site"/tensorflow-*.dist-info 2>/dev/null | head -n 1 || true)"
if [[ -z "$site" || -z "$tf_dist" ]]; then
  echo "extra_setup_tf215.sh: TensorFlow is not installed in '$VENV'." >&2
  exit 2
fi
tf_version="$(basename "$tf_dist" .dist-info)"
tf_version="${tf_version##*-}"
py_version="$(basename "$(dirname "$site")")"   # python3.11
py_tag="cp${py_version#python}"
py_tag="${py_tag/./}-$(uname -m)"
key="horovod-$HVD_VERSION-tf$tf_version-$py_tag"
marker="$VENV/.horovod-installed-$key"
# Why Horovod was not built here, for tests/horovod_test.py's skip.
UNAVAILABLE=".horovod-unavailable"
rm -f "$VENV/$UNAVAILABLE"

# Fast path: installed by an earlier call for exactly these versions.
if [[ -f "$marker" ]]; then
  exit 0
fi

WHEELS="$CACHE/wheels/$key"
mkdir -p "$WHEELS"
# Several test runs (or helpers) may set up the same venv at once: one builds,
# the others wait for its wheel.
exec 9>"$WHEELS/.lock"
flock 9

if [[ -f "$marker" ]]; then
  exit 0
fi

wheel="$(ls "$WHEELS"/horovod-"$HVD_VERSION"-*.whl 2>/dev/null | head -n 1 \
         || true)"
if [[ -z "$wheel" ]]; then
  missing=()
  for tool in cmake g++ make; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if (( ${#missing[@]} )); then
    ci="$(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]')"
    if [[ "$(id -u)" != 0 && ( -z "$ci" || "$ci" == 0 || "$ci" == false ) ]]
    then
      # A contributor without root: the environment's other tests still
      # run, and tests/horovod_test.py skips with this reason (never in CI).
      reason="Horovod is not built: ${missing[*]} not found, and installing"
      reason+=" them needs root. To build it: sudo scripts/install_system_deps.sh,"
      reason+=" then run the tests again (CMP_SKIP_HOROVOD=1 skips it quietly)."
      log "SKIP: $reason"
      printf '%s\n' "$reason" >"$VENV/$UNAVAILABLE"
      exit 0
    fi
    log "${missing[*]} not found; running scripts/install_system_deps.sh"
    "$REPO/scripts/install_system_deps.sh"
  fi
  log "building horovod==$HVD_VERSION against TensorFlow $tf_version" \
      "(several minutes; cached afterwards in $WHEELS)"
  build="$(mktemp -d)"
  # pip's own build tree (173 MB) goes under $build too, and the trap
  # removes both however this ends: Ctrl-C included. A failed build's log
  # is kept beside the cache.
  trap 'rm -rf "$build"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir "$build/tmp"
  start=$SECONDS
  # --no-build-isolation: Horovod's setup.py imports the installed TensorFlow
  # to find its headers and ABI flags; an isolated build cannot see it.
  # MAKEFLAGS: Horovod defaults to -j8, too many for a 2-core machine.
  if ! HOROVOD_WITH_TENSORFLOW=1 HOROVOD_WITH_GLOO=1 HOROVOD_WITHOUT_MPI=1 \
       HOROVOD_WITHOUT_PYTORCH=1 HOROVOD_WITHOUT_MXNET=1 \
       HOROVOD_CPU_OPERATIONS=gloo \
       MAKEFLAGS="${MAKEFLAGS:--j$(nproc)}" TMPDIR="$build/tmp" \
       "$PY" -m pip wheel -q --no-build-isolation --no-deps \
         -w "$build" "horovod==$HVD_VERSION" >"$build/build.log" 2>&1; then
    tail -n 60 "$build/build.log" >&2
    cp "$build/build.log" "$WHEELS/build-failed.log"
    echo "extra_setup_tf215.sh: building Horovod failed (full log:" \
         "$WHEELS/build-failed.log). Set CMP_SKIP_HOROVOD=1 to skip it" \
         "(then tests/horovod_test.py skips, outside CI)." >&2
    exit 1
  fi
  log "built in $((SECONDS - start)) s"
  built="$(ls "$build"/horovod-*.whl | head -n 1)"
  # Publish atomically: a half-copied wheel must never look cached.
  cp "$built" "$WHEELS/.tmp-$(basename "$built")"
  mv "$WHEELS/.tmp-$(basename "$built")" "$WHEELS/$(basename "$built")"
  wheel="$WHEELS/$(basename "$built")"
  rm -rf "$build"
  trap - EXIT INT TERM
else
  log "reusing cached wheel $wheel"
fi

# Its dependencies (cloudpickle, psutil, pyyaml, packaging) come from PyPI.
# The grep drops the "Location '...' is ignored" noise of a machine-wide
# find-links setting that points at a missing directory.
"$PY" -m pip install -q "$wheel" \
  2> >(grep -vE "Location '.*' is ignored" >&2) >&2
"$PY" -c 'import horovod.tensorflow as hvd; assert hvd.gloo_built(), \
  "Horovod was built without Gloo"'
touch "$marker"
log "horovod $HVD_VERSION installed into $VENV"
