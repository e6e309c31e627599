"""Loops bounded by values the kernel computes (loopy's data-dependent
domains), as loopy scripts write them: CSR row sums with `<>` temporaries in a
domain, run on whichever target the build has, checked against NumPy on
uniform, power-law and empty rows, under a warp-per-row schedule too; data
that sends an access outside its array raises ArgumentError."""
import numpy as np
import pytest

import loom as lp


def csr_kernel():
    return lp.make_kernel(
        ["{[i]: 0 <= i < n}", "{[jj]: 0 <= jj < row_len}"],
        """
        <> row_start = ptr[i]
        <> row_len = ptr[i + 1] - row_start
        out[i] = sum(jj, vals[row_start + jj])
        """,
        [lp.GlobalArg("ptr", np.int32, shape="n + 1"), lp.GlobalArg("vals", np.float32, shape="nnz"), ...])


def csr(lengths, seed=0):
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    vals = np.random.default_rng(seed).standard_normal(int(ptr[-1])).astype(np.float32)
    ref = np.add.reduceat(vals.astype(np.float64), ptr[:-1]) if len(vals) else np.zeros(len(lengths))
    ref[np.asarray(lengths) == 0] = 0  # (reduceat gives an empty segment the next value)
    return ptr, vals, ref


def warp_per_row(knl):
    knl = lp.split_iname(knl, "jj", 32, inner_tag="l.0")
    return lp.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.1")


@pytest.mark.parametrize("schedule", [lambda k: k, warp_per_row], ids=["as written", "warp per row"])
def test_csr_row_sums_match_numpy(schedule):
    rng = np.random.default_rng(1)
    knl = schedule(csr_kernel())
    for lengths in (rng.integers(0, 70, 333), np.minimum(rng.zipf(1.7, 500), 3000), np.zeros(5, np.int64), [1]):
        ptr, vals, ref = csr(lengths)
        (out,) = knl(ptr=ptr, vals=vals)  # n from ptr's shape n + 1
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_the_bound_is_no_argument_and_is_checked():
    knl = csr_kernel()
    assert "row_len" not in knl._core.argument_names() and knl._core.parameters() == ["n", "nnz"]
    assert "for (int jj = 0; jj < row_len; ++jj)" in lp.generate_code_v2(knl).device_code()
    ptr, vals, _ = csr([3, 4, 5])
    ptr[-1] += 2
    with pytest.raises(lp.ArgumentError, match="vals"):
        knl(ptr=ptr, vals=vals)


def test_a_bound_computed_inside_its_loop_is_refused():
    knl = lp.make_kernel(["{[i]: 0 <= i < n}", "{[jj]: 0 <= jj < m}"],
                         "<> m = ptr[i] + jj\nout[i] = sum(jj, vals[jj])",
                         [lp.GlobalArg("ptr", np.int32, shape="n"), lp.GlobalArg("vals", np.float32, shape="k"), ...])
    with pytest.raises(lp.diagnostic.LoopyError, match="inside loop 'jj', which that value bounds"):
        knl(ptr=np.zeros(3, np.int32), vals=np.zeros(4, np.float32))


def test_an_unproven_access_is_checked_on_the_builds_target():
    """a[i*i] = 17 (issue 33's example): refused after the launch with the CPU target's
    message on whichever target the build has (the CUDA target on a GPU machine)."""
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i * i] = 17", [lp.GlobalArg("a", np.float32, shape="m"), ...])
    a = np.zeros(10, np.float32)
    with pytest.raises(lp.ArgumentError, match="accesses 'a' at element 16, outside its 10 elements"):
        knl(a=a, n=5)
    (out,) = knl(a=a, n=4)
    assert out[9] == 17
    assert "loom_checked" not in lp.generate_code_v2(lp.trust_unproven_accesses(knl)).device_code()


def test_an_unproven_access_on_a_cuda_tensor_is_checked():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i * i] = 17", [lp.GlobalArg("a", np.float32, shape="m"), ...])
    a = torch.zeros(10, device="cuda")  # (one thread: i*i on threads is refused as a possible race)
    with pytest.raises(lp.ArgumentError, match="accesses 'a' at element 16, outside its 10 elements"):
        knl(a=a, n=5)
    knl(a=a, n=4)
    assert float(a[9]) == 17
