"""The PolyBench LARGE table of bench/RESULTS.md from the logs of
tools/device-polybench.sh (polybench.log and polybench_torch.log of one or
more calls, each call's torch figures beside its own kernels).

For each kernel: the time as written (trial 0; "> T s" where it exceeded the
trial timeout), the tuned time, the speedup, and the tuned kernel's rate
against the device's ceilings: its float64 operations (counted by `loom
stats` on the kernel as written at the same sizes) against the FP64 peak,
and its compulsory traffic (every array argument read or written once, once
per sweep of a time loop) against the device copy measured in the same call.
The larger fraction is the kernel's distance to its roofline. Where torch has
the kernel, its time from the same call and the ratio.

    python3 bench/polybench_table.py [--peak-tflops 67] [--loom build/loom] [--latest] CALL_DIR ...
(each CALL_DIR holding one call's polybench.log and polybench_torch.log; a
kernel measured in several calls is listed once per call, or with --latest
once, from the last call that measured it)
"""
import argparse
import os
import re
import subprocess

TORCH_NAMES = {"gemm", "2mm", "3mm", "syrk", "syr2k", "symm", "trmm", "doitgen", "atax", "bicg", "mvt", "gesummv", "gemver"}
SWEEPS = ("tsteps", "tmax")


def parse_polybench(path):
    """name -> dict(sizes, written, tuned, timeout, error, trials)"""
    out, cur = {}, None
    for line in open(path):
        m = re.match(r"== (\S+) \((\d+) s\)(.*)", line)
        if m:
            cur = out.setdefault(m.group(1), {"sizes": dict(re.findall(r"-D (\w+)=(\d+)", m.group(3)))})
            continue
        if cur is None:
            continue
        if m := re.match(r"the kernel as written \(trial 0\): ([0-9.]+) ms", line):
            cur["written"] = float(m.group(1))
        elif "the kernel as written (trial 0): failed" in line:
            m = re.search(r"no result within (\d+) s", line)
            cur["written_timeout"] = int(m.group(1)) if m else None
        elif m := re.match(r"best: ([0-9.]+) ms", line):
            cur["tuned"] = float(m.group(1))
        elif line.startswith("loom: error"):
            cur["error"] = line.strip()[len("loom: error: "):]
        elif m := re.match(r"(\d+) trials in", line):
            cur["trials"] = int(m.group(1))
    return out


def parse_torch(path):
    times, copy = {}, None
    for line in open(path):
        if m := re.match(r"torch (\w+).*?: ([0-9.]+) ms", line):
            times[m.group(1)] = float(m.group(2))
        if m := re.match(r"device copy .*: ([0-9.]+) ms, ([0-9.]+) GB/s", line):
            copy = float(m.group(2))
    return times, copy


def float64_ops(loom, name, sizes):
    args = [loom, "stats", f"examples/polybench/{name}.loom"]
    for k, v in sizes.items():
        args += ["-D", f"{k}={v}"]
    text = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return sum(int(n) for n in re.findall(r"Op\(float64, \w+, [^)]*\): (\d+)", text))


# Time loops: the elements each time step's statements move, each statement
# reading and writing its arrays once (a sweep per statement, as the goal
# counts "per sweep"): jacobi and heat read one array and write the other,
# twice a step; fdtd-2d's ey, ex and hz updates touch 2, 2 and 3 arrays of
# nx x ny (its first statement one row); seidel-2d updates one array in place.
STEP_ELEMENTS = {
    "jacobi_1d": lambda s: 4 * s["n"],
    "jacobi_2d": lambda s: 4 * s["n"] ** 2,
    "heat_3d": lambda s: 4 * s["n"] ** 3,
    "fdtd_2d": lambda s: 7 * s["nx"] * s["ny"] + s["ny"],
    "seidel_2d": lambda s: 2 * s["n"] ** 2,
}


def footprint_bytes(name, sizes):
    """Every array argument once (8-byte elements; floyd-warshall's and nussinov's int32 counted as 4);
    for the stencils of STEP_ELEMENTS, each step's statements' arrays."""
    if name in STEP_ELEMENTS:
        s = {k: int(v) for k, v in sizes.items()}
        return 8 * STEP_ELEMENTS[name](s) * next(s[t] for t in SWEEPS if t in s)
    text = open(f"examples/polybench/{name}.loom").read()
    args = text[text.index("arguments:"):text.index("instructions:")]
    total = 0
    for dtype, shape in re.findall(r"^\s*\w+: (float64|int32|float32)\[([^\]]*)\]", args, re.M):
        n = 1
        for d in shape.split(","):
            n *= eval(d.strip(), {}, {k: int(v) for k, v in sizes.items()})
        total += n * (4 if dtype != "float64" else 8)
    sweeps = next((int(sizes[s]) for s in SWEEPS if s in sizes), 1)
    return total * sweeps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("calls", nargs="+")
    ap.add_argument("--peak-tflops", type=float, default=67.0, help="FP64 peak (H200: 67 TFLOP/s on the tensor cores)")
    ap.add_argument("--loom", default="build/loom")
    ap.add_argument("--latest", action="store_true", help="a kernel measured in several calls: only its last call's row")
    a = ap.parse_args()
    last_call = {}
    for call in a.calls:
        for name in parse_polybench(os.path.join(call, "polybench.log")):
            last_call[name] = call
    print("| kernel | sizes | as written | tuned | speedup | FP64 rate (of peak) | traffic rate (of the call's copy) | torch fp64 | tuned vs torch |")
    print("|---|---|---|---|---|---|---|---|---|")
    for call in a.calls:
        kernels = parse_polybench(os.path.join(call, "polybench.log"))
        torch_path = os.path.join(call, "polybench_torch.log")
        torch, copy = parse_torch(torch_path) if os.path.exists(torch_path) else ({}, None)
        for name, r in kernels.items():
            if a.latest and last_call[name] != call:
                continue
            sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
            if "tuned" not in r:
                print(f"| {name} | {sizes} | | {r.get('error', 'no result')} | | | | | |")
                continue
            t = r["tuned"]
            limit = r.get("written_timeout") or 5
            written = f"{r['written']:.4g} ms" if "written" in r else f"> {limit} s (timeout)"
            speedup = f"{r['written'] / t:.0f}x" if "written" in r else "> %.0fx" % (limit * 1000 / t)
            flops = float64_ops(a.loom, name, r["sizes"])
            tflops = flops / (t * 1e-3) / 1e12
            gbs = footprint_bytes(name, r["sizes"]) / (t * 1e-3) / 1e9
            copy_part = f"{gbs:.0f} GB/s ({100 * gbs / copy:.0f}%)" if copy else f"{gbs:.0f} GB/s"
            tq = torch.get(name) if name in TORCH_NAMES else None
            ratio = f"{tq / t:.2f}x" if tq else ""
            print(f"| {name} | {sizes} | {written} | {t:.4g} ms | {speedup} | {tflops:.2f} TFLOP/s ({100 * tflops / a.peak_tflops:.1f}%) "
                  f"| {copy_part} | {f'{tq:.4f} ms' if tq else ''} | {ratio} |")


if __name__ == "__main__":
    main()
