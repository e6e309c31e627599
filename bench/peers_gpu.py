"""Peers on the GPU, measured in the same run as Loom's examples: torch for
the operations of examples/ at the sizes tools/device-run.sh times Loom at,
plus a device-to-device copy as the bandwidth ceiling. CUDA-event timing,
median of repeated runs."""
import torch


def median_ms(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def report(name, ms, nbytes=None, flops=None):
    line = f"torch {name:34s} {ms * 1e3:10.1f} us"
    if nbytes:
        line += f"  {nbytes / ms / 1e6:8.1f} GB/s"
    if flops:
        line += f"  {flops / ms / 1e9:8.2f} TFLOP/s"
    print(line)


def main():
    dev = "cuda"
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    n = 67108864
    a, b = torch.rand(n, device=dev), torch.rand(n, device=dev)
    out = torch.empty_like(a)
    report("copy (ceiling) n=2^26", median_ms(lambda: out.copy_(a)), 8 * n)
    report("vector add n=2^26", median_ms(lambda: torch.add(a, b, out=out)), 12 * n)
    report("axpy n=2^26", median_ms(lambda: b.add_(a, alpha=1.5)), 12 * n)
    A = torch.rand(65536, 1024, device=dev)
    r = torch.empty(65536, device=dev)
    report("row sums 65536x1024", median_ms(lambda: torch.sum(A, 1, out=r)), 4 * A.numel() + 4 * 65536)
    for rows, cols in ((8192, 8192), (1024, 262144), (1048576, 256), (1048576, 32)):
        B = torch.rand(rows, cols, device=dev)
        rb = torch.empty(rows, device=dev)
        report(f"row sums {rows}x{cols}", median_ms(lambda: torch.sum(B, 1, out=rb)), 4 * B.numel() + 4 * rows)
    M = torch.rand(16384, 16384, device=dev)
    x = torch.rand(16384, device=dev)
    report("matvec 16384^2", median_ms(lambda: torch.mv(M, x)), 4 * M.numel())
    torch.backends.cuda.matmul.allow_tf32 = False
    P, Q = torch.rand(4096, 4096, device=dev), torch.rand(4096, 4096, device=dev)
    report("matmul fp32 4096^3 (cuBLAS)", median_ms(lambda: P @ Q, reps=5), flops=2 * 4096**3)


if __name__ == "__main__":
    main()
