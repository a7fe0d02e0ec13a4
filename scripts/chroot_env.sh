#!/usr/bin/env bash
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Builds and enters the Debian chroots that give CI its other Pythons.
#
# The host has one Python (3.11). Debian's older and newer suites ship the
# ends of the supported range: bullseye has Python 3.9, trixie Python 3.13.
# `build` makes a minimal root of such a suite with debootstrap, and in it a
# virtualenv (/opt/venv) holding exactly one lock file, installed as
# noxfile.py installs the host's (uv, --no-deps). The root is cached under
# $CMP_CACHE_DIR/chroots/, keyed on its recipe: the suite, the lock file and
# this script's code (`key`; not its comments); a changed recipe builds a
# new root and removes the old one.
# `run` runs a command in a root, in a private mount namespace (unshare), so
# the mounts it makes (/proc, /sys, /dev, the temporary directory, the
# repository) vanish with it, even when it is killed; a trap unmounts them
# on a normal exit too. Needs root, like debootstrap and chroot themselves.
set -euo pipefail
# debootstrap, chroot and mount live in sbin, not on every PATH.
export PATH="$PATH:/usr/sbin:/sbin"

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO="$(cd "$(dirname "$SELF")/.." && pwd)"
CACHE="${CMP_CACHE_DIR:-$HOME/.cache/contrib_mixed_precision}"
MIRROR="${CMP_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
VENV=/opt/venv

usage() {
  cat <<'EOF'
Usage:
  scripts/chroot_env.sh build NAME SUITE PYTHON LOCK
      Makes (or reuses) a Debian SUITE root with a virtualenv at /opt/venv
      that holds exactly the lock file LOCK, checks that its python3 is
      Python PYTHON (e.g. 3.13), and prints the root's path.
  scripts/chroot_env.sh key SUITE PYTHON LOCK
      Prints the cache key of such a root (no root needed): the suite, the
      Python, the mirror, the lock file and this script's code, comments
      left out.
  scripts/chroot_env.sh run ROOT [--bind DIR]... [--env K=V]...
                        [--chdir DIR] -- COMMAND [ARG]...
      Runs COMMAND in ROOT with /opt/venv/bin first on PATH. The temporary
      directory and each --bind DIR appear at the same path inside; the
      environment is only PATH, HOME, LANG, TMPDIR, the certificate
      variables and the --env settings.

Environment:
  CMP_CACHE_DIR      cache root (default: ~/.cache/contrib_mixed_precision);
                     roots go to $CMP_CACHE_DIR/chroots/
  CMP_DEBIAN_MIRROR  Debian mirror (default: http://deb.debian.org/debian)
  CMP_UV             the uv binary copied into the root (default: `uv` on
                     PATH)
  UV_DEFAULT_INDEX, UV_INDEX, UV_FIND_LINKS, UV_INDEX_STRATEGY,
  UV_INSECURE_HOST, UV_HTTP_TIMEOUT, UV_NO_INDEX, UV_SYSTEM_CERTS,
  HTTPS_PROXY, HTTP_PROXY
                     passed to uv in the root (remote locations only);
                     noxfile.py sets them from pip's configuration
EOF
}

log() { echo "[chroot_env] $*" >&2; }
die() { echo "chroot_env.sh: $*" >&2; exit 2; }

need_root() {
  [[ $(id -u) == 0 ]] || die "needs root (debootstrap, mount and chroot" \
    "do); running as uid $(id -u). CI runs as root."
}

# The certificate bundle this machine's pip and uv trust (a proxy's CA may be
# in it, not in Debian's): copied into the root at the same path.
ca_bundle() {
  local f
  for f in "${SSL_CERT_FILE:-}" "${PIP_CERT:-}" \
           /etc/ssl/certs/ca-certificates.crt; do
    [[ -n "$f" && -f "$f" ]] && { echo "$f"; return; }
  done
}

# Nothing may be mounted below a root we delete: rm would follow a bind mount
# into the host's files. Roots are only mounted in `run`'s private namespace,
# so this finds only a mount someone made by hand.
safe_remove() {
  local dir="$1"
  [[ -e "$dir" ]] || return 0
  if findmnt -rn -o TARGET | grep -qF -- "$dir/"; then
    die "not removing $dir: something is mounted below it" \
      "($(findmnt -rn -o TARGET | grep -F -- "$dir/" | head -n 3 | tr '\n' ' '))." \
      "Unmount it (umount -R) and run again."
  fi
  rm -rf --one-file-system -- "$dir"
}

# Runs "$@" inside root $1 (see `run` for the options).
enter() {
  local root="$1"; shift
  local binds=() envs=() chdir=/
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --bind) binds+=("$(cd "$2" && pwd)"); shift 2 ;;
      --env) [[ "$2" == *=* ]] || die "--env takes K=V; got '$2'."
             envs+=("$2"); shift 2 ;;
      --chdir) chdir="$2"; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option '$1' (expected --bind, --env, --chdir or --)." ;;
    esac
  done
  [[ $# -gt 0 ]] || die "no command after --."
  [[ -x "$root/usr/bin/env" ]] || die "$root is not a root made by" \
    "\`scripts/chroot_env.sh build\` (no usr/bin/env)."
  local tmp="${TMPDIR:-/tmp}" ca
  tmp="$(cd "$tmp" && pwd)"
  ca="$(ca_bundle)"
  local inner_env=(PATH="$VENV/bin:/usr/local/bin:/usr/bin:/bin" HOME=/root
                   LANG=C.UTF-8 TMPDIR="$tmp")
  if [[ -n "$ca" ]]; then
    inner_env+=(SSL_CERT_FILE="$ca" PIP_CERT="$ca" REQUESTS_CA_BUNDLE="$ca")
  fi
  # unshare: the mounts live in a namespace of their own, gone with it.
  # In the background, so that a signal to this script reaches it (bash
  # runs a trap only once its foreground command ends).
  unshare --mount --propagation private bash -c "$INNER" inner "$root" \
      "$tmp" "$chdir" "${#binds[@]}" "${binds[@]}" "${#inner_env[@]}" \
      "${inner_env[@]}" "${#envs[@]}" "${envs[@]}" "$@" <&0 &
  local child=$! status=0
  trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT HUP
  wait "$child" || status=$?
  # A signal ends `wait` early: wait for the command's own exit.
  while kill -0 "$child" 2>/dev/null; do
    wait "$child" || status=$?
  done
  trap - TERM INT HUP
  return "$status"
}

# The part of `enter` inside the private mount namespace. Not a heredoc fed
# to `bash -s`: the command would share that standard input.
read -r -d '' INNER <<'INNER' || true
set -euo pipefail
root="$1" tmp="$2" chdir="$3"; shift 3
binds=("${@:2:$1}"); shift $(($1 + 1))
inner_env=("${@:2:$1}"); shift $(($1 + 1))
envs=("${@:2:$1}"); shift $(($1 + 1))
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
mnt() {  # mnt TARGET MOUNT-ARGS...
  local target="$1"; shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}
mnt "$root/proc" -t proc proc
mnt "$root/sys" -t sysfs sysfs
mnt "$root/dev" --bind /dev
mnt "$root/dev/shm" -t tmpfs shm
mnt "$root$tmp" --bind "$tmp"
for b in "${binds[@]}"; do
  mnt "$root$b" --bind "$b"
done
cd "$root"
# In the background, so that a signal ends it and then the trap unmounts.
chroot "$root" /usr/bin/env -i "${inner_env[@]}" "${envs[@]}" \
  /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$chdir" "$@" <&0 &
child=$! status=0
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT HUP
wait "$child" || status=$?
while kill -0 "$child" 2>/dev/null; do
  wait "$child" || status=$?
done
exit "$status"
INNER

# uv reads no pip.conf: noxfile.py passes pip's index, proxy and certificate
# settings as UV_* variables (scripts/uv_env.py), and they go into the root
# as `--env` options. A local index or find-links directory of the host is
# not inside the root, so only remote locations go in.
uv_settings() {
  local var value loc sep kept
  UV_SETTINGS=()
  for var in UV_DEFAULT_INDEX UV_INDEX UV_FIND_LINKS UV_INDEX_STRATEGY \
             UV_INSECURE_HOST UV_HTTP_TIMEOUT UV_NO_INDEX UV_SYSTEM_CERTS \
             HTTPS_PROXY HTTP_PROXY; do
    value="${!var:-}"
    [[ -n "$value" ]] || continue
    case "$var" in
      UV_DEFAULT_INDEX|UV_INDEX|UV_FIND_LINKS)
        kept=()
        for loc in ${value//,/ }; do
          [[ "$loc" == *://* && "$loc" != file:* ]] && kept+=("$loc")
        done
        sep=" "
        [[ "$var" == UV_FIND_LINKS ]] && sep=","
        value="$(IFS="$sep"; echo "${kept[*]:-}")"
        ;;
    esac
    [[ -n "$value" ]] && UV_SETTINGS+=(--env "$var=$value")
  done
  return 0
}

# The recipe: what a root is made from; a change makes a new root. The
# script's code counts as bash reads it (`declare -f`), without comments, so
# a comment or a reflow costs no rebuild (two chroots, minutes each).
recipe_key() {
  local suite="$1" python="$2" lock="$3"
  (echo "$suite $python $MIRROR $VENV"
   declare -f recipe_key cmd_build enter uv_settings ca_bundle safe_remove
   printf '%s\n' "$INNER"
   cat "$lock") | sha256sum | cut -c1-16
}

cmd_build() {
  [[ $# -eq 4 ]] || { usage >&2; exit 2; }
  local name="$1" suite="$2" python="$3" lock="$4"
  need_root
  [[ -f "$lock" ]] || die "no lock file '$lock'."
  for tool in debootstrap unshare chroot findmnt flock; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; run" \
      "scripts/install_system_deps.sh (it installs debootstrap)."
  done
  local uv="${CMP_UV:-$(command -v uv || true)}"
  [[ -n "$uv" && -x "$uv" ]] || die "uv not found (CMP_UV='${CMP_UV:-}');" \
    "scripts/run_tests.sh passes the uv of requirements/nox.txt."
  local key
  key="$(recipe_key "$suite" "$python" "$lock")"
  local roots="$CACHE/chroots"
  local root="$roots/$name-$key"
  mkdir -p "$roots"
  exec 8>"$roots/$name.lock"
  flock 8   # Two runs building the same root: one builds, one waits.
  if [[ -f "$root/.complete" ]]; then
    echo "$root"
    return
  fi
  # Earlier recipes of this environment, and a half-built one.
  local old
  for old in "$roots/$name"-*; do
    [[ -d "$old" && "$old" != "$root" ]] || continue
    log "removing $old (built from an earlier recipe)"
    safe_remove "$old"
  done
  safe_remove "$root.partial"
  local start=$SECONDS
  log "debootstrap $suite into $root (a few minutes)"
  if ! debootstrap --variant=minbase \
       --include=python3,python3-venv,ca-certificates \
       "$suite" "$root.partial" "$MIRROR" >"$roots/$name.debootstrap.log" 2>&1
  then
    tail -n 30 "$roots/$name.debootstrap.log" >&2
    die "debootstrap $suite failed (log: $roots/$name.debootstrap.log)."
  fi
  local part="$root.partial"
  # Name resolution, and the package registry configuration of this machine.
  cp /etc/resolv.conf "$part/etc/resolv.conf"
  cp /etc/hosts "$part/etc/hosts"
  local ca
  ca="$(ca_bundle)"
  if [[ -n "$ca" ]]; then
    mkdir -p "$part$(dirname "$ca")"
    cp "$ca" "$part$ca"
  fi
  [[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$part/etc/pip.conf"
  if [[ -d /etc/xdg/pip ]]; then
    mkdir -p "$part/etc/xdg"
    cp -r /etc/xdg/pip "$part/etc/xdg/"
  fi
  cp "$uv" "$part/usr/local/bin/uv"
  cp "$lock" "$part/opt/requirements.txt"
  uv_settings
  local have
  have="$(enter "$part" -- python3 -c \
          'import sys; print("%d.%d" % sys.version_info[:2])')"
  [[ "$have" == "$python" ]] || die "Debian $suite's python3 is Python" \
    "$have, not $python as requirements/environments.toml says. Change the" \
    "environment's python or debian."
  log "installing $(basename "$lock") into $VENV (Python $have)"
  mkdir -p "$CACHE/uv"
  # uv's download cache is the host's, shared with the other environments.
  enter "$part" --bind "$CACHE/uv" --env UV_CACHE_DIR="$CACHE/uv" \
    "${UV_SETTINGS[@]}" -- \
    sh -c "python3 -m venv $VENV && uv pip install -q --no-deps \
             --compile-bytecode --python $VENV/bin/python \
             -r /opt/requirements.txt"
  # pip's own complaint about the one dependency the locks leave out on
  # purpose (tf-keras asks for `tensorflow`; tensorflow-cpu provides it).
  local broken
  broken="$(enter "$part" -- python -m pip check 2>/dev/null \
            | grep -vE '^(No broken|WARNING)' \
            | grep -vE '^tf-keras \S+ requires tensorflow, which is not installed\.$' \
            || true)"
  if [[ -n "$broken" ]]; then
    die "$lock is not a complete lock on Python $have:"$'\n'"$broken"
  fi
  touch "$part/.complete"
  mv "$part" "$root"
  log "built $root in $((SECONDS - start)) s"
  echo "$root"
}

cmd_run() {
  [[ $# -ge 1 ]] || { usage >&2; exit 2; }
  need_root
  local root="$1"; shift
  [[ -f "$root/.complete" ]] || die "$root is not a complete root; make it" \
    "with \`scripts/chroot_env.sh build\`."
  enter "$root" "$@"
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  key) shift; [[ $# -eq 3 ]] || { usage >&2; exit 2; }; recipe_key "$@" ;;
  run) shift; cmd_run "$@" ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
