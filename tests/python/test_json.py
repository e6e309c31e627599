"""JSON kernels from Python: to_json / kernel_from_json round trip gives the
same code and the same numbers; errors are JsonError naming the JSON path."""
import json
import os

import numpy as np
import pytest

import loom as lp
from conftest import SOURCE_DIR


def _kernel():
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j] * 2.5f)",
                       [lp.GlobalArg("a", np.float32, shape="n, m"), "..."])
    k = lp.split_iname(k, "i", 32, outer_tag="g.0", inner_tag="l.0")
    return k


def test_round_trip_same_code_and_numbers():
    k = _kernel()
    text = k.to_json()
    doc = json.loads(text)
    assert doc["format"] == "loom-kernel" and doc["version"] == 1
    back = lp.kernel_from_json(text)
    assert lp.generate_code_v2(back).device_code() == lp.generate_code_v2(k).device_code()
    assert back.to_json() == text
    a = np.random.default_rng(1).standard_normal((77, 13)).astype(np.float32)
    if lp._loom.has_cpu_target():
        (out,) = back(a=a, target="cpu")
        np.testing.assert_allclose(out, 2.5 * a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_load_kernel_reads_json_files(tmp_path):
    path = tmp_path / "k.json"
    path.write_text(_kernel().to_json())
    assert lp.generate_code_v2(lp.load_kernel(str(path))).device_code() == lp.generate_code_v2(_kernel()).device_code()


def test_errors_name_the_json_path():
    doc = json.loads(_kernel().to_json())
    doc["kernel"]["instructions"][0]["expression"] = 3
    with pytest.raises(lp.JsonError, match=r"/kernel/instructions/0/expression: expected a string, got an integer"):
        lp.kernel_from_json(json.dumps(doc))
    with pytest.raises(lp.ParseError, match="malformed JSON"):
        lp.kernel_from_json("{\"format\": ")
    doc = json.loads(_kernel().to_json())
    doc["version"] = 2
    with pytest.raises(lp.LoomError, match="version 2 is not supported"):
        lp.kernel_from_json(json.dumps(doc))


def test_compiled_stages_include_json():
    k = lp.load_kernel(os.path.join(SOURCE_DIR, "examples", "vector_add.loom"))
    target = "cpu" if lp._loom.has_cpu_target() else None
    if target is None:
        pytest.skip("no CPU target in this build")
    a = np.ones(100, np.float32)
    asm = k.compiled(target=target, a=a, b=a).asm
    assert json.loads(asm["json"])["kernel"]["name"] == "vector_add"


def test_compiled_stages_list_every_transformation():
    if not lp._loom.has_cpu_target():
        pytest.skip("no CPU target in this build")
    k = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2*a[i]", ["..."])
    k = lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    k = lp.add_dtypes(k, {"a": np.float64})
    steps = k.compiled(target="cpu", a=np.ones(37)).asm["transforms"]
    assert steps[0][0] == "input" and "i_inner" not in steps[0][1]
    assert steps[1][0].startswith("split_iname iname=i inner_length=16") and "i_inner" in steps[1][1]
    assert steps[2][0].startswith("add_dtypes") and "float64" in steps[2][1]
