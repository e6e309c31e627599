"""Issue 30's peer goal: Loom's tuner against @triton.autotune given the same
number of configurations, on row sums and the 5-point stencil. Triton
autotunes its row-sum and stencil kernels (the peers of bench/gpu.py) over N
configurations (block sizes x num_warps). Loom tunes the same kernels as
written, over its automatic space, with N trials. Both winners are then
timed the same way in this process: triton.testing.do_bench on torch
tensors, with Loom's kernel called from Python. do_bench empties L2 by
writing 256 MB before each call, so a kernel also pays for writing those
dirty lines back; the second figure of each (clean L2) empties it by reading
256 MB instead, which leaves only the kernel's own traffic to time.

    PYTHONPATH=build-py/python python3 bench/tune_vs_triton.py
"""
import itertools
import os
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

import loom as lp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu  # noqa: E402  (its Triton kernels; importing it runs nothing)

ROW_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in itertools.product([64, 128, 256, 512, 1024, 2048], [1, 2, 4, 8])]
STENCIL_CONFIGS = [triton.Config({"BM": bm, "BN": bn}, num_warps=w)
                   for bm, bn, w in itertools.product([2, 4, 8, 16], [64, 128, 256], [2, 4])]


# bench/gpu.py's peer kernels (the same code), each autotuned here
row_sum = triton.autotune(configs=ROW_CONFIGS, key=["cols"])(gpu._row_sum)
stencil = triton.autotune(configs=STENCIL_CONFIGS, key=["n", "m"])(gpu._stencil)


_flush = None


def clean_l2_bench(fn, reps=100):
    """The median of reps calls timed by events, L2 emptied before each by reading 256 MB (clean lines)."""
    global _flush
    if _flush is None:
        _flush = torch.empty(64 << 20, device="cuda")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    fn()
    for s, e in zip(starts, ends):
        _flush.sum()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in zip(starts, ends))[reps // 2]


def both_timings(loom_fn, triton_fn):
    """do_bench and clean-L2 times (ms) of both, interleaved so both see the same machine state."""
    return [do_bench(loom_fn), do_bench(triton_fn), clean_l2_bench(loom_fn), clean_l2_bench(triton_fn)]


def main():
    dev = torch.cuda.get_device_name()
    rows_out = []
    for n, m in [(65536, 1024), (8192, 8192), (1048576, 256), (1048576, 32)]:
        a = torch.rand(n, m, device="cuda")
        o = torch.empty(n, device="cuda")
        row_sum[(n,)](a, o, m)  # autotune (first call)
        assert torch.allclose(o, a.sum(1), rtol=1e-3, atol=1e-3)
        knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")
        r = lp.tune(knl, parameters={"n": n, "m": m}, trials=len(ROW_CONFIGS), strategy="evolution", seed=1, target="cuda", progress=False)
        fast, out = r.kernel, torch.empty(n, device="cuda")
        fast(a=a, out=out)
        assert torch.allclose(out, a.sum(1), rtol=1e-3, atol=1e-3)
        times = both_timings(lambda: fast(a=a, out=out), lambda: row_sum[(n,)](a, o, m))
        gb = 4 * (n * m + n) / 1e9
        rows_out.append((f"row sums {n}x{m}", len(ROW_CONFIGS), [gb / (t * 1e-3) for t in times], r.best["script"]))
        print(rows_out[-1][:3], flush=True)
    n = m = 8192
    u = torch.rand(n, m, device="cuda")
    o = torch.zeros(n, m, device="cuda")
    grid = lambda meta: (triton.cdiv(m, meta["BN"]), triton.cdiv(n, meta["BM"]))
    stencil[grid](u, o, n, m)
    knl = lp.make_kernel("{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}",
                         "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]",
                         [lp.GlobalArg("u", "float32", shape=("n", "m")), lp.GlobalArg("out", "float32", shape=("n", "m"))])
    r = lp.tune(knl, parameters={"n": n, "m": m}, trials=len(STENCIL_CONFIGS), strategy="evolution", seed=1, target="cuda", progress=False)
    fast, out = r.kernel, torch.zeros(n, m, device="cuda")
    fast(u=u, out=out)
    assert torch.allclose(out[1:-1, 1:-1], o[1:-1, 1:-1], rtol=1e-3, atol=1e-3)
    times = both_timings(lambda: fast(u=u, out=out), lambda: stencil[grid](u, o, n, m))
    gb = 2 * 4 * n * m / 1e9
    rows_out.append(("5-point stencil 8192^2", len(STENCIL_CONFIGS), [gb / (t * 1e-3) for t in times], r.best["script"]))
    print(f"\nLoom's tuner vs @triton.autotune, the same number of configurations, {dev} (GB/s, each array once)")
    print("| workload | configurations | Loom tuned | Triton autotuned | Loom/Triton | clean L2: Loom | Triton | Loom/Triton |")
    print("|---|---|---|---|---|---|---|---|")
    for name, cfgs, (lo, tr, lo_c, tr_c), _ in rows_out:
        print(f"| {name} | {cfgs} | {lo:.0f} | {tr:.0f} | {lo / tr:.2f}x | {lo_c:.0f} | {tr_c:.0f} | {lo_c / tr_c:.2f}x |")
    for name, _, _, script in rows_out:
        print(f"\n{name}:\n{script}", end="")


if __name__ == "__main__":
    main()
