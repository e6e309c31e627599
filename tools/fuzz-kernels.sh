#!/usr/bin/env bash
# Long differential run of random kernels under random schedules on the CPU
# oracle (tests/unit/test_random_kernels.cpp): each case is refused with a
# reason or must compute what the untransformed kernel computes. Prints the
# count checked and refused, the refusals by reason, and cases per second; a
# mismatch prints the kernel and its schedule and fails.
#   tools/fuzz-kernels.sh [CASES=100000] [SEED=1]      (after make build)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-100000}
seed=${2:-1}
start=$(date +%s.%N)
LOOM_SOURCE_DIR=$PWD LOOM_FUZZ_CASES=$cases LOOM_RANDOM_SEED=$seed \
  build/loom_unit_tests --gtest_filter='RandomKernels.*' | grep -vE '^\[ *(RUN|OK|-+|=+) *\]|^Running main|^Note: Google'
end=$(date +%s.%N)
awk -v c="$cases" -v s="$start" -v e="$end" 'BEGIN { printf "%d cases in %.1f s: %.1f cases per second\n", c, e - s, c / (e - s) }'
