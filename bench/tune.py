"""Issue 30's goals: the tuner, from the kernel as written and its automatic
space (at most TUNE_TRIALS measured trials, default 100), against the best
hand-written Loom schedule for each workload in examples/, both measured by
the same worker (the hand-written script is timed as a one-script space) in
the same run on the same card. Prints one table (GB/s or TFLOP/s), the
tuning time of each workload and the winning scripts.

    PYTHONPATH=build-py/python python3 bench/tune.py [WORKLOAD ...]

TUNE_TARGET=cpu runs it on the CPU target (smaller sizes: TUNE_SCALE=1/64).
"""
import os
import sys
import time

import loom as lp
from loom import _loom

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TRIALS = int(os.environ.get("TUNE_TRIALS", "100"))
TARGET = os.environ.get("TUNE_TARGET", "cuda" if _loom.gpu_available() else "cpu")

# name, the hand-written example, sizes, what the figure counts
WORKLOADS = [
    ("vector add 2^26", "vector_add_vec", {"n": 1 << 26}, "bytes"),
    ("row sums 65536x1024", "row_sums_warp_vec", {"n": 65536, "m": 1024}, "bytes"),
    ("row sums 8192^2", "row_sums_long_vec", {"n": 8192, "m": 8192}, "bytes"),
    ("row sums 1048576x256", "row_sums_warp_vec", {"n": 1048576, "m": 256}, "bytes"),
    ("row sums 1048576x32", "row_sums_short_vec", {"n": 1048576, "m": 32}, "bytes"),
    ("5-point stencil 8192^2", "stencil_rows", {"n": 8192, "m": 8192}, "bytes"),
    ("SGEMM 4096^3", "sgemm_vec", {"n": 4096, "m": 4096, "l": 4096}, "flops"),
    ("DG nd=10, 2^20 elements", "dg10", {"ne": 1 << 20}, "bytes"),
    ("DG nd=32, 2^20 elements", "dg32", {"ne": 1 << 20}, "bytes"),
    ("65536 batched 16x16 products", "bmm16_vec", {"nb": 65536}, "bytes"),
    # reductions across blocks (rfactor): the example's kernel is written in two launches by hand, so the
    # tuner starts from the plain kernel below instead; few long rows have no across-block example (the
    # long-row one, a block per row, is the hand-written schedule that comes closest)
    ("sum of 2^26 floats", "sum_all", {"n": 1 << 26}, "bytes"),
    ("row sums 16x4194304", "row_sums_long_vec", {"n": 16, "m": 1 << 22}, "bytes"),
]

# the kernel the tuner starts from where it is not the example's own as written
PLAIN = {
    "sum of 2^26 floats": "kernel total\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  total: float32[1]\n"
                          "instructions:\n  total[0] = sum(i, a[i])\n",
}


def split_file(path):
    """The kernel as written (the file without its transforms: section) and that section as a script."""
    kernel, script, in_transforms = [], [], False
    for line in open(path, encoding="utf-8").read().splitlines():
        header = line and not line[0].isspace() and line.rstrip().endswith(":")
        if header:
            in_transforms = line.strip() == "transforms:"
            if in_transforms:
                continue
        (script if in_transforms else kernel).append(line.strip() if in_transforms else line)
    return lp.LoopKernel(_loom.parse_kernel("\n".join(kernel) + "\n", path)), "\n".join(s for s in script if s and not s.startswith("#")) + "\n"


def figure(name, kind, sizes, seconds):
    """TFLOP/s of a product, or GB/s counting each array once."""
    if kind == "flops":
        return 2.0 * sizes["n"] * sizes["m"] * sizes["l"] / seconds / 1e12, "TFLOP/s"
    if name.startswith("DG"):  # u read, res written (D is 400 or 4096 bytes)
        nd = int(name.split("nd=")[1].split(",")[0])
        return 2 * 4 * sizes["ne"] * nd / seconds / 1e9, "GB/s"
    if "batched" in name:  # a, x read, c written
        return 3 * 4 * 256 * sizes["nb"] / seconds / 1e9, "GB/s"
    n, m = sizes["n"], sizes.get("m", 1)
    if name.startswith("vector add"):
        total = 3 * 4 * n
    elif name.startswith("sum of"):
        total = 4 * n
    elif name.startswith("row sums"):
        total = 4 * (n * m + n)
    else:  # the stencil: u read, out written
        total = 2 * 4 * n * m
    return total / seconds / 1e9, "GB/s"


def main(names):
    scale = eval(os.environ.get("TUNE_SCALE", "1"), {})
    rows = []
    for name, example, sizes, kind in WORKLOADS:
        if names and not any(n in name for n in names):
            continue
        if scale != 1:
            sizes = {k: max(64, int(v * scale ** (1 / len(sizes)))) for k, v in sizes.items()}
        base, hand = split_file(os.path.join(ROOT, "examples", example + ".loom"))
        opts = dict(parameters=sizes, target=TARGET, progress=False, min_time=0.05)
        t0 = time.time()
        try:
            h = lp.tune((base, [hand]), **opts).best
        except lp.LoomError as e:
            h = None
            print(f"{name}: the hand-written schedule did not run at these sizes: {e}", file=sys.stderr)
        t1 = time.time()
        if name in PLAIN:
            base = lp.LoopKernel(_loom.parse_kernel(PLAIN[name], "<plain>"))
        r = lp.tune(base, trials=TRIALS, strategy="evolution", seed=1, **opts)
        tuning = time.time() - t1
        counts = {}
        for t in r.trials:
            counts[t["status"]] = counts.get(t["status"], 0) + 1
        tuned, unit = figure(name, kind, sizes, r.best["median_seconds"])
        hand_fig = figure(name, kind, sizes, h["median_seconds"])[0] if h else float("nan")
        rows.append((name, example, tuned, hand_fig, unit, tuning, len(r.trials), counts, r.best["script"]))
        print(f"{name}: tuned {tuned:.1f} {unit}, hand-written [{example}] {hand_fig:.1f} {unit}, "
              f"{tuned / hand_fig:.2f}x; {len(r.trials)} trials in {tuning:.0f} s {counts}", flush=True)
        errors = {}
        for t in r.trials:
            if t["status"] != "ok" and t.get("error"):
                errors.setdefault(t["status"] + ": " + t["error"].splitlines()[0][:200], t["key"])
        for e, key in list(errors.items())[:5]:
            print(f"  e.g. {key}: {e}", flush=True)
    device = r.best["device"] if rows else "?"
    print(f"\nTuner against the hand-written schedules, {TARGET} on {device}, at most {TRIALS} trials, automatic space, evolution, seed 1")
    print(f"| workload | tuned | hand-written [example] | tuned/hand | tuning time | trials (ok/illegal/other) |")
    print("|---|---|---|---|---|---|")
    for name, example, tuned, hand_fig, unit, tuning, n, counts, _ in rows:
        other = n - counts.get("ok", 0) - counts.get("illegal", 0)
        print(f"| {name} | {tuned:.1f} {unit} | {hand_fig:.1f} [{example}] | {tuned / hand_fig:.2f}x | {tuning:.0f} s | "
              f"{n} ({counts.get('ok', 0)}/{counts.get('illegal', 0)}/{other}) |")
    for name, *_, script in rows:
        print(f"\n{name}, the tuned schedule:\n{script}", end="")


if __name__ == "__main__":
    main(sys.argv[1:])
