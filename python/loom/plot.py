"""Draws a tuning log to a PNG: python3 -m loom.plot LOG.jsonl OUT.png
(best time against trials, and every trial's time by sketch; matplotlib)."""
import sys

from .tuning import plot_trials, read_log


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: python3 -m loom.plot LOG.jsonl OUT.png")
    trials = read_log(argv[0])
    if not trials:
        sys.exit(f"loom.plot: '{argv[0]}' holds no trials")
    plot_trials(trials, argv[1])
    print(f"wrote {argv[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
