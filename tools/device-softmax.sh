#!/usr/bin/env bash
# For the lent GPU machine: build the command-line tool, tune the softmax
# written as three statements (bench/softmax_as_written.loom) at 65536x1024
# fp32 from the automatic space, then time torch.softmax on the same data
# shape in the same call. Logs go to $OUT (tools/device-env.sh).
#   tools/device-softmax.sh [TRIALS]
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF \
    && cmake --build build-device -j 16 --target loom_cli
} > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
./build-device/loom tune bench/softmax_as_written.loom --target cuda --trials "${1:-24}" --trial-timeout 10 -D n=65536 -D m=1024 \
  > "$OUT/softmax_tune.log" 2>&1
grep -E "trials in|as written|^best" -A8 "$OUT/softmax_tune.log" | grep -v "^\[" | head -20
python3 - <<'PY'
import torch
x = torch.randn(65536, 1024, device="cuda")
for _ in range(10): torch.softmax(x, dim=1)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
times = []
for _ in range(50):
    start.record(); torch.softmax(x, dim=1); end.record(); torch.cuda.synchronize()
    times.append(start.elapsed_time(end))
times.sort()
ms = times[len(times) // 2]
print(f"torch.softmax 65536x1024 fp32: {ms:.4f} ms ({2 * 4 * 65536 * 1024 / ms / 1e6:.0f} GB/s, read and write once)")
PY
