"""Chapter 30's learned heads: the first training steps against an independent computation,
and what the default runs learn.

The reference here shares no code with the package: the layer is written out head by head
in NumPy (RoPE as a product with complex numbers), its gradient comes from central
differences, and Adam's first two updates are done by hand from those gradients.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.ch30 import learned_heads as lh

T, D = lh.TOKENS, lh.WIDTH
LR, B1, B2, EPS = lh.LEARNING_RATE, 0.9, 0.999, 1e-8


def reference_output(weights: list[np.ndarray], x: np.ndarray, heads: int) -> np.ndarray:
    """Causal multi-head attention with RoPE, one head at a time: ``x [B, T, D] -> [B, T, D]``."""
    w_q, w_k, w_v, w_o = weights
    d_h = D // heads
    turn = np.exp(1j * np.arange(T)[:, None] * lh.ROPE_BASE ** (-2 * np.arange(d_h // 2) / d_h))

    def rope(rows):  # the pair (x, y) as x + iy, turned by its angle
        z = (rows[..., 0::2] + 1j * rows[..., 1::2]) * turn
        return np.stack([z.real, z.imag], axis=-1).reshape(rows.shape)

    outputs = []
    for head in range(heads):
        cols = slice(head * d_h, (head + 1) * d_h)
        scores = rope((x @ w_q)[..., cols]) @ np.swapaxes(rope((x @ w_k)[..., cols]), 1, 2) / np.sqrt(d_h)
        scores = np.where(np.tril(np.ones((T, T), bool)), scores, -np.inf)
        table = np.exp(scores - scores.max(axis=-1, keepdims=True))
        outputs.append(table / table.sum(axis=-1, keepdims=True) @ (x @ w_v)[..., cols])
    return np.concatenate(outputs, axis=-1) @ w_o


def reference_loss(weights, x, targets, heads) -> float:
    y = reference_output(weights, x, heads)
    return float(np.mean((y[:, 2:, 0] - targets[..., 0]) ** 2 + (y[:, 2:, 4] - targets[..., 1]) ** 2) / 2)


def central_differences(weights, x, targets, heads, delta=1e-6) -> list[np.ndarray]:
    grads = []
    for which, w in enumerate(weights):
        g = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            moved = [v.copy() for v in weights]
            moved[which][index] += delta
            up = reference_loss(moved, x, targets, heads)
            moved[which][index] -= 2 * delta
            g[index] = (up - reference_loss(moved, x, targets, heads)) / (2 * delta)
        grads.append(g)
    return grads


def hand_adam(weights, gradients_at):
    """Two of Kingma & Ba's updates; ``gradients_at(step, weights)`` gives the gradients."""
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    for t in (1, 2):
        grads = gradients_at(t - 1, weights)
        m = [B1 * a + (1 - B1) * g for a, g in zip(m, grads, strict=True)]
        v = [B2 * a + (1 - B2) * g * g for a, g in zip(v, grads, strict=True)]
        weights = [w - LR * (a / (1 - B1**t)) / (np.sqrt(b / (1 - B2**t)) + EPS)
                   for w, a, b in zip(weights, m, v, strict=True)]
    return weights


@pytest.mark.parametrize("heads", [1, 2])
def test_the_first_two_steps_equal_differences_and_adam_by_hand(heads):
    start = [p.value.copy() for p in lh.random_layer(heads=heads).parameters()]
    learned = lh.learn(heads=heads, steps=2)

    def gradients_at(step, weights):
        x, targets = lh.task_batch(step)
        return central_differences(weights, x, targets, heads)

    x0, t0 = lh.task_batch(0)
    assert learned.run.losses[0] == pytest.approx(reference_loss(start, x0, t0, heads), abs=1e-12)
    # the tape's gradient of step 1 (left in .grad by the last step) against differences
    after_one = lh.learn(heads=heads, steps=1)
    for p, g in zip(after_one.layer.parameters(), gradients_at(0, start), strict=True):
        np.testing.assert_allclose(p.grad, g, rtol=0, atol=1e-8)
    expected = hand_adam(start, gradients_at)
    for p, w in zip(learned.layer.parameters(), expected, strict=True):
        np.testing.assert_allclose(p.value, w, rtol=0, atol=1e-7)
    assert np.max(np.abs(expected[0] - start[0])) > 0.05           # the weights did move: 2 steps of lr 0.03


def test_the_batches_hold_the_two_jobs_and_repeat():
    x, targets = lh.task_batch(7)
    content = x[..., lh.CONTENT]
    np.testing.assert_array_equal(targets[..., 0], content[:, 1:5])                 # rows 2..5: token m - 1
    np.testing.assert_array_equal(targets[..., 1], np.repeat(content[:, :1], 4, 1))   # token 0
    assert np.all(x[..., lh.CONSTANT] == 1) and np.count_nonzero(x[..., 3:]) == 0
    np.testing.assert_array_equal(lh.task_batch(7)[0], x)
    assert not np.array_equal(lh.task_batch(8)[0], x)


def test_the_loss_gradient_is_the_derivative_of_the_loss():
    rng = np.random.default_rng(0)
    output, targets = rng.standard_normal((3, T, D)), rng.standard_normal((3, T - 2, 2))
    loss, grad = lh.two_job_loss(output, targets)
    assert loss == pytest.approx(np.mean((output[:, 2:, [0, 4]] - targets) ** 2), abs=1e-15)
    numeric = np.zeros_like(output)
    for index in np.ndindex(output.shape):
        moved = output.copy()
        moved[index] += 1e-6
        up = lh.two_job_loss(moved, targets)[0]
        moved[index] -= 2e-6
        numeric[index] = (up - lh.two_job_loss(moved, targets)[0]) / 2e-6
    np.testing.assert_allclose(grad, numeric, atol=1e-9)
    assert np.count_nonzero(grad) == 3 * 4 * 2                          # rows 2..5, columns 0 and 4


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_one_head_layer_beats_the_line_bound(seed):
    """Any weights: one head puts both columns on one line, so its error is at least
    the best line's on the same sequences."""
    layer = lh.random_layer(heads=1, seed=seed)
    assert lh.held_out_loss(layer) >= lh.line_bound(lh.held_out()[1])
    assert abs(lh.column_correlation(layer)) == pytest.approx(1.0, abs=1e-9)


def test_the_line_bound_is_one_half_over_many_sequences():
    targets = lh.task_batch(0, size=200_000, seed=1)[1]
    assert lh.line_bound(targets) == pytest.approx(lh.ONE_HEAD_BOUND, abs=0.005)


def test_stopping_for_the_held_out_loss_changes_no_update():
    whole = lh.learn(heads=2, steps=60)
    parts = lh.learn(heads=2, steps=60, every=25)
    np.testing.assert_array_equal(parts.run.losses, whole.run.losses)
    for a, b in zip(parts.layer.parameters(), whole.layer.parameters(), strict=True):
        np.testing.assert_array_equal(a.value, b.value)
    assert parts.checkpoints.tolist() == [0, 25, 50, 60]
    assert parts.held_out[0] == lh.held_out_loss(lh.random_layer(heads=2))
    assert parts.held_out[-1] == lh.held_out_loss(whole.layer)
    assert len(whole.checkpoints) == len(whole.held_out) == 0


@pytest.fixture(scope="module")
def runs():
    return {heads: lh.learn(heads=heads, every=lh.EVERY) for heads in (1, 2)}


def test_the_one_head_curve_never_goes_below_the_bound_of_its_sequences(runs):
    """The held-out curve (the chapter's figure): above the best line for those sequences at
    every checkpoint, while single 32-sequence batches do go below 1/2."""
    one = runs[1]
    assert one.checkpoints.tolist() == list(range(0, lh.STEPS + 1, lh.EVERY))
    bound = lh.line_bound(lh.held_out()[1])
    assert np.all(one.held_out >= bound)
    assert one.held_out[-1] == lh.held_out_loss(one.layer)
    assert np.min(one.run.losses) < lh.ONE_HEAD_BOUND                # batch noise, not a broken bound


def test_two_heads_learn_both_jobs_one_head_each(runs):
    two = runs[2]
    assert not two.run.diverged and len(two.run.losses) == lh.STEPS
    assert lh.held_out_loss(two.layer) < 0.005
    shares = lh.job_weights(two.layer)                                  # [head, (previous, first)]
    assert sorted(np.argmax(shares, axis=1).tolist()) == [0, 1]          # one head per job
    assert np.all(shares.max(axis=1) > 0.95) and np.all(shares.min(axis=1) < 0.02)
    assert abs(lh.column_correlation(two.layer)) < 0.1                  # two independent columns


def test_one_head_reaches_the_bound_and_does_one_job(runs):
    one = runs[1]
    loss, bound = lh.held_out_loss(one.layer), lh.line_bound(lh.held_out()[1])
    assert bound <= loss < bound + 0.02
    shares = lh.job_weights(one.layer)[0]
    assert shares.max() > 0.95 and shares.min() < 0.02
    assert abs(lh.column_correlation(one.layer)) == pytest.approx(1.0, abs=1e-9)


def test_the_spread_of_the_held_out_loss_is_that_of_the_per_sequence_losses(runs):
    """The page's one head copies the previous token, so it misses z_0 in all four rows of a
    sequence: the spread of its held-out loss is about sqrt(Var(z_0^2 / 2) / 4096) = 0.011,
    twice that of a head that copies the first token and misses four different contents."""
    one = runs[1]
    assert lh.jobs(one.layer) == ["previous"]
    x, targets = lh.held_out()
    y = reference_output([p.value for p in one.layer.parameters()], x, 1)
    per_sequence = np.mean((y[:, 2:, [0, 4]] - targets) ** 2, axis=(1, 2))
    spread = lh.held_out_spread(one.layer)
    assert spread == pytest.approx(per_sequence.std() / np.sqrt(lh.HELD_OUT), rel=1e-6)
    assert spread == pytest.approx(np.sqrt(0.5 / lh.HELD_OUT), rel=0.1)          # 0.011
    assert abs(lh.held_out_loss(one.layer) - lh.ONE_HEAD_BOUND) < spread        # 0.496: 1/2 within it
    assert lh.held_out_spread(runs[2].layer) < 1e-4


def test_the_figure_of_output_pairs_shows_a_line_for_one_head_and_the_targets_for_two(runs):
    outputs, targets = lh.output_pairs(runs[1].layer)
    _, all_targets = lh.held_out()
    assert outputs.shape == targets.shape == (300, 2)
    np.testing.assert_array_equal(targets, all_targets[:75].reshape(-1, 2))
    spread = np.linalg.svd(outputs - outputs.mean(axis=0), compute_uv=False)
    assert spread[1] <= 1e-6 * spread[0]                                # one head: on one line
    two_outputs, _ = lh.output_pairs(runs[2].layer)
    assert np.sqrt(np.mean((two_outputs - targets) ** 2)) < 0.1          # two heads: on their targets


def test_the_twins_start_from_the_same_matrices(runs):
    assert runs[1].layer.parameters().count() == runs[2].layer.parameters().count() == 4 * D * D
    for a, b in zip(lh.random_layer(heads=1).parameters(), lh.random_layer(heads=2).parameters(), strict=True):
        np.testing.assert_array_equal(a.value, b.value)                # only the grouping into heads differs


# -- other random starts: the page's table of starts ------------------------------------

SURVEY_SEEDS, SURVEY_STEPS = lh.SURVEY_SEEDS, lh.SURVEY_STEPS


def test_the_page_surveys_twenty_starts_of_150_steps():
    assert list(SURVEY_SEEDS) == list(range(31, 51)) and SURVEY_STEPS == 150


@pytest.mark.parametrize("seed", SURVEY_SEEDS[:8])
def test_at_every_start_two_heads_split_the_jobs(seed):
    two = lh.learn(heads=2, steps=SURVEY_STEPS, seed=seed)
    assert sorted(lh.jobs(two.layer)) == ["first", "previous"]


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("seed", SURVEY_SEEDS[:4])
def test_the_jobs_a_layer_has_after_150_steps_stay_to_the_end(seed, heads):
    """The page asks the starts after 150 steps: every head keeps its job at every
    held-out checkpoint from there to step 1000."""
    run = lh.learn(heads=heads, seed=seed, every=lh.EVERY)
    later = [jobs for step, jobs in zip(run.checkpoints, run.held_out_jobs, strict=True)
             if step >= SURVEY_STEPS]
    assert len(later) == (lh.STEPS - SURVEY_STEPS) // lh.EVERY + 1
    assert set(later) == {tuple(lh.jobs(lh.learn(heads=heads, steps=SURVEY_STEPS, seed=seed).layer))}
    assert tuple(lh.jobs(run.layer)) == later[-1]
    if heads == 1:
        assert lh.held_out_loss(run.layer) >= lh.line_bound(lh.held_out()[1])
    else:
        assert sorted(later[-1]) == ["first", "previous"]


def test_a_slow_rope_base_learns_the_first_token_much_more_slowly():
    """Base 10 000: pair 1 of a head turns by 0.01 per position, a ten times flatter ramp
    to the farthest key than with the chapter's base 100."""
    slow = lh.learn(heads=2, rope_base=10_000.0)
    fast = lh.learn(heads=2)
    assert lh.held_out_loss(slow.layer) > 8 * lh.held_out_loss(fast.layer)       # 11 times here
