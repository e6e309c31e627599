# Sourced by the device scripts (device-run.sh, device-python.sh) on the lent
# GPU machine: unpacks the Debian packages carried in .deps/ (isl, gtest,
# nlohmann-json) into a prefix, makes their libraries loadable, and sets OUT
# (the folder whose files come back; ./device-out outside that machine).
OUT=${OUT:-device-out}
mkdir -p "$OUT"
PREFIX=/tmp/loom-prefix
mkdir -p $PREFIX
for f in .deps/*.deb; do dpkg -x "$f" $PREFIX; done
export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
