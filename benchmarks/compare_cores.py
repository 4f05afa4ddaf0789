"""Two copies of the package and PyTorch in one process, call by call.

    .venv/bin/python benchmarks/compare_cores.py OLD_SRC [NEW_SRC] [--rounds N]

``OLD_SRC`` and ``NEW_SRC`` are directories holding an ``llm_from_scratch``
package (``NEW_SRC`` defaults to this repository's ``src``), for example an
earlier commit exported with ``git archive COMMIT src | tar -x -C /tmp/old``.
Both build the same block from ``SplitMix64(2024)``; the script checks that
their outputs are bitwise equal, then times forward + backward of old, new
and the PyTorch twin of ``bench_block.py`` in rounds that call each once in
turn. On a shared machine the load changes from second to second: calls
that alternate see the same load, so the best of many rounds compares them
fairly where separate runs of ``bench_block.py`` do not.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_block  # noqa: E402 - the PyTorch twin and the shapes


def load(alias: str, source: Path):
    """The package in ``source`` imported under another top-level name."""
    package = source / "llm_from_scratch"
    spec = importlib.util.spec_from_file_location(alias, package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    spec.loader.exec_module(module)
    return module


def step_of(lib, shape: bench_block.Shape, x_value: np.ndarray, upstream: np.ndarray):
    config = lib.DecoderBlockConfig(model_width=shape.model_width, heads=shape.heads,
                                    feed_forward_width=shape.feed_forward_width, max_positions=shape.tokens,
                                    rope_base=10000.0, rms_epsilon=1e-5)
    block = lib.DecoderBlock.new("block", config, lib.SplitMix64(2024))

    def step():
        block.parameters().zero_grad()
        output = block.forward(lib.Tensor(x_value, requires_grad=True)).output
        output.backward(upstream)
        return output

    return block, step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE.parent / "src")
    parser.add_argument("--rounds", type=int, default=30)
    arguments = parser.parse_args()
    import torch

    torch.set_num_threads(bench_block.numpy_blas_threads() or 2)
    old, new = load("core_old", arguments.old), load("core_new", arguments.new)
    for shape in bench_block.SHAPES:
        rng = np.random.default_rng(7)
        x_value = rng.standard_normal((shape.batch, shape.tokens, shape.model_width))
        upstream = rng.standard_normal(x_value.shape)
        _, old_step = step_of(old, shape, x_value, upstream)
        new_block, new_step = step_of(new, shape, x_value, upstream)
        same = np.array_equal(old_step().value, new_step().value)
        torch_step, _ = bench_block.torch_reference(torch, new_block)
        upstream_t = torch.tensor(upstream)
        runs = {"old": old_step, "new": new_step,
                "torch": lambda step=torch_step, x=x_value, g=upstream_t: step(x, g)}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(arguments.rounds):
            for name, run in runs.items():
                gc.collect()
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        best = {name: min(values) for name, values in times.items()}
        print(f"== {shape}: outputs bitwise equal: {same}; best of {arguments.rounds} rounds, "
              f"load average {os.getloadavg()[0]:.2f}")
        for name in runs:
            print(f"  {name:<5s} {best[name] * 1e3:8.2f} ms")
        print(f"  ratio old/torch = {best['old'] / best['torch']:.2f}   new/torch = {best['new'] / best['torch']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
