"""docs/tutorial.md runs as written: its Python blocks, in order, in one namespace."""
import os
import re

from conftest import SOURCE_DIR


def test_tutorial_runs_as_written():
    text = open(os.path.join(SOURCE_DIR, "docs", "tutorial.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6, "the tutorial's examples"
    namespace = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/tutorial.md block {i + 1}", "exec"), namespace)
