"""Torch peers for PolyBench's linear-algebra kernels at the LARGE dataset,
float64 on the GPU (issue 49's goals: matrix-vector kernels >= 0.8x torch,
matrix-matrix >= 0.5x), and a device copy's bandwidth (the stencils' goal:
>= 60% of it per sweep). Each kernel as PolyBench computes it, with torch's
own calls (cuBLAS underneath); CUDA events, median of 20 after 3 warm-ups.
    python3 bench/polybench_torch.py        (tools/device-polybench.sh runs it)"""
import torch


def ms(f, reps=20):
    for _ in range(3):
        f()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def r(*shape):
    return torch.rand(*shape, dtype=torch.float64, device="cuda")


alpha, beta = 1.5, 1.2
rows = []


def report(name, f, flops=None, bytes_=None):
    t = ms(f)
    extra = f", {flops / t / 1e9:.2f} TFLOP/s" if flops else f", {bytes_ / t / 1e6:.0f} GB/s" if bytes_ else ""
    print(f"torch {name}: {t:.4f} ms{extra}")


ni, nj, nk = 1000, 1100, 1200
A, B, C = r(ni, nk), r(nk, nj), r(ni, nj)
report("gemm (1000x1100x1200)", lambda: torch.addmm(C, A, B, beta=beta, alpha=alpha), 2 * ni * nj * nk)
ni, nj, nk, nl = 800, 900, 1100, 1200
A, B, C, D = r(ni, nk), r(nk, nj), r(nj, nl), r(ni, nl)
report("2mm", lambda: torch.addmm(D, alpha * (A @ B), C, beta=beta), 2 * ni * nj * nk + 2 * ni * nl * nj)
ni, nj, nk, nl, nm = 800, 900, 1000, 1100, 1200
A, B, C, D = r(ni, nk), r(nk, nj), r(nj, nm), r(nm, nl)
report("3mm", lambda: (A @ B) @ (C @ D), 2 * (ni * nj * nk + nj * nl * nm + ni * nl * nj))
m, n = 1000, 1200
A, B, C = r(n, m), r(n, m), r(n, n)
report("syrk (m=1000 n=1200, full product)", lambda: torch.addmm(C, A, A.T, beta=beta, alpha=alpha), 2 * n * n * m)
report("syr2k (full products)", lambda: torch.addmm(torch.addmm(C, A, B.T, beta=beta, alpha=alpha), B, A.T, alpha=alpha), 4 * n * n * m)
A, B, C = r(m, m), r(m, n), r(m, n)
report("symm (m=1000 n=1200, A symmetric, full product)", lambda: torch.addmm(C, A, B, beta=beta, alpha=alpha), 2 * m * m * n)
report("trmm (full product)", lambda: alpha * (A.T @ B), 2 * m * m * n)
nr, nq, np_ = 150, 140, 160
A, C4 = r(nr, nq, np_), r(np_, np_)
report("doitgen", lambda: A @ C4, 2 * nr * nq * np_ * np_)
m, n = 1900, 2100
A, x, tmp = r(m, n), r(n), r(m)
report("atax (m=1900 n=2100)", lambda: A.T @ (A @ x), bytes_=2 * 8 * m * n)
report("bicg", lambda: (A.T @ r(m), A @ r(n)), bytes_=2 * 8 * m * n)
n = 2000
A, x1, x2, y1, y2 = r(n, n), r(n), r(n), r(n), r(n)
report("mvt (n=2000)", lambda: (x1 + A @ y1, x2 + A.T @ y2), bytes_=2 * 8 * n * n)
n = 1300
A, B, x = r(n, n), r(n, n), r(n)
report("gesummv (n=1300)", lambda: alpha * (A @ x) + beta * (B @ x), bytes_=2 * 8 * n * n)
n = 2000
A, u1, v1, u2, v2, w, x, y, z = (r(n, n),) + tuple(r(n) for _ in range(8))


def gemver():
    A2 = A + torch.outer(u1, v1) + torch.outer(u2, v2)
    x2 = x + beta * (A2.T @ y) + z
    return w + alpha * (A2 @ x2)


report("gemver (n=2000)", gemver, bytes_=3 * 8 * n * n)
a = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
t = ms(lambda: a.clone())
print(f"device copy 256 MiB (a.clone()): {t:.4f} ms, {2 * a.numel() / t / 1e6:.0f} GB/s")
