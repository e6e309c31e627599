#!/usr/bin/env bash
# Does the tuner's feature model pay off? (issue 30; docs/tuning.md)
# The evolution strategy with and without --feature-model, 24 trials, seeds
# 1-3, on three kernels as written; prints the best time and the tuning
# time of each run.
#   bench/feature_model_study.sh [LOOM] [cuda|cpu]
#     (the GPU sizes below; on the CPU target give smaller ones with SIZES_*)
set -uo pipefail
L=${1:-build/loom}
TARGET=${2:-cuda}
ROWS=${SIZES_ROWS:--D n=65536 -D m=1024}
STENCIL=${SIZES_STENCIL:--D n=8192 -D m=8192}
MATMUL=${SIZES_MATMUL:--D n=2048 -D m=2048 -D l=2048}
run() {  # file, sizes
  local f=$1 sizes=$2
  for s in 1 2 3; do
    for m in "" "--feature-model"; do
      local start=$(date +%s)
      # shellcheck disable=SC2086
      local best=$($L tune $f --target $TARGET --trials 24 --seed $s $m $sizes 2>&1 | grep "^best:")
      echo "$(basename $f) seed=$s ${m:-plain} $best $(( $(date +%s) - start ))s"
    done
  done
}
run examples/row_sums.loom "$ROWS"
run examples/stencil_rows.loom "$STENCIL"
run examples/matmul.loom "$MATMUL"
