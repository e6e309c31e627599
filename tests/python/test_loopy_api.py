"""loopy's documented names beyond the transformations, as scripts use them with
`import loom as lp`: loopy.version, loopy.diagnostic, add_and_infer_dtypes,
preprocess_kernel, set_caching_enabled, make_copy_kernel, fuse_kernels, t_unit["name"]."""
import os

import numpy as np
import pytest

import loom as lp
from loom.version import LOOPY_USE_LANGUAGE_VERSION_2018_2, MOST_RECENT_LANGUAGE_VERSION  # as loopy scripts import it


def test_language_version_symbols_are_accepted():
    assert MOST_RECENT_LANGUAGE_VERSION == LOOPY_USE_LANGUAGE_VERSION_2018_2 == (2018, 2)
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", lang_version=LOOPY_USE_LANGUAGE_VERSION_2018_2)
    a = np.arange(7, dtype=np.float32)
    (out,) = k(a=a)
    np.testing.assert_array_equal(out, 2 * a)


def test_loopy_error_names_catch_looms_errors():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i + 1]")
    with pytest.raises(lp.diagnostic.LoopyError, match="a"):
        k(a=np.zeros((4, 2), np.float32))
    with pytest.raises(lp.diagnostic.LoopyError):
        lp.split_iname(k, "nonexistent", 4)
    assert issubclass(lp.diagnostic.WriteRaceConditionWarning, lp.diagnostic.LoopyWarning)


def test_add_and_infer_dtypes_infers_what_the_kernel_writes():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = g[i] * 2\nidx[i] = 3 * i")
    k = lp.add_and_infer_dtypes(k, dict(g=np.float64))
    g = np.linspace(0, 1, 9)
    out, idx = k(g=g)
    assert out.dtype == np.float64 and idx.dtype == np.int32
    np.testing.assert_array_equal(out, 2 * g)
    np.testing.assert_array_equal(idx, 3 * np.arange(9))


def test_preprocess_kernel_and_translation_unit_indexing():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i] + 1", name="inc")
    assert lp.preprocess_kernel(k)["inc"] is k
    with pytest.raises(KeyError, match="inc"):
        k["other"]
    assert "inc" in lp.generate_code_v2(lp.preprocess_kernel(k)).device_code()


def test_one_linearized_kernel_shows_the_order_of_loops_and_barriers():
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])", name="rows")
    k = lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    k = lp.split_iname(k, "j", 8)
    lin = lp.get_one_linearized_kernel(lp.preprocess_kernel(k))
    assert lin.linearization == ["insn_0_acc_out_init", "for j_outer", "  for j_inner", "    insn_0_acc_out_update",
                                 "  end j_inner", "end j_outer", "insn_0"]  # (nesting by indentation)
    assert "rows" in lp.generate_code_v2(lin).device_code()
    a = np.random.default_rng(2).random((21, 13), dtype=np.float32)
    (out,) = lin(a=a)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)


def test_set_caching_enabled_switches_the_disk_cache(monkeypatch):
    monkeypatch.delenv("LOOM_CACHE", raising=False)
    lp.set_caching_enabled(False)
    assert os.environ["LOOM_CACHE"] == "off"
    lp.set_caching_enabled(True)
    assert os.environ["LOOM_CACHE"] == "on"


@pytest.mark.parametrize("new,old", [("f,f", None), ("c,c", "f,f"), ("N0,N1", "N1,N0")])
def test_make_copy_kernel_changes_layouts(new, old):
    k = lp.make_copy_kernel(new, old)
    a = np.arange(3 * 5, dtype=np.float32).reshape(3, 5)
    src = np.asfortranarray(a) if old in ("f,f", "N0,N1") else a
    (out,) = k(input=src)
    np.testing.assert_array_equal(out, a)
    assert out.flags["F_CONTIGUOUS" if new in ("f,f", "N0,N1") else "C_CONTIGUOUS"]
    with pytest.raises(ValueError, match="tags"):
        lp.make_copy_kernel("c,c", "c")


class _Foreign:
    """An array of a framework Loom does not know, speaking only DLPack (as JAX's do)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_arrays_of_other_frameworks_through_dlpack():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i] + b", name="affine")
    a = np.arange(10, dtype=np.float32)
    out = np.full(10, np.nan, dtype=np.float32)
    k(a=_Foreign(a), b=1.0, out=_Foreign(out))  # inputs read and the output written in place, without copies
    np.testing.assert_array_equal(out, 2 * a + 1)
    (fresh,) = k(a=_Foreign(a), b=0.5)
    np.testing.assert_array_equal(fresh, 2 * a + 0.5)


def test_to_batched_as_loopy_scripts_call_it():
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j] * x[j])", name="mv")
    k = lp.add_dtypes(k, dict(a=np.float64, x=np.float64))
    kb = lp.to_batched(k, "nbatches", ["a", "x", "out"], batch_iname_prefix="ibatch")
    kb = lp.tag_inames(kb, "ibatch:g.0")
    rng = np.random.default_rng(4)
    a, x = rng.standard_normal((5, 11, 6)), rng.standard_normal((5, 6))
    (out,) = kb(a=a, x=x)
    np.testing.assert_allclose(out, np.einsum("bij,bj->bi", a, x), rtol=1e-12)
    shared = lp.to_batched(k, 3, ["a", "out"])  # x shared by the batch
    (out,) = shared(a=a[:3], x=x[0])
    np.testing.assert_allclose(out, a[:3] @ x[0], rtol=1e-12)


def test_gpu_arrays_through_dlpack():
    torch = pytest.importorskip("torch")
    if not (torch.cuda.is_available() and lp._loom.gpu_available()):
        pytest.skip("no GPU: the DLPack path to PyTorch is for arrays in GPU memory")
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", name="twice")
    a = torch.arange(1000, dtype=torch.float32, device="cuda")
    out = torch.zeros_like(a)
    k(a=_Foreign(a), out=_Foreign(out))  # (a framework's GPU arrays seen only through DLPack)
    torch.cuda.synchronize()
    assert torch.equal(out, 2 * a)


def test_split_array_axis_as_loopy_scripts_call_it():
    """loopy's split_array_axis: the argument's axis becomes (m // 4, 4) over the same memory, so the
    caller passes the reshaped array; a contiguous array that the declared strides do not fit is refused
    (it would be read outside), as is examples/layouts.loom's strided output passed as a plain array."""
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = 2 * a[i, j] + j",
                         [lp.GlobalArg("a", np.float32, shape="n, m"), lp.GlobalArg("out", np.float32, shape="n, m")])
    a = np.random.default_rng(0).random((6, 12), dtype=np.float32)
    split = lp.split_array_axis(knl, "a", 1, 4)
    (out,) = split(a=a.reshape(6, 3, 4), m=12)
    np.testing.assert_allclose(out, 2 * a + np.arange(12, dtype=np.float32))
    with pytest.raises(lp.ArgumentError, match="declared with strides"):
        split(a=np.zeros((6, 3, 4), np.float32), m=10)  # (strides (10, 4, 1): not this array's)
    layouts = lp.load_kernel(os.path.join(os.environ.get("LOOM_SOURCE_DIR", "."), "examples", "layouts.loom"))
    with pytest.raises(lp.ArgumentError, match="offset 2"):
        layouts(a=np.asfortranarray(np.ones((30, 20), np.float32)), out=np.zeros((30, 20), np.float32))


def test_fuse_kernels_shares_inames_and_arguments_and_orders_the_data_flow():
    # loopy's test_fusion pattern: two kernels over the same inames, one feeding the other
    k1 = lp.make_kernel("{[i, j]: 0 <= i, j < n}", "a[i, j] = 2 * b[i, j]", name="twice")
    k2 = lp.make_kernel("{[i, j]: 0 <= i, j < n}", "<> t = a[i, j] + 1\nc[i, j] = t * t", name="square")
    k = lp.fuse_kernels([k1, k2], data_flow=[("a", 0, 1)])
    b = np.random.default_rng(1).random((13, 13)).astype(np.float32)
    a, c = k(b=b)  # (the arrays it writes, in argument order)
    np.testing.assert_allclose(a, 2 * b, rtol=1e-6)
    np.testing.assert_allclose(c, (2 * b + 1) ** 2, rtol=1e-5)
    assert "twice_and_square" in str(k)
    # a temporary both kernels name keeps one per kernel (suffixes, as loopy's)
    k3 = lp.make_kernel("{[i]: 0 <= i < n}", "<> t = x[i] + 1\ny[i] = t", name="k3")
    k4 = lp.make_kernel("{[i]: 0 <= i < n}", "<> t = x[i] * 3\nz[i] = t", name="k4")
    f = lp.fuse_kernels([k3, k4], suffixes=["_a", "_b"])
    x = np.arange(7, dtype=np.float32)
    y, z = f(x=x)
    np.testing.assert_allclose(y, x + 1)
    np.testing.assert_allclose(z, 3 * x)
    assert {"t_a", "t_b"} <= set(f.temporary_variables)
    # domains that disagree on a shared iname are refused, with the inames named
    k5 = lp.make_kernel("{[i]: 0 <= i < n}", "p[i] = 1", name="k5")
    k6 = lp.make_kernel("{[i]: 0 <= i < m}", "q[i] = 2", name="k6")
    with pytest.raises(Exception, match="do not agree on the domain of inames i"):
        lp.fuse_kernels([k5, k6])
    # arguments declared differently are refused
    k7 = lp.make_kernel("{[i]: 0 <= i < n}", "r[i] = 1", [lp.GlobalArg("r", np.float32, shape="n")], name="k7")
    k8 = lp.make_kernel("{[i]: 0 <= i < n}", "r[i] = 2", [lp.GlobalArg("r", np.float64, shape="n")], name="k8")
    with pytest.raises(Exception, match="argument 'r' is declared differently"):
        lp.fuse_kernels([k7, k8])


def test_loopy_syntax_conditional_expressions_auto_shapes_and_declared_multi_outputs():
    x = np.random.default_rng(3).random(50).astype(np.float32) - 0.5
    # Python's conditional expression, as pymbolic parses loopy's instructions
    k = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i] if a[i] > 0 else (0 if a[i] > -0.25 else -1)")
    (o,) = k(a=x)
    np.testing.assert_array_equal(o, np.where(x > 0, x, np.where(x > -0.25, 0, -1)).astype(np.float32))
    with pytest.raises(Exception, match="expected 'else'"):
        lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i] if a[i] > 0")
    # GlobalArg(shape=lp.auto): the shape inferred from the accesses, the dtype kept
    k = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]", [lp.GlobalArg("a", np.float64, shape=lp.auto)])
    (o,) = k(a=x.astype(np.float64))
    assert o.dtype == np.float64
    np.testing.assert_allclose(o, 2 * x)
    # `<> v, <> i = argmax(...)`: both outputs declared where they are written
    A = np.random.default_rng(4).random((5, 7)).astype(np.float32)
    k = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<m}", "<> mx, <> ix = argmax(j, a[i,j], j)\nv[i] = mx\nidx[i] = ix")
    v, idx = k(a=A)
    np.testing.assert_allclose(v, A.max(1))
    np.testing.assert_array_equal(idx, A.argmax(1))
    k = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<m}", "<float32> mn, <int32> jn = argmin(j, a[i,j], j)\nv[i] = mn\nidx[i] = jn")
    v, idx = k(a=A)
    np.testing.assert_allclose(v, A.min(1))
    np.testing.assert_array_equal(idx, A.argmin(1))


def test_save_and_reload_temporaries_keeps_private_values_across_a_global_barrier():
    k = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<3}", """
        <> s = 2*a[i] {id=w}
        <> v[j] = a[i] * j {id=wv}
        ... gbarrier {id=g, dep=w:wv}
        out[i] = s + v[0] + v[1] + v[2] {dep=g}
        """)
    k = lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(Exception, match="crosses launches"):
        k(a=np.ones(5, np.float32))
    k = lp.save_and_reload_temporaries(k)
    a = np.random.default_rng(5).random(100).astype(np.float32)
    (out,) = k(a=a)
    np.testing.assert_allclose(out, 5 * a, rtol=1e-6)
