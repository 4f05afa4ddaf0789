"""Decoder block forward + backward: our NumPy tape next to PyTorch CPU float64 autograd.

Run from the repository root:

    .venv/bin/pip install -r requirements-bench.txt   # once: torch for the reference
    .venv/bin/python benchmarks/bench_block.py

For each configuration the script builds one ``DecoderBlock`` from SplitMix64,
copies the very same weights into a small PyTorch implementation of the identical
block (RMSNorm, Q/K/V/O with RoPE on adjacent pairs, causal softmax, SwiGLU,
residuals), checks that outputs and every gradient agree to 1e-10, and then times,
best of ``--repeats`` runs:

* ours:     ``block.forward(x).output.backward(upstream)``
* torch:    the same in PyTorch (``torch.set_num_threads`` = NumPy's BLAS threads)
* matmuls:  only the block's matrix products in NumPy, forward and backward
            (three products per forward product) - the floor for any NumPy tape

and prints both ratios and the memory the tape holds: the bytes of every array
the recorded graph keeps alive, and the tracemalloc peak of one forward + backward.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import math
import os
import platform
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

DEFAULT_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def _source_directory() -> str:
    """``--src DIR`` (read before the import below) benchmarks another copy of the package."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--src", default=DEFAULT_SOURCE)
    return pre.parse_known_args()[0].src


sys.path.insert(0, _source_directory())

from llm_from_scratch import DecoderBlock, DecoderBlockConfig, SplitMix64, Tensor  # noqa: E402


@dataclass(frozen=True)
class Shape:
    batch: int
    tokens: int
    model_width: int
    heads: int
    feed_forward_width: int

    def __str__(self) -> str:
        return (f"B={self.batch} T={self.tokens} d_model={self.model_width} "
                f"h={self.heads} d_ff={self.feed_forward_width}")


SHAPES = (Shape(4, 128, 256, 8, 688), Shape(1, 512, 512, 8, 1376))


# --- NumPy's thread count ---------------------------------------------------------

def numpy_blas_threads() -> int | None:
    """OpenBLAS threads of the NumPy wheel (found in this process's mapped libraries), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        library = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                       "openblas_get_num_threads"):
            function = getattr(library, symbol, None)
            if function is not None:
                function.restype = ctypes.c_int
                return int(function())
    return None


# --- timing helpers ---------------------------------------------------------------

def best_of_interleaved(functions: dict, repeats: int) -> dict:
    """The smallest wall time of ``repeats`` calls of each function, in seconds.

    One warm-up call each, then rounds that call every function once in turn, so a
    change of machine load during the run hits all of them alike.
    """
    for function in functions.values():
        function()
    times = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            gc.collect()
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def page_faults(function) -> int:
    """Minor page faults of one call: fresh memory the kernel had to map and zero."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    function()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


# --- ours -------------------------------------------------------------------------

def build_block(shape: Shape) -> DecoderBlock:
    config = DecoderBlockConfig(model_width=shape.model_width, heads=shape.heads,
                                feed_forward_width=shape.feed_forward_width, max_positions=shape.tokens,
                                rope_base=10000.0, rms_epsilon=1e-5)
    return DecoderBlock.new("block", config, SplitMix64(2024))


def ours_step(block: DecoderBlock, x_value: np.ndarray, upstream: np.ndarray):
    """One forward + backward; returns the output Tensor and the input Tensor (for its gradient)."""
    block.parameters().zero_grad()
    x = Tensor(x_value, requires_grad=True)
    output = block.forward(x).output
    output.backward(upstream)
    return output, x


def graph_bytes(output: Tensor) -> int:
    """Bytes of the distinct arrays the recorded graph keeps alive: node values and closure captures."""
    seen: dict[int, int] = {}

    def note(array: np.ndarray) -> None:
        base = array
        while isinstance(base.base, np.ndarray):
            base = base.base
        seen[id(base)] = base.nbytes

    # The first edition (``--src`` on an old copy) named these _topological_order and _vjp.
    order = getattr(output, "topological_order", None) or output._topological_order
    for node in order():
        note(node.value)
        vjp = getattr(node, "vjp", getattr(node, "_vjp", None))
        for cell in (vjp.__closure__ or ()) if vjp is not None else ():
            try:
                content = cell.cell_contents
            except ValueError:
                continue
            if isinstance(content, np.ndarray):
                note(content)
    return sum(seen.values())


# --- PyTorch reference --------------------------------------------------------------

def torch_reference(torch, block: DecoderBlock):
    """A PyTorch float64 twin of ``block`` on copies of its weights; returns (step, parameters)."""
    attention = block.attention
    w = [torch.tensor(p.value, dtype=torch.float64, requires_grad=True) for p in block.parameters()]
    g_attention, w_q, w_k, w_v, w_o, g_ffn, w_gate, w_up, w_down = w
    heads, head_width = attention.heads, attention.head_width
    cos_table = torch.tensor(attention.rope.cos)  # [P, d_h/2]
    sin_table = torch.tensor(attention.rope.sin)
    epsilon_a, epsilon_f = block.attention_norm.epsilon, block.feed_forward_norm.epsilon

    def rms_norm(x, gain, epsilon):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon) * gain

    def rope(x, cos, sin):  # x: [B, h, T, d_h], adjacent pairs (2i, 2i+1)
        pairs = x.unflatten(-1, (head_width // 2, 2))
        a, b = pairs[..., 0], pairs[..., 1]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)

    def forward(x):
        batch, tokens, width = x.shape
        cos, sin = cos_table[:tokens], sin_table[:tokens]
        n = rms_norm(x, g_attention, epsilon_a)

        def heads_of(t):
            return t.view(batch, tokens, heads, head_width).transpose(1, 2)

        q = rope(heads_of(n @ w_q), cos, sin)
        k = rope(heads_of(n @ w_k), cos, sin)
        v = heads_of(n @ w_v)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(head_width)
        mask = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
        probabilities = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        merged = (probabilities @ v).transpose(1, 2).reshape(batch, tokens, width)
        after = x + merged @ w_o
        m = rms_norm(after, g_ffn, epsilon_f)
        hidden = torch.nn.functional.silu(m @ w_gate) * (m @ w_up)
        return after + hidden @ w_down

    def step(x_value, upstream):
        for p in w:
            p.grad = None
        x = torch.tensor(x_value, requires_grad=True)
        out = forward(x)
        out.backward(upstream)
        return out, x

    return step, w


# --- the matmuls alone ---------------------------------------------------------------

def matmul_only(shape: Shape, rng: np.random.Generator):
    """Every matrix product of the block's forward and backward, on prepared operands."""
    b, t, d, h, f = shape.batch, shape.tokens, shape.model_width, shape.heads, shape.feed_forward_width
    dh = d // h
    rows = b * t
    x2 = rng.standard_normal((rows, d))
    w = {name: rng.standard_normal((d, d)) for name in "qkvo"}
    w_gate, w_up, w_down = rng.standard_normal((d, f)), rng.standard_normal((d, f)), rng.standard_normal((f, d))
    hidden = rng.standard_normal((rows, f))
    g_d, g_f = rng.standard_normal((rows, d)), rng.standard_normal((rows, f))
    q, k, v = (rng.standard_normal((b, h, t, dh)) for _ in range(3))
    a = rng.standard_normal((b, h, t, t))
    g_h, g_a = rng.standard_normal((b, h, t, dh)), rng.standard_normal((b, h, t, t))

    def run():
        # forward: Q, K, V, O projections; scores and A V; gate, up, down
        for name in "qkvo":
            x2 @ w[name]
        q @ k.swapaxes(-1, -2)
        a @ v
        x2 @ w_gate
        x2 @ w_up
        hidden @ w_down
        # backward: for y = x @ W, dx = dy @ W^T and dW = x^T @ dy
        for name in "qkvo":
            g_d @ w[name].T
            x2.T @ g_d
        g_a @ k          # d scores / d q
        g_a.swapaxes(-1, -2) @ q  # d scores / d k
        g_h @ v.swapaxes(-1, -2)  # d (A V) / d A
        a.swapaxes(-1, -2) @ g_h  # d (A V) / d V
        for weight in (w_gate, w_up):
            g_f @ weight.T
            x2.T @ g_f
        g_d @ w_down.T
        hidden.T @ g_d

    return run


# --- main -----------------------------------------------------------------------------

def max_relative(ours: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(ours - reference)) / max(1.0, float(np.max(np.abs(reference)))))


def bench(shape: Shape, torch, repeats: int) -> None:
    print(f"\n== {shape}")
    rng = np.random.default_rng(7)
    block = build_block(shape)
    x_value = rng.standard_normal((shape.batch, shape.tokens, shape.model_width))
    upstream = rng.standard_normal(x_value.shape)

    # Same numbers first: output and every gradient.
    torch_step, torch_weights = torch_reference(torch, block)
    ours_out, ours_x = ours_step(block, x_value, upstream)
    ref_out, ref_x = torch_step(x_value, torch.tensor(upstream))
    errors = {"output": max_relative(ours_out.value, ref_out.detach().numpy()),
              "d input": max_relative(ours_x.grad, ref_x.grad.numpy())}
    for parameter, twin in zip(block.parameters(), torch_weights, strict=True):
        errors[f"d {parameter.name}"] = max_relative(parameter.grad, twin.grad.numpy())
    worst = max(errors, key=errors.get)
    print(f"match: max |ours - torch| / max(1, |torch|) = {errors[worst]:.2e} (worst: {worst}) "
          f"over output and {len(errors) - 1} gradients")
    if errors[worst] > 1e-10:
        raise SystemExit(f"mismatch with the PyTorch reference: {errors}")

    # Memory held by the tape after forward + backward, and the tracemalloc peak of one step.
    held = graph_bytes(ours_out)
    del ours_out, ours_x, ref_out, ref_x
    gc.collect()
    tracemalloc.start()
    ours_step(block, x_value, upstream)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    upstream_t = torch.tensor(upstream)
    runs = {"ours": lambda: ours_step(block, x_value, upstream),
            "torch": lambda: torch_step(x_value, upstream_t),
            "matmuls": matmul_only(shape, rng)}
    best = best_of_interleaved(runs, repeats)
    faults = {name: page_faults(function) for name, function in runs.items()}
    print(f"ours  forward+backward  {best['ours'] * 1e3:8.2f} ms   ({faults['ours']} page faults)")
    print(f"torch forward+backward  {best['torch'] * 1e3:8.2f} ms   ({faults['torch']} page faults)")
    print(f"numpy matmuls only      {best['matmuls'] * 1e3:8.2f} ms   ({faults['matmuls']} page faults)")
    print(f"ratio ours/torch   = {best['ours'] / best['torch']:.2f}")
    print(f"ratio ours/matmuls = {best['ours'] / best['matmuls']:.2f}")
    print(f"tape holds {held / 2**20:.1f} MiB of arrays after forward+backward; "
          f"tracemalloc peak of forward+backward {peak / 2**20:.1f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per measurement (best is kept)")
    parser.add_argument("--src", default=DEFAULT_SOURCE,
                        help="directory that holds the llm_from_scratch package to benchmark (default: ../src)")
    arguments = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed; the benchmark compares against it. Install it with\n"
              "    .venv/bin/pip install -r requirements-bench.txt\n"
              "and run this script again.")
        return 0
    threads = numpy_blas_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    import llm_from_scratch

    print(f"package: {os.path.dirname(os.path.abspath(llm_from_scratch.__file__))}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs")
    print(f"threads: NumPy (OpenBLAS) {threads if threads is not None else 'unknown'}, "
          f"torch.set_num_threads -> {torch.get_num_threads()}")
    print(f"best of {arguments.repeats} interleaved runs after one warm-up; float64 everywhere; "
          f"load average {os.getloadavg()[0]:.2f}")
    for shape in SHAPES:
        bench(shape, torch, arguments.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
