"""Issue 30's throughput goal: trials per second with one measuring worker
per GPU, on one GPU and on all of them (goal: >= 1.8x on two): the same 96
configurations of the automatic SGEMM 2048^3 space each time (random, seed 1),
each run in a fresh process with an empty compile cache (as a first run:
every candidate compiled once, by the screening workers).

    PYTHONPATH=build-py/python python3 bench/tune_throughput.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time

TRIALS = int(os.environ.get("TUNE_TRIALS", "96"))


def one(n):
    import loom as lp
    knl = lp.make_kernel("{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}", "c[i, j] = sum(k, a[i, k] * b[k, j])")
    stamps = []
    t0 = time.time()
    r = lp.tune(knl, parameters={"n": 2048, "m": 2048, "l": 2048}, trials=TRIALS, strategy="random", seed=1, target="cuda", gpus=n,
                progress=lambda t, best, done, total: t["status"] != "illegal" and stamps.append(time.time()))
    s = time.time() - t0
    print(json.dumps({"gpus": n, "trials": len(r.trials), "measured": sum(1 for t in r.trials if t["status"] != "illegal"),
                      "seconds": s, "steady": (len(stamps) - 1) / (stamps[-1] - stamps[0]), "startup": stamps[0] - t0,
                      "best_ms": r.best["median_seconds"] * 1e3,
                      "devices": sorted({t["device"] for t in r.trials if t["status"] == "ok"})}))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        one(int(sys.argv[1]))
        sys.exit(0)
    counts = [1, int(os.environ.get("TUNE_GPUS", "2"))]
    rates = {}
    for n in counts:
        env = dict(os.environ, LOOM_CACHE_DIR=tempfile.mkdtemp(prefix="loom-tune-cache-"))
        out = subprocess.run([sys.executable, __file__, str(n)], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stderr[-2000:])
            sys.exit(1)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rates[n] = r["steady"]
        print(f"{n} GPU(s): {r['trials']} trials ({r['measured']} measured) in {r['seconds']:.1f} s ({r['trials'] / r['seconds']:.2f} trials/s; "
              f"first result after {r['startup']:.1f} s, then {r['steady']:.2f} trials/s); "
              f"best {r['best_ms']:.4f} ms; devices {r['devices']}", flush=True)
    print(f"speed-up with {counts[-1]} GPUs after the first result: {rates[counts[-1]] / rates[counts[0]]:.2f}x (goal >= 1.8x on two)")
