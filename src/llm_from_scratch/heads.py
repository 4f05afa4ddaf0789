"""``split_heads`` and ``merge_heads``: reshape + transpose and its inverse.

Head ``i`` owns the model-width columns ``i*d_h .. (i+1)*d_h - 1``.
"""

from .checks import check_tensor, checked, positive_int
from .errors import HeadLayoutError
from .tensor import Tensor, reshape, transpose


def check_split(x, heads):
    check_tensor(x, "head split input", HeadLayoutError, rank=3)
    h = positive_int(heads, "head count", HeadLayoutError)
    if x.shape[2] % h:
        raise HeadLayoutError(f"model width {x.shape[2]} must be divisible "
                              f"by the number of heads ({h})")
    if x.shape[2] == 0:
        raise HeadLayoutError("head width must be nonzero, "
                              "got model width 0")


def check_merge(x):
    check_tensor(x, "head merge input", HeadLayoutError, rank=4)
    if 0 in x.shape[1::2]:
        raise HeadLayoutError("head count and head width must be nonzero, "
                              f"got shape {list(x.shape)}")


@checked(check_split, HeadLayoutError, "head split")
def split_heads(x: Tensor, heads: int) -> Tensor:
    """``[B, T, d_model] -> [B, h, T, d_h]`` with ``d_h = d_model / h``."""
    batch, tokens, d_model = x.shape
    d_h = d_model // heads
    x = reshape(x, (batch, tokens, heads, d_h))  # [B, T, h, d_h]
    return transpose(x, (0, 2, 1, 3))            # [B, h, T, d_h]


@checked(check_merge, HeadLayoutError, "head merge")
def merge_heads(x: Tensor) -> Tensor:
    """``[B, h, T, d_h] -> [B, T, h * d_h]``, inverse of ``split_heads``."""
    batch, heads, tokens, d_h = x.shape
    x = transpose(x, (0, 2, 1, 3))                   # [B, T, h, d_h]
    return reshape(x, (batch, tokens, heads * d_h))  # [B, T, d_model]
