"""Differential tests against loopy itself (loopy_oracle.py): every example,
every conformance kernel and the random-kernel generator's kernels, as
written, run through loopy's ExecutableCTarget and through Loom's CPU target
on the same random arrays, every written array compared.

An outcome other than "same" must be listed in DIFFERENCES below with its
reason, and each listed one in docs/loopy-differences.md ("Checked against
loopy"); a listed kernel whose outcome changes fails too, so the list stays
true. The whole module is skipped, saying so, where loopy is not installed
(`make test` installs it into the build's venv)."""
import glob
import json
import os
import subprocess

import numpy as np
import pytest

pytest.importorskip("loopy", reason="loopy is not installed in this Python: the oracle of what a kernel as written means "
                                    "is skipped (make test installs it: pip install loopy 'islpy<2026')")

import loom  # noqa: E402
from conftest import SOURCE_DIR  # noqa: E402
from loopy_oracle import run_both, sizes_for  # noqa: E402

TARGET = "cpu" if loom._loom.has_cpu_target() else "interpreter"

# file stem -> (outcome, why): each also in docs/loopy-differences.md ("Checked against loopy")
_BF16 = ("untranslatable", "bfloat16 has no NumPy dtype, and loopy's C target maps no float16: a tensor-core example")
_GLOBAL = ("untranslatable", "a global temporary across a global barrier: loopy's C target allocates none (its code "
                             "writes through a null pointer)")
DIFFERENCES = {
    **{f"examples/{n}": _BF16 for n in (
        "bmm16_bf16", "gemm_bf16", "gemm_bf16_any", "gemm_bf16_bias_relu", "gemm_bf16_wgmma", "gemm_bf16_wgmma_nn",
        "gemm_bf16_wgmma_nn_tma", "gemm_bf16_wgmma_tma", "gemm_bf16_wgmma_tma_any", "gemm_bf16_wgmma_tma_bias_relu",
        "gemm_bf16_wgmma_tma_mult8", "gemm_bf16_wgmma_tma_skinny", "gemm_bf16_zfill", "gemm_f16_wgmma_nn_tma",
        "gemm_f16_wgmma_tma")},
    **{f"examples/{n}": _GLOBAL for n in ("csr_row_sums_balanced", "csr_row_sums_flagged", "sum_all")},
    "examples/gemm_tf32": ("untranslatable", "Loom's round_tf32 (TF32 rounding as mma.sync reads float32) has no loopy counterpart"),
    "examples/gemm_tf32_wgmma_tma": ("untranslatable", "Loom's trunc_tf32 (TF32 as wgmma reads float32) has no loopy counterpart"),
    "examples/histogram": ("loopy-refuses", "loopy's C target has no atomic updates (NotImplementedError)"),
    "examples/layouts": ("untranslatable", "a padded layout with an offset (strides=, offset=): the oracle passes dense NumPy "
                                           "arrays, which such an argument's storage is not"),
    "tests/conformance/argmax": ("untranslatable", "Loom's two-argument argmax(i, value) (the index alone); loopy's takes "
                                                   "the index expression and assigns two outputs"),
}


def _files(pattern):
    return sorted(glob.glob(os.path.join(SOURCE_DIR, pattern)))


KERNEL_FILES = _files("examples/*.loom") + _files("tests/conformance/*.loom") + _files("tests/conformance/loopy/*.loom")


def _key(path):
    rel = os.path.relpath(path, SOURCE_DIR)
    return rel[:-len(".loom")]


def _check(key, text, params):
    verdict = run_both(text, params, seed=7, target=TARGET)
    expected = DIFFERENCES.get(key)
    if expected is None:
        assert verdict.outcome == "same", f"{key}: {verdict}"
    else:
        assert verdict.outcome == expected[0], f"{key} is listed as {expected[0]} ({expected[1]}), now: {verdict}"


@pytest.mark.parametrize("path", KERNEL_FILES, ids=_key)
def test_kernel_file_as_written_means_what_loopy_says(path):
    text = open(path, encoding="utf-8").read()
    if "# expect-error:" in text:
        pytest.skip("a kernel both refuse (test_loopy_corpus checks Loom's refusal)")
    try:
        params = sizes_for(text)
    except loom.LoomError as e:
        params = None
        if _key(path) not in DIFFERENCES:
            raise AssertionError(f"Loom refuses the kernel as written: {e}")
    if params is None and _key(path) in DIFFERENCES:
        assert DIFFERENCES[_key(path)][0] == "loom-refuses"
        return
    assert params is not None, "no size from the candidates meets the kernel's assumptions"
    _check(_key(path), text, params)


# (the domains one a line, the loops as loopy's blocks: PolyBench's gemm shape)
SCALE_THEN_ACCUMULATE = "kernel scale_then_accumulate\ndomains:\n" + "".join(
    f"  {{[{x}]: 0 <= {x} < n}}\n" for x in ("i", "j1", "k", "j2")) + """arguments:
  a: float64[n, n], c: float64[n, n]
instructions:
  for i
    for j1
      c[i, j1] = 2 * c[i, j1]  {id=double}
    end
    for k, j2
      c[i, j2] = c[i, j2] + a[i, k]  {id=add, dep=double}
    end
  end
"""


def test_scale_then_accumulate_scales_once():
    """The idiom of PolyBench's gemm, syrk, syr2k, trmm, 2mm and gemver: the
    scaling runs once per element, not inside the accumulation's k loop."""
    _check("scale_then_accumulate", SCALE_THEN_ACCUMULATE, {"n": 7})
    knl = loom.kernel_from_text(SCALE_THEN_ACCUMULATE, target=TARGET)
    args = loom.random_arguments(knl, seed=3, n=7)
    expected = 2 * args["c"] + args["a"].sum(axis=1)[:, None]
    (c,) = knl(a=args["a"], c=args["c"].copy())
    np.testing.assert_allclose(c, expected)


def random_kernel_texts(count, seed):
    exe = os.environ.get("LOOM_RANDOM_KERNELS")
    if not exe:
        pytest.skip("LOOM_RANDOM_KERNELS (the loom_random_kernels program) is not set: run through ctest")
    out = subprocess.run([exe, str(count), str(seed)], check=True, capture_output=True, text=True).stdout
    return [json.loads(line)["text"] for line in out.splitlines()]


# random kernels whose difference is a listed one: a phrase of the text ->
# (outcome, the arrays that may differ, why); each also in docs/loopy-differences.md
RANDOM_DIFFERENCES = {
    "c[0] = sum(i, b[i])": ("differ", ("c", "u"), "a sum of bools counts the true ones in Loom (NumPy's rule); loopy "
                            "sums in bool, so its C code gives 1 for any true one. A negative float converted to uint32 "
                            "saturates at 0 in Loom on every target; in C it is undefined (x86 wraps)"),
}


def explained(text, verdict):
    """Whether a random kernel's outcome is a listed difference (in the arrays listed)."""
    for phrase, (outcome, arrays, _) in RANDOM_DIFFERENCES.items():
        if phrase in text and outcome == verdict.outcome:
            differing = {p.split(":")[0].strip() for p in verdict.detail.split("; ")}
            if differing <= set(arrays):
                return True
    return False

RANDOM_SIZES = ({"n": 1, "m": 3, "l": 2, "nnz": 5}, {"n": 17, "m": 16, "l": 5, "nnz": 40}, {"n": 33, "m": 7, "l": 9, "nnz": 100})


def test_random_kernels_mean_what_loopy_says():
    texts = random_kernel_texts(int(os.environ.get("LOOM_LOOPY_CASES", "200")), int(os.environ.get("LOOM_RANDOM_SEED", "2026")))
    problems, counts = [], {}
    for c, text in enumerate(texts):
        knl = loom.kernel_from_text(text, target="interpreter")
        sizes = RANDOM_SIZES[c % len(RANDOM_SIZES)]
        params = {p: sizes.get(p, 11) for p in knl._core.parameters()}
        if not knl._core.assumptions_hold(params):
            params = {p: 16 for p in params}
        verdict = run_both(text, params, seed=c, target=TARGET)
        counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
        if verdict.outcome != "same" and not explained(text, verdict):
            problems.append(f"case {c}: {verdict}\n{text}")
    print(f"random kernels against loopy: {counts}")
    assert not problems, f"{len(problems)} of {len(texts)} differ from loopy:\n" + "\n".join(problems[:5])
