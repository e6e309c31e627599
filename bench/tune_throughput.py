"""Issue 30's throughput goal: trials per second with one measuring worker
per GPU, on one GPU and on all of them (goal: >= 1.8x on two), the same 64
configurations of the automatic row-sum space each time (random, seed 1),
without the disk cache (every trial compiled, as in a fresh run).

    LOOM_CACHE=off PYTHONPATH=build-py/python python3 bench/tune_throughput.py
"""
import os
import time

import loom as lp
from loom import _loom

os.environ.setdefault("LOOM_CACHE", "off")
knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")
sizes = {"n": 65536, "m": 1024}
gpus = int(os.environ.get("TUNE_GPUS", "0")) or None
rates = {}
for n in ([1, gpus] if gpus else [1, 2]):
    t0 = time.time()
    r = lp.tune(knl, parameters=sizes, trials=64, strategy="random", seed=1, target="cuda", gpus=n, progress=False)
    s = time.time() - t0
    measured = sum(1 for t in r.trials if t["status"] != "illegal")
    devices = sorted({t["device"] for t in r.trials if t["status"] == "ok"})
    rates[n] = len(r.trials) / s
    print(f"{n} GPU(s): {len(r.trials)} trials ({measured} measured) in {s:.1f} s = {rates[n]:.2f} trials/s; "
          f"best {r.best['median_seconds'] * 1e3:.4f} ms; devices {devices}", flush=True)
ns = sorted(rates)
print(f"speed-up with {ns[-1]} GPUs: {rates[ns[-1]] / rates[ns[0]]:.2f}x (goal >= 1.8x on two)")
