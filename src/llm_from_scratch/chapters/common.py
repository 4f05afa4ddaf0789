"""Pieces shared by the chapter evidence modules."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from ..errors import LlmFromScratchError
from ..gradcheck import GradcheckReport, gradcheck
from ..tensor import Tensor
from .formatting import format_number, format_vector

GRADIENT_DELTA = 1e-6


@dataclass(frozen=True)
class ErrorCase:
    """One invalid configuration or input and what the package answered."""

    key: str
    expected: type
    raised: type | None
    message: str

    @property
    def rejected(self) -> bool:
        return self.raised is not None and issubclass(self.raised, self.expected)


def run_error_case(key: str, expected: type, attempt: Callable[[], object]) -> ErrorCase:
    """Run ``attempt``; record which typed error (if any) it raised and its message."""
    try:
        attempt()
    except LlmFromScratchError as error:
        return ErrorCase(key, expected, type(error), str(error))
    return ErrorCase(key, expected, None, "accepted")


@dataclass(frozen=True)
class GradientEvidence:
    """Central differences against ``backward`` for the input and every parameter."""

    report: GradcheckReport

    def checks(self, index: int) -> int:
        """Coordinates checked in tensor ``index`` (0: the input, then the parameters in order)."""
        return self.report.checks[index].coordinates

    @property
    def input_checks(self) -> int:
        return self.checks(0)

    @property
    def parameter_checks(self) -> int:
        return self.total - self.input_checks

    @property
    def total(self) -> int:
        return self.report.total

    @property
    def passed(self) -> bool:
        return self.report.passed


def gradient_evidence(layer, x_value: np.ndarray, upstream: np.ndarray, tolerance: float) -> GradientEvidence:
    """Gradcheck of ``layer.forward(x).output`` over the input and every parameter of ``layer``."""
    report = gradcheck(lambda x: layer.forward(x).output, x_value, list(layer.parameters()), upstream,
                       delta=GRADIENT_DELTA, tolerance=tolerance)
    return GradientEvidence(report)


def identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of shape and every value."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def tensors_of(record: object) -> list[Tensor]:
    """Every Tensor of a forward record, those of nested records included."""
    found = []
    for field in fields(record):
        value = getattr(record, field.name)
        found.extend(tensors_of(value) if is_dataclass(value) else [value])
    return found


def all_finite(tensors: Sequence[Tensor | np.ndarray | None]) -> bool:
    values = [t.value if isinstance(t, Tensor) else t for t in tensors if t is not None]
    return all(bool(np.all(np.isfinite(v))) for v in values)


def zero_stays_zero(record: object) -> bool:
    """A forward run on a zero input is exactly zero at every stage but the probabilities.

    That is what a layer without biases does: each projection only multiplies.
    A bias anywhere (Q, K, V, O, gate, up or down) would show up as a nonzero stage.
    """
    return all(not getattr(record, field.name).value.any() for field in fields(record)
               if field.name != "attention_weights")


def future_probabilities_zero(weights: np.ndarray) -> bool:
    """Every probability right of the diagonal of ``[..., T, T]`` is exactly 0."""
    above = np.triu(np.ones(weights.shape[-2:], dtype=bool), k=1)
    return bool(np.all(weights[..., above] == 0.0))


@dataclass(frozen=True)
class WorkedExample:
    """What both chapters measure on their worked example: one forward pass and every stage of it, the causal
    checks, and one backward pass. Each chapter's ``PrimaryEvidence`` adds its own findings."""

    input: np.ndarray
    forward: object                 # the layer's forward record
    future_probabilities_zero: bool  # every weight right of the diagonal is exactly 0
    prefix_perturbed_output: np.ndarray  # the output when only the last token changes
    prefix_zero_unchanged: bool
    prefix_one_unchanged: bool
    suffix_changed: bool
    upstream: np.ndarray
    loss: float                      # sum(output * upstream)
    input_gradient: np.ndarray
    parameter_gradients: tuple[np.ndarray, ...]
    tape_finite: bool

    def value(self, stage: str) -> np.ndarray:
        """The input or a stage of the forward record as an array, e.g. ``value("attention_weights")``."""
        return self.input if stage == "input" else getattr(self.forward, stage).value


def worked_example(layer, x_value: np.ndarray, perturbed_input: np.ndarray, upstream: np.ndarray) -> dict:
    """The fields of ``WorkedExample`` for ``layer``; the tape is released at the end, its values stay readable."""
    x = Tensor(x_value, requires_grad=True)
    forward = layer.forward(x, position_offset=0)
    output = forward.output.value
    perturbed = layer.forward(Tensor(perturbed_input)).output.value  # rows 0, 1 must stay, row 2 must change
    forward.output.backward(upstream)
    gradients = tuple(p.grad.copy() for p in layer.parameters())
    fields_ = {
        "input": x_value, "forward": forward,
        "future_probabilities_zero": future_probabilities_zero(forward.attention_weights.value),
        "prefix_perturbed_output": perturbed, "prefix_zero_unchanged": identical(perturbed[0, 0], output[0, 0]),
        "prefix_one_unchanged": identical(perturbed[0, 1], output[0, 1]),
        "suffix_changed": not identical(perturbed[0, 2], output[0, 2]),
        "upstream": upstream, "loss": float(np.sum(output * upstream)), "input_gradient": x.grad.copy(),
        "parameter_gradients": gradients, "tape_finite": all_finite([*tensors_of(forward), x.grad, *gradients]),
    }
    forward.output.release()
    return fields_


def replays_bitwise(first, second) -> bool:
    """Two runs of a chapter's primary evidence gave the same output and gradients bit for bit."""
    return (identical(first.forward.output.value, second.forward.output.value)
            and identical(first.input_gradient, second.input_gradient)
            and all(identical(a, b) for a, b in zip(first.parameter_gradients, second.parameter_gradients,
                                                    strict=True)))


def reuse_released_input(layer, x_value: np.ndarray) -> None:
    """Run ``layer`` once, release the tape, then hand it the released input again (must be refused)."""
    tensor = Tensor(x_value)
    layer.forward(tensor).output.release()
    layer.forward(tensor)


def weight_record(head: int, query: int, row: np.ndarray) -> str:
    """One causal probability row of the diagram trace, with its visible and masked keys."""
    tokens = row.shape[0]
    return (f"WEIGHTS|head={head}|query={query}|values={format_vector(row)}"
            f"|visible=[{','.join(str(k) for k in range(query + 1))}]"
            f"|masked=[{','.join(str(k) for k in range(query + 1, tokens))}]"
            f"|row_sum={format_number(row.sum())}")


def chapter_main(argv: Sequence[str] | None, description: str, report: Callable[[], str],
                 trace: Callable[[], str]) -> int:
    """``python -m llm_from_scratch.chapters.chNN [--trace]``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--trace", action="store_true", help="print the diagram trace instead of the report")
    arguments = parser.parse_args(argv)
    print(trace() if arguments.trace else report(), end="")
    return 0
