"""How long chapter 30's learned-heads page trains: the cell that trains both layers
(``learn(heads=2, every=EVERY)`` then ``learn(heads=1, every=EVERY)``, 1000 steps each, the
held-out loss every 50 steps) and the page's table of starts (``SURVEY_SEEDS``, both layers,
``SURVEY_STEPS`` steps each).

Each measurement runs in a fresh Python process (imports done before the clock starts), the
two cells alternate round after round, and the script prints every time, the range, the median
and the 1-minute load average around each run; beside the cell's time, the whole worker's
(Python's start, the imports, the cell, the exit), as a reader who runs one cell in a fresh
kernel would wait. The host is printed first: CPU model and the
cores this process may use, the BLAS NumPy loaded with its kernel and thread count (asked of
OpenBLAS itself in a worker) and the ``OPENBLAS_*`` variables.

    .venv/bin/python benchmarks/bench_learned_heads.py             # 5 rounds, about 1 min
    .venv/bin/python benchmarks/bench_learned_heads.py --rounds 9
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_learned_heads.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

CHILD = """
import json, time
from llm_from_scratch.ch30 import learned_heads
start = time.perf_counter()
{call}
print(json.dumps(time.perf_counter() - start))
"""

CALLS = {
    "both trainings (h = 2, h = 1)": "[learned_heads.learn(heads=h, every=learned_heads.EVERY) for h in (2, 1)]",
    "table of starts": "[learned_heads.jobs(learned_heads.learn(heads=h, steps=learned_heads.SURVEY_STEPS, seed=s)"
                       ".layer) for s in learned_heads.SURVEY_SEEDS for h in (2, 1)]",
}

BLAS = """
import ctypes, json, numpy
numpy.ones((64, 64)) @ numpy.ones((64, 64))          # OpenBLAS is loaded and started
info = {"numpy": numpy.__version__}
libs = sorted({line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()})
for path in libs:
    lib = ctypes.CDLL(path)
    for prefix in ("scipy_openblas_", "openblas_", ""):
        for suffix in ("64_", ""):
            try:
                core = getattr(lib, f"{prefix}get_corename{suffix}")
                config = getattr(lib, f"{prefix}get_config{suffix}")
                threads = getattr(lib, f"{prefix}get_num_threads{suffix}")
            except AttributeError:
                continue
            core.restype = config.restype = ctypes.c_char_p
            info.update(library=path, kernel=core().decode(), config=config().decode().strip(),
                        threads=threads())
            break
        if "kernel" in info:
            break
print(json.dumps(info))
"""


def worker(code: str) -> object:
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def timed_worker(code: str) -> tuple[float, float]:
    """The cell's time inside the worker and the worker's whole life (start, imports, exit)."""
    start = time.perf_counter()
    inside = worker(code)
    return inside, time.perf_counter() - start


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from llm_from_scratch.ch30 import learned_heads

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blas = worker(BLAS)
    print(f"CPU: {cpu_model()}, {cores} cores for this process ({os.cpu_count()} online)")
    print(f"Python {platform.python_version()}, NumPy {blas['numpy']}; BLAS: {blas.get('config', 'not OpenBLAS')}")
    print(f"BLAS kernel: {blas.get('kernel', '?')}, threads: {blas.get('threads', '?')}; "
          + (" ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("OPENBLAS_"))
             or "no OPENBLAS_* variables"))
    print(f"task: {learned_heads.STEPS} steps of {learned_heads.BATCH} sequences x {learned_heads.TOKENS} "
          f"tokens, d_model {learned_heads.WIDTH}; starts {learned_heads.SURVEY_SEEDS.start}-"
          f"{learned_heads.SURVEY_SEEDS.stop - 1} x {learned_heads.SURVEY_STEPS} steps")
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    whole: dict[str, list[float]] = {name: [] for name in CALLS}
    loads: list[float] = []
    for round_ in range(args.rounds):
        names = list(CALLS) if round_ % 2 == 0 else list(reversed(CALLS))      # alternate the order
        for name in names:
            loads.append(os.getloadavg()[0])
            inside, process = timed_worker(CHILD.format(call=CALLS[name]))
            times[name].append(inside)
            whole[name].append(process)
    loads.append(os.getloadavg()[0])
    for name, seconds in times.items():
        shown = " ".join(f"{s:.2f}" for s in seconds)
        print(f"{name}: {min(seconds):.2f}-{max(seconds):.2f} s, median {statistics.median(seconds):.2f} s "
              f"({shown}); whole process with Python's start and the imports: "
              f"{min(whole[name]):.2f}-{max(whole[name]):.2f} s")
    print(f"1-minute load average during the runs: {min(loads):.2f}-{max(loads):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
