"""Adam against a float64 reference written out by hand, warm-up, bad input."""

import math

import numpy as np
import pytest

from llm_from_scratch import Adam, OptimizerError, Parameter, Tensor, TensorError
from llm_from_scratch.book.training import cross_entropy, train
from llm_from_scratch.errors import TrainingError

LR, B1, B2, EPS = 0.1, 0.9, 0.999, 1e-8
GRADIENTS = (0.5, -1.0, 2.0)


def hand_adam(theta, gradients, warmup=0):
    """Kingma & Ba's Algorithm 1, one scalar, in plain Python floats."""
    m = v = 0.0
    thetas = []
    for t, g in enumerate(gradients, start=1):
        m = B1 * m + (1 - B1) * g
        v = B2 * v + (1 - B2) * g * g
        rate = LR * min(1.0, t / warmup) if warmup else LR
        theta -= rate * (m / (1 - B1**t)) / (math.sqrt(v / (1 - B2**t)) + EPS)
        thetas.append(theta)
    return thetas


def run_adam(theta, gradients, **options):
    p = Parameter("w", [theta])
    adam = Adam([p], lr=LR, betas=(B1, B2), eps=EPS, **options)
    thetas = []
    for g in gradients:
        p.grad = np.array([g])
        adam.step()
        thetas.append(float(p.value[0]))
    return thetas


def test_the_first_step_moves_by_the_learning_rate():
    # m̂ = g and v̂ = g² after bias correction: the step is lr g / (|g| + eps)
    assert run_adam(1.0, [0.5])[0] == pytest.approx(1.0 - LR * 0.5 / (0.5 + EPS), abs=1e-15)
    assert run_adam(1.0, [0.5])[0] == pytest.approx(0.900000002, abs=1e-12)


def test_three_steps_equal_the_hand_reference():
    assert run_adam(1.0, GRADIENTS) == pytest.approx(hand_adam(1.0, GRADIENTS), abs=1e-15)
    # the second step by hand: m = -0.055, v = 0.00124975, so m̂ = -0.055 / 0.19, v̂ = 0.00124975 / 0.001999
    second = 0.900000002 + LR * (0.055 / 0.19) / (math.sqrt(0.00124975 / 0.001999) + EPS)
    assert run_adam(1.0, GRADIENTS[:2])[1] == pytest.approx(second, abs=1e-12)


def test_warmup_scales_the_rate_linearly():
    adam = Adam([Parameter("w", [0.0])], lr=0.3, warmup=3)
    assert [adam.rate(t) for t in (1, 2, 3, 4, 10)] == pytest.approx([0.1, 0.2, 0.3, 0.3, 0.3])
    assert run_adam(1.0, GRADIENTS, warmup=3) == pytest.approx(hand_adam(1.0, GRADIENTS, warmup=3), abs=1e-15)


def test_each_coordinate_of_each_parameter_has_its_own_moments():
    a, b = Parameter("a", np.zeros((2, 3))), Parameter("b", np.ones(4))
    adam = Adam([a, b], lr=LR, betas=(B1, B2), eps=EPS)
    grads = np.arange(1.0, 7.0).reshape(2, 3) * np.array([1, -1, 1])
    for step in range(3):
        a.grad = grads * GRADIENTS[step]
        b.grad = None if step == 1 else np.full(4, GRADIENTS[step])
        adam.step()
    for index in np.ndindex(2, 3):
        g = grads[index]
        assert a.value[index] == pytest.approx(hand_adam(0.0, [g * x for x in GRADIENTS])[-1], abs=1e-14)
    # b skipped step 2: its moments saw two gradients, but bias correction counts three steps
    m = v = 0.0
    for g in (GRADIENTS[0], None, GRADIENTS[2]):
        if g is not None:
            m, v = B1 * m + (1 - B1) * g, B2 * v + (1 - B2) * g * g
    first = hand_adam(1.0, GRADIENTS[:1])[0]
    expected = first - LR * (m / (1 - B1**3)) / (math.sqrt(v / (1 - B2**3)) + EPS)
    np.testing.assert_allclose(b.value, expected, atol=1e-14)


def test_adam_finds_the_minimum_of_a_quadratic():
    target = np.array([3.0, -2.0])
    p = Parameter("w", [0.0, 0.0])
    adam = Adam([p], lr=0.1)
    for _ in range(500):
        p.grad = 2 * (p.value - target)
        adam.step()
    np.testing.assert_allclose(p.value, target, atol=1e-3)


def test_zero_grad_clears_every_gradient():
    p = Parameter("w", [1.0])
    p.grad = np.array([1.0])
    Adam([p]).zero_grad()
    assert p.grad is None


@pytest.mark.parametrize(("options", "words"), [
    ({"lr": 0}, "learning rate"), ({"lr": float("nan")}, "learning rate"),
    ({"eps": -1}, "epsilon"), ({"betas": (0.9,)}, "pair"), ({"betas": (0.9, 1.0)}, "below 1"),
    ({"betas": (-0.1, 0.9)}, "beta"), ({"warmup": -1}, "warmup"), ({"warmup": 1.5}, "warmup"),
    ({"warmup": True}, "warmup"),
])
def test_bad_settings_get_a_typed_error(options, words):
    with pytest.raises(OptimizerError, match=words):
        Adam([Parameter("w", [1.0])], **options)


def test_parameters_must_be_distinct_parameters():
    p = Parameter("w", [1.0])
    with pytest.raises(OptimizerError, match="appears twice"):
        Adam([p, p])
    with pytest.raises(OptimizerError, match="must be a Parameter"):
        Adam([np.zeros(2)])


def test_a_non_finite_gradient_stops_before_any_parameter_moves():
    a, b = Parameter("a", [1.0]), Parameter("b", [2.0])
    adam = Adam([a, b])
    a.grad, b.grad = np.array([1.0]), np.array([np.inf])
    with pytest.raises(OptimizerError, match="step 1: gradient of b is not finite"):
        adam.step()
    assert (a.value[0], b.value[0], adam.t) == (1.0, 2.0, 0)


def test_the_first_bad_gradient_is_named_though_finiteness_is_checked_once():
    """Shapes are checked one by one and finiteness on all gradients joined; the error still names the
    first bad parameter in order, as a check of each in turn would."""
    a, b, c = Parameter("a", [1.0]), Parameter("b", [2.0]), Parameter("c", [3.0])
    adam = Adam([a, b, c])
    a.grad, b.grad, c.grad = np.array([1.0]), np.array([np.nan]), np.zeros(2)
    with pytest.raises(OptimizerError, match="gradient of b is not finite"):
        adam.step()
    b.grad = np.array([1.0])
    with pytest.raises(OptimizerError, match=r"gradient of c must be real numbers of shape \[1\], got float64 \[2\]"):
        adam.step()
    assert adam.t == 0


def test_training_a_bigram_table_reaches_the_entropy_of_the_task():
    """Targets are the next token of a fixed cycle: a table of logits learns it, the loss falls toward 0."""
    vocabulary = 5
    table = Parameter("table", np.zeros((vocabulary, vocabulary)))
    tokens = np.arange(12).reshape(2, 6) % vocabulary

    def model(inputs):
        return Tensor(np.eye(vocabulary)[inputs]) @ table  # one-hot rows pick rows of the table

    run = train(model, lambda step: (tokens, (tokens + 1) % vocabulary), Adam([table], lr=0.1), 200)
    assert not run.diverged and len(run.losses) == 200
    assert run.losses[0] == pytest.approx(math.log(vocabulary))  # uniform logits at the start
    assert run.losses[-1] < 0.05
    loss, grad = cross_entropy(np.zeros((1, 1, 4)), np.array([[2]]))
    assert loss == pytest.approx(math.log(4))
    np.testing.assert_allclose(grad[0, 0], [0.25, 0.25, -0.75, 0.25])


def test_a_run_that_overflows_after_updates_stops_and_names_the_step():
    """From step 3 the inputs are 1e308 apart: the cross-entropy overflows after three updates."""
    w = Parameter("w", np.eye(2))

    def batches(step):
        x = 1e308 if step >= 3 else 1.0
        return np.array([[[x, -x]]]), np.zeros((1, 1), dtype=np.int64)

    run = train(lambda inputs: Tensor(inputs) @ w, batches, Adam([w]), 10)
    assert run.diverged_at == 3 and len(run.losses) == 3
    assert run.message.startswith("training diverged at step 3: cross-entropy")


def test_an_overflow_before_any_update_is_raised_not_a_divergence():
    w = Parameter("w", np.eye(2))
    batch = (np.array([[[1e308, -1e308]]]), np.zeros((1, 1), dtype=np.int64))
    with pytest.raises(TrainingError, match="1e\\+308") as caught:
        train(lambda inputs: Tensor(inputs) @ w, lambda step: batch, Adam([w]), 10)
    assert isinstance(caught.value.__cause__, FloatingPointError)
    assert np.array_equal(w.value, np.eye(2))


def test_a_typed_error_of_the_model_is_raised_at_any_step():
    """Not a divergence: a shape that does not fit is a mistake, whenever it comes."""
    table = Parameter("table", np.zeros((3, 3)))

    def model(inputs):
        return Tensor(np.eye(3)[inputs]) @ (table if inputs.shape[1] == 2 else Parameter("w", np.ones((4, 3))))

    tokens = {0: np.array([[0, 1]]), 1: np.array([[0, 1]]), 2: np.array([[0, 1, 2]])}
    with pytest.raises(TensorError, match="matmul"):
        train(model, lambda step: (tokens[step], tokens[step] % 3), Adam([table]), 3)


def test_joining_the_parameters_changes_no_bit_of_an_update():
    rng = np.random.default_rng(3)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    joined = [Parameter(f"p{i}", rng.normal(size=s)) for i, s in enumerate(shapes)]
    alone = [Parameter(f"p{i}", p.value.copy()) for i, p in enumerate(joined)]
    fast, slow = Adam(joined, lr=0.03, warmup=2), Adam([*alone, Parameter("idle", [1.0])], lr=0.03, warmup=2)
    for _ in range(4):                            # the idle parameter has no gradient: one by one
        grads = [rng.normal(size=s) for s in shapes]
        for p, q, g in zip(joined, alone, grads, strict=True):
            p.grad, q.grad = g, g.copy()
        fast.step()
        slow.step()
    for p, q, m, n in zip(joined, alone, fast.m, slow.m[:3], strict=True):
        assert np.array_equal(p.value, q.value) and np.array_equal(m, n) and p.value.shape == q.value.shape
        assert not p.value.flags.writeable


def test_a_failed_step_moves_no_parameter_and_keeps_the_step_count():
    a, b = Parameter("a", [1.0, 2.0]), Parameter("b", [3.0, 4.0])
    adam = Adam([a, b])
    a.grad, b.grad = np.array([0.5, 0.5]), np.array([1.0, 1.0])
    adam.step()
    state = [p.value.copy() for p in (a, b)] + [m.copy() for m in adam.m + adam.v]
    for bad in (np.ones(3), np.full(2, 1e200), [1.0, 1.0], np.array([1.0, np.nan])):
        a.grad, b.grad = np.array([0.5, 0.5]), bad           # a's gradient is fine, b's comes later
        with pytest.raises(OptimizerError, match=r"gradient of b|update of b"):
            adam.step()
        after = [p.value for p in (a, b)] + adam.m + adam.v
        assert adam.t == 1 and all(np.array_equal(x, y) for x, y in zip(state, after, strict=True))


def test_the_learning_rate_can_change_between_steps_and_is_checked():
    p = Parameter("w", [1.0])
    adam = Adam([p], lr=0.1)
    adam.lr = np.float32(0.5)
    assert adam.lr == 0.5 and type(adam.lr) is float
    for bad in (float("nan"), 0.0, -1.0, "0.1", None):
        with pytest.raises(OptimizerError, match="learning rate"):
            adam.lr = bad
    assert adam.lr == 0.5
