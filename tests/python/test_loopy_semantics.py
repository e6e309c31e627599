"""loopy's meaning where Loom used to differ silently (Loopy compatibility II,
"fix first"): a temporary without a dtype is inferred, an argument without a
dtype takes the call's, a temporary without an address space is loopy's
`auto`, and an instruction is not narrowed by a nested domain it does not use."""
import numpy as np
import pytest

import loom as lp


def test_a_temporary_without_a_dtype_is_inferred_not_float32():
    # int32 values above 2^24 through the temporary: float32 would round them
    knl = lp.make_kernel("{[i]: 0 <= i < 16}", "t[i] = a[i] * 3 + 1\nout[i] = t[i] - 1",
                         [lp.GlobalArg("a", np.int32, shape=16), lp.GlobalArg("out", np.int32, shape=16),
                          lp.TemporaryVariable("t", dtype=None, shape=(16,))])
    a = np.arange(16, dtype=np.int32) + (1 << 25) + 1
    (out,) = knl(a=a)
    np.testing.assert_array_equal(out, 3 * a)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32, np.int16])
def test_an_argument_without_a_dtype_takes_the_calls(dtype):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]",
                         [lp.GlobalArg("a", shape="n"), lp.GlobalArg("out", shape="n"), "..."])
    a = (np.arange(37) - 5).astype(dtype)
    (out,) = knl(a=a)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, (2 * a).astype(dtype))


def test_lp_auto_is_a_dtype_left_open():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i] + 1",
                         [lp.GlobalArg("a", lp.auto, shape="n"), lp.GlobalArg("out", lp.auto, shape="n"), "..."])
    (out,) = knl(a=np.arange(5, dtype=np.float64))
    assert out.dtype == np.float64


def test_a_temporary_without_an_address_space_follows_loopys_rule():
    # written by each thread at its own element (j on l.0): local, shared by the block
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 16}",
                         "tile[j] = a[i, j] * 2 {id=w}\nout[i, j] = tile[15 - j] {dep=w}",
                         [lp.GlobalArg("a", np.float32, shape="n, 16"), lp.GlobalArg("out", np.float32, shape="n, 16"),
                          lp.TemporaryVariable("tile", np.float32, shape=(16,)), "..."])
    knl = lp.tag_inames(knl, "i:g.0, j:l.0")
    assert "__shared__" in lp.generate_code_v2(knl).device_code()
    a = np.random.default_rng(1).standard_normal((7, 16)).astype(np.float32)
    (out,) = knl(a=a)
    np.testing.assert_allclose(out, 2 * a[:, ::-1])
    # written without its thread's iname in the index: one per thread, private
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 16}",
                         "acc[0] = a[i, j] {id=w}\nout[i, j] = acc[0] + 1 {dep=w}",
                         [lp.GlobalArg("a", np.float32, shape="n, 16"), lp.GlobalArg("out", np.float32, shape="n, 16"),
                          lp.TemporaryVariable("acc", np.float32, shape=(1,)), "..."])
    knl = lp.tag_inames(knl, "i:g.0, j:l.0")
    assert "__shared__" not in lp.generate_code_v2(knl).device_code()
    (out,) = knl(a=a)
    np.testing.assert_allclose(out, a + 1)


def test_writers_that_disagree_on_an_auto_address_space_are_refused():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 16}",
                         "t[j] = a[i, j] {id=w1}\nt[0] = 1 {id=w2, dep=w1}\nout[i, j] = t[j] {dep=w2}",
                         [lp.GlobalArg("a", np.float32, shape="n, 16"), lp.GlobalArg("out", np.float32, shape="n, 16"),
                          lp.TemporaryVariable("t", np.float32, shape=(16,)), "..."])
    knl = lp.tag_inames(knl, "i:g.0, j:l.0")
    with pytest.raises(lp.KernelError, match="its writers disagree on one: 'w1' makes it local, 'w2' private"):
        lp.generate_code_v2(knl).device_code()


def test_a_nested_domain_narrows_only_the_instructions_within_its_iname():
    # loopy's test_equality_constraints at a size where k = i + 5 < n would allow fewer blocks of i
    knl = lp.make_kernel(["{[i, j]: 0 <= i, j < n}", "{[k]: k = i + 5 and k < n}"],
                         "a[i, j] = 5 {id=set_all}\nb[i, k] = 22 {dep=set_all}",
                         [lp.GlobalArg("a", np.float32, shape="n, n"), lp.GlobalArg("b", np.float32, shape="n, n"), "..."])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    for n in (21, 37, 50):
        a = np.full((n, n), np.nan, np.float32)
        b = np.full((n, n), np.nan, np.float32)
        a, b = knl(a=a, b=b)
        np.testing.assert_array_equal(a, np.full((n, n), 5, np.float32))
        want = np.full((n, n), np.nan, np.float32)
        want[np.eye(n, n, 5, bool)] = 22
        np.testing.assert_array_equal(b, want)
