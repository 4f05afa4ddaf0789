"""One decoder block, forward + backward: our NumPy tape against a PyTorch twin and a direct NumPy block.

Run from the repository root:

    .venv/bin/pip install -r requirements-bench.txt   # once: torch for the reference, threadpoolctl
    .venv/bin/python benchmarks/bench_block.py [--threads 2] [--rounds 5] [--calls 10]

Three sides: ``ours`` (the package's tape), ``torch`` (a twin written with ``torch.nn.functional``) and
``numpy`` (``numpy_block.py``: the same block in plain NumPy with a hand-written backward, no tape).

The driver (this script without ``--worker``) never times anything itself. For each shape it first runs one
process that builds our block, the torch twin and the NumPy block on the same weights and checks that the
output and all ten gradients (input and nine parameters) agree to 1e-10; then, round after round, it starts one
process per side and case, rotating the order, so all sides see the same machine load and none shares its
process with another's thread pool. A worker warms up, then times ``--calls`` calls and reports each call's wall
time and minor page faults (``ru_minflt``: pages the kernel had to map and zero), the 1-minute load average when
it started, and the BLAS it ran on as threadpoolctl (NumPy's OpenBLAS: version, kernel, threads) or torch (its
BLAS, CPU capability, ``torch.get_num_threads()``) reports it; a worker whose thread count is not ``--threads``
stops the run. The output starts with the host (CPU model, the ``OPENBLAS_*`` variables in force, the load at
the start) and every row of the table carries the threads, the BLAS kernel and the load range of its workers.

Cases:
  reused     one block built once; every call runs forward + backward on it, and the gradients accumulate
             into the parameters' existing ``grad`` arrays (torch: into ``.grad``, in place)
  zero_grad  the same block, with ``zero_grad()`` before every call (not timed), as a training step does:
             ours sets every ``grad`` to None, torch's ``Module.zero_grad()`` too, so every gradient is new
  fresh      every call gets a new block with fresh parameters (built before the timer) and no gradients

``--floors`` also times, in processes of their own, only the block's 27 matrix products (9 forward, 18 backward)
with NumPy (OpenBLAS) and with torch (MKL) on random operands of the same shapes: the floor of each side.

``--threads N`` (default 2, torch's default on a 2-core machine) sets OpenBLAS's, OpenMP's and MKL's thread
counts in every worker and ``torch.set_num_threads(N)``.

Options for experiments: ``--env NAME=VALUE`` sets a variable in every worker (e.g. glibc's
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``), ``--unset NAME`` removes one (e.g.
``OPENBLAS_CORETYPE``, to let OpenBLAS pick its own kernel); ``--compare SRC`` adds a side ``other``, the
package in another directory (an earlier commit: ``git archive COMMIT src | tar -x -C /tmp/old``);
``--json PATH`` writes every worker's report and the host facts.
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
THREADS = 2  # the default of --threads: torch's own default on a 2-core machine
SIDES = ("ours", "torch", "numpy")
TOLERANCE = 1e-10
ROPE_BASE, EPSILON, SEED = 10000.0, 1e-5, 2024


def describe(shape: str) -> str:
    b, t, d, h, f = SHAPES[shape]
    return f"B={b} T={t} d_model={d} h={h} d_ff={f}"


# --- the three sides ------------------------------------------------------------------------------------------

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


def numpy_block(weights, shape: str):
    from numpy_block import NumpyBlock  # benchmarks/numpy_block.py, beside this script
    _, t, _, h, _ = SHAPES[shape]
    return NumpyBlock(weights, h, t, ROPE_BASE, EPSILON)


def numpy_step(block, x_value, upstream):
    output = block.forward(x_value)
    return output, block.backward(upstream)


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


# --- host facts ---------------------------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            fields = dict(line.split(":", 1) for line in cpuinfo if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        return f"{fields['model name']} (family {fields['cpu family']}, model {fields['model']})"
    except (OSError, KeyError):
        return platform.processor() or platform.machine()


def openblas_variables(env) -> str:
    return " ".join(f"{name}={value}" for name, value in sorted(env.items()) if name.startswith("OPENBLAS_"))


def numpy_blas() -> dict:
    """NumPy's BLAS as threadpoolctl sees it in this process."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl looks for)
    from threadpoolctl import threadpool_info
    blas = next(pool for pool in threadpool_info() if pool["user_api"] == "blas")
    return {"blas": f"{blas['internal_api']} {blas['version']} {blas.get('architecture', '?')}",
            "threads": blas["num_threads"]}


def torch_blas(torch) -> dict:
    """torch's BLAS (linked into torch, so threadpoolctl does not list it) and its intra-op threads."""
    info = torch.__config__.show()
    blas = next((part.split("=", 1)[1] for part in info.replace(",", " ").split() if part.startswith("BLAS_INFO=")),
                "?")
    version = next((line.split("Version")[1].split()[0].split("-")[0] for line in info.splitlines()
                    if "Math Kernel Library Version" in line), "")
    return {"blas": f"{blas} {version} {torch.backends.cpu.get_cpu_capability()}".replace("  ", " "),
            "threads": torch.get_num_threads()}


def mkl_code_path() -> str:
    """How torch's MKL describes the processors it runs its code for here (``MKL_VERBOSE``'s first line)."""
    probe = "import torch; a = torch.ones(8, 8, dtype=torch.float64); a @ a"
    result = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, MKL_VERBOSE="1"),
                            capture_output=True, text=True)
    line = next((line for line in result.stdout.splitlines() if line.startswith("MKL_VERBOSE oneMKL")), "")
    return line.split(" for ", 1)[-1].split(",")[0] if line else "unknown (no MKL_VERBOSE output)"


def set_torch_threads(threads: int):
    import torch
    torch.set_num_threads(threads)
    return torch


# --- worker processes -----------------------------------------------------------------------------------------

def check(shape: str, source: str, threads: int) -> dict:
    """Output and every gradient of the torch twin and of the NumPy block against ours, same weights and input."""
    import numpy as np
    torch = set_torch_threads(threads)
    lib = our_package(source)
    block = our_block(lib, shape)
    x_value, upstream = inputs(shape)
    weights = [p.value for p in block.parameters()]
    model = torch_block_class()(weights, block.attention.heads, SHAPES[shape][1])
    ours, ours_x = our_step(lib, block, x_value, upstream)
    theirs, theirs_x = torch_step(torch, model, x_value, torch.tensor(upstream))
    direct = numpy_block(weights, shape)
    direct_output, direct_x = numpy_step(direct, x_value, upstream)

    def error(a, b):
        return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))

    errors = {"torch": {"output": error(ours.value, theirs.detach().numpy()),
                        "input": error(ours_x.grad, theirs_x.grad.numpy())},
              "numpy": {"output": error(ours.value, direct_output), "input": error(ours_x.grad, direct_x)}}
    for parameter, twin, name in zip(block.parameters(), model.parameters(), direct.grads, strict=True):
        errors["torch"][parameter.name] = error(parameter.grad, twin.grad.numpy())
        errors["numpy"][parameter.name] = error(parameter.grad, direct.grads[name])
    return errors


def time_calls(side: str, case: str, shape: str, source: str, calls: int, threads: int) -> dict:
    load = os.getloadavg()[0]
    import numpy as np
    x_value, upstream = inputs(shape)
    facts = numpy_blas()
    if side.endswith("matmuls"):
        rng = np.random.default_rng(0)
        operands = [(rng.standard_normal(a), rng.standard_normal(b)) for a, b in floor_products(shape)]
        if side == "torch-matmuls":
            torch = set_torch_threads(threads)
            facts = torch_blas(torch)
            operands = [(torch.tensor(a), torch.tensor(b)) for a, b in operands]

        def make():
            return operands

        def step(pairs):
            for a, b in pairs:
                a @ b
    elif side == "torch":
        torch = set_torch_threads(threads)
        facts = torch_blas(torch)
        weights = [p.value for p in our_block(our_package(SOURCE), shape).parameters()]
        build = torch_block_class()
        upstream_t = torch.tensor(upstream)

        def make():
            return build(weights, SHAPES[shape][3], SHAPES[shape][1])

        def step(model):
            torch_step(torch, model, x_value, upstream_t)

        def zero_grad(model):
            model.zero_grad()
    elif side == "numpy":
        weights = [p.value for p in our_block(our_package(SOURCE), shape).parameters()]

        def make():
            return numpy_block(weights, shape)

        def step(block):
            numpy_step(block, x_value, upstream)

        def zero_grad(block):
            block.zero_grad()
    else:
        lib = our_package(source)
        facts["package"] = os.path.dirname(lib.__file__)

        def make():
            return our_block(lib, shape)

        def step(block):
            our_step(lib, block, x_value, upstream)

        def zero_grad(block):
            block.parameters().zero_grad()

    if facts["threads"] != threads:
        raise SystemExit(f"{side} runs on {facts['threads']} threads, not the {threads} asked for: {facts}")
    model = make()
    times, cpu_times, faults = [], [], []
    for call in range(calls + 2):  # two warm-up calls
        if case == "fresh":
            model = make()
        elif case == "zero_grad":
            zero_grad(model)
        gc.collect()
        gc.disable()
        before_faults, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
        cpu_start = time.process_time()
        step(model)
        cpu, elapsed = time.process_time() - cpu_start, time.perf_counter() - start
        after_faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        gc.enable()
        if call >= 2:
            times.append(elapsed)
            cpu_times.append(cpu)
            faults.append(after_faults - before_faults)
    return {"times": times, "cpu_times": cpu_times, "faults": faults, "numpy": np.__version__, "load_start": load,
            "load_end": os.getloadavg()[0], **facts}


# --- the driver -----------------------------------------------------------------------------------------------

def run_worker(arguments: list[str], env: dict) -> dict:
    result = subprocess.run([sys.executable, os.path.abspath(__file__), *arguments], env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"worker {' '.join(arguments)} failed:\n{result.stderr}")
    return json.loads(result.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=THREADS,
                        help=f"BLAS / torch threads in every worker (default {THREADS})")
    parser.add_argument("--rounds", type=int, default=5, help="processes per side and case (default 5)")
    parser.add_argument("--calls", type=int, default=10, help="timed calls per process after 2 warm-up calls")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of {', '.join(SHAPES)}")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--src", default=SOURCE, help="the directory holding the llm_from_scratch to time")
    parser.add_argument("--compare", metavar="SRC", help="also time the llm_from_scratch in SRC, as side 'other'")
    parser.add_argument("--sides", default=",".join(SIDES), help=f"comma-separated, of {', '.join(SIDES)} "
                        "(and 'other' with --compare, which adds it)")
    parser.add_argument("--floors", action="store_true", help="also time the matrix products alone, each side")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for every worker (repeatable)")
    parser.add_argument("--unset", action="append", default=[], metavar="NAME",
                        help="remove an environment variable from every worker (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="write the host facts and every worker's report")
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "CASE", "SHAPE"), help=argparse.SUPPRESS)
    parser.add_argument("--check", metavar="SHAPE", help=argparse.SUPPRESS)
    arguments = parser.parse_args()

    if arguments.check:
        print(json.dumps(check(arguments.check, arguments.src, arguments.threads)))
        return 0
    if arguments.worker:
        side, case, shape = arguments.worker
        source = arguments.compare if side == "other" else arguments.src
        print(json.dumps(time_calls(side, case, shape, source, arguments.calls, arguments.threads)))
        return 0

    try:
        import threadpoolctl  # noqa: F401
        import torch
    except ImportError as error:
        print(f"{error.name} is not installed; the benchmark needs torch (the reference) and threadpoolctl (to "
              "report NumPy's BLAS). Install them with\n"
              "    .venv/bin/pip install -r requirements-bench.txt\n"
              "and run this script again.")
        return 0
    threads = arguments.threads
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONHASHSEED="0")
    env.update(item.split("=", 1) for item in arguments.env)
    for name in arguments.unset:
        env.pop(name, None)
    sides = [side for side in arguments.sides.split(",") if side != "other"] + (["other"] * bool(arguments.compare))
    shapes, cases = arguments.shapes.split(","), arguments.cases.split(",")
    common = ["--src", arguments.src, "--calls", str(arguments.calls), "--threads", str(threads)]
    common += ["--compare", arguments.compare] if arguments.compare else []

    load_before = os.getloadavg()
    host = {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "threads": threads,
            "openblas_variables": openblas_variables(env) or "none", "mkl": mkl_code_path(),
            "load_start": load_before}
    print(f"host: {host['cpu']}, {host['cpus']} CPUs; python {host['python']}, torch {host['torch']}, float64")
    print(f"threads a side: {threads} (OPENBLAS/OMP/MKL_NUM_THREADS, torch.set_num_threads)")
    print(f"OPENBLAS_* in the workers: {host['openblas_variables']}")
    print(f"torch's MKL (MKL_VERBOSE) runs its code for: {host['mkl']}")
    print(f"ours: {os.path.abspath(arguments.src)}" + (f"; other: {os.path.abspath(arguments.compare)}"
                                                        if arguments.compare else ""))
    print(f"worker environment: {' '.join(arguments.env + ['-' + name for name in arguments.unset]) or 'unchanged'}")
    print(f"load average at start: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    for shape in shapes:
        errors = run_worker(["--check", shape, "--src", arguments.src, "--threads", str(threads)], env)
        for twin, found in errors.items():
            worst = max(found, key=found.get)
            print(f"{describe(shape)}: max |ours - {twin}| / max(1, |{twin}|) = {found[worst]:.1e} over the output "
                  f"and {len(found) - 1} gradients (worst: {worst})")
            if found[worst] > TOLERANCE:
                raise SystemExit(f"ours and the {twin} block disagree beyond {TOLERANCE}: {found}")

    floors = ["numpy-matmuls", "torch-matmuls"] if arguments.floors else []
    runs = [(shape, case) for shape in shapes for case in cases] + [(shape, "floor") for shape in shapes] * bool(floors)
    results = {}
    for round_ in range(arguments.rounds):
        for shape, case in runs:
            order = floors if case == "floor" else sides
            order = order[round_ % len(order):] + order[:round_ % len(order)]  # rotate, then reverse every other
            for side in (order if round_ % 2 == 0 else order[::-1]):
                report = run_worker(["--worker", side, case, shape, *common], env)
                results.setdefault((shape, case, side), []).append(report)
    load_after = os.getloadavg()
    host["load_end"] = load_after

    def summary(shape, case, side, metric):
        reports = results[(shape, case, side)]
        return (min(min(r[metric]) for r in reports),
                statistics.median(statistics.median(r[metric]) for r in reports),
                statistics.median(f for r in reports for f in r["faults"]))

    def facts(reports):
        """The BLAS and threads the workers reported (all alike, or each listed) and their load range."""
        blas = sorted({f"{r['blas']} x{r['threads']}" for r in reports})
        loads = [r[key] for r in reports for key in ("load_start", "load_end")]
        return " / ".join(blas), f"{min(loads):.2f}-{max(loads):.2f}"

    def table(metric):
        """One row per shape and case: each side's best / median and faults, the ratios, the load and the BLAS."""
        for shape, case in runs:
            order = floors if case == "floor" else sides
            numbers = {side: summary(shape, case, side, metric) for side in order}
            line = f"{describe(shape):<36} {case:<9}" + "".join(
                f" {best * 1e3:7.1f} /{median * 1e3:7.1f} {faults:6.0f}" for best, median, faults in numbers.values())
            pairs = [tuple(floors)] if case == "floor" else ratios
            for a, b in pairs:
                line += f" {numbers[a][0] / numbers[b][0]:5.2f} /{numbers[a][1] / numbers[b][1]:5.2f}"
            blas = {side: facts(results[(shape, case, side)]) for side in order}
            loads = [float(x) for load in (b[1] for b in blas.values()) for x in load.split("-")]
            line += f" {min(loads):5.2f}-{max(loads):<5.2f} " + "; ".join(
                f"{side}: {b[0]}" for side, b in blas.items())
            print(line + (f"   ({' / '.join(order)})" if case == "floor" else ""))

    ratios = [(a, b) for a, b in (("ours", "torch"), ("ours", "numpy"), ("numpy", "torch"), ("other", "torch"),
                                  ("ours", "other")) if a in sides and b in sides]
    for metric, what in (("times", "wall-clock"), ("cpu_times", "process CPU time (all its threads)")):
        print(f"\n{arguments.rounds} processes a side and case, {arguments.calls} timed calls each; {what}, ms per "
              "forward + backward: best call / median of the processes' medians; faults: minor page faults per "
              "call (median); ratios: best / median")
        print(f"host: {host['cpu']}; {threads} threads a side; OPENBLAS_*: {host['openblas_variables']}")
        print(f"{'shape':<36} {'case':<9}" + "".join(f" {side + ' ms':>16} {'faults':>6}" for side in sides)
              + "".join(f" {a + '/' + b:>13}" for a, b in ratios) + f" {'load (1 min)':>12}  BLAS")
        table(metric)
    print(f"load average at the end: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump({"host": host, "arguments": vars(arguments),
                       "reports": [{"shape": shape, "case": case, "side": side, **report}
                                   for (shape, case, side), reports in results.items() for report in reports]},
                      out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
