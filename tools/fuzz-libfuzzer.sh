#!/usr/bin/env bash
# Long libFuzzer run of one front-end target (tests/fuzz/fuzz_<TARGET>.cpp)
# with AddressSanitizer and UndefinedBehaviorSanitizer, seeded from
# tests/fuzz/corpus/<corpus>; new inputs go to a scratch folder, not the
# repository. Stops at the first crash, hang (10 s) or sanitizer report and
# leaves the input in the current folder as crash-*/timeout-*.
#   tools/fuzz-libfuzzer.sh kernel_parser|transform_script|json [RUNS=1000000] [JOBS=1]
# Needs clang-14 and libclang-rt-14-dev (apt-get install clang-14 libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz-libfuzzer.sh kernel_parser|transform_script|json [RUNS] [JOBS]}
runs=${2:-1000000}
jobs=${3:-1}
case $target in
  kernel_parser) corpus=tests/fuzz/corpus/kernel ;;
  transform_script) corpus=tests/fuzz/corpus/script ;;
  json) corpus=tests/fuzz/corpus/json ;;
  *) echo "unknown target '$target' (kernel_parser, transform_script or json)" >&2; exit 2 ;;
esac
if [ ! -x build-fuzz/fuzz_$target ]; then
  cmake -S . -B build-fuzz -DLOOM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DLOOM_WITH_LLVM=OFF > /dev/null
fi
make -C build-fuzz -j"$(nproc)" fuzz_$target > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")  # (one job runs in this process: its output comes here)
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-fuzz/fuzz_$target -runs="$runs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$PWD/" "${parallel[@]}" "$work" "$corpus" 2>&1 | grep -E "^#[0-9]+.*(pulse|DONE)|stat::|ERROR|SUMMARY|Done" || true
echo "$target: $runs runs in $(( $(date +%s) - start )) s"
