"""Draws a tuning log to a PNG:
    python3 -m loom.plot LOG.jsonl OUT.png [--kernel NAME|HASH] [-D n=1024] [--target T] [--device TEXT]
(best time against trials, and every trial's time by sketch; matplotlib).
A log may hold several kernels, sizes, targets and cards: one is drawn, and
the filters pick it where the log holds more than one."""
import argparse
import sys

from .tuning import log_group, plot_trials, read_log


def main(argv):
    ap = argparse.ArgumentParser(prog="python3 -m loom.plot", description="Draws one kernel's trials of a tuning log to a PNG.")
    ap.add_argument("log")
    ap.add_argument("out")
    ap.add_argument("--kernel", help="the kernel's name or hash")
    ap.add_argument("-D", action="append", default=[], metavar="NAME=VALUE", help="trials timed at this size")
    ap.add_argument("--target", choices=("cpu", "cuda"))
    ap.add_argument("--device", help="text in the card's name")
    a = ap.parse_args(argv)
    try:
        sizes = dict(d.split("=", 1) for d in a.D)
        trials = read_log(a.log)
        if not trials:
            sys.exit(f"loom.plot: '{a.log}' holds no trials")
        name, trials = log_group(trials, a.kernel, {k: int(v) for k, v in sizes.items()}, a.target, a.device)
    except (OSError, ValueError) as e:
        sys.exit(f"loom.plot: {e}")
    plot_trials(trials, a.out)
    print(f"wrote {a.out}: {name}, {len(trials)} trials")


if __name__ == "__main__":
    main(sys.argv[1:])
