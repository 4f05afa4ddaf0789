"""How long chapter 30's training takes: ``learn(heads=2, every=EVERY)`` and ``learn(heads=1, every=EVERY)``,
as the chapter calls them (1000 steps, the held-out loss every 50 steps), and the chapter's table
of four other starts (150 steps each, both layers).

Each measurement runs in a fresh Python process (imports done before the clock starts), the
three alternate, and the script prints every time, the best and the median. The chapter quotes
the two trainings; the machine is shared, so the load average is printed too.

    .venv/bin/python benchmarks/bench_learned_heads.py             # 5 rounds, about 30 s
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
from llm_from_scratch.ch30 import learned_heads
start = time.perf_counter()
{call}
print(time.perf_counter() - start)
"""


CALLS = {
    "h = 2": "learned_heads.learn(heads=2, every=learned_heads.EVERY)",
    "h = 1": "learned_heads.learn(heads=1, every=learned_heads.EVERY)",
    "starts 31-34": "[learned_heads.jobs(learned_heads.learn(heads=h, steps=150, seed=s).layer)"
                    " for s in range(31, 35) for h in (2, 1)]",
}


def one_run(call: str) -> float:
    result = subprocess.run([sys.executable, "-c", CHILD.format(call=call)], check=True,
                            capture_output=True, text=True)
    return float(result.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from llm_from_scratch.ch30 import learned_heads

    print(f"load average before: {os.getloadavg()[0]:.2f}; {learned_heads.STEPS} steps of "
          f"{learned_heads.BATCH} sequences x {learned_heads.TOKENS} tokens, d_model {learned_heads.WIDTH}")
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    for _ in range(args.rounds):
        for name, call in CALLS.items():
            times[name].append(one_run(call))
    for name, seconds in times.items():
        shown = " ".join(f"{s:.2f}" for s in seconds)
        print(f"{name}: best {min(seconds):.2f} s, median {statistics.median(seconds):.2f} s ({shown})")
    total = sum(statistics.median(seconds) for seconds in times.values())
    print(f"all three (sum of medians): {total:.2f} s; load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
