"""Pieces shared by the chapter evidence modules."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import LlmFromScratchError
from .formatting import format_number, format_vector
from ..tensor import Tensor


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


def identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of shape and every value."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def all_finite(tensors: Sequence[Tensor | np.ndarray | None]) -> bool:
    values = [t.value if isinstance(t, Tensor) else t for t in tensors if t is not None]
    return all(bool(np.all(np.isfinite(v))) for v in values)


def replays_bitwise(first, second) -> bool:
    """Two runs of a chapter's primary evidence gave the same output and gradients bit for bit."""
    return (identical(first.forward.output.value, second.forward.output.value)
            and identical(first.input_gradient, second.input_gradient)
            and all(identical(a, b) for a, b in zip(first.parameter_gradients, second.parameter_gradients)))


def reuse_released_input(layer, x_value: np.ndarray) -> None:
    """Run ``layer`` once, release the tape, then hand it the released input again (must be refused)."""
    tensor = Tensor(x_value)
    layer.forward(tensor).output.release()
    layer.forward(tensor)


def token_row(values: np.ndarray, token: int) -> np.ndarray:
    """Row ``token`` of the first batch item of ``[B, T, d]``."""
    return values[0, token]


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
