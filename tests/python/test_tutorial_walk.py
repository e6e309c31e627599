"""loopy's tutorial, topic by topic and in its order, written as a loopy user
writes it with `import loom as lp` (NumPy arrays in place of pyopencl's, the
queue argument accepted and unused): kernel creation, dtypes, ordering and
dependencies, tags and splits, vectors, prefetching, private and local
temporaries with barriers, precompute, reductions, atomics, statistics and
multiple outputs, each checked against NumPy at sizes that are no multiple of
the splits."""
import numpy as np
import pytest

import loom as lp

rng = np.random.default_rng(2018)
n = 1001


def test_01_a_first_kernel_runs_with_and_without_a_queue():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    x = rng.random(n).astype(np.float32)
    evt, (out,) = knl(None, a=x)  # (loopy: knl(queue, a=x_vec_dev))
    np.testing.assert_allclose(out, 2 * x)
    (out,) = knl(a=x)
    np.testing.assert_allclose(out, 2 * x)
    assert "out[i] = 2*a[i]" in str(knl).replace(" * ", "*")


def test_02_dtypes_are_given_or_inferred():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float64})
    x = rng.random(n)
    (out,) = knl(a=x)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, 2 * x)


def test_03_ordering_and_dependencies():
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", """
        out[j,i] = a[i,j] {id=transpose}
        out2[j,i] = 2*out[j,i] {dep=transpose}
        """)
    knl = lp.prioritize_loops(knl, "i,j")
    a = rng.random((37, 37)).astype(np.float32)
    out, out2 = knl(a=a)
    np.testing.assert_allclose(out, a.T)
    np.testing.assert_allclose(out2, 2 * a.T)


def test_04_splits_tags_assumptions_and_fixed_parameters():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    x = rng.random(n).astype(np.float32)
    k = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    np.testing.assert_allclose(k(a=x)[0], 2 * x)
    k = lp.split_iname(knl, "i", 4)
    k = lp.tag_inames(k, dict(i_inner="unr"))
    np.testing.assert_allclose(k(a=x)[0], 2 * x)
    k = lp.assume(lp.split_iname(knl, "i", 4, inner_tag="ilp"), "n mod 4 = 0 and n >= 4")
    x4 = rng.random(1000).astype(np.float32)
    np.testing.assert_allclose(k(a=x4)[0], 2 * x4)
    k = lp.fix_parameters(knl, n=16)
    np.testing.assert_allclose(k(a=x[:16])[0], 2 * x[:16])
    k = lp.chunk_iname(knl, "i", 4, outer_tag="g.0")  # 4 chunks of ceil(n / 4) (a local axis would need a constant size)
    np.testing.assert_allclose(k(a=x)[0], 2 * x)


def test_05_vectors():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 1", [lp.GlobalArg("a,out", np.float32, shape="n"), "..."])
    knl = lp.assume(knl, "n mod 4 = 0")
    knl = lp.split_iname(knl, "i", 4, inner_tag="vec")
    knl = lp.split_iname(knl, "i_outer", 64, outer_tag="g.0", inner_tag="l.0")
    x = rng.random(1024).astype(np.float32)
    np.testing.assert_allclose(knl(a=x)[0], x + 1)


def test_06_prefetching_a_tile_into_local_memory():
    knl = lp.make_kernel("{ [i,j,k]: 0<=i<n and 0<=j<m and 0<=k<l }", "c[i, j] = sum(k, a[i, k]*b[k, j])")
    knl = lp.add_dtypes(knl, {"a,b": np.float32})
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "k", 16)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner"], default_tag="l.auto")
    knl = lp.add_prefetch(knl, "b", ["j_inner", "k_inner"], default_tag="l.auto")
    a = rng.random((37, 29)).astype(np.float32)
    b = rng.random((29, 41)).astype(np.float32)
    (c,) = knl(a=a, b=b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_07_private_and_local_temporaries_with_barriers():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", """
        <float32> a_temp = sin(a[i])
        out1[i] = a_temp {id=out1}
        out2[i] = sqrt(1-a_temp*a_temp) {dep=out1}
        """)
    x = rng.random(n).astype(np.float32)
    out1, out2 = knl(a=x)
    np.testing.assert_allclose(out1, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(out2, np.cos(x), rtol=1e-5)
    knl = lp.make_kernel("{ [i_outer,i_inner, k]: 0<= 16*i_outer + i_inner <n and 0<= i_inner,k <16}", """
        for i_outer
            for i_inner
                <> p_i = a[16*i_outer + i_inner]
                for k
                    <> arr[k] = p_i*k {id=wr}
                end
                out[16*i_outer + i_inner] = sum(k, arr[k]) {dep=wr}
            end
        end
        """)
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    knl = lp.add_dtypes(knl, {"a": np.float32})
    (out,) = knl(a=x)
    np.testing.assert_allclose(out, x * sum(range(16)), rtol=1e-5)
    knl = lp.make_kernel("{ [i,ii]: 0<=i,ii<16 }", """
        for i
            a_temp[i] = 2*a[i] {id=w}
        end
        for ii
            out[ii] = a_temp[15 - ii] {dep=w}
        end
        """, [lp.TemporaryVariable("a_temp", np.float32, shape=(16,), address_space=lp.AddressSpace.LOCAL), "..."])
    knl = lp.tag_inames(knl, dict(i="l.0", ii="l.0"))
    x16 = x[:16].copy()
    (out,) = knl(a=x16)
    np.testing.assert_allclose(out, 2 * x16[::-1])


def test_08_precompute_a_substitution_rule():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", """
        f(ii) := a[ii] * a[ii] + 1
        out[i] = f(i) + f(i+1)
        """, [lp.GlobalArg("a", np.float32, shape="n+1"), "..."])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "f", "i_inner", default_tag="l.auto")
    x = rng.random(n + 1).astype(np.float32)
    (out,) = knl(a=x)
    f = x * x + 1
    np.testing.assert_allclose(out, f[:-1] + f[1:], rtol=1e-6)


def test_09_reductions():
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", """
        s[i] = sum(j, a[i, j])
        mx[i] = max(j, a[i, j])
        """)
    a = rng.random((37, 53)).astype(np.float32)
    s, mx = knl(a=a)
    np.testing.assert_allclose(s, a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(mx, a.max(1))
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "s[i] = sum(j, a[i, j])")
    knl = lp.split_iname(knl, "i", 4, outer_tag="g.0")
    knl = lp.split_iname(knl, "j", 32, inner_tag="l.0")
    (s,) = knl(a=a)
    np.testing.assert_allclose(s, a.sum(1), rtol=1e-5)


def test_10_atomic_updates():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i % 20] = out[i % 20] + 2*a[i] {atomic}",
                         [lp.GlobalArg("out", np.float32, shape=(20,), for_atomic=True), lp.GlobalArg("a", np.float32, shape="n"), "..."],
                         assumptions="n>=1")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    x = rng.random(n).astype(np.float32)
    out = np.zeros(20, np.float32)
    knl(a=x, out=out)
    np.testing.assert_allclose(out, np.bincount(np.arange(n) % 20, weights=2 * x), rtol=1e-4)


def test_11_statistics():
    knl = lp.make_kernel("[n,m,l] -> {[i,k,j]: 0<=i<n and 0<=k<m and 0<=j<l}", """
        c[i, j, k] = a[i,j,k]*b[i,j,k]/3.0+a[i,j,k]
        e[i, k] = g[i,k]*(2+h[i,k+1])
        """, name="stats_knl")
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.float32, b=np.float32, g=np.float64, h=np.float64))
    params = {"n": 512, "m": 256, "l": 128}
    op_map = lp.get_op_map(knl, subgroup_size=32)
    f32mul = op_map[lp.Op(np.float32, "mul", lp.CountGranularity.SUBGROUP, "stats_knl")].eval_with_dict(params)
    f32add = op_map[lp.Op(np.float32, "add", lp.CountGranularity.SUBGROUP, "stats_knl")].eval_with_dict(params)
    f64mul = op_map[lp.Op(np.float64, "mul", lp.CountGranularity.SUBGROUP, "stats_knl")].eval_with_dict(params)
    # no local parallelism: each work-item is a sub-group of its own, so the
    # sub-group counts are those of the elements (loopy's tutorial: 524288 = 256 * 256 * 8)
    assert f32mul == 512 * 256 * 128 and f32add == 512 * 256 * 128
    assert f64mul == 512 * 256
    mem_map = lp.get_mem_access_map(knl, subgroup_size=32)
    loads_a = mem_map[lp.MemAccess("global", np.float32, lid_strides={}, gid_strides={}, direction="load", variable="a",
                                   count_granularity=lp.CountGranularity.SUBGROUP, kernel_name="stats_knl")].eval_with_dict(params)
    assert loads_a == 2 * 512 * 256 * 128  # (a is read twice per element)
    assert 'Op(np:dtype(\'float32\'), mul, subgroup, "stats_knl") : ' in lp.stringify_stats_mapping(op_map)
    sync_map = lp.get_synchronization_map(knl)
    assert sync_map[lp.Sync("kernel_launch", "stats_knl")].eval_with_dict(params) == 1


def test_12_several_outputs_and_in_place_updates():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", """
        out1[i] = a[i] + 1
        out2[i] = a[i] * a[i]
        acc[i] = acc[i] + a[i]
        """)
    x = rng.random(n).astype(np.float32)
    acc = np.ones(n, np.float32)
    res = knl(a=x, acc=acc)
    out1, out2 = res[0], res[1]
    np.testing.assert_allclose(out1, x + 1)
    np.testing.assert_allclose(out2, x * x, rtol=1e-6)
    np.testing.assert_allclose(acc, 1 + x, rtol=1e-6)
