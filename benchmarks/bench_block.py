"""One decoder block, forward + backward: our NumPy tape against a PyTorch twin, each in its own process.

Run from the repository root:

    .venv/bin/pip install -r requirements-bench.txt   # once: torch for the reference
    .venv/bin/python benchmarks/bench_block.py [--rounds 5] [--calls 10]

The driver (this script without ``--worker``) never times anything itself. For each shape it first runs one
process that builds our block and the torch twin on the same weights and checks that the output and all ten
gradients (input and nine parameters) agree to 1e-10; then, round after round, it starts one process per side
and case, alternating the order (ours, torch, then torch, ours), so both see the same machine load and neither
shares its process with the other's thread pool. A worker warms up, then times ``--calls`` calls and reports
each call's wall time and minor page faults (``ru_minflt``: pages the kernel had to map and zero).

Cases:
  reused     one block built once; every call runs forward + backward on it, and the gradients accumulate
             into the parameters' existing ``grad`` arrays (torch: into ``.grad``, in place)
  zero_grad  the same block, with ``zero_grad()`` before every call (not timed), as a training step does:
             ours sets every ``grad`` to None, torch's ``Module.zero_grad()`` too, so every gradient is new
  fresh      every call gets a new block with fresh parameters (built before the timer) and no gradients

``--floors`` also times, in processes of their own, only the block's 27 matrix products (9 forward, 18 backward)
with NumPy (OpenBLAS) and with torch (MKL) on random operands of the same shapes: the floor of each side.

Options for experiments: ``--env NAME=VALUE`` sets a variable in every worker (e.g. glibc's
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``); ``--compare SRC`` adds a third
side, the package in another directory (an earlier commit: ``git archive COMMIT src | tar -x -C /tmp/old``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
SHAPES = {"small": (4, 128, 256, 8, 688), "long": (1, 512, 512, 8, 1376)}  # B, T, d_model, h, d_ff
CASES = ("reused", "zero_grad", "fresh")
THREADS = 2
TOLERANCE = 1e-10
ROPE_BASE, EPSILON, SEED = 10000.0, 1e-5, 2024


def describe(shape: str) -> str:
    b, t, d, h, f = SHAPES[shape]
    return f"B={b} T={t} d_model={d} h={h} d_ff={f}"


# --- the two sides --------------------------------------------------------------------------------------------

def our_package(source: str):
    sys.path.insert(0, source)
    import llm_from_scratch
    return llm_from_scratch


def our_block(lib, shape: str):
    _, t, d, h, f = SHAPES[shape]
    config = lib.DecoderBlockConfig(model_width=d, heads=h, feed_forward_width=f, max_positions=t,
                                    rope_base=ROPE_BASE, rms_epsilon=EPSILON)
    return lib.DecoderBlock.new("block", config, lib.SplitMix64(SEED))


def our_step(lib, block, x_value, upstream):
    """One forward + backward; returns the output and the input Tensor (for the check)."""
    x = lib.Tensor(x_value, requires_grad=True)
    output = block.forward(x).output
    output.backward(upstream)
    return output, x


def torch_block_class():
    import torch
    import torch.nn.functional as F

    def rope(x, freqs_cis):
        """llama's ``apply_rotary_emb``: adjacent pairs (2i, 2i+1) of ``x: [B, T, h, d_h]`` as complex numbers."""
        pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(pairs * freqs_cis[:, None, :]).flatten(3)

    class TorchBlock(torch.nn.Module):
        """The same pre-norm block as a PyTorch user writes it: ``x1 = x + MHA(RMSNorm(x))``,
        ``y = x1 + SwiGLU(RMSNorm(x1))``, weights ``[d_in, d_out]`` copied from ours."""

        NAMES = ("attention_norm", "w_q", "w_k", "w_v", "w_o", "ffn_norm", "w_gate", "w_up", "w_down")

        def __init__(self, weights, heads: int, max_positions: int):
            super().__init__()
            for name, value in zip(self.NAMES, weights, strict=True):
                setattr(self, name, torch.nn.Parameter(torch.tensor(value, dtype=torch.float64)))
            self.heads = heads
            head_width = self.w_q.shape[1] // heads
            frequencies = ROPE_BASE ** (-torch.arange(0, head_width, 2, dtype=torch.float64) / head_width)
            angles = torch.outer(torch.arange(max_positions, dtype=torch.float64), frequencies)
            self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles))  # [P, d_h/2]

        def forward(self, x):
            batch, tokens, width = x.shape
            n = F.rms_norm(x, (width,), self.attention_norm, EPSILON)
            q = (n @ self.w_q).view(batch, tokens, self.heads, -1)
            k = (n @ self.w_k).view(batch, tokens, self.heads, -1)
            v = (n @ self.w_v).view(batch, tokens, self.heads, -1)
            freqs_cis = self.freqs_cis[:tokens]
            q, k = rope(q, freqs_cis), rope(k, freqs_cis)
            heads = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=True)                  # [B, h, T, d_h]
            x1 = x + heads.transpose(1, 2).reshape(batch, tokens, width) @ self.w_o
            m = F.rms_norm(x1, (width,), self.ffn_norm, EPSILON)
            return x1 + (F.silu(m @ self.w_gate) * (m @ self.w_up)) @ self.w_down

    return TorchBlock


def torch_step(torch, model, x_value, upstream):
    x = torch.tensor(x_value, requires_grad=True)
    output = model(x)
    output.backward(upstream)
    return output, x


def inputs(shape: str):
    import numpy as np
    b, t, d, _, _ = SHAPES[shape]
    rng = np.random.default_rng(7)
    return rng.standard_normal((b, t, d)), rng.standard_normal((b, t, d))


def floor_products(shape: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The (left, right) shapes of the block's matrix products: 9 forward, then 18 backward (for ``Y = A B``:
    ``dA = dY B^T``, and ``dB = A^T dY``, over all rows at once for a weight)."""
    b, t, d, h, f = SHAPES[shape]
    dh, rows = d // h, b * t
    forward = [((b, t, d), (d, d))] * 3 + [((b, h, t, dh), (b, h, dh, t)), ((b, h, t, t), (b, h, t, dh)),
                                           ((b, t, d), (d, d)), ((b, t, d), (d, f)), ((b, t, d), (d, f)),
                                           ((b, t, f), (f, d))]
    backward = []
    for left, right in forward:
        out = (*left[:-1], right[-1])
        if len(right) == 2:
            backward += [(out, right[::-1]), ((left[-1], rows), (rows, right[-1]))]
        else:
            backward += [(out, (*right[:-2], right[-1], right[-2])), ((*left[:-2], left[-1], left[-2]), out)]
    return forward + backward


# --- worker processes -----------------------------------------------------------------------------------------

def check(shape: str, source: str) -> dict:
    """Output and every gradient of both sides on the same weights and input."""
    import numpy as np
    import torch
    torch.set_num_threads(THREADS)
    lib = our_package(source)
    block = our_block(lib, shape)
    x_value, upstream = inputs(shape)
    model = torch_block_class()([p.value for p in block.parameters()], block.attention.heads, SHAPES[shape][1])
    ours, ours_x = our_step(lib, block, x_value, upstream)
    theirs, theirs_x = torch_step(torch, model, x_value, torch.tensor(upstream))

    def error(a, b):
        return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))

    errors = {"output": error(ours.value, theirs.detach().numpy()), "input": error(ours_x.grad, theirs_x.grad.numpy())}
    for parameter, twin in zip(block.parameters(), model.parameters(), strict=True):
        errors[parameter.name] = error(parameter.grad, twin.grad.numpy())
    return errors


def time_calls(side: str, case: str, shape: str, source: str, calls: int) -> dict:
    import numpy as np
    x_value, upstream = inputs(shape)
    if side.endswith("matmuls"):
        import numpy
        rng = numpy.random.default_rng(0)
        operands = [(rng.standard_normal(a), rng.standard_normal(b)) for a, b in floor_products(shape)]
        if side == "torch-matmuls":
            import torch
            torch.set_num_threads(THREADS)
            operands = [(torch.tensor(a), torch.tensor(b)) for a, b in operands]

        def make():
            return operands

        def step(pairs):
            for a, b in pairs:
                a @ b
    elif side == "torch":
        import torch
        torch.set_num_threads(THREADS)
        weights = [p.value for p in our_block(our_package(SOURCE), shape).parameters()]
        build = torch_block_class()
        upstream_t = torch.tensor(upstream)

        def make():
            return build(weights, SHAPES[shape][3], SHAPES[shape][1])

        def step(model):
            torch_step(torch, model, x_value, upstream_t)

        def zero_grad(model):
            model.zero_grad()
    else:
        lib = our_package(source)

        def make():
            return our_block(lib, shape)

        def step(block):
            our_step(lib, block, x_value, upstream)

        def zero_grad(block):
            block.parameters().zero_grad()

    model = make()
    times, faults = [], []
    for call in range(calls + 2):  # two warm-up calls
        if case == "fresh":
            model = make()
        elif case == "zero_grad":
            zero_grad(model)
        gc.collect()
        gc.disable()
        before_faults, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
        step(model)
        elapsed, after_faults = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        gc.enable()
        if call >= 2:
            times.append(elapsed)
            faults.append(after_faults - before_faults)
    return {"times": times, "faults": faults, "numpy": np.__version__}


# --- the driver -----------------------------------------------------------------------------------------------

def run_worker(arguments: list[str], env: dict) -> dict:
    result = subprocess.run([sys.executable, os.path.abspath(__file__), *arguments], env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"worker {' '.join(arguments)} failed:\n{result.stderr}")
    return json.loads(result.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="processes per side and case (default 5)")
    parser.add_argument("--calls", type=int, default=10, help="timed calls per process after 2 warm-up calls")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of {', '.join(SHAPES)}")
    parser.add_argument("--src", default=SOURCE, help="the directory holding the llm_from_scratch to time")
    parser.add_argument("--compare", metavar="SRC", help="also time the llm_from_scratch in SRC, as side 'other'")
    parser.add_argument("--floors", action="store_true", help="also time the matrix products alone, each side")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for every worker (repeatable)")
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "CASE", "SHAPE"), help=argparse.SUPPRESS)
    parser.add_argument("--check", metavar="SHAPE", help=argparse.SUPPRESS)
    arguments = parser.parse_args()

    if arguments.check:
        print(json.dumps(check(arguments.check, arguments.src)))
        return 0
    if arguments.worker:
        side, case, shape = arguments.worker
        source = arguments.compare if side == "other" else arguments.src
        print(json.dumps(time_calls(side, case, shape, source, arguments.calls)))
        return 0

    try:
        import torch
    except ImportError:
        print("PyTorch is not installed; the benchmark compares against it. Install it with\n"
              "    .venv/bin/pip install -r requirements-bench.txt\n"
              "and run this script again.")
        return 0
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(THREADS), OMP_NUM_THREADS=str(THREADS),
               MKL_NUM_THREADS=str(THREADS), PYTHONHASHSEED="0")
    env.update(item.split("=", 1) for item in arguments.env)
    sides = ["ours", "torch"] + (["other"] * bool(arguments.compare))
    shapes = arguments.shapes.split(",")
    common = ["--src", arguments.src, "--calls", str(arguments.calls)]
    common += ["--compare", arguments.compare] if arguments.compare else []

    load_before = os.getloadavg()
    print(f"python {platform.python_version()}, torch {torch.__version__}, {os.cpu_count()} CPUs, "
          f"{THREADS} threads a side (OpenBLAS / torch.set_num_threads), float64")
    print(f"ours: {os.path.abspath(arguments.src)}" + (f"; other: {os.path.abspath(arguments.compare)}"
                                                        if arguments.compare else ""))
    print(f"worker environment: {' '.join(arguments.env) or 'unchanged'}")
    print(f"load average at start: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    for shape in shapes:
        errors = run_worker(["--check", shape, "--src", arguments.src], env)
        worst = max(errors, key=errors.get)
        print(f"{describe(shape)}: max |ours - torch| / max(1, |torch|) = {errors[worst]:.1e} over the output "
              f"and {len(errors) - 1} gradients (worst: {worst})")
        if errors[worst] > TOLERANCE:
            raise SystemExit(f"ours and the torch twin disagree beyond {TOLERANCE}: {errors}")

    floors = ["numpy-matmuls", "torch-matmuls"] if arguments.floors else []
    runs = [(shape, case) for shape in shapes for case in CASES] + [(shape, "floor") for shape in shapes] * bool(floors)
    results = {}
    for round_ in range(arguments.rounds):
        for shape, case in runs:
            order = floors if case == "floor" else sides
            for side in (order if round_ % 2 == 0 else order[::-1]):
                report = run_worker(["--worker", side, case, shape, *common], env)
                results.setdefault((shape, case, side), []).append(report)
    load_after = os.getloadavg()

    def summary(shape, case, side):
        reports = results[(shape, case, side)]
        return (min(min(r["times"]) for r in reports),
                statistics.median(statistics.median(r["times"]) for r in reports),
                statistics.median(f for r in reports for f in r["faults"]))

    print(f"\n{arguments.rounds} processes a side and case, {arguments.calls} timed calls each; ms per forward + "
          "backward: best call / median of the processes' medians; faults: minor page faults per call (median)")
    print(f"{'shape':<36} {'case':<9}" + "".join(f" {side + ' ms':>16} {'faults':>6}" for side in sides)
          + "".join(f" {side + '/torch':>13}" for side in sides if side != "torch"))
    for shape, case in runs:
        order = floors if case == "floor" else sides
        numbers = {side: summary(shape, case, side) for side in order}
        line = f"{describe(shape):<36} {case:<9}" + "".join(
            f" {best * 1e3:7.1f} /{median * 1e3:7.1f} {faults:6.0f}" for best, median, faults in numbers.values())
        reference = numbers[order[1]]
        for side in order:
            if side != order[1]:
                line += f" {numbers[side][0] / reference[0]:5.2f} /{numbers[side][1] / reference[1]:5.2f}"
        print(line + (f"   ({' / '.join(order)})" if case == "floor" else ""))
    print(f"ratios: best / median; load average at the end: {load_after[0]:.2f} {load_after[1]:.2f} "
          f"{load_after[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
