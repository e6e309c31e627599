#!/usr/bin/env bash
# Checks the README's set-up on a truly fresh Debian 12: debootstraps a
# minimal bookworm root, copies the committed tree into it (as CI's clean
# clone would see it), and runs `make test` there as root, so
# tools/install-deps.sh has to install every package itself. The CUDA toolkit
# (for NVRTC) is not a Debian package: the host's /usr/local/cuda is bound
# read-only into the root, as CI machines have it installed.
#
#   sudo tools/fresh-debian-check.sh [ROOT_DIR]     (default /tmp/loom-fresh-root)
#
# The Debian mirror is the one this machine's apt uses (read from its
# sources). Takes 10-20 minutes on 2 cores (debootstrap, apt, the build).
# Prints the test summary and exits with make test's status. Run it before
# resolving changes to dependencies or the build.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ROOT=${1:-/tmp/loom-fresh-root}
[ "$(id -u)" = 0 ] || { echo "run as root (debootstrap, chroot and mounts need it)" >&2; exit 1; }

mirror=$(grep -hoE '^(URIs:|deb) *[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
         | awk '{print $2}' | grep -vE 'security|updates' | head -n 1 || true)
[ -n "$mirror" ] || { echo "no Debian mirror found in this machine's apt sources" >&2; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }

cleanup() {
  for m in usr/local/cuda dev/pts dev proc; do mountpoint -q "$ROOT/$m" && umount -l "$ROOT/$m" || true; done
}
trap cleanup EXIT

if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  echo "== debootstrap bookworm (minbase) into $ROOT from $mirror"
  rm -rf "$ROOT"
  debootstrap --variant=minbase bookworm "$ROOT" "$mirror" >/tmp/loom-debootstrap.log 2>&1 \
    || { tail -20 /tmp/loom-debootstrap.log; exit 1; }
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# the host's CA bundle (a machine behind a TLS proxy trusts its CA; pip in the root must too)
host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
ca_env=""
if [ -f "$host_ca" ]; then
  mkdir -p "$ROOT/etc/ssl/certs" && cp "$host_ca" "$ROOT/etc/ssl/certs/host-ca-bundle.crt"
  ca_env="SSL_CERT_FILE=/etc/ssl/certs/host-ca-bundle.crt PIP_CERT=/etc/ssl/certs/host-ca-bundle.crt"
fi
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
if [ -d /usr/local/cuda ]; then
  mkdir -p "$ROOT/usr/local/cuda"
  mount --bind -o ro /usr/local/cuda "$ROOT/usr/local/cuda"
  # the loader finds NVRTC where a CUDA install puts it
  echo /usr/local/cuda/lib64 >"$ROOT/etc/ld.so.conf.d/cuda.conf"
fi

echo "== the committed tree (git archive HEAD) into $ROOT/src"
rm -rf "$ROOT/src" && mkdir -p "$ROOT/src"
git -C "$REPO" archive HEAD | tar -x -C "$ROOT/src"

echo "== make test inside the fresh root (it installs its own packages)"
# a minimal root has no make: the README's one prerequisite beside apt
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root CI=true $ca_env bash -c \
  'ldconfig; command -v make >/dev/null || { apt-get update -qq && apt-get install -y -qq make >/dev/null; }; cd /src && make test'
