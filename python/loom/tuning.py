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
import os
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


def _replay(base, script):
    """base with a trial's script applied, a step at a time (each step in the kernel's history)."""
    knl = base
    for line in script.splitlines():
        knl = knl._derived(_loom.apply_transform_script(knl._core, line), line)
    return knl


class TuneResult:
    """What lp.tune found: kernel (the fastest correct schedule, ready to call),
    best (its trial), trials (this run's, as dicts: key, script, status, error,
    median_seconds, ...), resumed (the log's trials of this space the run reused
    instead of running them again), skipped (how many), seeded (measured first as
    the fastest elsewhere), refused (how many of trials the checks refused before
    running: they do not count against trials=), seconds, space (its text). table() and plot() show
    the log's reused trials with this run's, as `best` is over both."""

    def __init__(self, base, d):
        self.best = d["best"]
        self.trials = d["trials"]
        self.resumed = d.get("resumed", [])
        self.restricted = d.get("restricted", 0)
        self.refused = d.get("refused", 0)  # trials the checks refused before running: not counted against trials=
        self.settled = d.get("settled", "")  # what re-measuring a winner within the runner-up's noise found
        self.skipped = d["skipped"]
        self.seeded = d.get("seeded", 0)
        self.other_workloads = d.get("other_workloads", 0)  # other kernels' trials the feature model learnt from first
        self.seconds = d["seconds"]
        self.space = d["space"]
        # the kernel as written, measured as trial 0 (references=True): the best is never slower
        self.as_written = d.get("as_written")
        self.kernel = _replay(base, self.best["script"])

    def plot(self, path):
        """A PNG of the run (matplotlib): best time against trials, and every valid trial's time by sketch."""
        plot_trials(self.resumed + self.trials, path)

    def table(self, n=5):
        reused = {id(t) for t in self.resumed}
        ok = sorted((t for t in self.resumed + self.trials if t["status"] == "ok"), key=lambda t: t["median_seconds"])
        return "\n".join(f"{t['median_seconds'] * 1e3:10.4f} ms  {t['key']}{'  (from the log)' if id(t) in reused else ''}"
                         for t in ok[:n])

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
            state["bar"].update(done - state["bar"].n)  # (a refused configuration is no trial: done stays)
            state["bar"].set_postfix(best=best_text, failed=state["failed"])
            if done == total:
                state["bar"].close()
        else:
            print(f"[{done}/{total}] {trial['key']} {trial['status']} best {best_text}", file=sys.stderr)

    return report


def _tolerances(t, name):
    """A tolerance option as the tuner takes it: {array: value}, "" for every array."""
    if t is None:
        return {}
    items = t.items() if isinstance(t, dict) else [("", t)]
    out = {}
    for k, v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"tune: {name} = {v!r}: a tolerance is a number, at least 0")
        out[str(k)] = float(v)
    return out


_check_files = []  # (the temporary .npy files of check inputs live as long as the process)


@__import__("atexit").register
def _remove_check_files():
    for path in _check_files:
        try:
            os.remove(path)
        except OSError:
            pass


def _check_input_files(check_inputs, check_parameters):
    """The check inputs as .npy paths the measuring worker reads."""
    if not check_inputs:
        return {}
    import tempfile
    import numpy as np
    if callable(check_inputs):
        if not check_parameters:
            raise ValueError("tune: check_inputs as a function needs check_parameters, the sizes it makes them for")
        check_inputs = check_inputs(dict(check_parameters))
    if not check_parameters:
        raise ValueError("tune: check_inputs need check_parameters, the sizes the arrays are for")
    out = {}
    for name, v in check_inputs.items():
        if isinstance(v, (str, os.PathLike)):
            if not os.path.exists(v):
                raise FileNotFoundError(f"tune: check input '{name}': no file '{v}'")
            out[name] = os.path.abspath(v)
            continue
        f = tempfile.NamedTemporaryFile(suffix=f"-{name}.npy", delete=False)
        np.save(f, np.ascontiguousarray(v))
        f.close()
        _check_files.append(f.name)
        out[name] = f.name
    return out


def _check_tune_arguments(parameters, trials, trial_timeout, target, min_time):
    """Errors before any trial: a value every trial would fail on."""
    import numbers
    for name, v in (parameters or {}).items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"tune: parameters['{name}'] = {v!r}: a size is an integer")
        if v < 0:
            raise ValueError(f"tune: parameters['{name}'] = {v}: a size is not negative")
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
        raise ValueError(f"tune: trials = {trials!r}: at least 1")
    if not isinstance(trial_timeout, numbers.Real) or not trial_timeout > 0:
        raise ValueError(f"tune: trial_timeout = {trial_timeout!r}: seconds above 0")
    if not isinstance(min_time, numbers.Real) or not min_time > 0:
        raise ValueError(f"tune: min_time = {min_time!r}: seconds above 0")
    if target not in ("auto", "cpu", "cuda"):
        raise ValueError(f"tune: target = {target!r}: 'auto', 'cpu' or 'cuda'")


def tune(space, parameters=None, *, trials=64, strategy="auto", seed=1, log=None, resume=True, target="auto",
         arch=None, check_parameters=None, min_time=0.05, trial_timeout=60.0, compile_timeout=30.0, workers=0, gpus=0, configs=None, progress=True,
         backend="local", ray_address=None, actors=None, feature_model=False, seed_logs=(), time_limit=None,
         rtol=None, atol=None, check_inputs=None, restrictions=(), references=True, settle=True):
    """Search for the fastest schedule that computes what the kernel as written does.

    space: a TuningSpace (transformations given lp.Choice values); a kernel (the
    automatic space derived from its structure); (kernel, text) with a space in the
    script language (choice(a|b|c) values, `optional` lines); (kernel, [script, ...])
    for a list of whole scripts; or a function config -> kernel with `configs`.
    parameters: the sizes timed ({"n": 4096}); every parameter needs one.
    strategy: exhaustive | random | evolution | bayes (Bayesian optimisation) |
    annealing (simulated annealing) | local (multi-start local search) |
    diff_evo (differential evolution) | pso (particle swarm) | auto.
    seed: repeatable runs.
    log: a JSON-lines file each trial is appended to; with resume, trials it
    holds are not run again (those of this card and sizes; its trials from another card
    or other sizes seed the run, as seed_logs' do: a log path or a list of them, whose
    fastest trials of this kernel and target are measured first). target: "cpu", "cuda" or "auto" (cuda with a GPU).
    gpus: measuring workers for cuda, one per GPU (0: every visible GPU).
    backend: "local" (this machine's processes) or "ray" (screening as Ray tasks,
    one measuring actor per GPU of the cluster; ray_address joins a running
    cluster, actors sets how many measure).
    workers: processes screening and compiling candidates (0: one per core).
    feature_model: evolution screens twice a batch and measures the half a model of
    the kernel features ranks fastest (docs/tuning.md; off: no clear gain yet); with
    seed_logs, the model first learns from their other kernels' trials (this target
    and card), as MetaSchedule's database trains its model across workloads.
    time_limit: seconds after which no new trial starts (a budget besides trials).
    rtol, atol: the check's tolerances, a number for every written array or a
    dict by array name (default: by dtype).
    check_inputs: the check's inputs, by array name: NumPy arrays or .npy paths,
    or a function of the check sizes returning them (Kernel Tuner's answer/verify:
    well-conditioned data for LU, say); give check_parameters, the sizes they are for.
    restrictions: functions of a configuration's values (a dict: each choice
    point's name, as str(space) lists them, to its value as text, and "sketch" to
    its sketch's name) returning False for one to leave out before anything is
    generated (Kernel Tuner's restrictions); left out, it is no trial.
    references: measure the kernel as written too (trial 0, outside the log and the
    trial count; TuneResult.as_written), and return it where no configuration is faster.
    settle: where the runner-up's fastest run was faster than the winner's slowest,
    measure both again, three rounds, and keep the lower median (TuneResult.settled
    says what was found; "" when the winner was clear).
    Returns a TuneResult (its .kernel is the winner)."""
    _check_tune_arguments(parameters, trials, trial_timeout, target, min_time)
    # (steps that only declare, as assumptions and dtypes do, leave a kernel as written)
    declaring = ("assume", "fix_parameters", "add_dtypes", "add_and_infer_dtypes", "set_options", "set_index_dtype")
    if isinstance(space, LoopKernel) and all(step.split()[0] in declaring for step, _ in space._history):
        space = LoopKernel(space._core, space.target)
    if isinstance(space, LoopKernel) and space._history:
        # the automatic space is derived from a kernel as written: on top of a schedule its
        # splits and tags would meet those already made, and every trial would be illegal
        raise ValueError(f"tune: kernel '{space.name}' is already transformed ({len(space._history)} steps, the first "
                         f"'{space._history[0][0]}'); the automatic space starts from a kernel as written: pass that "
                         "kernel, or make the steps part of a space (lp.TuningSpace.of(knl) keeps them before the choices)")
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
        "trial_timeout": float(trial_timeout), "compile_timeout": float(compile_timeout), "workers": int(workers), "gpus": int(gpus),
        "feature_model": bool(feature_model),
        "seed_logs": [str(seed_logs)] if isinstance(seed_logs, (str, os.PathLike)) else [str(p) for p in seed_logs],
        "time_limit": float(time_limit or 0),
        "references": bool(references),
        "settle": bool(settle),
        "rtol": _tolerances(rtol, "rtol"), "atol": _tolerances(atol, "atol"),
        "check_inputs": _check_input_files(check_inputs, check_parameters),
        "restrictions": [restrictions] if callable(restrictions) else list(restrictions),
    }
    if backend == "ray":
        from . import ray_backend
        opts["ray_address"] = ray_address
        opts["backend"] = ray_backend.backend(base, opts, actors)
    elif backend != "local":
        raise ValueError(f"tune: backend is 'local' or 'ray', not {backend!r}")
    report = _progress_printer(trials) if progress is True else (progress or None)
    d = _loom.tune(base._core, kind, texts, opts, report)
    return TuneResult(base, d)


def read_log(path):
    """The trials of a tuning log, as dicts (lines cut short by a killed run are
    skipped). A log that does not exist is an error (FileNotFoundError)."""
    import os
    if not os.path.exists(path):
        raise FileNotFoundError(f"tuning log '{path}' does not exist")
    return _loom.read_log(path)


def _group_name(t):
    name = f"kernel '{t['kernel']}'" if t.get("kernel") else "kernel"
    where = t["target"] + (f" on {t['device']}" if t.get("device") else "")
    return f"{name} (hash {t['kernel_hash']:016x}), {t['parameters'] or 'no sizes'}, {where}"


def log_group(trials, kernel=None, parameters=None, target=None, device=None):
    """(description, trials) of the one group of a log's trials whose times
    compare (one kernel, sizes, target and card) that the filters leave:
    `kernel` a name or hex hash prefix, `parameters` a dict of timed sizes,
    `device` text in the card's name. Several groups left, or none, is an
    error (ValueError) that lists what the log holds."""
    def admits(t):
        if kernel and kernel != t.get("kernel") and not f"{t['kernel_hash']:016x}".startswith(str(kernel)):
            return False
        if target and target != t["target"]:
            return False
        if device and device not in t.get("device", ""):
            return False
        timed = set(t["parameters"].split())
        return all(f"{n}={v}" in timed for n, v in (parameters or {}).items())

    groups, everything = {}, {}
    for t in trials:
        everything.setdefault(_group_name(t), []).append(t)
        if admits(t):
            groups.setdefault(_group_name(t), []).append(t)
    listing = lambda g: "".join(f"\n  {n}: {len(ts)} trials" for n, ts in g.items())  # noqa: E731
    if not groups:
        raise ValueError("no trials match the filter; the log holds" + listing(everything))
    if len(groups) > 1:
        raise ValueError(f"the log holds trials of {len(groups)} kernels, sizes, targets or cards, whose times do not "
                         "compare; pick one (kernel=, parameters=, target=, device=):" + listing(groups))
    return next(iter(groups.items()))


def _cache_root():
    import os
    base = os.environ.get("LOOM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "loom")
    return os.path.join(base, "tuned")


class Autotuned:
    """A kernel tuned on its first call for each key (the values of the named
    parameters, taken from the call's array shapes and scalars, and the dtypes
    of the call's arrays), as @triton.autotune does; the winner's script is
    kept on disk, so a later process with the same kernel, space, target,
    device and key reuses it without tuning. A winner is reused only where its
    schedule's assumptions hold (one tuned at n=4096 that assumes n mod 4 = 0
    is not run at n=4097: that call tunes for its own sizes). Calls go to the
    winner, an ordinary kernel."""

    def __init__(self, space, key=None, cache_dir=None, **tune_kwargs):
        self.space = space
        self.key = tuple(key) if key is not None else None
        self.cache_dir = cache_dir or _cache_root()
        self.tune_kwargs = tune_kwargs
        self.kernels = {}  # key -> [winners], the latest first
        self.tuned = 0     # tuning runs this object started (not loaded from disk)
        self.base = space.kernel if isinstance(space, TuningSpace) else space
        if not isinstance(self.base, LoopKernel):
            raise TypeError("autotune: give a kernel (the automatic space) or a TuningSpace (lp.Choice values)")
        if self.key is not None:
            known = set(self.base._core.parameters())
            unknown = [n for n in self.key if n not in known]
            if unknown:
                raise ValueError(f"autotune: key names {', '.join(map(repr, unknown))}, which kernel '{self.base.name}' has no "
                                 f"parameter of; its parameters: {', '.join(sorted(known)) or 'none'}")

    def sizes_of(self, kwargs):
        """The kernel's parameters in this call: scalars given by name, else array extents."""
        core = self.base._core
        sizes = {}
        for p, places in core.shape_parameters().items():
            if p in kwargs and not hasattr(kwargs[p], "shape"):
                sizes[p] = int(kwargs[p])
                continue
            for array, axis in places:
                if array in kwargs and hasattr(kwargs[array], "shape"):
                    sizes[p] = int(kwargs[array].shape[axis])
                    break
        for p in core.parameters():
            if p not in sizes and p in kwargs:
                sizes[p] = int(kwargs[p])
        return sizes

    def dtypes_of(self, kwargs):
        """The dtypes of the call's arrays, by name (part of the key: a float64
        call does not reuse a winner tuned on float32 data)."""
        out = {}
        for name in self.base._core.argument_names():
            v = kwargs.get(name)
            if v is not None and hasattr(v, "dtype"):
                out[name] = str(v.dtype).replace("torch.", "")
        return out

    def _path(self, sizes, dtypes, target, device, all_sizes=False):
        import hashlib
        import os
        space_text = self.space.text() if isinstance(self.space, TuningSpace) else "auto"
        names = self.key if self.key is not None and not all_sizes else tuple(sorted(sizes))
        key = ",".join(f"{n}={sizes.get(n)}" for n in names) + ";" + ",".join(f"{n}:{t}" for n, t in sorted(dtypes.items()))
        h = hashlib.sha256(f"{self.base._core.structural_hash()}\n{space_text}\n{target}\n{device}\n{key}".encode()).hexdigest()[:24]
        return os.path.join(self.cache_dir, f"{self.base.name}-{h}.json"), key

    def _typed(self, dtypes):
        """The space, with the call's dtypes given to arrays the kernel leaves open."""
        open_arrays = set(self.base._core.open_dtype_arrays())
        given = {n: t for n, t in dtypes.items() if n in open_arrays}
        if not given:
            return self.space, self.base
        from . import add_dtypes
        typed = add_dtypes(self.base, given)
        typed = LoopKernel(typed._core, typed.target)  # (the typed kernel is the one as written)
        return (TuningSpace(typed, self.space.lines) if isinstance(self.space, TuningSpace) else typed), typed

    def winner(self, sizes, dtypes=None):
        """The tuned kernel for these sizes and dtypes: from memory, from disk, or tuned now."""
        dtypes = dtypes or {}
        target = self.tune_kwargs.get("target", "auto")
        if target == "auto":
            target = "cuda" if _loom.gpu_available() else "cpu"
        device = _loom.device_name() if target == "cuda" else "cpu"
        path, key = self._path(sizes, dtypes, target, device)
        knl = self._fitting(self.kernels.get(key, []), sizes) or self._load(path, sizes, dtypes)
        if knl is None:
            # the key's winner (if any) assumes what these sizes break: tune for exactly these sizes
            if self.kernels.get(key) or os.path.exists(path):
                path, _ = self._path(sizes, dtypes, target, device, all_sizes=True)
                knl = self._load(path, sizes, dtypes)
            if knl is None:
                knl = self._tune(path, key, sizes, dtypes, target)
        self.kernels.setdefault(key, [])
        if knl not in self.kernels[key]:
            self.kernels[key].insert(0, knl)
        return knl

    @staticmethod
    def _fitting(kernels, sizes):
        return next((k for k in kernels if k._core.assumptions_hold(sizes)), None)

    def _load(self, path, sizes, dtypes):
        import json
        try:
            with open(path, encoding="utf-8") as f:
                script = json.load(f)["script"]
        except (OSError, ValueError, KeyError):
            return None  # none yet, or a damaged entry: tune again
        return self._fitting([_replay(self._typed(dtypes)[1], script)], sizes)

    def _tune(self, path, key, sizes, dtypes, target):
        import json
        space, typed = self._typed(dtypes)
        r = tune(space, parameters=sizes, **dict(self.tune_kwargs, target=target))
        self.tuned += 1
        script = r.best["script"]
        os.makedirs(self.cache_dir, exist_ok=True)
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"script": script, "median_seconds": r.best["median_seconds"], "device": r.best["device"],
                       "key": key, "kernel": self.base.name}, f)
        os.replace(tmp, path)  # (atomic: a concurrent process reads the old entry or the new one)
        return _replay(typed, script)

    def __call__(self, *args, **kwargs):
        return self.winner(self.sizes_of(kwargs), self.dtypes_of(kwargs))(*args, **kwargs)


def autotune(space=None, *, key=None, cache_dir=None, **tune_kwargs):
    """Tune on first use, per key, with the winner cached on disk:

        fast = lp.autotune(knl, key=["n", "m"], trials=64)       # or a TuningSpace
        (out,) = fast(a=a)            # tunes for a's shape (first time), then runs

    or as a decorator of a function that returns the kernel or space:

        @lp.autotune(key=["n"], trials=32)
        def scale():
            return lp.split_iname(knl, "i", lp.Choice([64, 128, 256]), outer_tag="g.0", inner_tag="l.0")

    Other keywords go to lp.tune (trials, strategy, target, min_time, ...)."""
    if space is not None and not callable(space) or isinstance(space, (LoopKernel, TuningSpace)):
        return Autotuned(space, key=key, cache_dir=cache_dir, **tune_kwargs)

    def wrap(fn):
        return Autotuned(fn(), key=key, cache_dir=cache_dir, **tune_kwargs)

    return wrap(space) if space is not None else wrap


def plot_trials(trials, path, title=None):
    """Draws a tuning run (trials as lp.tune or lp.read_log give them) to a PNG:
    on the left the best time so far against the trial number, on the right
    every valid trial's time, one colour per sketch (named), and the trials
    without a time (illegal, wrong, failed, crashed) as marks along the bottom
    edge, apart from the times. A run with no valid trial says so. Needs
    matplotlib (the tune extra). A path whose folder does not exist is an
    error before anything is drawn."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"plot: cannot write '{path}': no folder '{folder}'")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.transforms import blended_transform_factory
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    valid = [(i + 1, t) for i, t in enumerate(trials) if t["status"] == "ok"]
    invalid = [i + 1 for i, t in enumerate(trials) if t["status"] != "ok"]
    best, xs, ys = None, [], []
    for i, t in enumerate(trials):
        if t["status"] == "ok" and (best is None or t["median_seconds"] < best):
            best = t["median_seconds"]
        if best is not None:
            xs.append(i + 1)
            ys.append(best * 1e3)
    for ax in (left, right):
        ax.set_xlabel("trial")
        ax.set_xlim(0, max(len(trials), 1) + 1)
    if valid:
        left.step(xs, ys, where="post")
        left.set_yscale("log")
        right.set_yscale("log")
    else:
        for ax in (left, right):
            ax.text(0.5, 0.5, "no valid trial", ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
    left.set_ylabel("best time so far (ms)")
    right.set_ylabel("time (ms)")
    sketch_of = lambda t: t.get("sketch") or f"sketch {t['key'].split(':')[0]}"  # noqa: E731
    for name in sorted({sketch_of(t) for _, t in valid}):
        pts = [(x, t["median_seconds"] * 1e3) for x, t in valid if sketch_of(t) == name]
        right.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, label=name)
    if invalid:  # (no time to draw: marks on the bottom edge, whatever the scale)
        edge = blended_transform_factory(right.transData, right.transAxes)
        right.scatter(invalid, [0.02] * len(invalid), marker="x", color="grey", s=12, transform=edge, clip_on=False,
                      label=f"no time: {len(invalid)} illegal / wrong / failed")
    if valid or invalid:
        right.legend(fontsize=7)
    device = next((t["device"] for t in trials if t.get("device")), "")
    kernel = next((t["kernel"] for t in trials if t.get("kernel")), "")
    sizes = next((t["parameters"] for t in trials if t.get("parameters")), "")
    fig.suptitle(title or f"{kernel + ' ' if kernel else ''}{sizes}: {len(trials)} trials on {device}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

