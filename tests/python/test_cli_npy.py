"""`loom run --in/--out` with NumPy's .npy files: inputs from files (parameters
follow their shapes), outputs written, checked against NumPy; and the errors
a wrong file gets."""
import os
import subprocess

import numpy as np
import pytest

import loom
from conftest import SOURCE_DIR


def _loom_binary():
    # the build tree: build/python/loom/__init__.py -> build/loom
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(loom.__file__))))
    path = os.path.join(build, "loom")
    return path if os.access(path, os.X_OK) else None


LOOM = _loom_binary()
pytestmark = [pytest.mark.skipif(LOOM is None, reason="the loom command line tool is not beside this package"),
              pytest.mark.skipif(not loom._loom.has_cpu_target(), reason="no CPU target in this build (the runs use --target cpu)")]


def _run(*args):
    return subprocess.run([LOOM, *args], capture_output=True, text=True)


def test_inputs_from_npy_files_and_outputs_to_them(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(1003).astype(np.float32)
    b = rng.standard_normal(1003).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = _run("run", os.path.join(SOURCE_DIR, "examples", "vector_add.loom"), "--target", "cpu", "--reps", "1",
             "--in", f"a={tmp_path / 'a.npy'}", "--in", f"b={tmp_path / 'b.npy'}", "--out", f"out={tmp_path / 'out.npy'}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "n=1003" in r.stdout  # the parameter follows the files' shape
    assert "check out: match" in r.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), a + b, rtol=1e-6)


def test_fortran_order_and_2d_inputs(tmp_path):
    rng = np.random.default_rng(4)
    a = np.asfortranarray(rng.standard_normal((37, 29)).astype(np.float32))
    np.save(tmp_path / "a.npy", a)
    r = _run("run", os.path.join(SOURCE_DIR, "examples", "row_sums.loom"), "--target", "cpu", "--reps", "1",
             "--in", f"a={tmp_path / 'a.npy'}", "--out", f"out={tmp_path / 'out.npy'}")
    assert r.returncode == 0, r.stdout + r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), a.sum(axis=1), rtol=1e-4, atol=1e-5)


def test_wrong_files_are_refused_with_the_reason(tmp_path):
    np.save(tmp_path / "a64.npy", np.zeros(100, np.float64))
    np.save(tmp_path / "b.npy", np.zeros(50, np.float32))
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    va = os.path.join(SOURCE_DIR, "examples", "vector_add.loom")
    r = _run("run", va, "--target", "cpu", "--in", f"a={tmp_path / 'a64.npy'}")
    assert r.returncode == 1 and "dtype float64, but the kernel's 'a' is float32" in r.stderr
    r = _run("run", va, "--target", "cpu", "-D", "n=100", "--in", f"b={tmp_path / 'b.npy'}")
    assert r.returncode == 1 and "shape (50), but the kernel's 'b' is (100)" in r.stderr
    r = _run("run", va, "--target", "cpu", "--in", f"a={tmp_path / 'junk.npy'}")
    assert r.returncode == 1 and "no NUMPY magic string" in r.stderr
    r = _run("run", va, "--target", "cpu", "--in", f"zz={tmp_path / 'b.npy'}")
    assert r.returncode == 1 and "no array argument 'zz'" in r.stderr


def test_inputs_and_outputs_follow_an_argument_layout(tmp_path):
    # tag_array_axes a N0,N1 (Fortran order): the .npy holds a's values in C order;
    # the run places them where the layout says, and --out writes C order back
    (tmp_path / "k.loom").write_text(
        "kernel c\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < m}\narguments:\n  a: float32[n, m]\n  out: float32[n, m]\n"
        "instructions:\n  out[i, j] = 2 * a[i, j] + i\ntransforms:\n  tag_array_axes a,out N0,N1\n")
    a = np.arange(35, dtype=np.float32).reshape(5, 7)
    np.save(tmp_path / "a.npy", a)
    r = _run("run", str(tmp_path / "k.loom"), "--target", "cpu", "--reps", "1",
             "--in", f"a={tmp_path / 'a.npy'}", "--out", f"out={tmp_path / 'out.npy'}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check out: match" in r.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), 2 * a + np.arange(5, dtype=np.float32)[:, None])
