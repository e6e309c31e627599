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


# -- loopy's names that its tutorial uses (tests/python/test_loopy_tutorial.py runs the tutorial itself)

def test_loopy_warning_classes_filter_and_warn_with_kernel_honours_silenced_warnings():
    import warnings
    from loom.diagnostic import DirectCallUncachedWarning, WriteRaceConditionWarning, warn_with_kernel
    assert lp.LoopyWarning is lp.diagnostic.LoopyWarning and lp.LoopyError is lp.diagnostic.LoopyError
    for w in (DirectCallUncachedWarning, WriteRaceConditionWarning, lp.diagnostic.ParameterFinderWarning):
        assert issubclass(w, lp.LoopyWarning)
    assert issubclass(lp.diagnostic.LoopyAdvisory, lp.diagnostic.LoopyWarningBase)
    assert not issubclass(lp.diagnostic.LoopyAdvisory, lp.LoopyWarning)  # (as in loopy)
    assert issubclass(lp.diagnostic.StaticValueFindingError, lp.LoopyError)
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i]", name="copy")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=lp.LoopyWarning)
        warnings.filterwarnings("ignore", category=DirectCallUncachedWarning)
        warn_with_kernel(k, "uncached", "called directly", DirectCallUncachedWarning)  # ignored by its filter
        with pytest.raises(WriteRaceConditionWarning,
                           match=r"in kernel copy: races \(add 'write_race\(insn\)' to silenced_warnings"):
            warn_with_kernel(k, "write_race(insn)", "races", WriteRaceConditionWarning)
        quiet = k.copy(silenced_warnings=["write_race*"])
        warn_with_kernel(quiet, "write_race(insn)", "races", WriteRaceConditionWarning)  # silenced: nothing raised
        split = lp.split_iname(quiet, "i", 4)  # (transformations keep the attribute, as loopy's do)
        assert split.silenced_warnings == ("write_race*",)
        warn_with_kernel(split, "write_race(insn)", "races", WriteRaceConditionWarning)
        with pytest.raises(lp.LoopyWarning):
            warn_with_kernel(split, "other", "something else")


def test_options_module_has_loopys_terminal_color_switch():
    import loom.options
    assert lp.options is loom.options
    before = loom.options.ALLOW_TERMINAL_COLORS
    try:
        for colors in (True, False):
            loom.options.ALLOW_TERMINAL_COLORS = colors
            k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]")
            # Loom's text never carries terminal escapes, whatever the switch says
            assert "\x1b" not in lp.generate_code_v2(k).device_code() and "\x1b" not in str(k)
            assert "\x1b" not in k.stringify()
    finally:
        loom.options.ALLOW_TERMINAL_COLORS = before


def test_to_loopy_type_wraps_numpy_dtypes_and_matches_statistics_keys():
    from loom.types import AtomicNumpyType, NumpyType, OpaqueType, to_loopy_type, to_unsigned_dtype
    t = to_loopy_type(np.float32)
    assert isinstance(t, NumpyType) and t == NumpyType(np.dtype("float32")) and t.numpy_dtype == np.float32
    assert repr(t) == "np:dtype('float32')" and t.itemsize == 4 and not t.is_integral() and not t.is_complex()
    assert hash(t) == hash(np.dtype(np.float32)) and t == np.dtype(np.float32) and np.dtype(t) == np.float32
    assert t != to_loopy_type(np.float64) and to_loopy_type(t) is t
    assert to_loopy_type(np.int16).is_integral() and to_loopy_type(np.complex64).involves_complex()
    atomic = to_loopy_type(np.int32, for_atomic=True)
    assert isinstance(atomic, AtomicNumpyType) and atomic != to_loopy_type(np.int32) and repr(atomic) == "np_atomic:dtype('int32')"
    assert to_loopy_type(None, allow_none=True) is None and to_loopy_type(lp.auto, allow_auto=True) is lp.auto
    with pytest.raises(lp.LoopyError):
        to_loopy_type(None)
    with pytest.raises(lp.LoopyError):
        to_loopy_type(lp.auto)
    with pytest.raises(TypeError):
        to_loopy_type(object())
    assert OpaqueType("handle") == OpaqueType("handle") != OpaqueType("other")
    assert to_unsigned_dtype(np.int16) == np.uint16 and to_unsigned_dtype(np.uint8) == np.uint8
    # the tutorial's filter: float32 accesses whose l.0 stride is above 1
    k = lp.make_kernel("{[i, k]: 0 <= i < n and 0 <= k < 128}", "c[i, k] = a[i, k] + 1\ne[i, k] = g[i, k]",
                       [lp.GlobalArg("a,c", np.float32, shape="n, 128"), lp.GlobalArg("g,e", np.float64, shape="n, 128")])
    k = lp.split_iname(k, "k", 32, outer_tag="l.0", inner_tag="l.1")  # (l.0 strides 32)
    mem = lp.get_mem_access_map(k, subgroup_size=32)
    picked = mem.filter_by_func(lambda key: key.dtype == to_loopy_type(np.float32) and key.lid_strides[0] > 1)
    assert {key.variable for key in picked.keys()} == {"a", "c"}
    assert picked.eval_and_sum({"n": 10}) == 2 * 10 * 128


def test_generate_header_declares_each_generated_kernel_function():
    k = lp.add_dtypes(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", name="twice"), dict(a=np.float32))
    (decl,) = lp.generate_header(k)
    code = lp.generate_code_v2(k).device_code()
    assert decl.endswith(");") and decl.startswith('extern "C" __global__ void') and "twice(" in decl
    assert decl[:-1] + "\n{" in code  # the function's own signature
    assert lp.generate_header(k, lp.generate_code_v2(k)) == [decl]
    # a kernel with a global barrier is two launches: two functions, two declarations
    g = lp.make_kernel("{[i]: 0<=i<n}", """
        <> s = 2*a[i] {id=w}
        ... gbarrier {id=g, dep=w}
        out[i] = s {dep=g}
        """, name="two")
    g = lp.save_and_reload_temporaries(lp.split_iname(g, "i", 32, outer_tag="g.0", inner_tag="l.0"))
    decls = lp.generate_header(g)
    assert [d.split("(")[1].split(")")[1].strip() for d in decls] == ["two", "two_1"]


def test_global_arg_is_input_and_is_output_as_loopy_declares_them():
    # the tutorial's: out is written, then read; the caller does not pass it
    k = lp.make_kernel("{ [i,j,ii,jj]: 0<=i,j,ii,jj<n }", """
        out[j,i] = a[i,j] {id=transpose}
        out[ii,jj] = 2*out[ii,jj]  {dep=transpose}
        """, [lp.GlobalArg("out", shape=lp.auto, is_input=False), ...])
    a = np.random.default_rng(6).random((9, 9)).astype(np.float32)
    (out,) = k(a=a)
    np.testing.assert_array_equal(out, 2 * a.T)
    k = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i]",
                       [lp.GlobalArg("a", np.float32, shape="n", is_input=True, is_output=False),
                        lp.GlobalArg("out", np.float32, shape="n", is_output=True)])
    np.testing.assert_array_equal(k(a=a[0])[0], a[0])
    with pytest.raises(lp.ArgumentError, match="'out' is declared is_output=False"):
        lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i]", [lp.GlobalArg("out", np.float32, shape="n", is_output=False), ...])
    with pytest.raises(lp.ArgumentError, match="'a' is declared is_output=True"):
        lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i]", [lp.GlobalArg("a", np.float32, shape="n", is_output=True), ...])
    with pytest.raises(lp.ArgumentError, match="'a' is declared is_input=False"):
        lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i]", [lp.GlobalArg("a", np.float32, shape="n", is_input=False), ...])


def test_stringify_shows_the_parts_asked_for_and_the_dependencies():
    k = lp.make_kernel("{ [i,j]: 0<=i,j<n }", """
        out[j,i] = a[i,j] {id=transpose}
        out[i,j] = 2*out[i,j]  {id=dbl, dep=transpose}
        """, name="transpose_and_dbl")
    k = lp.tag_inames(k, "i:l.0")
    text = k["transpose_and_dbl"].stringify(with_dependencies=True)
    lines = text.splitlines()
    assert lines[:3] == ["-" * 75, "KERNEL: transpose_and_dbl", "-" * 75]
    for label in ("ARGUMENTS:", "DOMAINS:", "INAME TAGS:", "INSTRUCTIONS:",
                  "DEPENDENCIES: (use loopy.show_dependency_graph to visualize)"):
        assert label in lines
    assert lines[lines.index("INAME TAGS:") + 1:lines.index("INAME TAGS:") + 3] == ["i: l.0", "j: None"]
    assert lines[-2:] == ["dbl : transpose", "-" * 75]
    assert "DEPENDENCIES" not in k.stringify()
    only = k.stringify(what="i", use_separators=False, show_labels=False).splitlines()
    assert len(only) == 2 and only[0].startswith("out[j, i] = a[i, j]") and "dep=transpose" in only[1]
    assert k.stringify(what="name,Dependencies", use_separators=False) == \
        "KERNEL: transpose_and_dbl\nDEPENDENCIES: (use loopy.show_dependency_graph to visualize)\ndbl : transpose"
    with pytest.raises(lp.LoopyError, match="invalid 'what'"):
        k.stringify(what="x")


def test_grid_size_upper_bounds_are_the_launch_sizes():
    k = lp.make_kernel("{ [i]: 0<=i<n }", "a[i] = 0", assumptions="n>=0")
    k = lp.split_iname(k, "i", 128, outer_tag="g.0", inner_tag="l.0")
    glob, loc = k["loopy_kernel"].get_grid_size_upper_bounds(k.callables_table)
    assert loc == (128,) and len(glob) == 1
    assert [glob[0].eval_with_dict({"n": n}) for n in (1, 128, 129, 1000)] == [1, 1, 2, 8]
    k2 = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<m}", "c[i,j] = 1")
    k2 = lp.split_iname(k2, "i", 16, outer_tag="g.1", inner_tag="l.0")
    k2 = lp.split_iname(k2, "j", 8, outer_tag="g.0", inner_tag="l.1")
    glob, loc = k2.get_grid_size_upper_bounds()
    assert loc == (16, 8)
    assert [g.eval_with_dict({"n": 100, "m": 30}) for g in glob] == [4, 7]  # g.0 over j, g.1 over i
    gd, ld = k2.get_grid_size_upper_bounds(return_dict=True)
    assert sorted(gd) == [0, 1] and ld == {0: 16, 1: 8}
    seq = lp.make_kernel("{[i]: 0<=i<n}", "a[i] = 0")
    assert seq.get_grid_size_upper_bounds() == ((), ())  # (nothing parallel: one thread)


def test_translation_unit_interface_of_a_kernel():
    k = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]", name="twice")
    assert k.default_entrypoint is k and k.entrypoints == frozenset(["twice"])
    assert dict(k.callables_table) == {"twice": k}
    split = lp.split_iname(k, "i", 4)
    assert k.with_kernel(split) is split
    silenced = k.with_kernel(k.default_entrypoint.copy(silenced_warnings=["v1_scheduler_fallback"]))
    assert silenced.silenced_warnings == ("v1_scheduler_fallback",) and silenced == k
    lin = lp.get_one_linearized_kernel(k["twice"], k.callables_table)
    assert k.with_kernel(lin).linearization == lin.linearization == ["for i", "  insn_0", "end i"]
    with pytest.raises(lp.ArgumentError, match="kernel 'other' cannot be added"):
        k.with_kernel(lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 1", name="other"))
