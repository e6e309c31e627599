"""The tuner on a Ray cluster (lp.tune(..., backend="ray")): the same tuning
loop, log and strategies as on one machine, with candidates screened
(transformed, checked, generated and compiled) as Ray CPU tasks and measured
by one Ray actor per GPU (or one for the CPU target). Each actor holds a
loom Measurer: the same isolated measuring process as the local tuner, so a
trial that crashes or hangs costs that process, not the actor. Ray is an
optional dependency (`pip install loom[ray]`); ray.init(address=...) before
lp.tune joins an existing cluster, else a local one is started. The
driver's LOOM_* environment variables are passed to every task and actor.

Token authentication (Ray 2.52 and later; `ray start --head` turns it on for
local clusters from 2.59): a driver joins such a cluster only with
RAY_AUTH_MODE=token, which Ray reads when it is imported. Where the variable
is unset and a token is at hand (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or
~/.ray/auth_token), Loom sets it before importing Ray; a token-mode driver
still joins a cluster without authentication.

Loom on the nodes: where Loom starts the Ray job (no ray.init before), the
driver's loom package (its Python files and the compiled _loom module) is
shipped with it (the job's runtime_env py_modules), so nodes need only
Python and Ray, of the driver's versions; a node that cannot load it makes
the run fail with a message that says so."""
import os
import sys

from . import _loom


def _token_at_hand():
    return bool(os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
                or os.path.exists(os.path.expanduser("~/.ray/auth_token")))


def _import_ray():
    if "ray" not in sys.modules and "RAY_AUTH_MODE" not in os.environ and _token_at_hand():
        os.environ["RAY_AUTH_MODE"] = "token"
    import ray
    return ray


def _join(ray, address):
    """ray.init(address) with the reason spelled out where it fails; the job
    ships the driver's loom package to the nodes (Ray uploads a local folder
    only for a whole job: a driver that called ray.init itself ships nothing,
    and its nodes need Loom installed, or py_modules in its own runtime_env)."""
    import loom
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 runtime_env={"py_modules": [os.path.dirname(os.path.abspath(loom.__file__))]})
    except ConnectionError as e:
        mode = os.environ.get("RAY_AUTH_MODE", "unset")
        raise ConnectionError(
            f"tune: cannot join the Ray cluster at {address} ({e}). A cluster with token authentication needs this "
            f"driver in token mode (RAY_AUTH_MODE=token, here {mode}, set before Ray is imported) and the cluster's "
            "token (~/.ray/auth_token, RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH; `ray get-auth-token` on the head prints it)") from None


def _runtime_env():
    """Every task's and actor's: the driver's LOOM_* settings (cache folder,
    CPU, ...); the job's py_modules hold for them too."""
    return {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("LOOM_")}}


def _unloadable(e):
    """The message for a node whose workers cannot import loom (nothing shipped, another Python, another CPU)."""
    import platform
    return _loom.LoomError(
        f"tune: a Ray node cannot import Loom: {e}. Where Loom starts the Ray job it ships this driver's package (built for "
        f"Python {platform.python_version()} on {platform.machine()}); nodes of another Python, or a job started by your own "
        "ray.init without it in its runtime_env's py_modules, need Loom installed on the nodes (pip install loom)")


def _worker_command():
    return [sys.executable, "-c", "import sys; from loom import _loom; sys.exit(_loom.tune_worker())"]


class RayBackend:
    """Screening as tasks, measuring in actors. Attributes target, arch, device
    and max_shared_bytes are the first actor's (the tuner asks for them)."""

    def __init__(self, kernel_json, opts, actors=None):
        ray = _import_ray()
        if not ray.is_initialized():
            _join(ray, opts.get("ray_address"))
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
        self.env = _runtime_env()
        self.resources = dict({"num_gpus": 1} if target == "cuda" else {"num_cpus": 1}, runtime_env=self.env)
        self.actors = [_MeasureActor.options(**self.resources).remote(kernel_json, self.opts) for _ in range(max(1, n))]
        try:
            info = ray.get(self.actors[0].info.remote())
        except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError, ray.exceptions.RuntimeEnvSetupError) as e:
            raise _unloadable(e) from None
        self.target, self.arch, self.device, self.max_shared_bytes = info["target"], info["arch"], info["device"], info["max_shared_bytes"]
        self.opts["arch"] = self.arch

    def screen(self, scripts):
        compile_ = self.target == "cuda"
        task = _screen.options(runtime_env=self.env)
        # (the kernel features at the timed sizes: the feature model's, as local screening records them)
        sizes = dict(self.opts.get("parameters") or {})
        return self.ray.get([task.remote(self.kernel_json, s, compile_, self.arch, sizes) for s in scripts])

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
    def screen(kernel_json, script, compile_, arch, sizes):
        from loom import _loom as core
        k = core.kernel_from_json(kernel_json, "<the tuned kernel>")
        try:
            r = core.compile_variants_of_scripts(k, [script], 1, compile_, arch, sizes)[0]
        except core.LoomError as e:  # (a script the reader refuses)
            return {"ok": False, "error": str(e), "hash": 0, "generate_seconds": 0.0, "compile_seconds": 0.0}
        return {"ok": r["ok"], "stopped": r["stopped"], "error": r["error"], "hash": r["hash"], "generate_seconds": r["generate_seconds"],
                "registers": r["registers"], "threads": r["threads"], "shared_bytes": r["shared_bytes"],
                "compile_seconds": r["compile_seconds"], "features": r["features"]}

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


def backend_of_json(kernel_json, opts, actors=None):
    """The backend for a kernel in loom-kernel JSON (`loom tune --ray`'s)."""
    global _screen, _MeasureActor
    if _screen is None:
        try:
            _import_ray()
            _screen, _MeasureActor = _make_remotes()
        except ImportError:
            raise ImportError("tuning on Ray needs Ray: pip install 'ray>=2' (loom's ray extra)") from None
    return RayBackend(kernel_json, opts, actors)


def backend(kernel, opts, actors=None):
    return backend_of_json(_loom.kernel_to_json(kernel._core), opts, actors)
