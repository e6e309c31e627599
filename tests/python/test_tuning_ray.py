"""The tuner on a Ray cluster: a local cluster of a head and a worker node
on this machine (ray.cluster_utils.Cluster), on the CPU target (the GPU
where the build has no CPU target). The same loop as the local backend: the
same configurations in the same order for a fixed seed, the same statuses
and reasons, the same winner where one schedule is clearly fastest, and the
log written the same way."""
import json

import pytest

import loom as lp

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'loom[ray]'; make's venv has it)")
from ray.cluster_utils import Cluster  # noqa: E402

TARGET = "cpu" if lp._loom.has_cpu_target() else "cuda" if lp._loom.gpu_available() else None
pytestmark = pytest.mark.skipif(TARGET is None, reason="neither the CPU target nor a GPU: nothing to tune on")


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=2, num_gpus=1 if TARGET == "cuda" else 0)
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def rows():
    return lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")


def test_ray_runs_the_same_loop_as_the_local_backend(cluster, tmp_path):
    # a row per thread is some 40x faster here than 512 threads per short row
    # (mostly idle, then a reduction tree); 2048 threads per block is refused
    space = (rows(), ["split_iname i 128 outer_tag=g.0 inner_tag=l.0",
                      "split_iname j 512 inner_tag=l.0\nsplit_iname i 2 outer_tag=g.0 inner_tag=l.1",
                      "split_iname i 2048 outer_tag=g.0 inner_tag=l.0"])
    common = dict(parameters={"n": 20000, "m": 64}, target=TARGET, progress=False, min_time=0.01, strategy="exhaustive", seed=4,
                  references=False)  # (the same loop on both backends: the kernel as written, trial 0, is timed apart)
    local = lp.tune(space, **common)
    log = str(tmp_path / "ray.jsonl")
    remote = lp.tune(space, backend="ray", log=log, **common)
    assert [t["key"] for t in remote.trials] == [t["key"] for t in local.trials]
    assert [t["status"] for t in remote.trials] == [t["status"] for t in local.trials]
    assert [t["error"] for t in remote.trials] == [t["error"] for t in local.trials]
    assert remote.best["key"] == local.best["key"] == "0:"
    lines = [json.loads(x) for x in open(log)]
    assert len(lines) == 3 and {x["status"] for x in lines} == {"ok", "illegal"}
    # resumed on the cluster: nothing left to run
    again = lp.tune(space, backend="ray", log=log, **common)
    assert again.skipped == 3 and not again.trials


def test_a_crash_on_the_cluster_costs_the_trial_not_the_run(cluster, monkeypatch):
    monkeypatch.setenv("LOOM_TUNE_FAULT", "split_iname iname=i inner_length=32 =crash")
    space = lp.split_iname(rows(), "i", lp.Choice([16, 32, 64]), outer_tag="g.0", inner_tag="l.0")
    r = lp.tune(space, backend="ray", parameters={"n": 300, "m": 77}, target=TARGET, progress=False, min_time=0.002)
    status = {t["key"]: t["status"] for t in r.trials}
    assert status == {"0:0": "ok", "0:1": "crashed", "0:2": "ok"}
