"""`vec` inames from Python: a call whose sizes are multiples of 16 gets the
variant with float4 loads and stores (Triton's divisibility key), other
sizes the scalar code; on the GPU an array view that is not 16-byte aligned
runs the variant without the divisibility assumption instead of failing."""
import numpy as np
import pytest

import loom as lp


def _vec_kernel():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2*a[i] + 1", ["a: float32[n]", "out: float32[n]"])
    k = lp.split_iname(k, "i", 4, inner_tag="vec")
    return lp.split_iname(k, "i_outer", 64, outer_tag="g.0", inner_tag="l.0")


def test_divisible_sizes_get_vector_access():
    k = _vec_kernel()
    try:
        even = k.compiled(target="cuda", a=np.zeros(1024, np.float32), out=np.zeros(1024, np.float32)).asm["cuda"]
    except lp.CudaError as e:
        pytest.skip(f"no NVRTC: {e}")
    odd = k.compiled(target="cuda", a=np.zeros(1000, np.float32), out=np.zeros(1000, np.float32)).asm["cuda"]
    assert even.count("reinterpret_cast<const float4 *>") == 1 and even.count("reinterpret_cast<float4 *>") == 1, even
    assert "float4" not in odd
    for n in (1024, 1000, 16, 3):
        a = np.random.rand(n).astype(np.float32)
        (out,) = k(a=a, out=np.full(n, np.nan, np.float32))
        np.testing.assert_allclose(out, 2 * a + 1, rtol=1e-6)


@pytest.mark.skipif(not lp._loom.gpu_available(), reason="no GPU")
def test_misaligned_tensor_views_run_unvectorized():
    torch = pytest.importorskip("torch")
    k = _vec_kernel()
    base = torch.rand(1024 + 1, device="cuda")
    a = base[1:]  # 4 bytes past a 256-byte boundary, 1024 elements: divisible but not aligned
    out = torch.full((1024,), float("nan"), device="cuda")
    (res,) = k(a=a, out=out)
    torch.cuda.synchronize()
    assert torch.allclose(res, 2 * a + 1)
    aligned = torch.rand(1024, device="cuda")
    (res,) = k(a=aligned, out=out)
    torch.cuda.synchronize()
    assert torch.allclose(res, 2 * aligned + 1)
    (res,) = k(a=a, out=out)  # the cached binding of the aligned call does not hide the misalignment
    torch.cuda.synchronize()
    assert torch.allclose(res, 2 * a + 1)


def test_tag_array_axes_layouts_and_vec_axes():
    # loopy's spelling: a tuple of tags or one string; Fortran-ordered arrays then bind as NumPy F arrays
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = 2 * a[i, j] + j",
                       ["a: float32[n, m]", "out: float32[n, m]"])
    f = lp.tag_array_axes(k, "a,out", ("N0", "N1"))
    a = np.asfortranarray(np.random.rand(7, 5).astype(np.float32))
    (out,) = f(a=a, out=np.asfortranarray(np.full((7, 5), np.nan, np.float32)))
    np.testing.assert_allclose(out, 2 * a + np.arange(5), rtol=1e-6)
    with pytest.raises(lp.ArgumentError, match="Fortran-contiguous"):
        f(a=np.ascontiguousarray(a), out=np.asfortranarray(out))
    v = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 4}", "out[i, j] = a[i, j] * 3",
                       ["a: float32[n, 4]", "out: float32[n, 4]"])
    v = lp.tag_inames(lp.tag_array_axes(v, "a, out", "c,vec"), "j:vec")
    v = lp.split_iname(v, "i", 64, outer_tag="g.0", inner_tag="l.0")
    a4 = np.random.rand(101, 4).astype(np.float32)
    (o4,) = v(a=a4, out=np.full((101, 4), np.nan, np.float32))
    np.testing.assert_allclose(o4, 3 * a4, rtol=1e-6)
    assert "vector_axis=1" in str(v)
    with pytest.raises(lp.TransformError, match="a vec axis of 3 float32 elements is no vector type"):
        lp.tag_array_axes(lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 3}", "out[i, j] = a[i, j]",
                                         ["a: float32[n, 3]", "out: float32[n, 3]"]), "a", "c,vec")
    try:
        src = lp.generate_code_v2(v).device_code()
    except lp.CudaError:
        return
    assert "reinterpret_cast<const float4 *>" in src, src
