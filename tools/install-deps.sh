#!/usr/bin/env bash
# Installs what `make run` / `make test` need on Debian 12, as root; as
# another user it prints the exact apt-get line and fails. Packages:
#   cmake g++ make          the build
#   libisl-dev              isl (polyhedral sets, schedule trees, AST generation)
#   nlohmann-json3-dev      JSON kernels and scripts
#   libgtest-dev            the unit and GPU test suites
#   llvm-19-dev             the CPU target (LLVM IR, O3, ORC LLJIT)
#   pybind11-dev python3-dev python3-venv   the Python module and its test venv
# The CUDA toolkit's NVRTC (libnvrtc.so.13) is loaded at run time: code
# generation and NVRTC compile tests need it, the build does not.
set -euo pipefail
PKGS="cmake g++ make libisl-dev nlohmann-json3-dev libgtest-dev llvm-19-dev pybind11-dev python3-dev python3-venv"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "missing packages:$missing" >&2
  echo "run as root:  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
