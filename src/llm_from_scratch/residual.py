"""Residual addition: the stream that entered a branch plus the branch's output."""

from __future__ import annotations

from .errors import ResidualError
from .linear import live_input
from .tensor import Tensor, add

STAGE = "residual"


def residual_add(stream: Tensor, branch: Tensor) -> Tensor:
    """``stream + branch``, both ``[B, T, d_model]``; no broadcasting, so no axis can change."""
    stream = live_input(stream, ResidualError, STAGE)
    branch = live_input(branch, ResidualError, STAGE)
    if stream.shape != branch.shape:
        raise ResidualError(
            f"residual branch shape must equal stream shape {list(stream.shape)}, got {list(branch.shape)}",
            stage=STAGE)
    return add(stream, branch)
