"""The tuner from Python (loom/tuner.h): choice points wherever a transformation
argument goes, and lp.tune over them, over an automatic space, over a list of
scripts, or over a function from a configuration to a kernel.

    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")
    space = lp.split_iname(knl, "j", lp.Choice([32, 64, 128]), inner_tag="l.0")
    space = lp.split_iname(space, "i", lp.Choice([1, 2, 4]), outer_tag="g.0", inner_tag="l.1")
    result = lp.tune(space, parameters={"n": 4096, "m": 1000}, trials=15, log="rows.jsonl")
    fast = result.kernel          # the best schedule, an ordinary kernel

Every trial is checked against the kernel as written before it is timed;
illegal schedules are refused by Loom's checks and recorded with the reason;
the log (JSON lines) is appended as each trial ends and a later run with the
same log skips what it holds.
"""
import sys

from . import _loom
from .kernel import LoopKernel


class Choice:
    """A choice point: one of these values, for the tuner to pick."""

    def __init__(self, values):
        self.values = list(values)
        if not self.values:
            raise ValueError("Choice needs at least one value")

    def __repr__(self):
        return f"Choice({self.values!r})"


class TuningSpace:
    """A kernel and transformation steps some of whose values are Choices: what a
    transformation returns when given a Choice (or a TuningSpace). Transform it
    further like a kernel; tune it with lp.tune."""

    def __init__(self, kernel, lines=()):
        self.kernel = kernel  # the kernel the steps start from
        self.lines = tuple(lines)

    @staticmethod
    def of(knl):
        if isinstance(knl, TuningSpace):
            return knl
        # a kernel already transformed: its steps come first, from the kernel as written
        base = LoopKernel(knl._origin, knl.target)
        return TuningSpace(base, tuple(step for step, _ in knl._history))

    def _with(self, line):
        return TuningSpace(self.kernel, self.lines + (line,))

    def text(self):
        return "".join(line + "\n" for line in self.lines)

    def __str__(self):
        return _loom.space_text(self.kernel._core, "text", [self.text()], "cpu")

    def __repr__(self):
        return f"<TuningSpace of {self.kernel.name}: {len(self.lines)} steps>"


def _step_line(name, keyword, text_of):
    """A script line whose values may be choice(a|b|c)."""
    parts = [name]
    for k, v in keyword.items():
        if isinstance(v, Choice):
            parts.append(f"{k}=choice(" + "|".join(text_of(k, x).replace(", ", ",") for x in v.values) + ")")
        else:
            parts.append(f"{k}=" + text_of(k, v).replace(", ", ","))
    return " ".join(parts)


class TuneResult:
    """What lp.tune found: kernel (the fastest correct schedule, ready to call),
    best (its trial), trials (this run's, as dicts: key, script, status, error,
    median_seconds, ...), skipped (already in the log), seconds, space (its text)."""

    def __init__(self, base, d):
        self.best = d["best"]
        self.trials = d["trials"]
        self.skipped = d["skipped"]
        self.seconds = d["seconds"]
        self.space = d["space"]
        self.kernel = base
        for line in self.best["script"].splitlines():
            core = _loom.apply_transform_script(self.kernel._core, line)
            self.kernel = self.kernel._derived(core, line)

    def table(self, n=5):
        ok = sorted((t for t in self.trials if t["status"] == "ok"), key=lambda t: t["median_seconds"])
        return "\n".join(f"{t['median_seconds'] * 1e3:10.4f} ms  {t['key']}" for t in ok[:n])

    def __repr__(self):
        return f"<TuneResult: best {self.best['median_seconds'] * 1e3:.4f} ms ({self.best['key']}), {len(self.trials)} trials>"


def _progress_printer(total_hint):
    """A progress bar (tqdm when installed, else a line per trial on stderr)."""
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    state = {"bar": None, "failed": 0}

    def report(trial, best, done, total):
        if trial["status"] != "ok":
            state["failed"] += 1
        best_text = f"{best['median_seconds'] * 1e3:.4f} ms" if best else "-"
        if tqdm is not None:
            if state["bar"] is None:
                state["bar"] = tqdm(total=total, unit="trial", desc="tuning")
            state["bar"].update(1)
            state["bar"].set_postfix(best=best_text, failed=state["failed"])
            if done == total:
                state["bar"].close()
        else:
            print(f"[{done}/{total}] {trial['key']} {trial['status']} best {best_text}", file=sys.stderr)

    return report


def tune(space, parameters=None, *, trials=64, strategy="auto", seed=1, log=None, resume=True, target="auto",
         arch=None, check_parameters=None, min_time=0.05, trial_timeout=60.0, workers=0, gpus=0, configs=None, progress=True):
    """Search for the fastest schedule that computes what the kernel as written does.

    space: a TuningSpace (transformations given lp.Choice values); a kernel (the
    automatic space derived from its structure); (kernel, text) with a space in the
    script language (choice(a|b|c) values, `optional` lines); (kernel, [script, ...])
    for a list of whole scripts; or a function config -> kernel with `configs`.
    parameters: the sizes timed ({"n": 4096}); every parameter needs one.
    strategy: exhaustive | random | evolution | auto. seed: repeatable runs.
    log: a JSON-lines file each trial is appended to; with resume, trials it
    holds are not run again. target: "cpu", "cuda" or "auto" (cuda with a GPU).
    gpus: measuring workers for cuda, one per GPU (0: every visible GPU).
    workers: processes screening and compiling candidates (0: one per core).
    Returns a TuneResult (its .kernel is the winner)."""
    if callable(space) and not isinstance(space, (LoopKernel, TuningSpace)):
        if not configs:
            raise TypeError("tune: with a function, give configs=[...] (each is passed to the function)")
        kernels = [space(c) for c in configs]
        origins = {k._origin.structural_hash() for k in kernels}
        if len(origins) != 1:
            raise ValueError("tune: the function's kernels must all be transformed from one kernel")
        base = LoopKernel(kernels[0]._origin, kernels[0].target)
        kind, texts = "scripts", ["".join(step + "\n" for step, _ in k._history) for k in kernels]
    elif isinstance(space, TuningSpace):
        base, kind, texts = space.kernel, "text", [space.text()]
    elif isinstance(space, LoopKernel):
        base, kind, texts = space, "auto", []
    elif isinstance(space, tuple) and len(space) == 2 and isinstance(space[0], LoopKernel):
        base = space[0]
        if isinstance(space[1], str):
            kind, texts = ("json" if space[1].lstrip().startswith(("[", "{")) else "text"), [space[1]]
        else:
            kind, texts = "scripts", [str(s) for s in space[1]]
    else:
        raise TypeError("tune: give a TuningSpace, a kernel, (kernel, space text), (kernel, [scripts]) or a function with configs")
    # (target "auto": the measuring worker, a fresh python process, looks for the GPU;
    # this process may have used CUDA already, and a forked child could not)
    opts = {
        "worker_command": [sys.executable, "-c", "import sys; from loom import _loom; sys.exit(_loom.tune_worker())"],
        "target": target, "strategy": strategy, "trials": int(trials), "seed": int(seed), "log": log or "",
        "resume": bool(resume), "arch": arch or "", "parameters": dict(parameters or {}),
        "check_parameters": dict(check_parameters or {}), "min_time": float(min_time),
        "trial_timeout": float(trial_timeout), "workers": int(workers), "gpus": int(gpus),
    }
    report = _progress_printer(trials) if progress is True else (progress or None)
    d = _loom.tune(base._core, kind, texts, opts, report)
    return TuneResult(base, d)


def read_log(path):
    """The trials of a tuning log, as dicts (lines cut short by a killed run are skipped)."""
    return _loom.read_log(path)
