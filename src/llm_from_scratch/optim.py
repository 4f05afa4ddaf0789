"""Adam with bias correction (Kingma & Ba 2015, Algorithm 1) and an
optional linear warm-up. For every parameter ``θ`` with gradient ``g``, at
step ``t = 1, 2, ...``:

    m = β1 m + (1 - β1) g          v = β2 v + (1 - β2) g²
    θ = θ - η_t (m / (1 - β1^t)) / (sqrt(v / (1 - β2^t)) + ε)

with ``η_t = η min(1, t / warmup)``, or ``η`` when ``warmup = 0``.
"""

import numpy as np

from .checks import finite_number, is_int
from .errors import OptimizerError, chained
from .parameter import ParameterList


class Adam:
    """``step()`` moves every parameter that has a gradient."""

    def __init__(self, parameters, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, warmup: int = 0) -> None:
        error = OptimizerError
        with chained(error, "Adam parameters"):
            self.parameters = ParameterList(parameters)
        self.lr = finite_number(lr, "Adam learning rate", error)
        self.eps = finite_number(eps, "Adam epsilon", error)
        if not isinstance(betas, tuple) or len(betas) != 2:
            raise error(f"Adam betas must be a pair, got {betas!r}")
        self.beta1, self.beta2 = (finite_number(
            b, "Adam beta", error, zero_allowed=True) for b in betas)
        if max(self.beta1, self.beta2) >= 1:
            raise error(f"Adam betas must be below 1, got {betas!r}")
        if not is_int(warmup) or warmup < 0:
            raise error("Adam warmup must be an integer >= 0, "
                        f"got {warmup!r}")
        self.warmup, self.t = int(warmup), 0
        self.m = [np.zeros(p.shape) for p in self.parameters]
        self.v = [np.zeros(p.shape) for p in self.parameters]

    def rate(self, t: int) -> float:
        """``η_t``: the learning rate of step ``t`` (counted from 1)."""
        return self.lr * (min(1.0, t / self.warmup) if self.warmup else 1)

    def step(self) -> None:
        """One update from the current gradients (``None``: no update)."""
        for p in self.parameters:
            if p.grad is not None and not np.isfinite(p.grad).all():
                raise OptimizerError(f"Adam step {self.t + 1}: gradient of "
                                     f"{p.name} is not finite")
        self.t += 1
        c1, c2 = 1 - self.beta1**self.t, 1 - self.beta2**self.t
        for p, m, v in zip(self.parameters, self.m, self.v, strict=True):
            if p.grad is not None:
                m[...] = self.beta1 * m + (1 - self.beta1) * p.grad
                v[...] = self.beta2 * v + (1 - self.beta2) * p.grad**2
                p.value = p.value - self.rate(self.t) * (m / c1) / (
                    np.sqrt(v / c2) + self.eps)
                p.value.flags.writeable = False

    def zero_grad(self) -> None:
        self.parameters.zero_grad()
