"""Reductions across blocks from Python: loopy's global barrier (`... gbarrier`)
and a global TemporaryVariable make a kernel of two launches; NumPy arrays on
the default target, PyTorch CUDA tensors in place on the GPU (the general
call path: several launches do not take the one-launch dispatcher)."""
import numpy as np
import pytest

import loom as lp


def _two_stage_sum():
    k = lp.make_kernel(
        ["{[b, t]: b >= 0 and 0 <= t < 64 and 64 * b + t < n}", "{[s]: 0 <= 64 * s < n}"],
        """
        partial[b] = sum(t, a[64 * b + t])  {id=blocks}
        ... gbarrier
        total[0] = sum(s, partial[s])
        """,
        [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("total", np.float32, shape=(1,)),
         lp.TemporaryVariable("partial", np.float32, shape="(n + 63) // 64", address_space=lp.AddressSpace.GLOBAL),
         lp.ValueArg("n", np.int32)])
    k = lp.tag_inames(k, "b:g.0, t:l.0")
    return lp.split_iname(k, "s", 32, inner_tag="l.0")


def test_sum_across_blocks_from_numpy():
    k = _two_stage_sum()
    for n in (1, 63, 64, 65, 10001):
        a = np.random.rand(n).astype(np.float32)
        (total,) = k(a=a, total=np.full(1, np.nan, np.float32))
        np.testing.assert_allclose(total[0], a.sum(dtype=np.float64), rtol=1e-5)
    src = lp.generate_code_v2(k).device_code()
    assert src.count("__global__") == 2, src


@pytest.mark.skipif(not lp._loom.gpu_available(), reason="no GPU")
def test_sum_across_blocks_on_torch_tensors():
    torch = pytest.importorskip("torch")
    k = _two_stage_sum()
    for n in (5, 1 << 20):
        a = torch.rand(n, device="cuda")
        total = torch.full((1,), float("nan"), device="cuda")
        for _ in range(3):  # the second call on the same signature too
            (res,) = k(a=a, total=total)
            torch.cuda.synchronize()
            assert res is total
            assert abs(total.item() - a.double().sum().item()) <= 1e-5 * max(1.0, a.double().sum().item())


def test_rfactor_makes_the_two_launches_from_the_plain_kernel():
    # the same sum written plainly: rfactor keeps each chunk's partial sum in a
    # global temporary, then a global barrier, then their sum
    k = lp.make_kernel("{[i]: 0 <= i < n}", "total[0] = sum(i, a[i])")
    k = lp.split_iname(k, "i", 64)
    k = lp.rfactor(k, "i_outer")
    k = lp.tag_inames(k, "i_outer:g.0, i_inner:l.0")
    k = lp.split_iname(k, "i_outer_r", 32, inner_tag="l.0")
    assert lp.generate_code_v2(k).device_code().count("__global__") == 2
    for n in (1, 64, 65, 10001):
        a = np.random.rand(n).astype(np.float32)
        (total,) = k(a=a, total=np.full(1, np.nan, np.float32))
        np.testing.assert_allclose(total[0], a.sum(dtype=np.float64), rtol=1e-5)
    with pytest.raises(lp.LoomError, match="argmax"):
        lp.rfactor(lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[0] = argmax(i, a[i])"), "i", 8), "i_outer")
