"""Several kernels tuned under one budget (lp.tune_many), as MetaSchedule's
task scheduler shares a model's trials among its tasks.

A model runs several kernels (tasks), each some number of times per step
(its weight); what matters is the weighted sum of their times, not each
kernel's own. The budget is spent in rounds of `round_trials`: every task
first gets one round, then each round goes to the task whose next round is
expected to lower the weighted sum most. That expectation is MetaSchedule's
gradient: the weighted best time's fall over the task's last round
(backward), and, for a task measured little, the assumption that another
round finds as much again as its rounds so far did on average (forward),
blended half and half. A task whose space is measured whole leaves the
rotation. Each task keeps a log of its own (resumed by every round, so its
search continues where the last round left it: lp.tune feeds a resumed log's
trials to its strategy), and each round is one lp.tune call: every option of
lp.tune (target, strategy, check tolerances, time limits, ...) applies to
every task.
"""
import os
import tempfile

from .tuning import tune


class TaskResult:
    """One task of lp.tune_many: name, weight, result (the TuneResult of its
    last round: its kernel and best are over all its rounds), trials (measured
    for it in all), rounds."""

    def __init__(self, name, weight):
        self.name, self.weight = name, weight
        self.result, self.trials, self.rounds = None, 0, 0
        self.bests = []  # the best median after each round

    @property
    def best_seconds(self):
        return self.bests[-1] if self.bests else None

    def __repr__(self):
        best = f"{self.best_seconds * 1e3:.4f} ms" if self.best_seconds else "none"
        return f"<task {self.name}: weight {self.weight}, {self.trials} trials in {self.rounds} rounds, best {best}>"


class TuneManyResult:
    """What lp.tune_many found: tasks (TaskResult, by name), order (the task
    each round went to), and total (the weighted sum of the tasks' best times
    after each round, once every task has one)."""

    def __init__(self, tasks, order, total):
        self.tasks, self.order, self.total = tasks, order, total

    def table(self):
        rows = [f"{'task':20} {'weight':>6} {'trials':>6} {'best':>12}"]
        for t in self.tasks.values():
            best = f"{t.best_seconds * 1e3:9.4f} ms" if t.best_seconds else "        none"
            rows.append(f"{t.name:20} {t.weight:6g} {t.trials:6d} {best}")
        if self.total:
            rows.append(f"weighted total: {self.total[-1] * 1e3:.4f} ms")
        return "\n".join(rows)


def _gradient(task, round_trials):
    """How much the task's weighted best time is expected to fall with its next round."""
    b = task.bests
    if len(b) < 2:
        return float("inf")
    backward = (b[-2] - b[-1]) / round_trials
    forward = (b[0] - b[-1]) / max(1, task.trials - round_trials)  # (its rounds' average find, after the first)
    return task.weight * (0.5 * backward + 0.5 * forward)


def tune_many(tasks, *, trials=64, weights=None, round_trials=8, log_dir=None, seed=1, progress=False, **tune_kwargs):
    """Tune several kernels under one budget of `trials` (MetaSchedule's task scheduler).

    tasks: a dict name -> (space, parameters) (or a list of such pairs, named
    task0, task1, ...): what lp.tune takes for each. weights: name -> how many
    times the task runs per step of the model (default 1 each). round_trials:
    the trials of one round. log_dir: where each task's log lives
    (<log_dir>/<name>.jsonl, resumed: a second call continues); default a
    temporary folder. Other keywords go to every lp.tune call (target,
    strategy, min_time, rtol, ...). Returns a TuneManyResult."""
    if isinstance(tasks, (list, tuple)):
        tasks = {f"task{i}": t for i, t in enumerate(tasks)}
    if not tasks:
        raise ValueError("tune_many: no tasks")
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(tasks))
    if unknown:
        raise ValueError(f"tune_many: weights for tasks it was not given: {', '.join(unknown)}")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < len(tasks):
        raise ValueError(f"tune_many: trials must be an integer of at least one a task ({len(tasks)}), not {trials!r}")
    if isinstance(round_trials, bool) or not isinstance(round_trials, int) or round_trials < 1:
        raise ValueError(f"tune_many: round_trials must be a positive integer, not {round_trials!r}")
    for name, w in weights.items():
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not w > 0:
            raise ValueError(f"tune_many: the weight of task '{name}' must be a positive number, not {w!r}")
    if log_dir is None:
        log_dir = tempfile.mkdtemp(prefix="loom_tune_many_")
    os.makedirs(log_dir, exist_ok=True)
    state = {name: TaskResult(name, float(weights.get(name, 1))) for name in tasks}
    finished = set()  # tasks whose space is measured whole
    order, total = [], []
    spent = 0

    def run_round(name):
        nonlocal spent
        space, parameters = tasks[name]
        task = state[name]
        n = min(round_trials, trials - spent)
        r = tune(space, parameters, trials=n, log=os.path.join(log_dir, f"{name}.jsonl"), resume=True,
                 seed=seed + task.rounds, progress=progress, **tune_kwargs)
        measured = sum(1 for t in r.trials if t["status"] != "illegal")
        spent += n
        task.result, task.trials, task.rounds = r, task.trials + measured, task.rounds + 1
        # (the best so far: a round's own best, over its log and its trials,
        # may be the kernel as written timed again, a little slower this time)
        task.bests.append(min([r.best["median_seconds"]] + task.bests[-1:]))
        order.append(name)
        if not r.trials:
            finished.add(name)  # (nothing left to try: every configuration is in its log)
        if all(t.bests for t in state.values()):
            total.append(sum(t.weight * t.best_seconds for t in state.values()))

    for name in tasks:  # a round each first
        if spent >= trials:
            break
        run_round(name)
    while spent < trials:
        open_tasks = [n for n in tasks if n not in finished]
        if not open_tasks:
            break
        run_round(max(open_tasks, key=lambda n: _gradient(state[n], round_trials)))
    return TuneManyResult(state, order, total)
