"""Per-call launch overhead from Python on a tiny kernel (out = 2 * a, 1024
elements, CUDA tensors), in one process: Loom, PyTorch, CuPy's RawKernel and
Triton where installed. Host time per call over many calls, with the GPU
kept busy enough that the launch path, not the kernel, is what is timed.
Usage: PYTHONPATH=build/python python3 bench/launch_overhead.py"""
import time

import loom as lp

N, CALLS = 1024, 20000


def per_call_us(fn, sync):
    for _ in range(200):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        fn()
    sync()
    return (time.perf_counter() - t0) / CALLS * 1e6


def main():
    import torch
    a = torch.arange(N, dtype=torch.float32, device="cuda")
    out = torch.empty_like(a)
    sync = torch.cuda.synchronize
    rows = []
    knl = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]"), "i", 256, outer_tag="g.0", inner_tag="l.0")
    knl(a=a, out=out)
    rows.append(("loom knl(a=, out=)", per_call_us(lambda: knl(a=a, out=out), sync)))
    # the floor: the same bound launch from a C++ loop (no Python at all)
    rows.append(("cuLaunchKernel from C++ (floor)", knl._dispatch.launch_floor({"a": a, "out": out}, CALLS)))
    rows.append(("torch.mul(a, 2, out=)", per_call_us(lambda: torch.mul(a, 2, out=out), sync)))
    try:
        import cupy as cp
        ca, co = cp.arange(N, dtype=cp.float32), cp.empty(N, dtype=cp.float32)
        raw = cp.RawKernel(r'extern "C" __global__ void k(const float* a, float* o, int n)'
                           r'{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = 2 * a[i]; }', "k")
        rows.append(("cupy RawKernel", per_call_us(lambda: raw((N // 256,), (256,), (ca, co, cp.int32(N))),
                                                   cp.cuda.Device().synchronize)))
    except Exception as e:  # noqa: BLE001 - a missing peer is reported, not fatal
        rows.append((f"cupy: {type(e).__name__}", float("nan")))
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def double(a_ptr, o_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(o_ptr + i, 2 * tl.load(a_ptr + i, mask=i < n), mask=i < n)

        rows.append(("triton", per_call_us(lambda: double[(N // 256,)](a, out, N, BLOCK=256), sync)))
    except Exception as e:  # noqa: BLE001
        rows.append((f"triton: {type(e).__name__}", float("nan")))
    print(f"launch overhead per call, {N} elements, {CALLS} calls ({torch.cuda.get_device_name()})")
    for name, us in rows:
        print(f"  {name:28s} {us:8.2f} us")


if __name__ == "__main__":
    main()
