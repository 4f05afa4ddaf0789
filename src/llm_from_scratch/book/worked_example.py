"""What both chapters measure on their worked example, and their command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass

import numpy as np

from ..errors import EditionError, LlmFromScratchError
from ..gradcheck import GradcheckReport, gradcheck
from ..tensor import Tensor
from ..text import edition
from .formats import format_list, format_number, format_vector

GRADIENT_DELTA = 1e-6


def identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of shape and every value."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def forward_backward(layer, x_value: np.ndarray, upstream: np.ndarray) -> tuple[Tensor, object]:
    """``layer`` on ``x_value`` forward, then backward from ``upstream``: ``X`` (its ``grad`` filled, as is
    every parameter's) and the forward record."""
    x = Tensor(x_value, requires_grad=True)
    forward = layer.forward(x)
    forward.output.backward(upstream)
    return x, forward


def rows_unchanged(output: np.ndarray, changed: np.ndarray) -> list[bool]:
    """Per token of the first sequence: is its row of ``changed`` bitwise its row of ``output``? Both
    ``[B, T, d_model]``, ``changed`` from the input with only the last token changed."""
    return [identical(a, b) for a, b in zip(output[0], changed[0], strict=True)]


def positions_record(same: list[bool]) -> str:
    """The trace's causal proof per position: the prefix bit for bit, the changed last token not."""
    *prefix, last = same
    return "|".join([*(f"position_{t}={'bitwise-unchanged' if kept else 'changed'}" for t, kept in enumerate(prefix)),
                     f"position_{len(prefix)}={'unchanged' if last else 'changed'}"])


def future_probabilities_zero(weights: np.ndarray) -> bool:
    """Every key to the right of its query gets exactly zero: ``weights: [B, h, T, T]``."""
    future = np.triu(np.ones(weights.shape[-2:], dtype=bool), k=1)
    return bool(np.all(weights[..., future] == 0.0))


def tensors_of(record: object) -> list[Tensor]:
    """Every Tensor of a forward record, those of nested records included."""
    found = []
    for field in fields(record):
        value = getattr(record, field.name)
        found.extend(tensors_of(value) if is_dataclass(value) else [value])
    return found


def tape_finite(layer, x: Tensor, record: object) -> bool:
    """After a pass forward and backward: every value of the forward record, ``x.grad`` and every parameter's
    ``grad`` are finite."""
    arrays = [t.value for t in tensors_of(record)] + [x.grad] + [p.grad for p in layer.parameters()]
    return all(bool(np.isfinite(a).all()) for a in arrays)


def replays_bitwise(layer_factory: Callable[[], object], x_value: np.ndarray, upstream: np.ndarray) -> bool:
    """Two fresh runs forward and backward give the same output and gradients bit for bit."""
    runs = []
    for _ in range(2):
        layer, x = layer_factory(), Tensor(x_value, requires_grad=True)
        output = layer.forward(x).output
        output.backward(upstream)
        runs.append([output.value, x.grad, *(p.grad for p in layer.parameters())])
    return all(identical(a, b) for a, b in zip(*runs, strict=True))


def gradient_check(layer, x_value: np.ndarray, upstream: np.ndarray, tolerance: float) -> GradcheckReport:
    """Central differences against ``backward`` for the input and every parameter of ``layer``."""
    return gradcheck(lambda x: layer.forward(x).output, x_value, list(layer.parameters()), upstream,
                     delta=GRADIENT_DELTA, tolerance=tolerance)


def zero_stays_zero(record: object) -> bool:
    """A forward run on a zero input is exactly zero at every stage but the probabilities: each projection
    only multiplies. A bias anywhere (Q, K, V, O, gate, up or down) would show up as a nonzero stage."""
    return all(not getattr(record, field.name).value.any() for field in fields(record)
               if field.name != "attention_weights")


def error_cases(cases: dict[str, Callable[[], object]]) -> dict[str, LlmFromScratchError | None]:
    """Run every attempt; keep the typed error it raised (``None`` if it was accepted)."""
    raised = {}
    for key, attempt in cases.items():
        try:
            attempt()
            raised[key] = None
        except LlmFromScratchError as error:
            raised[key] = error
    return raised


def reuse_released_input(layer, x_value: np.ndarray) -> None:
    """Run ``layer`` once, release the tape, then hand it the released input again (must be refused)."""
    tensor = Tensor(x_value)
    layer.forward(tensor).output.release()
    layer.forward(tensor)


def weight_record(head: int, query: int, row: np.ndarray) -> str:
    """One causal probability row of the diagram trace, with its visible and masked keys."""
    return (f"WEIGHTS|head={head}|query={query}|values={format_vector(row)}"
            f"|visible={format_list(range(query + 1))}|masked={format_list(range(query + 1, row.shape[0]))}"
            f"|row_sum={format_number(row.sum())}")


def chapter_main(package: str, description: str, argv: Sequence[str] | None = None) -> int:
    """``python -m llm_from_scratch.chNN [--trace]``: ``chNN.example``'s report or trace on stdout.

    An unknown edition, a reader that closes the pipe early, a full disk or no stdout at all (``>&-``) ends
    the command with one line on stderr and status 1, not a traceback.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {package}", description=description)
    parser.add_argument("--trace", action="store_true", help="print the diagram trace instead of the report")
    arguments = parser.parse_args(argv)
    try:   # the edition first: an unknown one ends the command before any work
        edition()
        example = importlib.import_module(f"{package}.example")
    except EditionError as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 1
    report, trace = example.render_report, example.render_trace
    if sys.stdout is None:  # started with stdout closed: Python has no stream to write to
        print(f"{parser.prog}: output not written: standard output is closed", file=sys.stderr)
        return 1
    text = trace() if arguments.trace else report()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as error:  # BrokenPipeError, or ENOSPC from a full disk
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        reason = "the reader closed the pipe" if isinstance(error, BrokenPipeError) else error.strerror
        print(f"{parser.prog}: output not written: {reason}", file=sys.stderr)
        return 1
    return 0
