"""Why long row sums stay level with Triton (issue 30): both are at the
memory's read rate, and what is left between them is how the timing harness
leaves L2. Loom's tuned long-row schedules (the winners of
bench/tune_vs_triton.py) are compiled with four load flavours (plain,
__ldcs, an L2 evict_first policy, L1::no_allocate) by editing the CUDA C that
Loom generates, next to Triton's row sum with and without
eviction_policy="evict_first"; each is timed under three harnesses, three
interleaved rounds:

- do_bench: L2 emptied by writing 256 MB before each call (dirty lines the
  kernel's loads must write back);
- read-flush: L2 emptied by reading 256 MB (clean lines);
- no-flush: back-to-back calls.

    PYTHONPATH=build-py/python python3 bench/l2_policy_long_rows.py

A study, not a feature: Loom has no load-policy option (see RESULTS.md for
why the figures did not call for one).
"""
import statistics

import cupy as cp
import torch
import triton
import triton.language as tl
from triton.testing import do_bench

import loom as lp
from loom.tuning import _replay

LOADS = r'''
__device__ __forceinline__ float4 ld_plain(const float4* p) { return *p; }
__device__ __forceinline__ float4 ld_cs(const float4* p) { return __ldcs(p); }
__device__ __forceinline__ float4 ld_ef(const float4* p) {
  float4 v; unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  return v; }
__device__ __forceinline__ float4 ld_na(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v; }
'''

# the tuned schedules: (rows, columns), threads a row, rows a block, Triton's autotuned BLOCK and num_warps
SHAPES = [((65536, 1024), 64, 4, (2048, 4)), ((8192, 8192), 256, 2, (1024, 8))]


def loom_variant(source, load):
    """Loom's kernel with its float4 loads of `a` replaced by load(...)."""
    lines = []
    for line in source.replace('extern "C"', LOADS + 'extern "C"', 1).splitlines():
        if "loom_v0 = *reinterpret_cast" in line:
            line = line.replace("*reinterpret_cast", load + "(reinterpret_cast").rstrip(";") + ");"
        lines.append(line)
    return cp.RawModule(code="\n".join(lines), options=("-std=c++17",)).get_function("row_sums")


@triton.jit
def row_sum(a, o, cols, BLOCK: tl.constexpr, EVICT_FIRST: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        j = start + tl.arange(0, BLOCK)
        if EVICT_FIRST:
            acc += tl.load(a + row * cols + j, mask=j < cols, other=0.0, eviction_policy="evict_first")
        else:
            acc += tl.load(a + row * cols + j, mask=j < cols, other=0.0)
    tl.store(o + row, tl.sum(acc, axis=0))


_flush = torch.empty(64 << 20, device="cuda")


def event_bench(fn, before, reps=200):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    fn()
    for s, e in zip(starts, ends):
        before()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


HARNESSES = {"do_bench": do_bench, "read-flush": lambda f: event_bench(f, lambda: _flush.sum()), "no-flush": lambda f: event_bench(f, lambda: None)}


def main():
    print(torch.cuda.get_device_name())
    base = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])", name="row_sums")
    for (n, m), threads, rows, (block, warps) in SHAPES:
        script = f"assume m mod 4 = 0\nsplit_iname j 4 inner_tag=vec\nsplit_iname j_outer {threads} inner_tag=l.0\nsplit_iname i {rows} outer_tag=g.0 inner_tag=l.1\n"
        source = lp.generate_code_v2(_replay(base, script)).device_code()
        assert "row_sums(float *__restrict__ out, float const *__restrict__ a, int const n, int const m)" in source
        a = torch.rand(n, m, device="cuda")
        o = torch.empty(n, device="cuda")
        ref = a.sum(1)
        gb = 4 * (n * m + n) / 1e9
        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        fns = {}
        for load in ["ld_plain", "ld_cs", "ld_ef", "ld_na"]:
            k = loom_variant(source, load)
            fns["loom " + load] = lambda k=k: k(((n + rows - 1) // rows,), (threads, rows), (o.data_ptr(), a.data_ptr(), cp.int32(n), cp.int32(m)), stream=stream)
        for ev in (0, 1):
            fns[f"triton evict_first={ev}"] = lambda ev=ev: row_sum[(n,)](a, o, m, BLOCK=block, EVICT_FIRST=ev, num_warps=warps)
        for name, f in fns.items():
            o.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            assert torch.allclose(o, ref, rtol=1e-3, atol=1e-3), name
        figures = {(k, h): [] for k in fns for h in HARNESSES}
        for _ in range(3):
            for h, bench in HARNESSES.items():
                for k, f in fns.items():
                    figures[(k, h)].append(gb / (bench(f) * 1e-3))
        print(f"\n{n}x{m} GB/s, median of 3 interleaved rounds (min-max)")
        for k in fns:
            cells = [f"{h} {statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f})" for h in HARNESSES for v in [figures[(k, h)]]]
            print(f"  {k:24s} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
