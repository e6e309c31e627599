"""Loom's GPU benchmark: in one process, the device's ceilings (device-to-device
copy, cuBLAS SGEMM through PyTorch), every workload of issue 11 as a Loom
kernel (its schedule is the examples/ file named in the table) and its peers
(PyTorch, Triton, CuPy/CUB where installed). Times are medians of
triton.testing.do_bench (CUDA events when Triton is missing); each Loom result
is checked against PyTorch's before it is timed.

    PYTHONPATH=build/python python3 bench/gpu.py [--quick] [--csr (only the CSR row sums)] [--bf16 (only the bfloat16 GEMMs)] [--wgmma (only the sm_90a ones)] [--tf32 (only the TF32 wgmma rows)]

Prints, per workload: time, GB/s (each array counted once) or TFLOP/s, % of
the ceiling, the best peer and Loom's ratio to it."""
import os
import sys

import numpy as np
import torch

import loom as lp

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
QUICK = "--quick" in sys.argv
# LOOM_BENCH_ONLY=gemm_bf16_wgmma_tma_any,...: only the wgmma rows of these examples
ONLY = set(filter(None, os.environ.get("LOOM_BENCH_ONLY", "").split(",")))

try:
    import triton
    import triton.language as tl
except ImportError:  # the peers that need Triton are skipped
    triton = None
try:
    import cupy as cp
except ImportError:
    cp = None


def median_ms(fn):
    if triton is not None:
        return triton.testing.do_bench(fn, warmup=25 if QUICK else 100, rep=50 if QUICK else 300, return_mode="median")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def loom_kernel(name):
    return lp.load_kernel(os.path.join(EXAMPLES, name + ".loom"))


# ---------------- Triton peers ----------------
if triton is not None:

    @triton.jit
    def _add(a, b, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, tl.load(a + i, mask=m) + tl.load(b + i, mask=m), mask=m)

    @triton.jit
    def _row_sum(a, o, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            j = start + tl.arange(0, BLOCK)
            acc += tl.load(a + row * cols + j, mask=j < cols, other=0.0)
        tl.store(o + row, tl.sum(acc, axis=0))

    @triton.jit
    def _stencil(u, o, n, m, BM: tl.constexpr, BN: tl.constexpr):
        i = tl.program_id(1) * BM + tl.arange(0, BM)[:, None]
        j = tl.program_id(0) * BN + tl.arange(0, BN)[None, :]
        inside = (i >= 1) & (i < n - 1) & (j >= 1) & (j < m - 1)
        p = u + i * m + j
        v = (tl.load(p - m, mask=inside) + tl.load(p + m, mask=inside) + tl.load(p - 1, mask=inside)
             + tl.load(p + 1, mask=inside) - 4 * tl.load(p, mask=inside))
        tl.store(o + i * m + j, v, mask=inside)


def triton_matmul(a, b, c):
    """Best of five tile configurations, as the issue's figure was measured."""
    from triton_sgemm import best_of_five  # (beside this file)

    return best_of_five(a, b, c, median_ms)


# ---------------- the table ----------------
ROWS = []


def row(workload, schedule, loom_ms, peers, nbytes=None, flops=None, ceiling=None, ok=True):
    ROWS.append((workload, schedule, loom_ms, peers, nbytes, flops, ceiling, ok))
    rate = (lambda ms: nbytes / ms / 1e6) if nbytes else (lambda ms: flops / ms / 1e9)
    unit = "GB/s" if nbytes else "TFLOP/s"
    best = min(peers.items(), key=lambda kv: kv[1]) if peers else None
    line = f"{workload:34s} loom {loom_ms * 1e3:9.1f} us {rate(loom_ms):8.1f} {unit:7s}"
    if ceiling:
        line += f" {100 * rate(loom_ms) / ceiling:5.1f}% of ceiling"
    if best:
        line += f" | best peer {best[0]} {rate(best[1]):8.1f} -> loom/peer {best[1] / loom_ms:5.2f}x"
    line += f"  [{schedule}]" + ("" if ok else "  WRONG RESULT")
    print(line, flush=True)
    for name, ms in sorted(peers.items(), key=lambda kv: kv[1]):
        print(f"{'':34s}   {name:22s} {ms * 1e3:9.1f} us {rate(ms):8.1f} {unit}")


def check(out, ref, rtol=1e-4, atol=1e-3):
    return bool(torch.allclose(out, ref, rtol=rtol, atol=atol))


def cub_segmented_sum():
    """CUB's DeviceSegmentedReduce::Sum through ctypes (bench/peers/cub_segmented_sum.cu, built here with
    nvcc), as f(values, out, offsets); None where nvcc or the build is missing."""
    import ctypes
    import shutil
    import subprocess
    import tempfile
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        print("(CUB segmented reduce: no nvcc here, skipped)")
        return None
    lib = os.path.join(tempfile.mkdtemp(), "libcub_segsum.so")
    src = os.path.join(HERE, "peers", "cub_segmented_sum.cu")
    major, minor = torch.cuda.get_device_capability()
    r = subprocess.run([nvcc, "-O3", f"-arch=sm_{major}{minor}", "-shared", "-Xcompiler", "-fPIC", "-o", lib, src],
                       capture_output=True, text=True)
    if r.returncode:
        print("(CUB segmented reduce: nvcc failed, skipped)\n" + r.stderr[-2000:])
        return None
    f = ctypes.CDLL(lib).cub_segmented_sum
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                  ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
    scratch = {}

    def run(values, out, offsets):
        n = out.numel()
        stream = torch.cuda.current_stream().cuda_stream
        if n not in scratch:
            size = ctypes.c_size_t(0)
            assert f(None, out.data_ptr(), n, offsets.data_ptr(), None, ctypes.byref(size), stream) == 0
            scratch[n] = (torch.empty(max(size.value, 1), dtype=torch.uint8, device=out.device), size)
        buf, size = scratch[n]
        assert f(values.data_ptr(), out.data_ptr(), n, offsets.data_ptr(), buf.data_ptr(), ctypes.byref(size), stream) == 0
    return run


def csr_schedules():
    """CSR row sums as written (loopy's data-dependent domain) and the schedules the rows try: the example's
    (a warp per row, four loads in flight per lane), the same with one load in flight, two warps per row
    (for long rows), and csr_row_sums_balanced (every 256 values summed first, whatever their row, then
    8 lanes per row add its ends and its whole chunks' sums: no row's work follows the longest row), and
    csr_row_sums_flagged (the same, but only the chunks that lie inside one row are summed first: every
    value is read once)."""
    base = lp.make_kernel(["{[i]: 0 <= i < n}", "{[jj]: 0 <= jj < row_len}"],
                          """
                          <int32> row_start = ptr[i]
                          <int32> row_len = ptr[i + 1] - row_start
                          out[i] = sum(jj, vals[row_start + jj])
                          """,
                          [lp.GlobalArg("ptr", np.int32, shape="n + 1"), lp.GlobalArg("vals", np.float32, shape="nnz"),
                           lp.GlobalArg("out", np.float32, shape="n")], name="csr_row_sums")

    def warp_rows(k, lanes=32, rows=8, unroll=1):
        k = lp.split_iname(k, "jj", lanes, inner_tag="l.0")
        if unroll > 1:
            k = lp.split_iname(k, "jj_outer", unroll, inner_tag="unr")
        return lp.split_iname(k, "i", rows, outer_tag="g.0", inner_tag="l.1")
    # (H100, 2026-11-26: 128 threads per row was slower than both on both length distributions)
    return {"csr_row_sums": loom_kernel("csr_row_sums"),
            "csr_row_sums_balanced (chunk sums, then 8 lanes per row)": loom_kernel("csr_row_sums_balanced"),
            "csr_row_sums_flagged (only chunks inside one row summed first)": loom_kernel("csr_row_sums_flagged"),
            "warp/row, 1 load in flight": warp_rows(base),
            "2 warps/row, 4 loads in flight": warp_rows(base, lanes=64, rows=4, unroll=4)}


def csr_row_sums(dev, copy_gbs):
    """Variable-length segmented sums (CSR row sums, loopy's data-dependent loop bounds): 2^20 rows of 64
    values each, and power-law lengths (Pareto, same mean), against torch.segment_reduce, CUB's segmented
    reduce and cuSPARSE's CSR SpMV (CuPy) by a vector of ones (which reads column indices too). Each Loom
    schedule runs checked (the accesses through ptr's values cannot be proven: checked at run time, a
    synchronization per call) and trusted (trust_unproven_accesses)."""
    cub = cub_segmented_sum()
    rows_ = 1 << 20
    rng = np.random.default_rng(0)
    schedules = csr_schedules()
    for kind, lengths in (("uniform", np.full(rows_, 64)),
                          ("power-law", np.minimum(np.floor((rng.pareto(1.5, rows_) + 1) * 64 / 3), 1 << 20).astype(np.int64))):
        ptr_host = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        nnz = int(ptr_host[-1])
        ptr = torch.from_numpy(ptr_host).to(dev)
        vals = torch.rand(nnz, device=dev)
        out = torch.empty(rows_, device=dev)
        ref = torch.segment_reduce(vals.double(), "sum", offsets=ptr.long()).float()
        print(f"CSR {kind}: {rows_} rows, {nnz} values, longest row {int(lengths.max())}")
        peers = {"torch.segment_reduce": median_ms(lambda: torch.segment_reduce(vals, "sum", offsets=ptr))}
        if cub is not None:
            cub_out = torch.empty(rows_, device=dev)
            cub(vals, cub_out, ptr)
            if check(cub_out, ref, rtol=1e-4, atol=1e-2):
                peers["CUB DeviceSegmentedReduce"] = median_ms(lambda: cub(vals, cub_out, ptr))
            else:
                print("(CUB's segmented reduce gave a wrong result: left out)")
        if cp is not None:
            import cupyx.scipy.sparse as csp
            # column = position in the row: distinct and sorted, so the matrix is canonical and keeps every value
            cols = cp.asarray((np.arange(nnz, dtype=np.int64) - np.repeat(ptr_host[:-1], lengths)).astype(np.int32))
            m = csp.csr_matrix((cp.asarray(vals), cols, cp.asarray(ptr)), shape=(rows_, int(lengths.max())))
            ones = cp.ones(int(lengths.max()), dtype=cp.float32)
            y = m @ ones
            if m.nnz == nnz and check(torch.as_tensor(y, device=dev), ref, rtol=1e-4, atol=1e-2):
                peers["cuSPARSE CSR SpMV x ones (cupy)"] = median_ms(lambda: m @ ones)
            else:
                print("(CuPy's SpMV gave a wrong result or dropped values: left out)")
            del m, cols
        for name, k in schedules.items():
            for sched, kk in ((name + " (checked)", k), (name + " + trust_unproven_accesses", lp.trust_unproven_accesses(k))):
                out.fill_(float("nan"))
                kk(ptr=ptr, vals=vals, out=out)
                ok = check(out, ref, rtol=1e-4, atol=1e-2)
                row(f"CSR row sums {kind} 2^20 rows", sched, median_ms(lambda: kk(ptr=ptr, vals=vals, out=out)),
                    peers, nbytes=4 * nnz + 4 * (rows_ + 1) + 4 * rows_, ceiling=copy_gbs, ok=ok)
        del ptr, vals, out


def bf16_gemms(dev, wgmma_only=False):
    """The bfloat16 GEMM rows: mma.sync schedules (a b) and the wgmma schedules (sm_90a)."""
    # bfloat16 GEMM on the tensor cores (float32 accumulation and result)
    bf_ceiling = None
    mma_sync = ((8192, "gemm_bf16"), (4096, "gemm_bf16"), (4000, "gemm_bf16_zfill"), (4000, "gemm_bf16_any"))
    for size, sched in () if wgmma_only else mma_sync:
        A = torch.randn(size, size, device=dev).to(torch.bfloat16)
        B = torch.randn(size, size, device=dev).to(torch.bfloat16)
        C = torch.empty(size, size, device=dev)
        k = loom_kernel(sched)
        C.fill_(float("nan"))
        k(a=A, b=B, c=C)
        ok = check(C, A.float() @ B.float(), rtol=1e-2, atol=1e-2)
        # (cuBLAS writes bf16, Loom and Triton float32: 4 bytes more per element of c, 0.1% of the time at 4096^3)
        peers = {"cuBLAS (torch.matmul)": median_ms(lambda: torch.matmul(A, B))}
        if triton:
            from triton_sgemm import best_of_six_tensor_core

            t = best_of_six_tensor_core(A, B, C, median_ms)
            if t:
                peers["triton tl.dot (best of 6)"] = t
        flops = 2 * size**3
        if bf_ceiling is None:
            bf_ceiling = flops / min(v for n_, v in peers.items() if n_.startswith("cuBLAS")) / 1e9
            print(f"ceiling: cuBLAS bf16 GEMM {size}^3 {bf_ceiling:.1f} TFLOP/s")
        row(f"gemm bf16 {size}^3", sched, median_ms(lambda: k(a=A, b=B, c=C)), peers, flops=flops, ceiling=bf_ceiling, ok=ok)
        del A, B, C

    # bfloat16 GEMM on Hopper's warpgroup instruction (wgmma, sm_90a: compute capability 9.0 only):
    # c = a w^T with w stored [m, l] (both operands K-major, a linear layer's weight), and c = a b with
    # b stored [l, m] (torch.matmul's own layout: b's tile read with the transpose bit); the _tma
    # schedules' tiles come from the tensor memory accelerator (tma_copy), _any's at any size
    # (zero-filled boxes), _mult8's at sizes that are multiples of 8 (its guarded stores paired)
    if torch.cuda.get_device_capability(dev) == (9, 0):
        bf16, f16 = torch.bfloat16, torch.float16
        for label, sched, stored_mk, sizes, dt in (("a w^T", "gemm_bf16_wgmma", True, (8192, 4096), bf16),
                                                   ("a w^T", "gemm_bf16_wgmma_tma", True, (8192, 4096), bf16),
                                                   ("a w^T", "gemm_bf16_wgmma_tma_any", True, (4000,), bf16),
                                                   ("a w^T", "gemm_bf16_wgmma_tma_mult8", True, (4000,), bf16),
                                                   ("a b", "gemm_bf16_wgmma_nn", False, (8192, 4096), bf16),
                                                   ("a b", "gemm_bf16_wgmma_nn_tma", False, (8192, 4096), bf16),
                                                   ("a w^T", "gemm_f16_wgmma_tma", True, (8192, 4096), f16),
                                                   ("a b", "gemm_f16_wgmma_nn_tma", False, (8192, 4096), f16)):
            for size in sizes if not ONLY or sched in ONLY else ():
                A = torch.randn(size, size, device=dev).to(dt)
                B = torch.randn(size, size, device=dev).to(dt)
                Bkn = B.t() if stored_mk else B  # (the product's b, [l, m], as torch sees it)
                C = torch.empty(size, size, device=dev)
                k = loom_kernel(sched)
                C.fill_(float("nan"))
                k(a=A, b=B, c=C)
                ok = check(C, A.float() @ Bkn.float(), rtol=1e-2, atol=1e-2)
                cublas = "cuBLAS (torch.matmul(a, w.T))" if stored_mk else "cuBLAS (torch.matmul)"
                peers = {cublas: median_ms(lambda: torch.matmul(A, Bkn))}
                if triton:
                    from triton_sgemm import best_of_six_tensor_core

                    Bc = Bkn.contiguous()  # (Triton's kernel reads b as [l, m])
                    t = best_of_six_tensor_core(A, Bc, C, median_ms)
                    if t:
                        peers["triton tl.dot (best of 6" + (", w^T stored)" if stored_mk else ")")] = t
                    del Bc
                flops = 2 * size**3
                row(f"gemm {'bf16' if dt == bf16 else 'f16'} {label} {size}^3" + ("" if stored_mk else " (wgmma)"), sched, median_ms(lambda: k(a=A, b=B, c=C)), peers,
                    flops=flops, ceiling=flops / peers[cublas] / 1e9, ok=ok)
                del A, B, Bkn, C

        tf32_wgmma(dev)

        # a linear layer's forward pass, fused: relu(a w^T + bias) in bfloat16 (w stored [m, l])
        fused = not ONLY or "gemm_bf16_wgmma_tma_bias_relu" in ONLY
        for (M, N, K) in ((8192, 8192, 128), (8192, 8192, 8192)) if fused else ():
            A = torch.randn(M, K, device=dev).to(torch.bfloat16)
            W = torch.randn(N, K, device=dev).to(torch.bfloat16)
            bias = torch.randn(N, device=dev)
            bias16 = bias.to(torch.bfloat16)
            C = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            k = loom_kernel("gemm_bf16_wgmma_tma_bias_relu")
            C.fill_(float("nan"))
            k(a=A, b=W, bias=bias, c=C)
            ok = check(C.float(), torch.relu(A.float() @ W.float().t() + bias), rtol=2e-2, atol=2e-2)
            peers = {"torch.addmm + torch.relu": median_ms(lambda: torch.relu(torch.addmm(bias16, A, W.t())))}
            if triton:
                from triton_sgemm import best_of_six_tensor_core

                Wt = W.t().contiguous()
                t = best_of_six_tensor_core(A, Wt, C, median_ms, bias=bias)
                if t:
                    peers["triton fused (best of 6, w^T stored)"] = t
                del Wt
            row(f"gemm+bias+relu bf16 a w^T {M}x{N}x{K}", "gemm_bf16_wgmma_tma_bias_relu", median_ms(lambda: k(a=A, b=W, bias=bias, c=C)),
                peers, flops=2 * M * N * K, ok=ok)
            del A, W, C

        # a skinny product, c in bfloat16 as cuBLAS writes it (8192x8192x128: writing c is most of the time)
        if not ONLY or "gemm_bf16_wgmma_tma_skinny" in ONLY:
            M, N, K = 8192, 8192, 128
            A = torch.randn(M, K, device=dev).to(torch.bfloat16)
            W = torch.randn(N, K, device=dev).to(torch.bfloat16)
            C = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            k = loom_kernel("gemm_bf16_wgmma_tma_skinny")
            C.fill_(float("nan"))
            k(a=A, b=W, c=C)
            ok = check(C.float(), A.float() @ W.float().t(), rtol=2e-2, atol=2e-2)
            cublas = "cuBLAS (torch.matmul(a, w.T))"
            peers = {cublas: median_ms(lambda: torch.matmul(A, W.t()))}
            if triton:
                from triton_sgemm import best_of_six_tensor_core

                Wt = W.t().contiguous()
                t = best_of_six_tensor_core(A, Wt, C, median_ms)
                if t:
                    peers["triton tl.dot (best of 6, w^T stored)"] = t
                del Wt
            flops = 2 * M * N * K
            row(f"gemm bf16 a w^T {M}x{N}x{K} (c bf16)", "gemm_bf16_wgmma_tma_skinny", median_ms(lambda: k(a=A, b=W, c=C)), peers,
                flops=flops, ceiling=flops / peers[cublas] / 1e9, ok=ok)
            del A, W, C


def tf32_wgmma(dev):
    """TF32 GEMM rows on the warpgroup (sm_90a)."""
    if torch.cuda.get_device_capability(dev) != (9, 0) or (ONLY and "gemm_tf32_wgmma_tma" not in ONLY):
        return
    # TF32 on the warpgroup: float32 a w^T (w stored [m, l]; TF32 operands are K-major only), the
    # factors trunc_tf32 (wgmma drops the 13 low mantissa bits of the float32 tiles), checked against
    # a float64 product of the truncated inputs; cuBLAS and Triton with TF32 allowed
    def trunc_tf32(x):
        return (x.view(torch.int32) & -0x2000).view(torch.float32)

    for size in (8192, 4096):
        A, W = torch.randn(size, size, device=dev), torch.randn(size, size, device=dev)
        C = torch.empty(size, size, device=dev)
        k = loom_kernel("gemm_tf32_wgmma_tma")
        C.fill_(float("nan"))
        k(a=A, b=W, c=C)
        ok = check(C, (trunc_tf32(A).double() @ trunc_tf32(W).double().t()).float(), rtol=1e-3, atol=1e-2)
        torch.backends.cuda.matmul.allow_tf32 = True
        peers = {"cuBLAS TF32 (torch.matmul(a, w.T))": median_ms(lambda: torch.matmul(A, W.t()))}
        if triton:
            from triton_sgemm import best_of_six_tensor_core

            Wt = W.t().contiguous()
            t = best_of_six_tensor_core(A, Wt, C, median_ms)
            if t:
                peers["triton tl.dot tf32 (best of 6, w^T stored)"] = t
            del Wt
        torch.backends.cuda.matmul.allow_tf32 = False
        flops = 2 * size**3
        row(f"gemm tf32 a w^T {size}^3", "gemm_tf32_wgmma_tma", median_ms(lambda: k(a=A, b=W, c=C)), peers, flops=flops,
            ceiling=flops / peers["cuBLAS TF32 (torch.matmul(a, w.T))"] / 1e9, ok=ok)
        del A, W, C


def f64_gemms(dev):
    """float64 GEMM rows on the FP64 tensor cores (mma.sync m8n8k4), against cuBLAS's DGEMM."""
    if ONLY and "gemm_f64" not in ONLY:
        return
    # 4096^3, and PolyBench's gemm at its LARGE size (1000 x 1100 x 1200: partial tiles)
    for (M, N, K) in ((4096, 4096, 4096), (1000, 1100, 1200), (2000, 2300, 2600)):
        A = torch.randn(M, K, device=dev, dtype=torch.float64)
        B = torch.randn(K, N, device=dev, dtype=torch.float64)
        C = torch.empty(M, N, device=dev, dtype=torch.float64)
        k = loom_kernel("gemm_f64")
        C.fill_(float("nan"))
        k(a=A, b=B, c=C)
        ok = check(C, A @ B, rtol=1e-9, atol=1e-9)
        cublas = median_ms(lambda: torch.mm(A, B, out=C))
        flops = 2 * M * N * K
        row(f"gemm fp64 {M}x{N}x{K}", "gemm_f64", median_ms(lambda: k(a=A, b=B, c=C)), {"cuBLAS DGEMM (torch.mm)": cublas},
            flops=flops, ceiling=flops / cublas / 1e9, ok=ok)
        del A, B, C


def main():
    dev = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"{torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__ if triton else '-'}  "
          f"cupy {cp.__version__ if cp else '-'}")

    # ceilings
    n = 1 << (26 if QUICK else 28)
    a, b = torch.rand(n, device=dev), torch.rand(n, device=dev)
    out = torch.empty_like(a)
    copy_ms = median_ms(lambda: out.copy_(a))
    copy_gbs = 8 * n / copy_ms / 1e6
    print(f"ceiling: device-to-device copy {copy_gbs:.0f} GB/s")
    if "--csr" in sys.argv:  # only the CSR rows (data-dependent loop bounds)
        del a, b, out
        csr_row_sums(dev, copy_gbs)
        return
    if "--tf32" in sys.argv:  # only the TF32 rows on the warpgroup (sm_90a)
        del a, b, out
        tf32_wgmma(dev)
        return
    if "--f64" in sys.argv:  # only the float64 GEMM rows (the FP64 tensor cores)
        del a, b, out
        f64_gemms(dev)
        return
    if "--bf16" in sys.argv or "--wgmma" in sys.argv:  # only the bfloat16 GEMM rows (tensor cores; --wgmma: sm_90a's)
        del a, b, out
        bf16_gemms(dev, wgmma_only="--wgmma" in sys.argv)
        return
    P, Q = torch.rand(4096, 4096, device=dev), torch.rand(4096, 4096, device=dev)
    cublas_ms = median_ms(lambda: P @ Q)
    cublas_tf = 2 * 4096**3 / cublas_ms / 1e9
    print(f"ceiling: cuBLAS SGEMM 4096^3 {cublas_tf:.1f} TFLOP/s (fp32, TF32 off)")

    # vector add
    peers = {"torch.add": median_ms(lambda: torch.add(a, b, out=out))}
    if triton:
        peers["triton"] = median_ms(lambda: _add[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024))
    for sched in ("vector_add_ilp", "vector_add_vec"):
        k = loom_kernel(sched)
        out.fill_(float("nan"))
        k(a=a, b=b, out=out)
        ok = check(out, a + b)
        row(f"vector add fp32 n={n}", sched, median_ms(lambda: k(a=a, b=b, out=out)), peers, nbytes=12 * n,
            ceiling=copy_gbs, ok=ok)

    # the sum of a whole array: a reduction across blocks (two launches, loopy's global barrier)
    total = torch.empty(1, device=dev)
    peers = {"torch.sum": median_ms(lambda: torch.sum(a, 0, out=total[0]))}
    if cp is not None:
        ca, ct = cp.asarray(a), cp.empty((), dtype=cp.float32)
        peers["cupy.sum (CUB)"] = median_ms(lambda: cp.sum(ca, out=ct))
    k = loom_kernel("sum_all")
    total.fill_(float("nan"))
    k(a=a, total=total)
    ok = check(total, a.double().sum().float().reshape(1), rtol=1e-4, atol=1e-2)
    row(f"sum of a whole array fp32 n={n}", "sum_all", median_ms(lambda: k(a=a, total=total)), peers, nbytes=4 * n,
        ceiling=copy_gbs, ok=ok)
    del a, b, out

    # row sums
    shapes = ((65536, 1024, ("row_sums_warp", "row_sums_warp_vec", "row_sums_2warps_vec")), (8192, 8192, ("row_sums_long", "row_sums_long_vec")),
              (1024, 262144, ("row_sums_long", "row_sums_long_vec")), (1048576, 256, ("row_sums_warp", "row_sums_warp_vec")),
              (1048576, 32, ("row_sums_short", "row_sums_short_vec")))
    for rows_, cols, scheds in shapes:
        A = torch.rand(rows_, cols, device=dev)
        r = torch.empty(rows_, device=dev)
        peers = {"torch.sum": median_ms(lambda: torch.sum(A, 1, out=r))}
        if triton:
            blk = min(1024, triton.next_power_of_2(cols))
            peers["triton"] = median_ms(lambda: _row_sum[(rows_,)](A, r, cols, BLOCK=blk))
        if cp is not None:
            CA = cp.asarray(A)
            CR = cp.empty(rows_, dtype=cp.float32)
            peers["cupy.sum (CUB)"] = median_ms(lambda: cp.sum(CA, axis=1, out=CR))
        for sched in scheds:
            k = loom_kernel(sched)
            r.fill_(float("nan"))
            k(a=A, out=r)
            ok = check(r, A.sum(1), rtol=1e-4, atol=1e-2)
            row(f"row sums fp32 {rows_}x{cols}", sched, median_ms(lambda: k(a=A, out=r)), peers, nbytes=4 * A.numel() + 4 * rows_,
                ceiling=copy_gbs, ok=ok)
        del A, r

    csr_row_sums(dev, copy_gbs)

    # SGEMM
    # (sgemm_any also with the sizes' divisibility by 16 left unspecialized: its
    # general code is faster there, bench/RESULTS.md, eleventh session)
    for size, sched in ((4096, "sgemm_tiled"), (4096, "sgemm_vec"), (4000, "sgemm_any"), (4000, "sgemm_any general"),
                        (4000, "sgemm_zfill")):
        A, B = torch.rand(size, size, device=dev), torch.rand(size, size, device=dev)
        C = torch.empty(size, size, device=dev)
        k = loom_kernel(sched.split()[0])
        if sched.endswith(" general"):
            k = k.copy(do_not_specialize=("n", "m", "l"))
        k(a=A, b=B, c=C)
        ok = check(C, A @ B, rtol=1e-3, atol=1e-2)
        peers = {"cuBLAS (torch.mm)": median_ms(lambda: torch.mm(A, B, out=C))}
        if triton:
            t = triton_matmul(A, B, C)
            if t:
                peers["triton (ieee, best of 5)"] = t
        row(f"sgemm fp32 {size}^3", sched, median_ms(lambda: k(a=A, b=B, c=C)), peers, flops=2 * size**3, ceiling=cublas_tf,
            ok=ok)
        del A, B, C

    bf16_gemms(dev)
    f64_gemms(dev)

    # TF32 GEMM (float32 operands rounded to TF32, asked for in the kernel)
    size = 4096
    A, B = torch.randn(size, size, device=dev), torch.randn(size, size, device=dev)
    C = torch.empty(size, size, device=dev)
    k = loom_kernel("gemm_tf32")
    C.fill_(float("nan"))
    k(a=A, b=B, c=C)
    def tf32(x):  # round_tf32: the mantissa to 10 bits, nearest, ties away from zero
        return ((x.view(torch.int32) + 0x1000) & -0x2000).view(torch.float32)

    ok = check(C, (tf32(A).double() @ tf32(B).double()).float(), rtol=1e-3, atol=1e-2)
    torch.backends.cuda.matmul.allow_tf32 = True
    tf32_ms = median_ms(lambda: torch.mm(A, B, out=C))
    peers = {"cuBLAS TF32 (torch.mm)": tf32_ms}
    if triton:
        from triton_sgemm import best_of_six_tensor_core

        t = best_of_six_tensor_core(A, B, C, median_ms)
        if t:
            peers["triton tl.dot tf32 (best of 6)"] = t
    torch.backends.cuda.matmul.allow_tf32 = False
    row(f"gemm tf32 {size}^3", "gemm_tf32", median_ms(lambda: k(a=A, b=B, c=C)), peers, flops=2 * size**3,
        ceiling=2 * size**3 / tf32_ms / 1e9, ok=ok)
    del A, B, C

    # GEMM + bias + ReLU in bfloat16, fused (skinny: the epilogue's pass over c weighs as much as the product)
    for (M, N, K) in ((8192, 8192, 128), (8192, 8192, 8192)):
        A = torch.randn(M, K, device=dev).to(torch.bfloat16)
        B = torch.randn(K, N, device=dev).to(torch.bfloat16)
        bias = torch.randn(N, device=dev)
        bias16 = bias.to(torch.bfloat16)
        C = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        k = loom_kernel("gemm_bf16_bias_relu")
        C.fill_(float("nan"))
        k(a=A, b=B, bias=bias, c=C)
        ok = check(C.float(), torch.relu(A.float() @ B.float() + bias), rtol=2e-2, atol=2e-2)
        peers = {"torch.addmm + torch.relu": median_ms(lambda: torch.relu(torch.addmm(bias16, A, B)))}
        if triton:
            from triton_sgemm import best_of_six_tensor_core

            t = best_of_six_tensor_core(A, B, C, median_ms, bias=bias)
            if t:
                peers["triton fused (best of 6)"] = t
        row(f"gemm+bias+relu bf16 {M}x{N}x{K}", "gemm_bf16_bias_relu", median_ms(lambda: k(a=A, b=B, bias=bias, c=C)), peers,
            flops=2 * M * N * K, ok=ok)
        del A, B, C

    # batched 16x16 bfloat16 products on the tensor cores
    nb = 65536
    A = torch.randn(nb, 16, 16, device=dev).to(torch.bfloat16)
    X = torch.randn(nb, 16, 16, device=dev).to(torch.bfloat16)
    C = torch.empty(nb, 16, 16, device=dev, dtype=torch.bfloat16)
    peers = {"torch.bmm": median_ms(lambda: torch.bmm(A, X, out=C))}
    k = loom_kernel("bmm16_bf16")
    C.fill_(float("nan"))
    k(a=A, x=X, c=C)
    ok = check(C.float(), torch.bmm(A.float(), X.float()), rtol=1e-2, atol=1e-2)
    row(f"batched 16x16 products bf16, {nb}", "bmm16_bf16", median_ms(lambda: k(a=A, x=X, c=C)), peers, nbytes=3 * nb * 512,
        ceiling=copy_gbs, ok=ok)
    del A, X, C

    # 5-point stencil
    n2 = 8192
    U = torch.rand(n2, n2, device=dev)
    O = torch.zeros(n2, n2, device=dev)
    ref = torch.zeros_like(O)
    ref[1:-1, 1:-1] = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4 * U[1:-1, 1:-1]

    def torch_stencil():
        O[1:-1, 1:-1] = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4 * U[1:-1, 1:-1]

    peers = {"torch (slices)": median_ms(torch_stencil)}
    if triton:
        peers["triton"] = median_ms(lambda: _stencil[(triton.cdiv(n2, 128), triton.cdiv(n2, 8))](U, O, n2, n2, BM=8, BN=128))
    for sched in ("stencil_prefetch", "stencil_rows"):
        k = loom_kernel(sched)
        O.fill_(float("nan"))
        O[0, :] = 0
        O[-1, :] = 0
        O[:, 0] = 0
        O[:, -1] = 0
        k(u=U, out=O)
        ok = check(O, ref)
        row(f"5-point stencil fp32 {n2}^2", sched, median_ms(lambda: k(u=U, out=O)), peers, nbytes=8 * n2 * n2, ceiling=copy_gbs,
            ok=ok)
    del U, O, ref

    # batched 16x16 products
    nb = 65536
    A, X = torch.rand(nb, 16, 16, device=dev), torch.rand(nb, 16, 16, device=dev)
    C = torch.empty(nb, 16, 16, device=dev)
    peers = {"torch.bmm": median_ms(lambda: torch.bmm(A, X, out=C))}
    for sched in ("bmm16", "bmm16_direct", "bmm16_vec"):
        k = loom_kernel(sched)
        C.fill_(float("nan"))
        k(a=A, x=X, c=C)
        ok = check(C, torch.bmm(A, X), rtol=1e-4, atol=1e-3)
        row(f"batched 16x16 products, {nb}", sched, median_ms(lambda: k(a=A, x=X, c=C)), peers, nbytes=3 * 4 * A.numel(),
            ceiling=copy_gbs, ok=ok)
    del A, X, C

    # DG element kernel, at the size (2^20 elements) and at 2^22: nd=10
    # moves only 40 MiB each way at 2^20, where a plain copy stays near 80% of
    # the large copy's rate; at 2^22 the same schedule shows its own rate
    for ne, nd in ((1 << 20, 10), (1 << 20, 32), (1 << 22, 10)):
        D = torch.rand(nd, nd, device=dev)
        u = torch.rand(ne, nd, device=dev)
        res = torch.empty(ne, nd, device=dev)
        peers = {"torch.matmul": median_ms(lambda: torch.matmul(u, D.T, out=res))}
        for sched in (f"dg{nd}",):
            k = loom_kernel(sched)
            res.fill_(float("nan"))
            k(D=D, u=u, res=res)
            ok = check(res, u @ D.T, rtol=1e-4, atol=1e-3)
            loom_ms = median_ms(lambda: k(D=D, u=u, res=res))
            row(f"DG element kernel nd={nd}, 2^{ne.bit_length() - 1} el.", sched, loom_ms, peers,
                nbytes=2 * 4 * u.numel(), ceiling=copy_gbs, ok=ok)
        # the ceiling at this size: a copy of the same bytes (a short kernel
        # does not reach the large copy's rate)
        same_ms = median_ms(lambda: res.copy_(u))
        print(f"{'':34s}   copy of the same bytes  {same_ms * 1e3:9.1f} us {2 * 4 * u.numel() / same_ms / 1e6:8.1f} GB/s"
              f" -> loom at {100 * same_ms / loom_ms:5.1f}% of it")
        del D, u, res

    wrong = [r[0] for r in ROWS if not r[7]]
    if wrong:
        print("WRONG RESULTS:", ", ".join(wrong))
        sys.exit(1)


if __name__ == "__main__":
    main()
