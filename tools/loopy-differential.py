#!/usr/bin/env python3
"""Long differential runs against loopy (tests/python/loopy_oracle.py): the
random-kernel generator's kernels, as written, through loopy's
ExecutableCTarget and Loom's CPU target on the same random arrays.

    PYTHONPATH=build/python build/venv/bin/python tools/loopy-differential.py [CASES] [SEED]
        [--random-kernels build/loom_random_kernels] [--files examples/*.loom ...] [--show N]

Prints each outcome's count (same, differ, loopy-refuses, loom-refuses,
both-refuse, untranslatable), and for each outcome but "same" its first
cases grouped by their first words, with the kernel text. A difference
listed in tests/python/test_loopy_oracle.py (RANDOM_DIFFERENCES) counts as
explained; the run exits 1 when any other remains."""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import loom  # noqa: E402
from loopy_oracle import run_both, sizes_for  # noqa: E402
from test_loopy_oracle import RANDOM_SIZES, explained  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", type=int, nargs="?", default=10000)
    ap.add_argument("seed", type=int, nargs="?", default=1)
    ap.add_argument("--random-kernels", default=os.path.join(HERE, "..", "build", "loom_random_kernels"))
    ap.add_argument("--files", nargs="*", default=[])
    ap.add_argument("--show", type=int, default=2, help="cases shown per kind of outcome")
    a = ap.parse_args()
    target = "cpu" if loom._loom.has_cpu_target() else "interpreter"
    jobs = []
    for path in a.files:
        text = open(path, encoding="utf-8").read()
        jobs.append((path, text, None))
    if a.cases:
        out = subprocess.run([a.random_kernels, str(a.cases), str(a.seed)], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            c = json.loads(line)
            jobs.append((f"case {c['case']}", c["text"], RANDOM_SIZES[c["case"] % len(RANDOM_SIZES)]))
    counts, unexplained = collections.Counter(), collections.defaultdict(list)
    started = time.time()
    for n, (name, text, sizes) in enumerate(jobs):
        if sizes is None:
            params = sizes_for(text)
        else:
            knl = loom.kernel_from_text(text, target="interpreter")
            params = {p: sizes.get(p, 11) for p in knl._core.parameters()}
            if not knl._core.assumptions_hold(params):
                params = {p: 16 for p in params}
        v = run_both(text, params or {}, seed=n, target=target)
        counts[v.outcome] += 1
        if v.outcome != "same" and not explained(text, v):
            unexplained[(v.outcome, " ".join(v.detail.split()[:6]))].append((name, v, text))
        if (n + 1) % 500 == 0:
            print(f"  {n + 1} kernels, {time.time() - started:.0f} s: {dict(counts)}", file=sys.stderr, flush=True)
    print(f"{len(jobs)} kernels against loopy in {time.time() - started:.0f} s: {dict(counts)}")
    print(f"unexplained: {sum(len(v) for v in unexplained.values())} in {len(unexplained)} kinds")
    for (outcome, words), cases in sorted(unexplained.items(), key=lambda kv: -len(kv[1])):
        print(f"\n== {len(cases)} x {outcome}: {words}")
        for name, v, text in cases[:a.show]:
            print(f"-- {name}: {v}\n{text}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
