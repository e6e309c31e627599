"""The tuner on a Ray cluster (lp.tune(..., backend="ray")): the same tuning
loop, log and strategies as on one machine, with candidates screened
(transformed, checked, generated and compiled) as Ray CPU tasks and measured
by one Ray actor per GPU (or one for the CPU target). Each actor holds a
loom Measurer: the same isolated measuring process as the local tuner, so a
trial that crashes or hangs costs that process, not the actor. Ray is an
optional dependency (`pip install loom[ray]`); ray.init(address=...) before
lp.tune joins an existing cluster, else a local one is started. The
driver's LOOM_* environment variables are passed to every task and actor."""
import os
import sys

from . import _loom


def _worker_command():
    return [sys.executable, "-c", "import sys; from loom import _loom; sys.exit(_loom.tune_worker())"]


class RayBackend:
    """Screening as tasks, measuring in actors. Attributes target, arch, device
    and max_shared_bytes are the first actor's (the tuner asks for them)."""

    def __init__(self, kernel_json, opts, actors=None):
        import ray
        if not ray.is_initialized():
            ray.init(address=opts.get("ray_address") or None, include_dashboard=False, log_to_driver=False)
        self.ray = ray
        self.kernel_json = kernel_json
        self.opts = dict(opts, worker_command=_worker_command())
        gpus = int(ray.cluster_resources().get("GPU", 0))
        target = opts["target"]
        if target == "auto":
            target = "cuda" if gpus else "cpu"
        self.opts["target"] = target
        n = actors or (gpus if target == "cuda" else 1)
        if target == "cuda" and gpus == 0:
            raise _loom.LoomError("tuning on a Ray cluster for the cuda target: the cluster has no GPU")
        # the driver's LOOM_* settings (cache folder, CPU, ...) hold on every node too
        self.env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("LOOM_")}}
        self.resources = dict({"num_gpus": 1} if target == "cuda" else {"num_cpus": 1}, runtime_env=self.env)
        self.actors = [_MeasureActor.options(**self.resources).remote(kernel_json, self.opts) for _ in range(max(1, n))]
        info = ray.get(self.actors[0].info.remote())
        self.target, self.arch, self.device, self.max_shared_bytes = info["target"], info["arch"], info["device"], info["max_shared_bytes"]
        self.opts["arch"] = self.arch

    def screen(self, scripts):
        compile_ = self.target == "cuda"
        task = _screen.options(runtime_env=self.env)
        return self.ray.get([task.remote(self.kernel_json, s, compile_, self.arch) for s in scripts])

    def measure(self, scripts, finished):
        """Each idle actor takes the next script; finished(i, result) as each ends."""
        ray = self.ray
        pending = {}  # object ref -> (trial index, actor)
        idle = list(self.actors)
        queue = list(range(len(scripts)))
        while queue or pending:
            while queue and idle:
                i, actor = queue.pop(0), idle.pop(0)
                pending[actor.measure.remote(scripts[i])] = (i, actor)
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, actor = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayActorError as e:  # the actor itself died (its node went away)
                    result = {"status": "crashed", "error": f"the Ray actor measuring it died: {e}", "variant_hash": 0,
                              "device": self.device, "generate_seconds": 0.0, "compile_seconds": 0.0, "registers": -1,
                              "shared_bytes": 0, "median_seconds": 0.0, "min_seconds": 0.0, "reps": 0}
                    actor = _MeasureActor.options(**self.resources).remote(self.kernel_json, self.opts)
                    self.actors.append(actor)
                idle.append(actor)
                finished(i, result)


def _make_remotes():
    import ray

    @ray.remote
    def screen(kernel_json, script, compile_, arch):
        from loom import _loom as core
        k = core.kernel_from_json(kernel_json, "<the tuned kernel>")
        try:
            r = core.compile_variants_of_scripts(k, [script], 1, compile_, arch)[0]
        except core.LoomError as e:  # (a script the reader refuses)
            return {"ok": False, "error": str(e), "hash": 0, "generate_seconds": 0.0, "compile_seconds": 0.0}
        return {"ok": r["ok"], "stopped": r["stopped"], "error": r["error"], "hash": r["hash"], "generate_seconds": r["generate_seconds"],
                "registers": r["registers"], "threads": r["threads"], "shared_bytes": r["shared_bytes"],
                "compile_seconds": r["compile_seconds"]}

    @ray.remote(max_restarts=-1)
    class MeasureActor:
        def __init__(self, kernel_json, opts):
            from loom import _loom as core
            self.m = core.Measurer(core.kernel_from_json(kernel_json, "<the tuned kernel>"), opts)

        def info(self):
            return self.m.info()

        def measure(self, script):
            return self.m.measure(script)

    return screen, MeasureActor


_screen = _MeasureActor = None


def backend(kernel, opts, actors=None):
    global _screen, _MeasureActor
    if _screen is None:
        try:
            _screen, _MeasureActor = _make_remotes()
        except ImportError:
            raise ImportError("lp.tune(backend='ray') needs Ray: pip install 'ray>=2' (loom's ray extra)") from None
    return RayBackend(_loom.kernel_to_json(kernel._core), opts, actors)
