"""Adam with bias correction (Kingma & Ba 2015, Algorithm 1) and an
optional linear warm-up. For every parameter ``θ`` with gradient ``g``, at
step ``t = 1, 2, ...``:

    m = β1 m + (1 - β1) g          v = β2 v + (1 - β2) g²
    θ = θ - η_t (m / (1 - β1^t)) / (sqrt(v / (1 - β2^t)) + ε)

with ``η_t = η min(1, t / warmup)``, or ``η`` when ``warmup = 0``.
"""

import numpy as np

from ..checks import check_size, finite_number, is_int, shown
from ..errors import OptimizerError, chained
from ..parameter import ParameterList


class Adam:
    """``step()`` moves every parameter that has a gradient, or none: it
    checks every gradient and computes every update before it moves one."""

    def __init__(self, parameters, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, warmup: int = 0) -> None:
        error = OptimizerError
        with chained(error, "Adam parameters"):
            self.parameters = ParameterList(parameters)
        self.lr = lr                      # checked by the setter below
        self.eps = finite_number(eps, "Adam epsilon", error)
        if not isinstance(betas, tuple) or len(betas) != 2:
            raise error(f"Adam betas must be a pair, got {shown(betas)}")
        self.beta1, self.beta2 = (finite_number(
            b, "Adam beta", error, zero_allowed=True) for b in betas)
        if max(self.beta1, self.beta2) >= 1:
            raise error(f"Adam betas must be below 1, got {shown(betas)}")
        if not is_int(warmup) or warmup < 0:
            raise error("Adam warmup must be an integer >= 0, "
                        f"got {shown(warmup)}")
        self.warmup, self.t = int(warmup), 0
        check_size(2 * self.parameters.count(), "Adam moments m and v",
                   error)                 # before they are allocated
        self.m = [np.zeros(p.shape) for p in self.parameters]
        self.v = [np.zeros(p.shape) for p in self.parameters]

    @property
    def lr(self) -> float:
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:   # a schedule may change it
        self._lr = finite_number(value, "Adam learning rate",
                                 OptimizerError)

    def rate(self, t: int) -> float:
        """``η_t``: the learning rate of step ``t`` (counted from 1)."""
        if not is_int(t) or t < 1:
            raise OptimizerError("Adam step must be an integer >= 1, "
                                 f"got {shown(t)}")
        warm = 1.0 if t >= self.warmup else t / self.warmup
        return self.lr * warm

    def step(self) -> None:
        """One update from the current gradients (``None``: no update).

        Every gradient is checked first (``gradient`` names the parameter);
        then the arithmetic runs once, element by element, on all of them
        joined into one vector (a training step's dozens of small arrays cost
        more in calls than in sums), and the parameters move only if no
        update overflowed."""
        t = self.t + 1
        rate, c1, c2 = self.rate(t), 1 - self.beta1**t, 1 - self.beta2**t
        live = [i for i, p in enumerate(self.parameters) if p.grad is not None]
        g = self.gradients([self.parameters[i] for i in live], t)
        with np.errstate(over="ignore", invalid="ignore"):
            m = self.beta1 * self._joined([self.m[i] for i in live]) + (1 - self.beta1) * g
            v = self.beta2 * self._joined([self.v[i] for i in live]) + (1 - self.beta2) * g**2
            values = self._joined([self.parameters[i].value for i in live]) - rate * (m / c1) / (
                np.sqrt(v / c2) + self.eps)
        ends = np.cumsum([self.parameters[i].value.size for i in live])
        broken = ~(np.isfinite(m) & np.isfinite(v) & np.isfinite(values))
        if broken.any():                  # nothing has moved yet
            k = int(np.searchsorted(ends, np.argmax(broken), side="right"))
            p = self.parameters[live[k]]
            raise OptimizerError(
                f"Adam step {t}: the update of {p.name} overflows, "
                f"got |gradient| up to {np.abs(p.grad).max():.3g}")
        values.flags.writeable = False
        starts = ends - [self.parameters[i].value.size for i in live]
        for i, a, b in zip(live, starts, ends, strict=True):
            shape = self.parameters[i].shape
            self.m[i], self.v[i] = m[a:b].reshape(shape), v[a:b].reshape(shape)
            self.parameters[i].value = values[a:b].reshape(shape)
        self.t = t

    @staticmethod
    def _joined(arrays) -> np.ndarray:
        return np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)

    @classmethod
    def gradients(cls, parameters, t: int) -> np.ndarray:
        """Their gradients joined, each checked as ``gradient`` does: the
        shapes one by one, but whether they are finite once, on the joined
        vector; a bad one is then looked for in order, so the error names
        the first, as checking them one by one would."""
        grads = [p.grad for p in parameters]
        if all(isinstance(g, np.ndarray) and g.dtype.kind in "fiu"
               and g.shape == p.shape for p, g in zip(parameters, grads, strict=True)):
            joined = cls._joined(grads)
            if np.isfinite(joined).all():
                return joined
        return cls._joined([cls.gradient(p, t) for p in parameters])

    @staticmethod
    def gradient(p, t: int) -> np.ndarray:
        """``p.grad``: finite real numbers of ``p``'s shape."""
        g = p.grad
        if not (isinstance(g, np.ndarray) and g.dtype.kind in "fiu"
                and g.shape == p.shape):
            got = (f"{g.dtype} {list(g.shape)}" if isinstance(
                g, np.ndarray) else type(g).__name__)
            raise OptimizerError(
                f"Adam step {t}: gradient of {p.name} must be real "
                f"numbers of shape {list(p.shape)}, got {got}")
        if not np.isfinite(g).all():
            raise OptimizerError(f"Adam step {t}: gradient of {p.name} "
                                 "is not finite")
        return g

    def zero_grad(self) -> None:
        self.parameters.zero_grad()
