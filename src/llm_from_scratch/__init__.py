"""NumPy core for chapters 30-31 of "LLM from scratch".

Shapes: ``[B, T, d_model]`` for the residual stream, ``[B, h, T, d_h]``
inside attention, weights ``[d_in, d_out]`` with ``y = x @ W``; float64.
"""

from .attention import MultiHeadAttention, MultiHeadAttentionForward
from .block import DecoderBlock, DecoderBlockConfig, DecoderBlockForward
from .causal import causal_scaled_dot_product_self_attention
from .errors import (CausalAttentionError, DecoderBlockError,
                     GradcheckError, HeadLayoutError, InitializationError,
                     LlmFromScratchError, MultiHeadAttentionError,
                     OptimizerError, ParameterError, RmsNormError,
                     RopeError, SwiGluError, TensorError)
from .gradcheck import GradcheckReport, gradcheck
from .heads import merge_heads, split_heads
from .book.optim import Adam
from .parameter import Parameter, ParameterList
from .rmsnorm import RmsNorm
from .rng import SplitMix64
from .rope import RotaryEmbedding
from .swiglu import SwiGlu, SwiGluForward
from .tensor import Tensor
