"""lp.tune_many on the CPU target: two kernels under one budget, in rounds
given where the weighted sum of their best times is expected to fall most
(MetaSchedule's task scheduler), each task's log resumed round after round,
the winners ordinary kernels checked against NumPy; and its errors."""
import numpy as np
import pytest

import loom as lp
from loom.task_scheduler import TaskResult, _gradient

TARGET = "cpu" if lp._loom.has_cpu_target() else "cuda" if lp._loom.gpu_available() else None
pytestmark = pytest.mark.skipif(TARGET is None, reason="neither the CPU target nor a GPU: nothing to tune on")


def rows():
    return lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")


def scale():
    return lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i]")


def test_two_kernels_share_one_budget_and_each_winner_runs(tmp_path):
    r = lp.tune_many({"rows": (rows(), {"n": 300, "m": 77}), "scale": (scale(), {"n": 4000})}, trials=16, round_trials=4,
                     weights={"rows": 3}, log_dir=str(tmp_path), target=TARGET, min_time=0.002, settle=False)
    assert set(r.order[:2]) == {"rows", "scale"}  # (a round each first)
    assert len(r.order) == 4
    assert sum(t.rounds for t in r.tasks.values()) == 4
    assert r.tasks["rows"].weight == 3 and r.tasks["scale"].weight == 1
    assert all(a >= b for a, b in zip(r.total, r.total[1:]))  # (each round keeps every task's best)
    assert abs(r.total[-1] - (3 * r.tasks["rows"].best_seconds + r.tasks["scale"].best_seconds)) < 1e-12
    a = np.random.default_rng(0).random((300, 45), dtype=np.float32)
    (out,) = r.tasks["rows"].result.kernel(a=a)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-4)
    x = np.arange(4000, dtype=np.float32)
    (y,) = r.tasks["scale"].result.kernel(x=x)
    np.testing.assert_allclose(y, 2 * x)
    # each task's log holds its trials: a round resumes it
    assert (tmp_path / "rows.jsonl").exists() and (tmp_path / "scale.jsonl").exists()
    assert "weighted total" in r.table()


def test_the_next_round_goes_where_the_weighted_best_falls_most():
    fast, slow = TaskResult("a", 1.0), TaskResult("b", 10.0)
    for t in (fast, slow):
        t.trials = 16
    fast.bests = [2.0, 1.0]   # halved by its last round, weight 1
    slow.bests = [1.0, 0.8]   # 20% better, but it runs ten times a step
    assert _gradient(slow, 8) > _gradient(fast, 8)
    fresh = TaskResult("c", 1.0)
    fresh.bests = [1.0]
    assert _gradient(fresh, 8) == float("inf")  # (measured once: its next round is worth the most)


def test_bad_arguments_are_errors():
    task = {"rows": (rows(), {"n": 300, "m": 77})}
    with pytest.raises(ValueError, match="weights for tasks it was not given: nope"):
        lp.tune_many(task, trials=8, weights={"nope": 2})
    with pytest.raises(ValueError, match="at least one a task"):
        lp.tune_many({**task, "b": task["rows"]}, trials=1)
    with pytest.raises(ValueError, match="round_trials must be a positive integer"):
        lp.tune_many(task, trials=8, round_trials=0)
    with pytest.raises(ValueError, match="the weight of task 'rows' must be a positive number"):
        lp.tune_many(task, trials=8, weights={"rows": -1})
    with pytest.raises(ValueError, match="no tasks"):
        lp.tune_many({}, trials=8)


def test_a_task_measured_whole_leaves_the_rotation(tmp_path):
    tiny = (rows(), ["split_iname i 64 outer_tag=g.0 inner_tag=l.0\n", "split_iname i 128 outer_tag=g.0 inner_tag=l.0\n"])
    r = lp.tune_many({"tiny": (tiny, {"n": 300, "m": 77}), "scale": (scale(), {"n": 4000})}, trials=12, round_trials=2,
                     log_dir=str(tmp_path), target=TARGET, min_time=0.002, settle=False)
    assert r.tasks["tiny"].trials == 2  # (its two configurations, then nothing left: out of the rotation)
    assert r.tasks["scale"].rounds >= 4
    assert r.order.count("tiny") <= 2
