#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Installs the system packages the test suite needs, non-interactively.
#
# Idempotent: it does nothing when everything is already there. Needs root (or
# sudo) only when something is missing. Today that is:
#   * bazel (Debian's `bazel-bootstrap`, Bazel 4.2.3), for `bazel test //...`;
#   * debootstrap, which builds the Debian chroots of the environments on
#     another Python (scripts/chroot_env.sh; Python 3.9 and 3.13);
#   * python3-venv is NOT needed: run_tests.sh uses the `python3` on PATH.
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  cat <<'USAGE'
Usage: scripts/install_system_deps.sh

Installs the Debian packages the tests need (bazel-bootstrap, debootstrap,
and cmake, g++ and make for Horovod) with apt-get,
non-interactively. Does nothing when they are already installed.
USAGE
  exit 0
fi

log() { echo "[install_system_deps] $*" >&2; }

PACKAGES=()
command -v bazel >/dev/null 2>&1 || PACKAGES+=(bazel-bootstrap)
# /usr/sbin may be missing from a non-root PATH: look there too.
command -v debootstrap >/dev/null 2>&1 || [[ -x /usr/sbin/debootstrap ]] \
  || PACKAGES+=(debootstrap)

# ---- Horovod build (scripts/extra_setup_tf215.sh, issue 5 part 5) ----------
# Horovod 0.28.1 has no wheels: it compiles against the TF 2.15 venv's
# TensorFlow, with cmake and a C++ toolchain.
command -v cmake >/dev/null 2>&1 || PACKAGES+=(cmake)
command -v g++ >/dev/null 2>&1 || PACKAGES+=(g++)
command -v make >/dev/null 2>&1 || PACKAGES+=(make)
command -v flock >/dev/null 2>&1 || PACKAGES+=(util-linux)
# ---- end Horovod build -------------------------------------------------------

if [[ ${#PACKAGES[@]} -eq 0 ]]; then
  log "nothing to install"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "apt-get not found; install these by hand: ${PACKAGES[*]}"
  exit 1
fi

SUDO=()
if [[ $(id -u) != 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
  else
    log "not root and no sudo; install these by hand: ${PACKAGES[*]}"
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log "installing: ${PACKAGES[*]}"
"${SUDO[@]}" apt-get update -q </dev/null >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" \
  </dev/null >&2
log "done"
