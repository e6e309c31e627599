"""The conformance corpus (tests/conformance): 30 kernels written from the
published behaviour of loopy's features, each as a kernel file in Loom's
kernel language (with its transformation script) and as the same kernel built
in Python with loopy's API. Both forms must generate the same CUDA C, and
both must compute what NumPy computes, on the CPU target (or the
interpreter) and, where there is a GPU, on it. Outputs start as NaN (or a
poison integer), so an element left unwritten fails."""
import os

import numpy as np
import pytest

import loom as lp
from conftest import SOURCE_DIR

CORPUS = os.path.join(SOURCE_DIR, "tests", "conformance")
RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def mk(domains, instructions, data=("...",), name=None):
    return lp.make_kernel(domains, instructions, list(data), name=name)


# name -> (python builder, inputs, outputs' NumPy reference, tolerance)
CASES = {}


def case(name, inputs, reference, rtol=1e-5):
    def register(build):
        CASES[name] = (build, inputs, reference, rtol)
        return build
    return register


@case("vector_add", lambda: dict(a=f32(1000), b=f32(1000)), lambda a, b: dict(out=a + b))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = a[i] + b[i]", name=k)
    return lp.split_iname(k, "i", 128, outer_tag="g.0", inner_tag="l.0")


@case("axpy", lambda: dict(alpha=np.float32(1.5), x=f32(777), y=f32(777)), lambda alpha, x, y: dict(y=alpha * x + y))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "y[i] = alpha * x[i] + y[i]", [lp.ValueArg("alpha", np.float32), "..."], name=k)
    return lp.split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")


@case("matvec", lambda: dict(a=f32(45, 33), x=f32(33)), lambda a, x: dict(y=a @ x), rtol=1e-4)
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "y[i] = sum(j, a[i, j] * x[j])", name=k)
    return lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")


@case("matmul_prefetch", lambda: dict(a=f32(37, 29), b=f32(29, 41)), lambda a, b: dict(c=a @ b), rtol=1e-4)
def _(k):
    k = mk("{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}", "c[i, j] = sum(k, a[i, k] * b[k, j])", name=k)
    k = lp.split_iname(k, "i", 16, outer_tag="g.1", inner_tag="l.1")
    k = lp.split_iname(k, "j", 16, outer_tag="g.0", inner_tag="l.0")
    k = lp.split_iname(k, "k", 16)
    k = lp.add_prefetch(k, "a", "i_inner,k_inner")
    return lp.add_prefetch(k, "b", "k_inner,j_inner")


@case("matmul_ilp", lambda: dict(a=f32(70, 19), b=f32(19, 35)), lambda a, b: dict(c=a @ b), rtol=1e-4)
def _(k):
    k = mk("{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}", "c[i, j] = sum(k, a[i, k] * b[k, j])", name=k)
    k = lp.split_iname(k, "i", 32, outer_tag="g.1")
    k = lp.split_iname(k, "i_inner", 4, outer_tag="l.1", inner_tag="ilp")
    k = lp.split_iname(k, "j", 16, outer_tag="g.0", inner_tag="l.0")
    return lp.prioritize_loops(k, "k,i_inner_inner")


def stencil_ref(u):
    out = np.full_like(u, np.nan)
    out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    return out


@case("stencil_halo", lambda: dict(u=f32(30, 70)), lambda u: dict(out=stencil_ref(u)), rtol=1e-4)
def _(k):
    k = mk("{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}",
           "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]",
           [lp.GlobalArg("u", np.float32, "n, m"), lp.GlobalArg("out", np.float32, "n, m")], name=k)
    k = lp.split_iname(k, "i", 8, outer_tag="g.1", inner_tag="l.1")
    k = lp.split_iname(k, "j", 32, outer_tag="g.0", inner_tag="l.0")
    return lp.add_prefetch(k, "u", "i_inner,j_inner")


@case("precompute_rule", lambda: dict(a=f32(101), n=100), lambda a, n: dict(out=(3 * a[:-1] - 1) * (3 * a[1:] - 1)), rtol=1e-5)
def _(k):
    k = mk("{[i]: 0 <= i < n}", ["f(x) := 3 * a[x] - 1", "out[i] = f(i) * f(i + 1)"], name=k)
    k = lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")
    return lp.precompute(k, "f", "i_inner")


@case("row_sums_local", lambda: dict(a=f32(20, 300)), lambda a: dict(out=a.sum(1)), rtol=1e-4)
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])", name=k)
    k = lp.split_iname(k, "j", 64, inner_tag="l.0")
    return lp.tag_inames(k, {"i": "g.0"})


@case("row_sums_warp", lambda: dict(a=f32(21, 100)), lambda a: dict(out=a.sum(1)), rtol=1e-4)
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])", name=k)
    k = lp.split_iname(k, "j", 32, inner_tag="l.0")
    return lp.split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.1")


@case("argmax", lambda: dict(a=f32(40, 23)), lambda a: dict(idx=a.argmax(1).astype(np.int32)))
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "idx[i] = argmax(j, a[i, j])",
           [lp.GlobalArg("a", np.float32, "n, m"), lp.GlobalArg("idx", np.int32, "n")], name=k)
    return lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")


@case("max_min", lambda: dict(a=f32(40, 23)), lambda a: dict(mx=a.max(1), mn=a.min(1)))
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", ["mx[i] = max(j, a[i, j])", "mn[i] = min(j, a[i, j])"], name=k)
    return lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")


@case("triangular", lambda: dict(L=f32(50, 50), x=f32(50)), lambda L, x: dict(y=np.tril(L) @ x), rtol=1e-4)
def _(k):
    k = mk(["{[i]: 0 <= i < n}", "{[j]: 0 <= j <= i}"], "y[i] = sum(j, L[i, j] * x[j])",
           [lp.GlobalArg("L", np.float32, "n, n"), lp.GlobalArg("x", np.float32, "n"), lp.GlobalArg("y", np.float32, "n")], name=k)
    return lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")


@case("slabs", lambda: dict(a=f32(45)), lambda a: dict(out=2 * a))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", name=k)
    return lp.split_iname(k, "i", 16, slabs=(0, 1))


@case("join_chunk", lambda: dict(a=f32(9, 12)), lambda a: dict(out=a + np.arange(12, dtype=np.float32)))
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < 12}", "out[i, j] = a[i, j] + j",
           [lp.GlobalArg("a", np.float32, "n, 12"), lp.GlobalArg("out", np.float32, "n, 12")], name=k)
    k = lp.chunk_iname(k, "j", 3)
    return lp.join_inames(k, "i,j_outer")


@case("unroll", lambda: dict(a=f32(100, 4)), lambda a: dict(out=a @ np.arange(1, 5, dtype=np.float32)), rtol=1e-4)
def _(k):
    k = mk("{[i, k]: 0 <= i < n and 0 <= k < 4}", "out[i] = sum(k, a[i, k] * (k + 1))",
           [lp.GlobalArg("a", np.float32, "n, 4"), lp.GlobalArg("out", np.float32, "n")], name=k)
    k = lp.tag_inames(k, "k:unr")
    return lp.split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")


@case("privatize", lambda: dict(a=f32(16, 9)), lambda a: dict(out=a.sum(1)), rtol=1e-4)
def _(k):
    k = mk("{[i, k]: 0 <= i < 16 and 0 <= k < m}",
           ["<> acc = 0  {id=init, inames=i}", "acc = acc + a[i, k]  {id=upd, dep=init}", "out[i] = acc  {id=st, dep=upd}"],
           [lp.GlobalArg("a", np.float32, "16, m"), lp.GlobalArg("out", np.float32, "16")], name=k)
    k = lp.privatize_temporaries_with_inames(k, "i")
    return lp.tag_inames(k, "i:l.0")


@case("buffer_accumulate", lambda: dict(a=f32(70, 6), out=f32(70)), lambda a, out: dict(out=out + a.sum(1)), rtol=1e-4)
def _(k):
    k = mk("{[i, k]: 0 <= i < n and 0 <= k < 6}", "out[i] = out[i] + a[i, k]",
           [lp.GlobalArg("a", np.float32, "n, 6"), lp.GlobalArg("out", np.float32, "n")], name=k)
    k = lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")
    return lp.buffer_array(k, "out", "i_inner,k")


@case("extract_precompute", lambda: dict(a=f32(41), n=40), lambda a, n: dict(out=a[:-1] ** 2 + a[1:] ** 2), rtol=1e-5)
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = a[i] * a[i] + a[i + 1] * a[i + 1]", name=k)
    k = lp.extract_subst(k, "sq", "a[x]*a[x]", parameters="x")
    k = lp.split_iname(k, "i", 16)
    return lp.precompute(k, "sq", "i_inner")


@case("assignment_to_subst", lambda: dict(a=f32(300)), lambda a: dict(out=(2 * a + 1) ** 2), rtol=1e-5)
def _(k):
    k = mk("{[i]: 0 <= i < n}", ["<> t = 2 * a[i] + 1  {id=deft}", "out[i] = t * t  {id=use, dep=deft}"], name=k)
    k = lp.assignment_to_subst(k, "t")
    return lp.split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")


@case("fortran_layout", lambda: dict(a=np.asfortranarray(f32(13, 40))), lambda a: dict(out=2 * a + 1))
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = 2 * a[i, j] + 1",
           [lp.GlobalArg("a", np.float32, "n, m", order="F"), lp.GlobalArg("out", np.float32, "n, m")], name=k)
    k = lp.split_iname(k, "j", 16, outer_tag="g.0", inner_tag="l.0")
    return lp.tag_inames(k, "i:g.1")


@case("dg_element", lambda: dict(D=f32(10, 10), u=f32(50, 10)), lambda D, u: dict(res=u @ D.T), rtol=1e-4)
def _(k):
    k = mk("{[e, i, j]: 0 <= e < ne and 0 <= i, j < 10}", "res[e, i] = sum(j, D[i, j] * u[e, j])",
           [lp.GlobalArg("D", np.float32, "10, 10"), lp.GlobalArg("u", np.float32, "ne, 10"), lp.GlobalArg("res", np.float32, "ne, 10")],
           name=k)
    k = lp.split_iname(k, "e", 16, outer_tag="g.0", inner_tag="l.1")
    k = lp.tag_inames(k, "i:l.0")
    return lp.add_prefetch(k, "D", "i,j")


@case("float64_poly", lambda: dict(x=RNG.standard_normal(500)), lambda x: dict(y=((0.5 * x + 1.25) * x - 2) * x + 3), rtol=1e-12)
def _(k):
    k = mk("{[i]: 0 <= i < n}", "y[i] = ((0.5 * x[i] + 1.25) * x[i] - 2) * x[i] + 3",
           [lp.GlobalArg("x", np.float64, "n"), lp.GlobalArg("y", np.float64, "n")], name=k)
    return lp.split_iname(k, "i", 128, outer_tag="g.0", inner_tag="l.0")


@case("int_floordiv", lambda: dict(a=RNG.integers(-100, 100, 200).astype(np.int32)),
      lambda a: dict(q=(a // 7).astype(np.int32), r=(a % 7).astype(np.int32)))
def _(k):
    k = mk("{[i]: 0 <= i < n}", ["q[i] = a[i] // 7", "r[i] = a[i] % 7"],
           [lp.GlobalArg("a", np.int32, "n"), lp.GlobalArg("q", np.int32, "n"), lp.GlobalArg("r", np.int32, "n")], name=k)
    return lp.split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")


@case("select", lambda: dict(a=f32(300)), lambda a: dict(out=np.where(a > 0, a, -2 * a)))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = if(a[i] > 0, a[i], -2 * a[i])", name=k)
    return lp.split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")


@case("two_iname_sum", lambda: dict(a=f32(40, 5, 7)), lambda a: dict(out=a.sum((1, 2))), rtol=1e-4)
def _(k):
    k = mk("{[i, j, k]: 0 <= i < n and 0 <= j < 5 and 0 <= k < 7}", "out[i] = sum((j, k), a[i, j, k])",
           [lp.GlobalArg("a", np.float32, "n, 5, 7"), lp.GlobalArg("out", np.float32, "n")], name=k)
    k = lp.split_reduction_outward(k, "j")
    return lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")


@case("duplicate", lambda: dict(a=f32(150)), lambda a: dict(x=a + 1, y=2 * a))
def _(k):
    k = mk("{[i]: 0 <= i < n}", ["x[i] = a[i] + 1  {id=s1}", "y[i] = 2 * a[i]  {id=s2}"], name=k)
    k = lp.duplicate_inames(k, "i", "id:s2", new_inames="i2")
    k = lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")
    return lp.split_iname(k, "i2", 64, outer_tag="g.0", inner_tag="l.0")


@case("bmm", lambda: dict(a=f32(13, 8, 8), x=f32(13, 8, 8)), lambda a, x: dict(c=a @ x), rtol=1e-4)
def _(k):
    k = mk("{[b, i, j, k]: 0 <= b < nb and 0 <= i, j, k < 8}", "c[b, i, j] = sum(k, a[b, i, k] * x[b, k, j])",
           [lp.GlobalArg(n, np.float32, "nb, 8, 8") for n in ("a", "x", "c")], name=k)
    k = lp.split_iname(k, "b", 4, outer_tag="g.0", inner_tag="l.2")
    k = lp.tag_inames(k, "i:l.1, j:l.0")
    k = lp.add_prefetch(k, "a", "b_inner,i,k")
    return lp.add_prefetch(k, "x", "b_inner,k,j")


@case("fix_parameters", lambda: dict(a=f32(9, 24)), lambda a: dict(out=a * np.arange(24, dtype=np.float32)))
def _(k):
    k = mk("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = a[i, j] * j", name=k)
    k = lp.fix_parameters(k, m=24)
    k = lp.split_iname(k, "j", 8, outer_tag="g.0", inner_tag="l.0")
    return lp.tag_inames(k, "i:g.1")


@case("vector_add_ilp", lambda: dict(a=f32(1300), b=f32(1300)), lambda a, b: dict(out=a + b))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = a[i] + b[i]", name=k)
    k = lp.split_iname(k, "i", 512, outer_tag="g.0")
    return lp.split_iname(k, "i_inner", 128, outer_tag="unr", inner_tag="l.0")


@case("assume_full_tiles", lambda: dict(a=f32(160)), lambda a: dict(out=a * a))
def _(k):
    k = mk("{[i]: 0 <= i < n}", "out[i] = a[i] * a[i]", name=k)
    k = lp.assume(k, "n mod 16 = 0 and n >= 16")
    return lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")


def _poisoned(ref):
    return np.full(ref.shape, np.nan if ref.dtype.kind == "f" else -12345, dtype=ref.dtype)  # C order, as declared


def _check(knl, inputs, reference, rtol, target):
    expected = reference(**inputs)
    args = dict(inputs)
    for name, ref in expected.items():
        args[name] = args[name].copy() if name in args else _poisoned(np.asarray(ref))
    outs = knl(target=target, **args)
    names = [n for n in expected]
    got = dict(zip([n for n in knl._core.written_arrays()], outs))
    for n in names:
        g, e = np.asarray(got[n]), np.asarray(expected[n])
        mask = ~np.isnan(e) if e.dtype.kind == "f" else np.ones(e.shape, bool)
        np.testing.assert_allclose(g[mask], e[mask], rtol=rtol, atol=rtol * 10, err_msg=f"{knl.name}: {n} on {target}")


def test_the_corpus_has_thirty_kernels_in_both_forms():
    files = sorted(f[:-5] for f in os.listdir(CORPUS) if f.endswith(".loom"))
    assert len(files) >= 30
    assert sorted(CASES) == files


@pytest.mark.parametrize("name", sorted(CASES))
def test_conformance(name):
    build, inputs, reference, rtol = CASES[name]
    from_file = lp.load_kernel(os.path.join(CORPUS, name + ".loom"))
    from_python = build(name)
    # the two forms are one kernel: the same generated CUDA C
    assert lp.generate_code_v2(from_file).device_code() == lp.generate_code_v2(from_python).device_code()
    host = "cpu" if lp._loom.has_cpu_target() else "interpreter"
    targets = [host] + (["cuda"] if lp._loom.gpu_available() else [])
    for knl in (from_file, from_python):
        for target in targets:
            _check(knl, inputs(), reference, rtol, target)
