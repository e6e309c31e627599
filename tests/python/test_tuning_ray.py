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


def test_ray_records_keep_their_kernel_features(cluster, tmp_path):
    # the feature model learns from the features screening records; on Ray they were lost
    space = lp.split_iname(rows(), "i", lp.Choice([32, 64]), outer_tag="g.0", inner_tag="l.0")
    common = dict(parameters={"n": 3000, "m": 40}, target=TARGET, progress=False, min_time=0.002, references=False)
    local = lp.tune(space, log=str(tmp_path / "local.jsonl"), **common)
    remote = lp.tune(space, backend="ray", log=str(tmp_path / "ray.jsonl"), **common)
    assert {t["key"] for t in remote.trials} == {t["key"] for t in local.trials}
    by_key = {t["key"]: t for t in local.trials}
    for t in remote.trials:
        assert t["features"], t
        assert t["features"] == by_key[t["key"]]["features"]
    for line in open(tmp_path / "ray.jsonl"):
        assert json.loads(line)["features"]


def test_the_command_line_tunes_on_a_cluster_whose_nodes_lack_loom(tmp_path):
    # `loom tune --ray ADDRESS` hands the run to python (Ray's side), which joins
    # a cluster started without PYTHONPATH: its workers import the loom package
    # the job ships, or nothing would run
    import os
    import signal
    import socket
    import subprocess
    import sys

    loom_binary = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(lp.__file__)))), "loom")
    if not os.access(loom_binary, os.X_OK) or TARGET != "cpu":
        pytest.skip("the loom command line tool beside this package, with the CPU target, is needed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    import time
    log = tmp_path / "head.log"  # (a file: a pipe nobody reads would stall the head's processes)
    with open(log, "w") as out:
        head = subprocess.Popen([ray_cli, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"],
                                env=bare, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 120
        while "Ray runtime started" not in log.read_text() and time.time() < deadline and head.poll() is None:
            time.sleep(0.5)
        assert "Ray runtime started" in log.read_text(), log.read_text()[-3000:]
        env = dict(os.environ, LOOM_PYTHON=sys.executable)
        out = subprocess.run([loom_binary, "tune", os.path.join(os.environ.get("LOOM_SOURCE_DIR", "."), "examples/row_sums.loom"),
                              "--target", "cpu", "-D", "n=3000", "-D", "m=40", "--trials", "3", "--ray", f"127.0.0.1:{port}"],
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
        assert f"tuning 'row_sums' on the Ray cluster at 127.0.0.1:{port}" in out.stdout
        assert "3 trials in" in out.stdout and "\nbest: " in out.stdout
        # a python without Loom's package is named as the reason
        bad = subprocess.run([loom_binary, "tune", os.path.join(os.environ.get("LOOM_SOURCE_DIR", "."), "examples/row_sums.loom"),
                              "--target", "cpu", "--trials", "1", "--ray", f"127.0.0.1:{port}"],
                             env=dict(bare, LOOM_PYTHON=sys.executable), cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert bad.returncode != 0 and "cannot import Loom's Python package" in bad.stderr, bad.stderr
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)
