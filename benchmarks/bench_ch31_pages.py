"""How long chapter 31's Run All takes: every page of the chapter, top to bottom, each in a fresh kernel.

Run from the repository root (the package of this checkout is imported):

    .venv/bin/python benchmarks/bench_ch31_pages.py               # 3 rounds
    .venv/bin/python benchmarks/bench_ch31_pages.py --rounds 5 --pages ch31-training

Each round runs every page of chapter 31 (the main page and its sections, in
``_toc.yml`` order) with nbclient in a kernel of its own, as «Run All» after a
kernel restart does, and times it from the kernel's start to its last cell. The
pages run one after another, so no two share the machine's cores. Printed
first: the host (CPU model, cores, the BLAS NumPy reports with its kernel and
threads, the ``OPENBLAS_*`` variables) and the load average; per page the best
and the median wall-clock time, and the best CPU time of the page's kernel
(its threads and the pool workers it waited for); then the chapter's total
(sum of the best times, and of the medians) and the load after. On a shared machine wall-clock
time grows with the load: compare runs made at a similar load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("ch31-decoder-block", "ch31-depth-lab", "ch31-training", "ch31-checks")

BLAS = """
import json, numpy as np
from threadpoolctl import threadpool_info
info = {"numpy": np.__version__,
        "pools": [{k: p.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                  for p in threadpool_info()]}
print(json.dumps(info))
"""


def host() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown") if Path("/proc/cpuinfo").exists() else "unknown"
    blas = subprocess.run([sys.executable, "-c", BLAS], capture_output=True, text=True, check=True).stdout.strip()
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith(("OPENBLAS_", "OMP_", "MKL_"))}
    return (f"CPU: {model}, {os.cpu_count()} logical cores\nBLAS: {blas}\n"
            f"threads and kernel variables: {env or 'none set (OpenBLAS picks its kernel, one thread a core)'}")


CPU = """
import json as _json, resource as _resource
print(_json.dumps(sum(getattr(_resource.getrusage(who), field) for who in (
    _resource.RUSAGE_SELF, _resource.RUSAGE_CHILDREN) for field in ("ru_utime", "ru_stime"))))
"""


def run_page(name: str) -> tuple[float, float]:
    """Wall-clock time of the page and the CPU time of its kernel (all its threads and the worker
    processes it waited for: less sensitive to the load than the wall-clock time), in seconds."""
    notebook = nbformat.read(ROOT / "book" / f"{name}.ipynb", as_version=4)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONHASHSEED": "0"}
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "book")}})
    start = time.perf_counter()
    with client.setup_kernel(env=env):
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
        wall = time.perf_counter() - start
        probe = nbformat.v4.new_code_cell(CPU)          # after the timer, in this copy only
        notebook.cells.append(probe)
        client.execute_cell(probe, len(notebook.cells) - 1)
    return wall, float(probe.outputs[0]["text"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    parser.add_argument("--json", type=Path, help="also write every time here")
    args = parser.parse_args()
    if not 1 <= args.rounds <= 50:
        parser.error(f"--rounds must be in [1, 50], got {args.rounds}")
    print(host())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[str, list[float]] = {page: [] for page in args.pages}
    cpu: dict[str, list[float]] = {page: [] for page in args.pages}
    for _ in range(args.rounds):
        for page in args.pages:
            wall, used = run_page(page)
            times[page].append(wall)
            cpu[page].append(used)
    for page, walls in times.items():
        print(f"{page:22s} best {min(walls):6.2f} s, median {statistics.median(walls):6.2f} s "
              f"({', '.join(f'{w:.2f}' for w in walls)}); kernel CPU best {min(cpu[page]):6.2f} s")
    print(f"chapter Run All: best pages added {sum(min(w) for w in times.values()):.2f} s, "
          f"medians added {sum(statistics.median(w) for w in times.values()):.2f} s; "
          f"kernel CPU, best pages added {sum(min(c) for c in cpu.values()):.2f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps({"host": host(), "times": times, "cpu": cpu}, indent=1))


if __name__ == "__main__":
    main()
