"""Which late results of chapter 31's training depend on the OpenBLAS kernel.

Run from the repository root:

    .venv/bin/python benchmarks/bench_ch31_kernels.py
    .venv/bin/python benchmarks/bench_ch31_kernels.py --kernels Haswell SkylakeX Zen Sandybridge

OpenBLAS picks a compute kernel for the CPU (``OPENBLAS_CORETYPE`` overrides it;
"default" below leaves the choice to OpenBLAS). Kernels add the products of a
matrix product in different orders, so two kernels agree to the last bits only
for a while; the training page reads early marks for that reason. For each
kernel, in a fresh process, this prints two late readings that the page
quotes: seed 32's Post with 40 small steps first (η = 0.01, then 0.03), its
verdict and mean loss of the last 30 steps; and seed 32's Post at η = 0.03,
the lowest running mean of its loss.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUN = """
from llm_from_scratch.ch31 import training_lab as tl
first = tl.train_stack(variant="post", lr=0.01, switch=(40, 0.03), seed=32)
post = tl.train_stack(variant="post", lr=0.03, seed=32)
print(f"small steps first: {tl.verdict(first)}, last 30 steps {tl.final_loss(first):.2f}; "
      f"Post at 0.03: lowest running mean {tl.smoothed(post.losses).min():.2f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="+", default=["default", "Haswell", "SkylakeX", "Zen", "Sandybridge"])
    args = parser.parse_args()
    for kernel in args.kernels:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        env.pop("OPENBLAS_CORETYPE", None)
        if kernel != "default":
            env["OPENBLAS_CORETYPE"] = kernel
        done = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True)
        print(f"{kernel:12s} {done.stdout.strip()}")


if __name__ == "__main__":
    main()
