"""The loom package as a loopy user meets it: make_kernel, transformations
from the registry, calls on NumPy arrays (CPU target, interpreter; the GPU
where there is one), errors as Python exceptions, and the README's example."""
import inspect
import os
import re

import numpy as np
import pytest

import loom as lp
from conftest import SOURCE_DIR

HOST_TARGETS = ["cpu", "interpreter"] if lp._loom.has_cpu_target() else ["interpreter"]


def test_make_kernel_split_tag_and_call_matches_numpy():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i] + 1")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    for n in (1, 127, 128, 1000):
        a = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        for target in HOST_TARGETS:
            (out,) = knl(a=a, target=target)
            np.testing.assert_allclose(out, 2 * a + 1, rtol=1e-6)


def test_loopys_call_form_and_outputs_passed_in():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i] * a[i]")
    a = np.arange(10, dtype=np.float32)
    out = np.full(10, np.nan, dtype=np.float32)  # poisoned: every element must be written
    evt, (res,) = knl(None, a=a, out=out)
    assert evt is None and res is out
    np.testing.assert_array_equal(out, a * a)


def test_kernels_are_immutable_values():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i]")
    split = lp.split_iname(knl, "i", 4)
    assert "i" in knl.all_inames and "i_outer" not in knl.all_inames
    assert "i_outer" in split.all_inames
    (out,) = knl(a=np.ones(5, dtype=np.float32))  # the original still works
    assert out.sum() == 5


def test_every_registered_transformation_is_a_function_with_help():
    names = lp.transform_names()
    assert {"split_iname", "tag_inames", "add_prefetch", "fix_parameters", "assume"} <= set(names)
    for name in names:
        fn = getattr(lp, name)
        assert fn.__doc__ and name in lp.__all__
        assert list(inspect.signature(fn).parameters)[0] == "kernel"
    sig = inspect.signature(lp.split_iname)
    assert sig.parameters["outer_tag"].default is None
    assert sig.parameters["inner_length"].default is inspect.Parameter.empty


def test_tag_forms_fix_parameters_and_assume():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = a[i, j] + 1")
    for tags in ({"i": "g.0", "j": "l.0"}, "i:g.0, j:l.0", [("i", "g.0"), ("j", "l.0")]):
        t = lp.tag_inames(knl, tags)
        assert (t.iname_tag("i"), t.iname_tag("j")) == ("g.0", "l.0")
    fixed = lp.fix_parameters(knl, n=3, m=4)
    (out,) = fixed(a=np.zeros((3, 4), dtype=np.float32))
    assert out.shape == (3, 4) and (out == 1).all()
    assumed = lp.assume(knl, "n >= 1 and m mod 4 = 0")
    with pytest.raises(lp.ArgumentError, match="assumptions"):
        assumed(a=np.zeros((2, 3), dtype=np.float32))


def test_argument_declarations_and_temporaries():
    knl = lp.make_kernel(
        "{[i, j]: 0 <= i < n and 0 <= j < 4}",
        """
        <float32> acc = 0 {id=init, inames=i}
        acc = acc + w[j] * x[i, j] {id=upd, dep=init}
        out[i] = acc * alpha {dep=upd}
        """,
        [lp.GlobalArg("x", np.float32, shape=("n", 4)), lp.GlobalArg("w", np.float32, shape=(4,)),
         lp.GlobalArg("out", np.float32, shape="n"), lp.ValueArg("alpha", np.float32), "..."],
        name="weighted")
    assert knl.name == "weighted"
    x = np.random.default_rng(1).standard_normal((7, 4)).astype(np.float32)
    w = np.arange(4, dtype=np.float32)
    (out,) = knl(x=x, w=w, alpha=0.5)
    np.testing.assert_allclose(out, 0.5 * (x @ w), rtol=1e-5)


def _matmul_in_16x16_tiles():
    knl = lp.make_kernel("{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}", "c[i, j] = sum(k, a[i, k] * b[k, j])")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    return lp.split_iname(knl, "k", 16)


def _check_matmul(knl, seed, l):
    """Runs knl on a 33 x l by l x 17 product (partial tiles) against NumPy."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((33, l)).astype(np.float32)
    b = rng.standard_normal((l, 17)).astype(np.float32)
    (c,) = knl(a=a, b=b, target=HOST_TARGETS[0])
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_prefetched_matmul_from_python():
    knl = _matmul_in_16x16_tiles()
    knl = lp.add_prefetch(knl, "a", "i_inner,k_inner", default_tag="l.auto")
    knl = lp.add_prefetch(knl, "b", ["k_inner", "j_inner"])
    assert "a_fetch" in knl.temporary_variables
    code = lp.generate_code_v2(knl).device_code()
    assert "__shared__ __align__(16) float a_fetch[256]" in code and code.count("__syncthreads()") == 2
    _check_matmul(knl, seed=3, l=45)


def test_double_buffered_matmul_from_python():
    knl = _matmul_in_16x16_tiles()
    knl = lp.add_prefetch(knl, "a", "i_inner,k_inner")
    knl = lp.add_prefetch(knl, "b", "k_inner,j_inner")
    knl = lp.double_buffer(knl, "a_fetch", "k_outer")
    knl = lp.double_buffer(knl, "b_fetch", "k_outer", async_copy=True)
    code = lp.generate_code_v2(knl).device_code()
    assert "loom_cp_async<4>" in code and code.count("__syncthreads()") == 2
    _check_matmul(knl, seed=5, l=61)
    with pytest.raises(lp.TransformError, match="is tagged l.1"):
        lp.double_buffer(knl, "a_fetch", "i_inner")


def test_zero_filled_tiles_and_a_rounded_up_reduction_from_python():
    knl = _matmul_in_16x16_tiles()
    knl = lp.add_prefetch(knl, "a", "i_inner,k_inner", fill_value=0)
    knl = lp.add_prefetch(knl, "b", "k_inner,j_inner", fill_value=0)
    knl = lp.round_up_reduction(knl, "k_inner")
    knl = lp.double_buffer(knl, "b_fetch", "k_outer", async_copy=True)
    code = lp.generate_code_v2(knl).device_code()
    assert "loom_cp_async_zfill<4>" in code and "if (l >= 16 * k_outer" not in code
    _check_matmul(knl, seed=9, l=45)
    with pytest.raises(lp.TransformError, match="prefetched with fill_value=0"):
        lp.round_up_reduction(lp.add_prefetch(_matmul_in_16x16_tiles(), "a", "i_inner,k_inner"), "k_inner")


def test_async_prefetch_of_a_halo_from_python():
    knl = lp.make_kernel("{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}",
                         "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]")
    knl = lp.split_iname(knl, "j", 32, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 8, outer_tag="g.1", inner_tag="l.1")
    knl = lp.add_prefetch(knl, "u", "i_inner,j_inner", async_copy=True)
    code = lp.generate_code_v2(knl).device_code()
    assert "loom_cp_async<4>" in code and "loom_cp_async_wait_all();" in code
    rng = np.random.default_rng(7)
    u = rng.standard_normal((37, 70)).astype(np.float32)
    (out,) = knl(u=u, out=np.full((36, 69), np.nan, np.float32), target=HOST_TARGETS[0])  # shape inferred from the writes
    ref = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    np.testing.assert_allclose(out[1:, 1:], ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(lp.TransformError, match="must be true or false"):
        lp.add_prefetch(knl, "u", "i_inner,j_inner", async_copy="sometimes")


def test_errors_are_python_exceptions_with_loom_messages():
    with pytest.raises(lp.ParseError, match=r"<instructions>:2:16: expected an expression, found '\*'"):
        lp.make_kernel("{[i]: 0 <= i < n}", ["x[i] = 1", "out[i] = a[i] +* 2"])
    with pytest.raises(lp.ParseError, match=r"<domains>:1:"):
        lp.make_kernel("{[i]: 0 <= i < 1//0}", "out[i] = 1")
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i]")
    with pytest.raises(lp.TransformError, match=r"split_iname\('q', 4\) on kernel 'loopy_kernel': no iname 'q'"):
        lp.split_iname(knl, "q", 4)
    with pytest.raises(lp.LoomError):
        lp.split_iname(knl, "q", 4)
    declared = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i]", [lp.GlobalArg("a", np.float32, "n"), "..."])
    with pytest.raises(lp.ArgumentError, match="array 'a' must be float32, got float64"):
        declared(a=np.ones(4))
    with pytest.raises(lp.ArgumentError, match="C-contiguous"):
        knl(a=np.ones((4, 2), dtype=np.float32)[:, 0])
    with pytest.raises(lp.ArgumentError, match="missing input array 'a'"):
        knl(n=4)
    with pytest.raises(lp.ArgumentError, match="has no argument 'b'"):
        knl(a=np.ones(4, dtype=np.float32), b=1)
    with pytest.raises(TypeError, match="split_iname"):
        lp.split_iname(knl)


@pytest.mark.skipif(not lp._loom.gpu_available(), reason="no GPU")
def test_gpu_numpy_and_cuda_tensors():
    torch = pytest.importorskip("torch")
    knl = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]"), "i", 256, outer_tag="g.0", inner_tag="l.0")
    a = np.arange(1000, dtype=np.float32)
    (out,) = knl(a=a, target="cuda")
    np.testing.assert_array_equal(out, 2 * a)
    ta = torch.arange(1000, dtype=torch.float32, device="cuda")
    tout = torch.full_like(ta, float("nan"))
    (res,) = knl(a=ta, out=tout)
    torch.cuda.synchronize()
    assert res is tout and torch.equal(tout, 2 * ta)
    # later calls take the cached binding while shapes, dtypes and values stay; a change re-binds
    for n in (1000, 1000, 77, 4096, 77):
        ta = torch.randn(n, device="cuda")
        tout = torch.full_like(ta, float("nan"))
        (res,) = knl(a=ta, out=tout)
        torch.cuda.synchronize()
        assert res is tout and torch.equal(tout, 2 * ta), n
    # open dtypes specialize: a float64 call compiles a float64 variant
    (res,) = knl(a=ta.double(), out=tout.double())
    torch.cuda.synchronize()
    assert res.dtype == torch.float64 and torch.equal(res, 2 * ta.double())
    declared = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", [lp.GlobalArg("a", np.float32, "n"), "..."]),
                              "i", 256, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(lp.ArgumentError, match="must be float32"):
        declared(a=ta.double(), out=tout.double())
    # on the caller's current stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        big = torch.randn(1 << 20, device="cuda")
        bout = torch.empty_like(big)
        knl(a=big, out=bout)
    side.synchronize()
    assert torch.equal(bout, 2 * big)
    with pytest.raises(lp.ArgumentError):
        knl(a=ta, out=torch.empty(5, device="cuda"))
    (res,) = knl(a=ta, out=tout)  # and the binding still works after refusals
    torch.cuda.synchronize()
    assert torch.equal(tout, 2 * ta)
    # a scalar's value is part of the binding: each value gives its own numbers
    scaled = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = alpha * a[i]"), "i", 128, outer_tag="g.0", inner_tag="l.0")
    x = torch.randn(4096, device="cuda")
    for alpha in (2.0, 2.0, 3.5, 2.0):
        y = torch.full_like(x, float("nan"))
        scaled(a=x, out=y, alpha=alpha)
        torch.cuda.synchronize()
        assert torch.allclose(y, alpha * x), alpha
    # a vector variant (size divisible by 16) bound on aligned tensors, then called on a view
    # that is not 16-byte aligned: the per-call path hands it to the general path's fallback
    vec = lp.split_iname(lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]"), "i", 4, inner_tag="vec"),
                         "i_outer", 64, outer_tag="g.0", inner_tag="l.0")
    big = torch.randn(4097, device="cuda")
    for start in (0, 0, 1, 0):
        view, o = big[start:start + 4096], torch.full((4096,), float("nan"), device="cuda")
        vec(a=view, out=o)
        torch.cuda.synchronize()
        assert torch.equal(o, 2 * view), start
    # a view that is not contiguous is refused by the general path, not launched
    with pytest.raises(lp.ArgumentError, match="contiguous"):
        knl(a=big[::2], out=torch.empty(2049, device="cuda"))


def test_call_time_specialization_and_compiled_stages():
    knl = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]"), "i", 16, outer_tag="g.0", inner_tag="l.0")
    # dtypes left open take the call's: float64 in, float64 out; int32 too
    a64 = np.random.rand(1000)
    (out,) = knl(a=a64)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, 2 * a64)
    (iout,) = knl(a=np.arange(7, dtype=np.int32))
    assert iout.dtype == np.int32 and list(iout) == [0, 2, 4, 6, 8, 10, 12]
    # a size divisible by 16 selects a variant without the tail guard; others keep it
    even = knl.compiled(target="interpreter", a=np.zeros(1024, np.float32))
    odd = knl.compiled(target="interpreter", a=np.zeros(1000, np.float32))
    assert even is not odd and even.kernel is not odd.kernel
    if lp._loom.gpu_available() or True:  # NVRTC compiles without a GPU
        try:
            c = knl.compiled(target="cuda", a=np.zeros(1024, np.float32))
        except lp.CudaError as e:
            pytest.skip(f"no NVRTC: {e}")
        body = c.asm["cuda"].split("__global__")[1]
        assert "if (" not in body, body
        assert "if (" in knl.compiled(target="cuda", a=np.zeros(1000, np.float32)).asm["cuda"].split("__global__")[1]
        for stage in ("kernel", "preprocessed", "schedule", "cuda", "ptx", "cubin", "registers"):
            assert stage in c.asm, stage
        assert c.asm["ptx"].lstrip().startswith("//") and ".entry" in c.asm["ptx"]
        assert isinstance(c.asm["cubin"], bytes) and len(c.asm["cubin"]) > 0
        # do_not_specialize keeps the general code
        general = knl.copy(do_not_specialize=["n"]).compiled(target="cuda", a=np.zeros(1024, np.float32))
        assert "if (" in general.asm["cuda"].split("__global__")[1]
        # ... and so does the kernel's own do_not_specialize step (a .loom or JSON file's)
        kept = lp.do_not_specialize(knl, "n").compiled(target="cuda", a=np.zeros(1024, np.float32))
        assert "if (" in kept.asm["cuda"].split("__global__")[1]
    kept = lp.do_not_specialize(knl, "n")
    even, odd = (kept.compiled(target="interpreter", a=np.zeros(n, np.float32)) for n in (1024, 1000))
    assert even.kernel is odd.kernel is kept
    with pytest.raises(lp.TransformError, match="'q' is not a parameter"):
        lp.do_not_specialize(knl, "q")
    for n in (1024, 1000, 16, 1):
        a = np.random.rand(n).astype(np.float32)
        (out,) = knl(a=a)
        np.testing.assert_array_equal(out, 2 * a)
    # loopy's add_dtypes with a dict; a declared dtype cannot change
    k64 = lp.add_dtypes(lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]"), {"a": np.float64})
    assert "a: float64" in str(k64) and "out: float64" in str(k64)
    with pytest.raises(lp.TransformError, match="declared float64"):
        lp.add_dtypes(k64, {"a": np.float32})


def test_readme_python_example_runs_as_written():
    text = open(os.path.join(SOURCE_DIR, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has a Python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_index_dtype_int64_as_in_loopy():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", index_dtype=np.int64)
    assert "int64" in str(knl) or "long" in lp.generate_code_v2(knl).device_code()
    a = np.arange(10, dtype=np.float32)
    (out,) = knl(a=a, target="interpreter")
    np.testing.assert_array_equal(out, 2 * a)
    with pytest.raises(lp.LoomError, match="int32 or int64"):
        lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", index_dtype=np.float32)


def test_arrays_beyond_32_bit_indices_select_a_64_bit_variant():
    # an array of 2^31 elements is not allocated here: a stand-in with its shape and dtype
    class Big:
        shape, dtype = (2**31,), np.dtype(np.float32)
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]")
    wide = knl.compiled(target="interpreter", a=Big())
    narrow = knl.compiled(target="interpreter", a=np.zeros(100, np.float32))
    assert wide.kernel._core.index_dtype() == "int64" and narrow.kernel._core.index_dtype() == "int32"
    assert ("set_index_dtype int64", ) == tuple(step for step, _ in wide.asm["transforms"][1:] if "index" in step)


def test_a_call_whose_index_arithmetic_would_wrap_runs_with_64_bit_indices():
    # i * m is index arithmetic (inames and parameters): in 32 bits it wraps for
    # m = 10**9; the launch's check on the generated code sees it first
    knl = lp.make_kernel("{[i]: 0 <= i < 4}", "out[i] = i * m", [lp.GlobalArg("out", np.int64, shape=(4,)), lp.ValueArg("m", np.int32)])
    target = "cpu" if lp._loom.has_cpu_target() else "interpreter"
    (small,) = knl(m=1000, target=target)
    np.testing.assert_array_equal(small, [0, 1000, 2000, 3000])
    (big,) = knl(m=10**9, target=target)
    np.testing.assert_array_equal(big, [0, 10**9, 2 * 10**9, 3 * 10**9])


@pytest.mark.skipif(not lp._loom.gpu_available(), reason="no GPU")
def test_sizes_near_and_beyond_2_to_31_on_the_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_properties(0).total_memory < 16 * 2**30:
        pytest.skip("needs 9 GiB of GPU memory")
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = a[i] + 1",
                         [lp.GlobalArg("a", np.int8, shape=("n",)), lp.GlobalArg("out", np.int8, shape=("n",))])
    knl = lp.split_iname(knl, "i", 100, outer_tag="g.0", inner_tag="l.0")
    # 2147483600 elements: the last block's threads reach 2147483599 (their guard
    # 2147483600), 32-bit indices are right; with one more element the last block's
    # 100*o + t reaches 2147483699: the launch's check refuses the 32-bit kernel and
    # the call runs the 64-bit one; 2^31 + 100 elements are known to need 64 bits
    # from the shape
    for n in (2147483600, 2147483601, 2**31 + 100):
        a = torch.empty(n, device="cuda", dtype=torch.int8).random_(-100, 100)
        out = torch.full_like(a, -128)
        knl(a=a, out=out)
        torch.cuda.synchronize()
        assert torch.equal(out, a + 1), n
        if n != 2147483601:  # (compiled() gives the variant chosen from the shapes)
            assert knl.compiled(a=a, out=out).kernel._core.index_dtype() == ("int32" if n < 2**31 else "int64")
        del a, out
        torch.cuda.empty_cache()


def test_kernels_are_values_equal_by_content():
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]")
    one = lp.split_iname(k, "i", 128, outer_tag="g.0", inner_tag="l.0")
    two = lp.tag_inames(lp.split_iname(k, "i", 128), "i_outer:g.0, i_inner:l.0")
    assert one == two and hash(one) == hash(two) and one.structural_hash == two.structural_hash
    assert one != k and lp.split_iname(k, "i", 64) != one
    assert len({one, two, k}) == 2


def test_transformation_signatures_carry_the_declared_types_and_defaults():
    sig = inspect.signature(lp.add_prefetch)
    assert sig.parameters["default_tag"].default == "l.auto"
    assert sig.parameters["async_copy"].default is False
    assert sig.parameters["vector_width"].default == 1
    assert "inner_length (int >= 1, required)" in lp.split_iname.__doc__
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < 100}", "out[i, j] = a[i, j]")
    assert lp.search_domain(k, "split_iname", "inner_length", iname="j") == ["1", "2", "4", "8", "16", "32", "64"]
    with pytest.raises(lp.TransformError, match=r"argument 'inner_length' must be at least 1, got 0 \(inner_length: int >= 1\)"):
        lp.split_iname(k, "i", 0)
    names = {t["name"] for t in lp.transform_schema()["transforms"]}
    assert "split_iname" in names and "add_prefetch" in names


def test_compile_variants_in_parallel_workers():
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = 2 * a[i, j]")
    scripts = [f"split_iname i {b} outer_tag=g.0 inner_tag=l.0" for b in (16, 32, 64, 2048)]
    r = lp.compile_variants(k, scripts, workers=2, compile=False)
    assert [v["ok"] for v in r] == [True, True, True, False]
    assert "2048 threads" in r[3]["error"]
    assert r[0]["cuda"] == lp.generate_code_v2(lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")).device_code()
    by_kernel = lp.compile_variants([lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")], compile=False)
    assert by_kernel[0]["hash"] == r[1]["hash"]


@pytest.mark.skipif(not lp._loom.gpu_available(), reason="no GPU")
def test_gpu_bfloat16_tensors_and_tensor_cores():
    # torch's bfloat16 tensors (NumPy has no bfloat16) on the tensor-core GEMM example
    torch = pytest.importorskip("torch")
    import os

    knl = lp.load_kernel(os.path.join(os.environ.get("LOOM_SOURCE_DIR", "."), "examples", "gemm_bf16_any.loom"))
    a = torch.randn(70, 45, device="cuda").to(torch.bfloat16)
    b = torch.randn(45, 33, device="cuda").to(torch.bfloat16)
    c = torch.full((70, 33), float("nan"), device="cuda")
    knl(a=a, b=b, c=c)
    torch.cuda.synchronize()
    assert torch.allclose(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)
