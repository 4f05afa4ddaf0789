"""How long chapter 30's default training takes: ``learned_heads.learn(2)`` and ``learn(1)``.

Each measurement runs in a fresh Python process (imports done before the clock starts), the
two layers alternate, and the script prints every time, the best and the median. The chapter
quotes the sum of the two medians; the machine is shared, so the load average is printed too.

    .venv/bin/python benchmarks/bench_learned_heads.py             # 5 rounds, about 15 s
    .venv/bin/python benchmarks/bench_learned_heads.py --rounds 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

CHILD = """
import time
from llm_from_scratch.chapters import learned_heads
start = time.perf_counter()
learned_heads.learn({heads})
print(time.perf_counter() - start)
"""


def one_run(heads: int) -> float:
    result = subprocess.run([sys.executable, "-c", CHILD.format(heads=heads)], check=True,
                            capture_output=True, text=True)
    return float(result.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from llm_from_scratch.chapters import learned_heads

    print(f"load average before: {os.getloadavg()[0]:.2f}; {learned_heads.STEPS} steps of "
          f"{learned_heads.BATCH} sequences x {learned_heads.TOKENS} tokens, d_model {learned_heads.WIDTH}")
    times: dict[int, list[float]] = {2: [], 1: []}
    for _ in range(args.rounds):
        for heads in times:
            times[heads].append(one_run(heads))
    for heads, seconds in times.items():
        shown = " ".join(f"{s:.2f}" for s in seconds)
        print(f"h = {heads}: best {min(seconds):.2f} s, median {statistics.median(seconds):.2f} s ({shown})")
    total = sum(statistics.median(seconds) for seconds in times.values())
    print(f"both layers (sum of medians): {total:.2f} s; load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
