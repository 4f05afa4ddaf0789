"""Residual addition: the stream that entered a branch plus its output."""

from __future__ import annotations

from .checks import check_tensor, checked
from .errors import ResidualError
from .tensor import Tensor


def check_shapes(stream: object, branch: object) -> None:
    check_tensor(stream, "residual stream", ResidualError)
    check_tensor(branch, "residual branch", ResidualError)
    if branch.shape != stream.shape:
        raise ResidualError(
            "residual branch shape must equal stream shape "
            f"{list(stream.shape)}, got {list(branch.shape)}")


@checked(check_shapes)
def residual_add(stream: Tensor, branch: Tensor) -> Tensor:
    """``stream + branch``, both ``[B, T, d_model]``: nothing broadcasts."""
    return stream + branch
