"""The loopy corpus (tests/conformance/loopy): kernels written from what
loopy's own test suite checks, each a .loom file naming the loopy test it
follows (`# loopy: test_file.py::test_name`), with its transformation script.

Each kernel runs on the CPU target (or the interpreter) and, where there is a
GPU, on it, at sizes that are not multiples of the tile sizes, against the
NumPy reference below; outputs start poisoned (NaN or a poison integer), so
an element left unwritten fails unless the reference leaves it NaN too.
A file with `# expect-error: TEXT` is one loopy refuses (or should): Loom
must refuse it with an error containing TEXT. A file with `# gap: REASON`
is a kernel loopy runs and Loom cannot yet: it is an expected failure that
turns into an error the day it passes (strict xfail), so the list stays
honest. The suite prints the count of ported, passing, refused and gap
kernels (conftest.py)."""
import os

import numpy as np
import pytest

import loom as lp
from conftest import SOURCE_DIR

CORPUS = os.path.join(SOURCE_DIR, "tests", "conformance", "loopy")
RNG = np.random.default_rng(11)
NAN = np.nan


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def unwritten(shape, where, value):
    """An expected array: `value` where `where` holds, NaN (unwritten) elsewhere."""
    out = np.full(shape, NAN, np.float32)
    out[where] = np.broadcast_to(np.asarray(value, np.float32), out.shape)[where]
    return out


def matmul(a, b):
    return dict(c=a @ b)


def axpy():
    return (lambda: dict(a=np.float32(1.5), b=np.float32(-0.25), x=f32(1001), y=f32(1001)),
            lambda a, b, x, y: dict(z=a * x + b * y))


def square_mm():
    return lambda: dict(a=f32(37, 37), b=f32(37, 37)), matmul


def rect_mm(n, l, m):
    return lambda: dict(a=f32(n, l), b=f32(l, m)), matmul


def local_parallel(n):
    return lambda: dict(), lambda: dict(z=np.array([sum(i + j for i in range(n)) for j in range(5)], np.float32))


def if_then(t):
    e = np.where(t < 0.5, 2 * t + 1, NAN).astype(np.float32)
    return dict(cp=e)


def tight_bounds():
    return lambda: dict(), lambda: dict(out=np.arange(10, dtype=np.float32))


def int_reduction(op):
    var = RNG.integers(1, 4 if op == "product" else 1000, size=23).astype(np.int64)
    f = dict(max=np.max, min=np.min, sum=np.sum, product=np.prod)[op]
    return lambda: dict(var=var.copy()), lambda var: dict(out=np.array(f(var), np.int64))


def double_sum(n):
    s = float(sum(i * j for i in range(n) for j in range(n)))
    return lambda: dict(), lambda: dict(a=np.float32(s), b=np.float32(s)), dict(n=n)


# name -> (inputs, reference, parameters, rtol)
REFS = {
    "axpy_blocks": axpy(),
    "axpy_ilp": axpy(),
    "axpy_unrolled": (lambda: dict(a=np.float32(2), b=np.float32(3), x=f32(37), y=f32(37)), lambda a, b, x, y: dict(z=a * x + b * y)),
    "transpose_prefetch": (lambda: dict(a=f32(45, 37)), lambda a: dict(b=a.T.copy())),
    "plain_matrix_mul": rect_mm(37, 29, 41),
    "variable_size_matrix_mul": square_mm(),
    "funny_shape_matrix_mul": rect_mm(37, 50, 23),
    "fancy_matrix_mul": square_mm(),
    "matrix_mul_register_tiles": rect_mm(70, 33, 45),
    "intel_matrix_mul": square_mm(),
    "rank_one_prefetch": (lambda: dict(a=f32(50), b=f32(33)), lambda a, b: dict(c=np.outer(a, b))),
    "rank_one_ilp": (lambda: dict(a=f32(150), b=f32(33)), lambda a, b: dict(c=np.outer(a, b))),
    "small_batched_matvec": (lambda: dict(d=f32(36, 36), f=f32(53, 36)), lambda d, f: dict(result=f @ d.T)),
    "simple_reduction": (lambda: dict(b=f32(19, 19), x=f32(19)), lambda b, x: dict(a=b @ x)),
    "empty_reduction": (lambda: dict(), lambda: dict(a=np.zeros(20, np.float32))),
    "nested_dependent_reduction": (lambda: dict(b=f32(40), sumlen=np.int32(7)),
                                   lambda b, sumlen: dict(a=np.array([b[:i + 7].sum() for i in range(33)], np.float32)),
                                   dict(n=33)),
    "nested_dependent_reduction_data": (lambda: dict(ell=np.arange(33, dtype=np.int32)),
                                        lambda ell: dict(a=((2 * ell - 1) * 2 * ell // 2).astype(np.int32))),
    "recursive_nested_dependent_reduction": (
        lambda: dict(nparticles_per_box=RNG.integers(0, 9, size=7).astype(np.int32)),
        lambda nparticles_per_box: dict(a=np.array([sum(s + b + t for b, m in enumerate(nparticles_per_box) for s in range(m))
                                                    for t in range(5)], np.int32)), dict(ntgts=5)),
    "multi_nested_dependent_reduction": (
        lambda: dict(nparticles_per_box=RNG.integers(0, 9, size=7).astype(np.int32)),
        lambda nparticles_per_box: dict(a=np.full(4, nparticles_per_box.sum(), np.int32)), dict(ntgts=4)),
    "local_parallel_reduction_0": local_parallel(1000),
    "local_parallel_reduction_1": local_parallel(200),
    "local_parallel_reduction_2": local_parallel(1000),
    "global_parallel_reduction": (lambda: dict(a=f32(10007)), lambda a: dict(z=np.array([a.sum()], np.float32)), {}, 1e-4),
    "argmax": (lambda: dict(a=f32(1003)), lambda a: dict(max_val=np.float32(np.abs(a).max()), max_idx=np.int32(np.argmax(np.abs(a))))),
    "argmin_int": (lambda: dict(var=RNG.integers(0, 50, size=77).astype(np.int32)),
                   lambda var: dict(out=np.array([var.min(), np.argmin(var)], np.int32))),
    "integer_reduction_max": int_reduction("max"),
    "integer_reduction_min": int_reduction("min"),
    "integer_reduction_sum": int_reduction("sum"),
    "integer_reduction_product": int_reduction("product"),
    "simul_reduce": double_sum(13),
    "double_sum_made_unique": double_sum(13),
    "reduction_library": (lambda: dict(a=f32(37, 11)), lambda a: dict(res=a.max(1) - a.min(1))),
    "split_reduction": (lambda: dict(a=f32(7, 7, 7)), lambda a: dict(b=np.float32(a.sum())), {}, 1e-4),
    "parallel_multi_output_reduction": (lambda: dict(a=f32(128)),
                                        lambda a: dict(max_val=np.float32(np.abs(a).max()), max_indices=np.int32(np.argmax(np.abs(a))))),
    "reduction_with_conditional": (lambda: dict(b=f32(42)), lambda b: dict(a=np.float32(b.sum())), {}, 1e-4),
    "reduction_in_conditional": (lambda: dict(), lambda: dict(y=np.array([2 * j for j in range(10)], np.float32))),
    "assume": (lambda: dict(a=f32(48)), lambda a: dict(a=a + 1)),
    "divisibility_assumption": (lambda: dict(a=f32(64)), lambda a: dict(b=2 * a)),
    "eq_constraint": (lambda: dict(b=f32(32)), lambda b: dict(a=b.copy())),
    "independent_multi_domain": (lambda: dict(), lambda: dict(a=np.ones(37, np.float32), b=np.full(37, 2, np.float32)), dict(n=37)),
    # n = 37: the instruction over (i, j) alone needs 3 blocks of 16 for i; k = i + 5 < n would allow 2
    "equality_constraints": (lambda: dict(), lambda: dict(a=np.full((37, 37), 5, np.float32),
                                                           b=unwritten((37, 37), np.eye(37, 37, 5, bool), 22)), dict(n=37)),
    "stride": (lambda: dict(), lambda: dict(a=unwritten(11, np.arange(11) % 2 == 0, 5)), dict(n=11)),
    "domain_existential_dependency": (lambda: dict(), lambda: dict(a=unwritten(
        (9, 9), (np.arange(9)[:, None] % 2 == 0) & (np.arange(9)[None, :] <= np.arange(9)[:, None]), np.add.outer(np.arange(9), np.arange(9)))),
        dict(n=9)),
    "triangle_domain": (lambda: dict(), lambda: dict(a=unwritten((19, 19), np.triu(np.ones((19, 19), bool)), 17)), dict(n=19)),
    "dependent_loop_bounds": (lambda: dict(b=f32(37)), lambda b: dict(a=np.cumsum(b[::-1])[::-1].astype(np.float32)), {}, 1e-4),
    "split_slabs_sequential": (lambda: dict(a=f32(22)), lambda a: dict(a=2 * a)),
    "split_slabs_blocks": (lambda: dict(a=f32(53)), lambda a: dict(out=2 * a)),
    "slab_decomposition_does_not_double_execute": (lambda: dict(a=f32(22)), lambda a: dict(a=2 * a)),
    "type_inference_no_artificial_doubles": (lambda: dict(a=f32(31), b=f32(31)), lambda a, b: dict(c=a - b)),
    "multi_cse": (lambda: dict(a=f32(100)), lambda a: dict(z=a + a ** 2)),
    "ilp_write_race_avoidance_local": (lambda: dict(), lambda: dict(out=(5 + np.add.outer(np.arange(16), np.arange(17))).astype(np.float32))),
    "ilp_write_race_avoidance_private": (lambda: dict(), lambda: dict(out=(5 + np.arange(16)).astype(np.float32))),
    "arg_shape_guessing": (lambda: dict(b=f32(9, 9), c=f32(17, 9)),
                           lambda b, c: dict(a=np.fromfunction(lambda i, j: i * j + b[i, j] + c[i + j, j], (9, 9), dtype=int).astype(np.float32))),
    "arg_guessing": (lambda: dict(), lambda: dict(
        a=np.float32(1.5 + sum(i * j for i in range(9) for j in range(9))),
        b=np.multiply.outer(np.arange(9), np.arange(9)).astype(np.float32),
        c=unwritten((17, 9), np.array([[i >= j and i - j < 9 for j in range(9)] for i in range(17)]),
                    np.array([[(i - j) * j for j in range(9)] for i in range(17)]))), dict(n=9)),
    "arg_guessing_with_reduction": (lambda: dict(b=f32(9, 9)), lambda b: dict(
        a=np.float32(1.5 + sum(i * j for i in range(9) for j in range(9))), d=np.float32(1.5 + b.sum())), {}, 1e-4),
    "dependent_domain_insn_iname_finding": tight_bounds(),
    "tight_loop_bounds": tight_bounds(),
    "modulo_indexing": (lambda: dict(a=f32(23)), lambda a: dict(b=np.array([sum(a[(i + j) % 23] for j in range(5)) for i in range(23)], np.float32)), {}, 1e-4),
    "conditional": (lambda: dict(a=f32(21, 21)), lambda a: dict(out=np.where(a < 0, 2 * (2 * a + 1), 2 * a).astype(np.float32))),
    "conditional_two_ways": (lambda: dict(a=f32(29)), lambda a: dict(out=np.where(np.arange(29) > 3, 2 * a, a).astype(np.float32))),
    "ilp_loop_bound": (lambda: dict(a=f32(23, 23), b=f32(23, 23)), lambda a, b: dict(out=a @ b), {}, 1e-4),
    "multiple_writes_to_local_temporary": (lambda: dict(), lambda: dict(out=np.full(16, 32, np.float32))),
    "index_cse": (lambda: dict(a=f32(5, 5, 5), b=f32(5, 5, 5, 5)),
                  lambda a, b: dict(c=np.broadcast_to(np.einsum("ijl,ijkl->ij", a, b)[:, :, None], (5, 5, 5)).copy()), {}, 1e-4),
    "ilp_and_conditionals": (lambda: dict(T=RNG.random(200).astype(np.float32)), lambda T: if_then(T)),
    "unr_and_conditionals": (lambda: dict(T=RNG.random(200).astype(np.float32)), lambda T: if_then(T)),
    "if_else": (lambda: dict(), lambda: dict(a=np.array([(15, 11, 3)[i % 3] for i in range(50)], np.float32))),
    "predicated_redn": (lambda: dict(), lambda: dict(y=np.array([0 if j < 5 else sum((i + j - 5) ** 2 for i in range(5)) for j in range(10)], np.float32))),
    "redn_in_predicate": (lambda: dict(), lambda: dict(y=np.array([10 - j for j in range(10)], np.float32))),
    "split_and_join_inames": (lambda: dict(), lambda: dict(y=np.arange(16, dtype=np.float32))),
    "access_check_with_conditionals": (lambda: dict(x=f32(10), y=f32(10)), lambda x, y: dict(z=np.concatenate([x, y]))),
    "conditional_access_range_with_parameters": (lambda: dict(tmp=np.arange(80, dtype=np.int64).reshape(10, 8)),
                                                 lambda tmp: dict(tmp=tmp + 1)),
    "split_iname_within": (lambda: dict(y=f32(13, 13)), lambda y: dict(x=np.full((13, 13), 3, np.float32), y=2 * y)),
    "pow_int_exponents": (lambda: dict(base=RNG.random(10).astype(np.float32), power=RNG.integers(0, 6, 10).astype(np.int32)),
            lambda base, power: dict(res=(base ** power).astype(np.float32)), {}, 1e-5),
    "empty_domain": (lambda: dict(), lambda: dict(c=np.float32(NAN)), dict(n=0)),
    "scalar_temporary": (lambda: dict(x=np.float64(0.3)), lambda x: dict(y=np.float64(4 * x))),
    "fixed_parameters": (lambda: dict(), lambda: dict(out=np.arange(37, dtype=np.float32))),
    "chunk_iname": (lambda: dict(a=f32(130)), lambda a: dict(out=2 * a)),
    "chunk_iname_fixed": (lambda: dict(a=f32(130)), lambda a: dict(out=2 * a)),
    "extract_subst": (lambda: dict(b=f32(33)), lambda b: dict(a=48 * b ** 2), {}, 1e-5),
    "join_inames_prefetch": (lambda: dict(a=f32(16, 16)), lambda a: dict(b=2 * a)),
    "precompute_nested_subst": (lambda: dict(a=f32(1234)), lambda a: dict(b=a * a)),
    "split_iname_only_if_in_within": (lambda: dict(b=f32(10), d=f32(10)), lambda b, d: dict(a=2 * b, c=3 * d)),
    "privatize_with_nonzero_lbound": (lambda: dict(), lambda: dict(out=unwritten(14, np.arange(14) >= 10, np.arange(14)))),
    "rename_inames": (lambda: dict(), lambda: dict(y1=np.full(10, 2, np.float32), y2=np.full(10, 3, np.float32))),
    "prefetch_local_into_private": (lambda: dict(mat=f32(32, 32), vec=f32(32, 32)), lambda mat, vec: dict(result=mat @ vec), {}, 1e-4),
    "vectorize": (lambda: dict(b=f32(37)), lambda b: dict(a=2 * b)),
    "prioritize_single_iname": (lambda: dict(), lambda: dict(a=np.arange(21, dtype=np.float32)), dict(n=21)),
}


def header(name):
    """The `# key: value` lines at the top of a corpus file."""
    h = {}
    with open(os.path.join(CORPUS, name + ".loom")) as f:
        for line in f:
            if not line.startswith("#"):
                break
            key, _, value = line[1:].partition(":")
            h[key.strip()] = value.strip()
    return h


NAMES = sorted(f[:-5] for f in os.listdir(CORPUS) if f.endswith(".loom"))
OUTCOMES = {}  # name -> "pass" | "refused" | "gap" (read by conftest's summary)


def _poison(ref):
    ref = np.asarray(ref)
    if ref.dtype.kind == "f":
        return np.full(ref.shape, np.nan, ref.dtype)
    return np.full(ref.shape, -123456789 if ref.dtype.itemsize >= 4 else -7, ref.dtype)


def _run(knl, inputs, reference, params, rtol, target):
    expected = reference(**inputs)
    args = dict(inputs)
    for name, ref in expected.items():
        args[name] = np.array(args[name], copy=True) if name in args else _poison(ref)
    args.update(params)
    outs = knl(target=target, **args)
    got = dict(zip(knl._core.written_arrays(), outs))
    for n, e in expected.items():
        g, e = np.asarray(got[n]), np.asarray(e)
        assert g.shape == e.shape, f"{knl.name}: {n} has shape {g.shape}, expected {e.shape}"
        if e.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(g), np.isnan(e), err_msg=f"{knl.name}: {n} written where it should not be, or not written")
            mask = ~np.isnan(e)
            np.testing.assert_allclose(g[mask], e[mask], rtol=rtol, atol=rtol * 10, err_msg=f"{knl.name}: {n} on {target}")
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"{knl.name}: {n} on {target}")


def test_every_kernel_names_its_loopy_test_and_has_a_reference():
    assert len(NAMES) >= 60
    for n in NAMES:
        h = header(n)
        assert h.get("loopy", "").startswith("test_"), f"{n}: no '# loopy: test_...' line"
        if "expect-error" not in h:
            assert n in REFS, f"{n}: no NumPy reference"
    assert set(REFS) <= set(NAMES)


def _case(name):
    h = header(name)
    marks = [pytest.mark.xfail(strict=True, reason=h["gap"])] if "gap" in h else []
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_case(n) for n in NAMES])
def test_loopy_kernel(name):
    h = header(name)
    path = os.path.join(CORPUS, name + ".loom")
    if "gap" in h:
        OUTCOMES[name] = "gap"
    if "expect-error" in h:
        with pytest.raises(lp.LoomError) as e:
            knl = lp.load_kernel(path)
            lp.generate_code_v2(knl).device_code()
            inputs = {k: v for k, v in (("a", f32(100)),) if k in knl._core.written_arrays()}
            knl(target="cpu" if lp._loom.has_cpu_target() else "interpreter", n=100, **inputs)
        assert h["expect-error"] in str(e.value), str(e.value)
        OUTCOMES[name] = "refused"
        return
    entry = REFS[name]
    inputs, reference = entry[0], entry[1]
    params = entry[2] if len(entry) > 2 else {}
    rtol = entry[3] if len(entry) > 3 else 1e-5
    knl = lp.load_kernel(path)
    host = "cpu" if lp._loom.has_cpu_target() else "interpreter"
    for target in [host] + (["cuda"] if lp._loom.gpu_available() else []):
        _run(knl, inputs(), reference, params, rtol, target)
    OUTCOMES.setdefault(name, "pass")
