"""What a second busy core gives on this machine: the same pure-Python loop run alone and as
two processes at once, interleaved, CPU seconds per process each way.

    .venv/bin/python bench/core_scaling.py --trials 5

Two workers of bench/pertuple.py keep both cores busy, Bytewax item at a time one: where a
process runs slower while the other core is busy (virtual cores that share a physical one,
shared caches, clock), two workers cannot reach twice one worker's rate however little
crosses between them. bench/RESULTS.md reads the per-tuple figures against it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

LOOP = """
import time
def loop(n):
    d, s = {}, 0
    for i in range(n):
        d[i & 1023] = i
        s += d.get((i * 7) & 1023, 0)
    return s
start = time.process_time()
loop(%d)
print(time.process_time() - start)
"""


def cpu_seconds(processes: int, iterations: int) -> list[float]:
    """CPU seconds of each of `processes` copies of the loop started together."""
    code = LOOP % iterations
    running = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    return [float(p.communicate()[0]) for p in running]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=6_000_000)
    args = parser.parse_args()
    alone, together = [], []
    for trial in range(args.trials):
        alone += cpu_seconds(1, args.iterations)
        together += cpu_seconds(2, args.iterations)
        both = ", ".join(f"{t:.2f}" for t in together[-2:])
        print(f"trial {trial + 1}: alone {alone[-1]:.2f} s, two at once {both} s")
    a, t = statistics.mean(alone), statistics.mean(together)
    print(f"mean CPU seconds a process: alone {a:.2f}, two at once {t:.2f} ({t / a - 1:+.0%})")
    print(f"two busy cores give {2 * a / t:.2f}x one")


if __name__ == "__main__":
    main()
