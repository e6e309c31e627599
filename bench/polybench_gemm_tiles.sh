#!/usr/bin/env bash
# For the lent GPU machine (after a loom_cli build in build-device): PolyBench's
# gemm at its LARGE size (float64) under the `nests, tiles` plan the automatic
# space offers it, for a grid of tile shapes: block rows x columns, each
# thread's rows x columns (ilp), the k tile, with and without the shared-memory
# tiles. Each line: the shape, `loom bench`'s median, and `loom run`'s check
# at a small size. Shows which fp64 tiles the sketch's choices should offer.
#   bench/polybench_gemm_tiles.sh [LOOM]
set -uo pipefail
L=${1:-./build-device/loom}
F=examples/polybench/gemm.loom
S=${SIZES:-"-D ni=1000 -D nj=1100 -D nk=1200"}
# block rows, block columns, rows per thread, l.0 threads, k tile, prefetch (1/0)
for shape in "64 64 4 16 16 1" "64 64 4 16 8 1" "64 64 8 16 8 1" "32 64 2 16 16 1" "64 128 8 32 8 1" \
             "64 128 4 32 8 1" "64 128 8 16 8 1" "32 128 4 32 16 1" "64 64 4 16 16 0" "32 32 2 16 16 1"; do
  set -- $shape
  cfg=$(mktemp)
  cat > "$cfg" <<EOT
distribute_loops i after=id:insn_0
accumulation_to_reduction id:insn_1
add_global_barrier insn_0 id=nests_barrier_0
split_iname j1 128 outer_tag=g.0 inner_tag=l.0
split_iname i 2 outer_tag=g.1 inner_tag=l.1
split_iname i_2 $1 outer_tag=g.1
split_iname j2 $2 outer_tag=g.0
split_iname i_2_inner $3 outer_tag=l.1 inner_tag=ilp
split_iname j2_inner $4 outer_tag=ilp inner_tag=l.0
split_iname k $5
prioritize_loops k_outer,k_inner,i_2_inner_inner,j2_inner_outer
EOT
  [ "$6" = 1 ] && cat >> "$cfg" <<EOT
add_prefetch A sweep_inames=i_2_inner_outer,i_2_inner_inner,k_inner temporary_name=A_tile default_tag=l.auto temporary_address_space=local
add_prefetch B sweep_inames=k_inner,j2_inner_outer,j2_inner_inner temporary_name=B_tile default_tag=l.auto temporary_address_space=local
EOT
  t=$($L bench $F --as-written -t "$cfg" --target ${TARGET:-cuda} $S 2>&1 | grep -Eo '[0-9.]+ (ms|us) per call' | head -1)
  c=$($L run $F --as-written -t "$cfg" --target ${TARGET:-cuda} -D ni=67 -D nj=45 -D nk=29 2>&1 | grep -Eio "check [A-Za-z_]*: [a-z]*|error.*" | head -1)
  echo "tiles $1x$2, thread $3x$(($2 / $4)), k $5, shared $6: $t ($c)"
  rm -f "$cfg"
done
