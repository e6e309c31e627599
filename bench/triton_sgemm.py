"""Triton's SGEMM as bench/gpu.py and bench/sgemm_variants.py time it: tl.dot
in IEEE precision (no TF32), masked loads with other=0, the best of five
tile configurations (the issue's figure was measured so)."""
import triton
import triton.language as tl


@triton.jit
def _matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(1), tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y, input_precision="ieee")
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def best_of_five(a, b, c, time_ms):
    """The fastest of five tile configurations for c = a @ b, timed by time_ms(fn)."""
    M, K = a.shape
    N = b.shape[1]
    best = None
    for bm, bn, bk, warps, stages in ((128, 128, 32, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 128, 16, 8, 4),
                                      (64, 64, 32, 4, 4)):
        fn = lambda: _matmul[(triton.cdiv(N, bn), triton.cdiv(M, bm))](a, b, c, M, N, K, BM=bm, BN=bn, BK=bk, num_warps=warps,
                                                                          num_stages=stages)
        try:
            t = time_ms(fn)
        except Exception:  # noqa: BLE001 - a configuration that does not fit is skipped
            continue
        best = t if best is None or t < best else best
    return best


@triton.jit
def _matmul_tc(a, b, bias, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BIAS_RELU: tl.constexpr):
    """The same product on the tensor cores: 16-bit operands, float32 accumulator; with BIAS_RELU the
    fused epilogue c = relu(a @ b + bias) in c's dtype."""
    pid_m, pid_n = tl.program_id(1), tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
    if BIAS_RELU:
        acc = tl.maximum(acc + tl.load(bias + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


TC_CONFIGS = ((128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 128, 64, 4, 4),
              (128, 64, 64, 4, 4))


def best_of_six_tensor_core(a, b, c, time_ms, bias=None):
    """The fastest of six tile configurations of the tensor-core product (16-bit a, b; float32 c),
    or with bias, of the product with the fused bias + ReLU epilogue."""
    M, K = a.shape
    N = b.shape[1]
    best = None
    for bm, bn, bk, warps, stages in TC_CONFIGS:
        grid = (triton.cdiv(N, bn), triton.cdiv(M, bm))
        fn = lambda: _matmul_tc[grid](a, b, c if bias is None else bias, c, M, N, K, BM=bm, BN=bn, BK=bk, BIAS_RELU=bias is not None,
                                      num_warps=warps, num_stages=stages)
        try:
            t = time_ms(fn)
        except Exception:  # noqa: BLE001 - a configuration that does not fit is skipped
            continue
        best = t if best is None or t < best else best
    return best
