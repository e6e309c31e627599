"""loopy's tutorial as written (issue 48): tests/data/loopy_tutorial.rst, loopy's
doc/tutorial.rst unchanged, run block by block with only its imports changed
(tests/python/loopy_tutorial.py says how blocks and outputs are judged).

The goal: at least 70 of its 73 blocks run, and all 10 documented numeric
outputs print as documented. The blocks that do not run yet are listed in
FAILING with the reason (and in docs/loopy-differences.md, "loopy's tutorial,
as written"); the test fails when a block outside the list fails, so the count
cannot drop unnoticed, and when a listed block runs, so the list stays true."""
import os

import pytest

import loopy_tutorial
from conftest import SOURCE_DIR

GOAL_BLOCKS = 70

# block number -> why it does not run as written
FAILING = {
    45: "lp.get_one_linearized_kernel on rotate_v2 before save_and_reload_temporaries: Loom's linearization is "
        "that of the launches, and splitting into launches refuses the private 'tmp' read in a launch it is not "
        "written in (loopy linearizes, then refuses at code generation: MissingDefinitionError, block 46)",
    49: "documented to raise StaticValueFindingError: Loom finds the shape loopy cannot "
        "(out: float32[if_then_else(n <= 1, 1, n)]), so make_kernel succeeds",
    54: "documented to raise WriteRaceConditionWarning when block 53's kernel is called: loopy's private fetch "
        "is written across the work items (l.auto) and races; Loom's private fetch has each thread copy the "
        "column it reads in a loop of its own (no race, the transpose is right), so nothing is raised",
}


@pytest.fixture(scope="module")
def outcomes():
    blocks = loopy_tutorial.read_blocks(os.path.join(SOURCE_DIR, "tests", "data", "loopy_tutorial.rst"))
    return loopy_tutorial.run(blocks)


def test_the_tutorial_has_73_blocks_and_10_numeric_outputs(outcomes):
    assert len(outcomes) == loopy_tutorial.EXPECTED_BLOCKS == 73
    assert len(loopy_tutorial.NUMERIC_OUTPUTS) == 10
    # the numeric outputs' blocks state numbers, in full or before an ellipsis
    for o in outcomes:
        if o.block.number in loopy_tutorial.NUMERIC_OUTPUTS:
            assert loopy_tutorial._numbers(o.block.want), o.block.number


def test_the_blocks_not_listed_run_and_the_listed_ones_fail_as_listed(outcomes):
    failing = {o.block.number: o.error for o in outcomes if not o.ok}
    unexpected = {n: e for n, e in failing.items() if n not in FAILING}
    assert not unexpected, f"blocks that ran before fail now: {unexpected}"
    now_running = sorted(set(FAILING) - set(failing))
    assert not now_running, f"blocks listed in FAILING run now (remove them from the list and the docs): {now_running}"


def test_all_documented_numeric_outputs_print(outcomes):
    wrong = {o.block.number: o.output for o in outcomes
             if o.block.number in loopy_tutorial.NUMERIC_OUTPUTS and not o.output_matches}
    assert not wrong, loopy_tutorial.summary(outcomes)


def test_the_goal_at_least_70_of_73_blocks_run(outcomes):
    assert sum(o.ok for o in outcomes) >= GOAL_BLOCKS, loopy_tutorial.summary(outcomes)


def test_the_harness_changes_only_imports():
    src = "import loopy as lp\nimport loopy.options\nfrom loopy.types import to_loopy_type\n" \
          "import pyopencl as cl\nimport pyopencl.array\nx = lp.loopy_thing(loopy.options)"
    assert loopy_tutorial.rewrite_imports(src) == (
        "import loom as lp\nimport loom.options, loom as loopy\nfrom loom.types import to_loopy_type\n"
        "import numpy_cl as cl\nimport numpy_cl.array\nx = lp.loopy_thing(loopy.options)")


def test_the_output_comparison():
    same = loopy_tutorial.output_matches
    assert same("f32 ld a: 1048576\n", "f32 ld a: 1048576\n")
    assert not same("f32 ld a: 1048576\n", "f32 ld a: 1048575\n")
    assert same("1.25\n", "1.2500001\n") and not same("1.25\n", "1.26\n")  # floats: as printed
    # isl's constant pieces and Loom's bare constants state the same count; other counts must agree
    assert same("Sync(kernel_launch, stats_knl): [l, m, n] -> { [] -> 1 }\n", "Sync(kernel_launch, stats_knl): 1\n")
    assert not same("Sync(barrier_local, k): { [] -> 1000 }\n", "Sync(barrier_local, k): { [] -> 500 }\n")
    # a documented "key: ..." line stands for the map's lines; the stated numbers after it must follow
    assert same("Op(np:dtype('float32'), None, None): ...\n1572864\n",
                "Op(np:dtype('float32'), None, None): [n] -> { [] -> 3 * n }\nOp(np:dtype('float64'), None, None): 2\n"
                "1572864\n")
    assert not same("Op(np:dtype('float32'), None, None): ...\n1572864\n",
                    "Op(np:dtype('float32'), None, None): 3\n1572865\n")
