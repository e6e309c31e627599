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


def _mm():
    knl = lp.make_kernel("{[i, j, k]: 0 <= i, j, k < n}", "c[i, j] = sum(k, a[i, k] * b[k, j])",
                         [lp.GlobalArg("a", np.float32, shape="n, n"), lp.GlobalArg("b", np.float32, shape="n, n"),
                          lp.GlobalArg("c", np.float32, shape="n, n"), "..."])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.1", inner_tag="l.0")
    return lp.split_iname(knl, "k", 16)


def _check_mm(knl, n=37):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    (c,) = knl(a=a, b=b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_add_prefetch_names_its_inames_by_dim_arg_names():
    knl = lp.add_prefetch(_mm(), "a", ["i_inner", "k_inner"], dim_arg_names=["ai", "ak"], default_tag="l.auto")
    assert "fetch_a" in str(knl) and "[ai, ak]" in str(knl).replace("a_fetch[ai, ak]", "[ai, ak]")
    _check_mm(knl)


def test_add_prefetch_with_default_tag_none_leaves_the_fetch_inames_for_the_user():
    knl = lp.add_prefetch(_mm(), "a", ["i_inner", "k_inner"], default_tag=None)
    assert "a_dim_0:" not in str(knl).split("tags:")[1].split("instructions:")[0]
    _check_mm(lp.split_iname(knl, "a_dim_1", 16, outer_tag="l.1", inner_tag="l.0"))
    _check_mm(lp.tag_inames(knl, "a_dim_0:l.1, a_dim_1:l.0"))


@pytest.mark.parametrize("sweep", [[], None])
def test_add_prefetch_of_an_element_without_a_sweep(sweep):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i] * s[0]",
                         [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("s", np.float32, shape=1),
                          lp.GlobalArg("out", np.float32, shape="n"), "..."])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "s", sweep)
    a = np.random.default_rng(3).standard_normal(37).astype(np.float32)
    (out,) = knl(a=a, s=np.array([3], np.float32))
    np.testing.assert_allclose(out, 3 * a, rtol=1e-6)


def test_precompute_reuses_inames_of_the_right_extent_and_refuses_the_wrong_one():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 16}", "f(x) := 3 * a[x] - 1\nout[i, j] = f(j) + i",
                         [lp.GlobalArg("a", np.float32, shape=16), lp.GlobalArg("out", np.float32, shape="n, 16"), "..."])
    p = lp.precompute(knl, "f", "j", precompute_inames="j")
    a = np.random.default_rng(4).standard_normal(16).astype(np.float32)
    (out,) = p(a=a, n=5)
    np.testing.assert_allclose(out, (3 * a - 1)[None, :] + np.arange(5)[:, None], rtol=1e-6)
    with pytest.raises(lp.TransformError, match=r"iname 'i' exists with a range that depends on the parameters, but storage axis 0 needs \[0, 15\]"):
        lp.precompute(knl, "f", "j", precompute_inames="i")


def test_a_rule_parameter_named_like_the_iname_is_the_rules_own():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "f(i) := 3 * a[i] - 1\nout[i] = f(i) * f(i + 1)")
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "f", "i_inner", default_tag="l.auto")
    a = np.random.default_rng(5).standard_normal(101).astype(np.float32)
    (out,) = knl(a=a, n=100)
    np.testing.assert_allclose(out, (3 * a[:100] - 1) * (3 * a[1:] - 1), rtol=1e-5)


def test_dep_star_is_loopys_final_marker_not_a_cycle():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i] = 1 {id=w1, dep=*}\nb[i] = a[i] + 1 {id=w2, dep=*w1}")
    a, b = knl(a=np.zeros(5, np.float32), b=np.zeros(5, np.float32))
    np.testing.assert_array_equal(b, np.full(5, 2, np.float32))


def test_a_temporary_written_in_a_for_block_is_reduced_outside_it():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 4}", """
    for i
      for j
        <> t = a[i, j] * 2
      end
      out[i] = sum(j, t)
    end
    """)
    a = np.random.default_rng(6).standard_normal((6, 4)).astype(np.float32)
    (out,) = knl(a=a)
    np.testing.assert_allclose(out, 2 * a.sum(1), rtol=1e-5)


def test_argmin_with_a_temporary_index_operand():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", """
    for i
      for j
        <> t = m - j
      end
      out[i] = argmin(j, j, t)
    end
    """)
    (out,) = knl(out=np.zeros(5, np.int32), m=7, n=5)
    np.testing.assert_array_equal(out, np.full(5, 7))


def test_guards_the_assumptions_make_redundant_are_not_emitted():
    # loopy's test_assume: the whole device code has no `if` (helpers are printed only where used)
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i] = a[i] + 1", [lp.GlobalArg("a", np.float32, shape="n"), "..."])
    knl = lp.split_iname(knl, "i", 16)
    knl = lp.prioritize_loops(knl, "i_outer,i_inner")
    knl = lp.assume(knl, "n mod 16 = 0")
    knl = lp.assume(knl, "n > 10")
    assert "if" not in lp.generate_code_v2(knl).device_code()
    (a,) = knl(a=np.zeros(32, np.float32))
    np.testing.assert_array_equal(a, np.ones(32, np.float32))


def test_precompute_with_rule_arguments_named_like_inames_runs_as_in_loopy():
    # loopy's test_precompute_confusing_subst_arguments: the computed element is
    # the one each thread reads (D_dim_0 == j), which the private-memory check proves with isl
    knl = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<5}", "D(i):=a[i+1]-a[i]\nb[i,j] = D(j)")
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.float32))
    knl = lp.tag_inames(knl, dict(j="g.1"))
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "D", sweep_inames="j", precompute_outer_inames="j, i_inner, i_outer")
    a = np.random.default_rng(4).random(6).astype(np.float32)
    (b,) = knl(a=a, n=150)
    np.testing.assert_allclose(b, np.broadcast_to((a[1:6] - a[:5])[None, :], (150, 5)))
