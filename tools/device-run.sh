#!/usr/bin/env bash
# For the lent GPU machine (Ubuntu, CUDA, no isl/gtest/json installed):
# unpack the Debian packages carried in .deps/ into a prefix, build, run the
# whole test suite (GPU tests included), then time every example at a large
# size and the torch peers. Logs go to $OUT (or ./device-out).
#   fetch the packages here first:  (cd .deps && apt-get download libisl23 libisl-dev nlohmann-json3-dev libgtest-dev googletest)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF \
    && cmake --build build-device -j 16
} > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
tail -3 "$OUT/build.log"
(cd build-device && ctest --output-on-failure -j "$(nproc)") 2>&1 | tee "$OUT/tests.log" | tail -15
./build-device/loom_gpu_tests > "$OUT/gpu_tests.log" 2>&1; tail -4 "$OUT/gpu_tests.log"
L=./build-device/loom
$L compile examples/vector_add.loom -v > "$OUT/compile_verbose.log" 2>&1
{
  for f in examples/*.loom; do
    echo "== $f (default sizes, checked against the reference interpreter)"
    $L run $f 2>&1
  done
  echo "== large sizes (timing only)"
  $L run examples/vector_add.loom -D n=67108864 --no-check
  $L run examples/vector_add_ilp.loom -D n=67108864 --no-check
  $L run examples/axpy.loom -D n=67108864 --no-check
  $L run examples/row_sums.loom -D n=65536 -D m=1024 --no-check
  $L run examples/row_sums_parallel.loom -D n=65536 -D m=1024 --no-check
  $L run examples/row_sums_parallel.loom -D n=8192 -D m=8192 --no-check
  $L run examples/row_sums_parallel.loom -D n=1024 -D m=262144 --no-check
  $L run examples/row_sums_parallel.loom -D n=1048576 -D m=256 --no-check
  $L run examples/row_sums_warp.loom -D n=1048576 -D m=256 --no-check
  $L run examples/row_sums_warp.loom -D n=1048576 -D m=32 --no-check
  $L run examples/matvec.loom -D n=16384 -D m=16384 --no-check
  $L run examples/matvec_warp.loom -D n=16384 -D m=16384 --no-check
  $L run examples/matmul.loom -D n=4096 -D m=4096 -D l=4096 --no-check --reps 5
  $L run examples/matmul_prefetch.loom -D n=4096 -D m=4096 -D l=4096 --no-check --reps 5
  $L run examples/sgemm_tiled.loom -D n=4096 -D m=4096 -D l=4096 --no-check --reps 10
  $L run examples/stencil_prefetch.loom -D n=8192 -D m=8192 --no-check
  $L run examples/triangular.loom -D n=4096 -D m=4096 --no-check --reps 5
} 2>&1 | tee "$OUT/examples.log"
# every example (the benchmark schedules among them) under compute-sanitizer:
# races in shared memory (racecheck) and bad accesses (memcheck), at the default sizes
if command -v compute-sanitizer >/dev/null; then
  for f in examples/*.loom; do
    for tool in racecheck memcheck; do
      echo "== compute-sanitizer --tool $tool $f"
      compute-sanitizer --tool $tool --error-exitcode 3 $L run $f --no-check --reps 1 2>&1 | tail -3
    done
  done 2>&1 | tee "$OUT/sanitizer.log"
fi
python3 bench/peers_gpu.py 2>&1 | tee "$OUT/peers.log"
./build-device/bench_codegen examples 200 2>&1 | tee "$OUT/bench_codegen.log"
