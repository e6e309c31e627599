#!/usr/bin/env bash
# For the lent GPU machine: issue 49's kernels "beyond PolyBench", each as
# written in bench/as_written/ (no transforms), tuned from the automatic
# space at the goal's size, then their peers timed by torch on the same
# card in the same call. Logs go to $OUT (tools/device-env.sh).
#   tools/device-as-written.sh [TRIALS] [NAMES...]   (default 24; every kernel)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF \
    && cmake --build build-device -j 16 --target loom_cli
} > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
trials="${1:-24}"
shift || true
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(softmax transpose atx chained_products)
declare -A sizes=([softmax]="-D n=65536 -D m=1024" [transpose]="-D n=8192 -D m=8192"
                  [atx]="-D n=16384 -D m=16384" [chained_products]="-D n=4096")
for name in "${names[@]}"; do
  ./build-device/loom tune "bench/as_written/$name.loom" --target cuda --trials "$trials" --trial-timeout 10 \
    ${sizes[$name]} --log "$OUT/as_written.jsonl" > "$OUT/$name.log" 2>&1
  echo "== $name (${sizes[$name]})"
  grep -E "trials in|as written|^best|refus|rror" "$OUT/$name.log" | grep -v "^\[" | head -8
done
python3 - <<'PY'
import torch

def ms(f, reps=50):
    for _ in range(5): f()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record(); f(); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]

x = torch.randn(65536, 1024, device="cuda")
t = ms(lambda: torch.softmax(x, dim=1))
print(f"torch.softmax 65536x1024 fp32: {t:.4f} ms ({2 * 4 * x.numel() / t / 1e6:.0f} GB/s)")
a = torch.randn(8192, 8192, device="cuda")
t = ms(lambda: a.clone())
print(f"device copy 8192^2 fp32 (a.clone()): {t:.4f} ms ({2 * 4 * a.numel() / t / 1e6:.0f} GB/s)")
t = ms(lambda: a.t().contiguous())
print(f"torch transpose 8192^2 fp32 (a.t().contiguous()): {t:.4f} ms ({2 * 4 * a.numel() / t / 1e6:.0f} GB/s)")
A = torch.randn(16384, 16384, device="cuda"); v = torch.randn(16384, device="cuda")
t = ms(lambda: torch.mv(A.t(), v))
print(f"torch.mv(A.t(), x) 16384^2 fp32: {t:.4f} ms ({4 * A.numel() / t / 1e6:.0f} GB/s)")
m1, m2, m3 = (torch.randn(4096, 4096, device="cuda") for _ in range(3))
torch.backends.cuda.matmul.allow_tf32 = False
t = ms(lambda: torch.mm(torch.mm(m1, m2), m3))
print(f"two torch.mm 4096^3 fp32 (no TF32): {t:.4f} ms ({2 * 2 * 4096 ** 3 / t / 1e9:.1f} TFLOP/s)")
PY
