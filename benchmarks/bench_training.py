"""How long chapter 31's training cells take at their default settings.

Run from the repository root:

    .venv/bin/python benchmarks/bench_training.py              # 3 rounds
    .venv/bin/python benchmarks/bench_training.py --rounds 5

Each figure's (or table's) training is the code of its notebook cell, run in a
process of its own (a fresh interpreter: imports, then the cell, timed around the
cell only), one process after another in rounds, so that two measurements never
share a machine's BLAS threads or caches. The script prints, per cell, the best
and the median wall-clock time and the CPU time of the best round, and the load
average before the first round: on a shared machine the wall-clock time grows
with the load, the CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

SETUP = """
from llm_from_scratch.ch31 import training_lab
"""

# the training of each figure and table, as the cells of book/ch31-training.ipynb
# write it, and one run at the defaults
CELLS = {
    "один запуск: train_stack(variant=\"pre\", layers=4, lr=0.03), 120 шагов": """
run = training_lab.train_stack(variant="pre", layers=4, lr=0.03)
""",
    "десять зёрен: Pre, Post, Post с разогревом (30 запусков)": """
BASE = training_lab.Settings(layers=4, lr=0.03)
variants = {"Pre-RMSNorm": ("pre", 0), "Post-RMSNorm": ("post", 0),
            "Post, разогрев 100": ("post", 100)}
runs = {title: [training_lab.train_stack(BASE, variant=v, warmup=w, seed=s)
                for s in range(31, 41)] for title, (v, w) in variants.items()}
""",
    "чувствительность выхода: L = 1, 2, 4": """
for L in (1, 2, 4):
    share = {v: training_lab.train_stack(variant=v, layers=L, lr=0.03, steps=40,
                                         probe=True).top.relative_moves[5:].mean()
             for v in ("pre", "post")}
    post = training_lab.train_stack(variant="post", layers=L, lr=0.03)
""",
    "Post с разогревом, с показаниями выхода": """
warm = training_lab.train_stack(layers=4, lr=0.03, variant="post", warmup=100, probe=True)
""",
    "порядок шагов: пять зёрен": """
orders = {"a": (0.03, (40, 0.01)), "b": (0.01, (40, 0.03))}
by_order = {t: [training_lab.train_stack(layers=4, variant="post", lr=lr, switch=sw, seed=s)
                for s in range(31, 36)] for t, (lr, sw) in orders.items()}
""",
    "ширина: первый шаг при 8, 16, 32, 64": """
for width in (8, 16, 32, 64):
    moves = [training_lab.top_movement(variant=v, layers=4, lr=0.003, steps=1, width=width)[0]
             for v in ("pre", "post")]
""",
}

TIMER = """
import json, sys, time
sys.path.insert(0, {source!r})
{setup}
code = {code!r}
wall, cpu = time.perf_counter(), time.process_time()
exec(code, globals())
print(json.dumps({{"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}}))
"""


def time_cell(code: str) -> dict[str, float]:
    script = TIMER.format(source=SOURCE, setup=SETUP, code=code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    print(f"load average before: {os.getloadavg()[0]:.2f}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in CELLS}
    for _ in range(rounds):
        for name, code in CELLS.items():        # one process per cell, cells alternate
            results[name].append(time_cell(code))
    total = 0.0
    for name, runs in results.items():
        best = min(runs, key=lambda r: r["wall"])
        median = statistics.median(r["wall"] for r in runs)
        if not name.startswith("один запуск"):     # the cells, not the single run
            total += best["wall"]
        print(f"{name}\n    wall best {best['wall']:.2f} s, median {median:.2f} s; "
              f"CPU of the best {best['cpu']:.2f} s")
    print(f"all training cells, best walls added: {total:.2f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
