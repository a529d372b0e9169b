"""Hidden suite of 07-explanations: js_divergence, equivalent_attention, permutation_effect,
leave_one_out_importance, kendall_tau.

Models cross the wire as suite-written source (``Lambda``), with their parameters bound as arrays
(``Partial``); the same source is evaluated here, on the trusted side, to know what the learner's
function should have found. Randomised functions are checked through properties that every
correct implementation has, whatever the order in which it draws its random numbers.
"""
import itertools

import numpy as np

from autograder.kit import (RNG, as_array, as_float, check, expect_close, expect_shape, fail,
                            mistakes, points, suite_function)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "07-explanations"
LN2 = float(np.log(2.0))


# ------------------------------------------------------------------ trusted helpers

def js(p, q):
    """Jensen-Shannon divergence in nats along the last axis (trusted, float64)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = (p + q) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kp = np.where(p > 0, p * np.log(p / m), 0.0).sum(-1)
        kq = np.where(q > 0, q * np.log(q / m), 0.0).sum(-1)
    return (kp + kq) / 2


def tau_b(a, b):
    """Kendall's tau-b of two 1-D sequences by counting pairs (trusted)."""
    concordant = discordant = ties_a = ties_b = 0
    n = len(a)
    for i in range(n):
        for j in range(i + 1, n):
            da, db = a[i] - a[j], b[i] - b[j]
            ties_a += da == 0
            ties_b += db == 0
            concordant += da * db > 0
            discordant += da * db < 0
    pairs = n * (n - 1) / 2
    denominator = np.sqrt((pairs - ties_a) * (pairs - ties_b))
    return (concordant - discordant) / denominator if denominator > 0 else np.nan


def distributions(rng, shape, zero_fraction=0.0):
    """Random probability vectors along the last axis, optionally with exact zeros."""
    p = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
    if zero_fraction:
        p = np.where(rng.random(shape) < zero_fraction, 0.0, p)
        p[..., 0] += (p.sum(-1) == 0)          # never an all-zero row
        p = p / p.sum(-1, keepdims=True)
    return p


# The models of the suite. Contract: model(x, weights=None) -> (prediction, weights); one query
# scores the T rows of x with w_score, values are x @ W_v (mixed with their mean when mix > 0),
# the prediction is softmax(context @ W_out). Passing weights overrides the attention.
CLASSIFIER = """lambda x, weights=None, *, w_score, W_v, W_out, mix=0.0: (
    lambda alpha: (
        (lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())(
            (alpha @ ((1 - mix) * (x @ W_v) + mix * (x @ W_v).mean(axis=0))) @ W_out),
        alpha))(
    (lambda s: np.exp(s - s.max()) / np.exp(s - s.max()).sum())(x @ w_score)
    if weights is None else np.asarray(weights, dtype=float))"""

IGNORES_ATTENTION = """lambda x, weights=None: (
    np.array([0.2, 0.3, 0.5]),
    np.full(len(x), 1.0 / len(x)) if weights is None else np.asarray(weights, dtype=float))"""


def classifier(seed, d_model=3, d_v=2, n_classes=3, mix=0.0, scale=2.0):
    rng = np.random.default_rng(seed)
    return suite_function(CLASSIFIER, w_score=rng.normal(size=d_model) * 1.5,
                 W_v=rng.normal(size=(d_model, d_v)),
                 W_out=rng.normal(size=(d_v, n_classes)) * scale, mix=float(mix))


# What expect_clean_call says about a warning in each function.
ADVICE = {
    "js_divergence": "np.where(p > 0, p * np.log(p / m), 0) still computes log(0) and 0/0 before "
                     "choosing; replace the zeros before taking the logarithm instead.",
    "equivalent_attention": "Masked keys and all-zero rows are valid input too: skip rows or keys "
                            "with zero weight before dividing.",
    "permutation_effect": None,
    "leave_one_out_importance": None,
    "kendall_tau": "Return nan without dividing by zero, e.g. with np.divide(..., where=denominator > 0).",
}
CLEAN = {name: {"hint": advice, "copy_hint": "np.delete, x.copy(), weights[perm] all return new arrays"}
         for name, advice in ADVICE.items()}


def tvd(a, b):
    return 0.5 * np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum(-1)


# ================================================================== js_divergence

def js_result(value, shape, what):
    """The learner's divergences as an array of ``shape``, every entry finite."""
    result = as_array(value, what)
    expect_shape(result, shape, what)
    bad = ~np.isfinite(result)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        fail(f"The entry at index {where} of {what} is {result[where]}, where the distributions have "
             f"exact zeros. Use the convention 0 log 0 = 0: evaluate the logarithm only where "
             f"p_i > 0 (for example on np.where(p > 0, p, 1)), and never divide by a zero q_i.")
    return result


@points(2, "js_divergence")
def test_js_values(submission):
    """equals 1/2 KL(p||M) + 1/2 KL(q||M) with M = (p + q) / 2, in nats"""
    rng = np.random.default_rng(70)
    for n in (2, 5, 11):
        p, q = distributions(rng, (6, n)), distributions(rng, (6, n))
        expect_close(submission.js_divergence(p, q), js(p, q),
                     f"js_divergence(p, q) for 6 pairs of distributions over {n} outcomes",
                     mistakes=mistakes(ASSIGNMENT, "js_divergence", p, q, learner=submission))
        expect_clean_call(submission, "js_divergence", **CLEAN["js_divergence"])


@points(1, "js_divergence")
def test_js_symmetric_and_zero_on_equal(submission):
    """symmetric in p and q, and 0 when p equals q"""
    rng = np.random.default_rng(71)
    p, q = distributions(rng, (5, 8)), distributions(rng, (5, 8), zero_fraction=0.3)
    forward = js_result(submission.js_divergence(p, q), (5,), "js_divergence(p, q)")
    backward = js_result(submission.js_divergence(q, p), (5,), "js_divergence(q, p)")
    worst = float(np.abs(forward - backward).max())
    check(worst <= 1e-9 + 1e-6 * float(np.abs(forward).max()),
          f"js_divergence(q, p) differs from js_divergence(p, q) by up to {worst:.3g}; the "
          f"Jensen-Shannon divergence is symmetric. This is what you get when you keep only one "
          f"of the two halves, KL(p||M) or KL(q||M).")
    expect_close(submission.js_divergence(p, p), np.zeros(5), "js_divergence(p, p)",
                 mistakes=mistakes(ASSIGNMENT, "js_divergence", p, p, learner=submission))


@points(1, "js_divergence")
def test_js_exact_zeros(submission):
    """exact zeros: 0 log 0 = 0, disjoint supports give ln 2, no nan and no warning"""
    p = np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25, 0.0, 0.75, 0.0]])
    q = np.array([[0.0, 0.0, 0.3, 0.7], [0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    what = "js_divergence(p, q) for distributions with exact zeros"
    result = expect_close(js_result(submission.js_divergence(p, q), (3,), what), js(p, q), what,
                          mistakes=mistakes(ASSIGNMENT, "js_divergence", p, q, learner=submission))
    check(abs(result[0] - LN2) < 1e-9,
          f"distributions with disjoint supports are as far apart as possible: their JS divergence "
          f"is ln 2 = {LN2:.6f} nats, but yours is {result[0]:.6f}.")
    expect_clean_call(submission, "js_divergence", **CLEAN["js_divergence"])
    rng = np.random.default_rng(72)
    p, q = distributions(rng, (40, 6), 0.5), distributions(rng, (40, 6), 0.5)
    result = js_result(submission.js_divergence(p, q), (40,), "js_divergence(p, q) for sparse distributions")
    check(result.min() >= -1e-12 and result.max() <= LN2 + 1e-12,
          f"JS divergence in nats lies between 0 and ln 2 = {LN2:.4f}; yours ranges from "
          f"{result.min():.4g} to {result.max():.4g}.")
    expect_clean_call(submission, "js_divergence", **CLEAN["js_divergence"])


@points(1, "js_divergence")
def test_js_batch(submission):
    """leading batch dimensions: one divergence per pair of rows along the last axis"""
    rng = np.random.default_rng(73)
    p, q = distributions(rng, (2, 3, 4, 5), 0.2), distributions(rng, (2, 3, 4, 5))
    what = "js_divergence of shape (2, 3, 4, 5) inputs"
    expect_close(js_result(submission.js_divergence(p, q), (2, 3, 4), what), js(p, q), what,
                 mistakes=mistakes(ASSIGNMENT, "js_divergence", p, q, learner=submission))
    one = as_float(submission.js_divergence(p[0, 0, 0], q[0, 0, 0]),
                   "js_divergence of two 1-D distributions")
    check(abs(one - js(p[0, 0, 0], q[0, 0, 0])) < 1e-9,
          f"js_divergence of two 1-D distributions is {one:.6g}, expected "
          f"{js(p[0, 0, 0], q[0, 0, 0]):.6g}.")


@points(1, "js_divergence")
def test_js_float32(submission):
    """works on float32 input"""
    rng = np.random.default_rng(74)
    p, q = distributions(rng, (4, 9), 0.2).astype(np.float32), distributions(rng, (4, 9)).astype(np.float32)
    what = "js_divergence of float32 input"
    expect_close(js_result(submission.js_divergence(p, q), (4,), what),
                 js(p.astype(float), q.astype(float)), what, rtol=1e-4, atol=1e-6,
                 mistakes=mistakes(ASSIGNMENT, "js_divergence", p, q, learner=submission))
    expect_clean_call(submission, "js_divergence", **CLEAN["js_divergence"])


# ================================================================== equivalent_attention

def attention_case(seed, lead, T, d_v):
    rng = np.random.default_rng(seed)
    weights = softmax(rng.normal(size=lead + (T,)))
    V = rng.normal(size=lead[:-1] + (T, d_v))
    return weights, V


def call_equivalent(submission, weights, V, seed, what):
    result = as_array(submission.equivalent_attention(weights, V, RNG(seed)), what)
    expect_shape(result, weights.shape, what)
    check(np.all(np.isfinite(result)), f"{what} contains nan or inf.")
    expect_clean_call(submission, "equivalent_attention", **CLEAN["equivalent_attention"])
    return result


def expect_valid(result, weights, what, tol=1e-10):
    low = float(result.min())
    check(low >= -tol, f"{what} has a negative weight ({low:.3g}): attention weights must stay "
                       f"non-negative. Stop at the first weight that reaches 0 (the largest step "
                       f"allowed is the smallest a_i / -u_i over the i with u_i < 0).")
    sums, before = result.sum(-1), weights.sum(-1)
    worst = float(np.abs(sums - before).max())
    check(worst <= max(tol, 1e-9) * 10,
          f"a row of {what} sums to {sums.ravel()[np.argmax(np.abs(sums - before).ravel())]:.10g} "
          f"instead of {before.ravel()[np.argmax(np.abs(sums - before).ravel())]:.10g}. This is what "
          f"you get when the direction is only in the null space of V^T: it must also sum to 0, "
          f"so take the null space of V^T with a row of ones added below it.")


def expect_same_output(result, weights, V, what, atol=1e-8):
    out_new, out_old = result @ V, weights @ V
    worst = float(np.abs(out_new - out_old).max())
    check(worst <= atol + 1e-8 * float(np.abs(out_old).max()),
          f"{what} @ V differs from weights @ V by up to {worst:.3g}; the point of these weights "
          f"is to give exactly the same output (to 1e-8). The direction must satisfy u @ V = 0 "
          f"exactly: take it from the null space as it is (no re-centring, clipping or "
          f"renormalising afterwards), and never step past a zero weight.")


def floor_js(row):
    """The smallest JS divergence between ``row`` and any distribution with one of row's positive
    weights set to 0: removing weight i and rescaling the rest (the closest such distribution)."""
    best = np.inf
    for i in np.flatnonzero(row > 0):
        other = row.copy()
        other[i] = 0.0
        if other.sum() > 0:
            best = min(best, float(js(row, other / other.sum())))
    return best


def expect_edge(result, weights, d_v, what, zero=1e-9):
    """Every row with more than d_v + 1 positive weights reached the edge of the simplex."""
    rows_new = result.reshape(-1, result.shape[-1])
    rows_old = weights.reshape(-1, weights.shape[-1])
    for r, (new, old) in enumerate(zip(rows_new, rows_old)):
        positive = old > 0
        if positive.sum() <= d_v + 1:
            continue
        zeroed = np.any(new[positive] <= zero)
        distance = float(js(old, np.clip(new, 0, None)))
        floor = floor_js(old)
        check(zeroed and distance >= 0.99 * floor,
              f"row {r} of {what} did not move as far as it can: it is only {distance:.3g} nats "
              f"(JS) from the original and none of its {int(positive.sum())} positive weights "
              f"reached 0 (smallest now {float(new[positive].min()):.3g}). With T > d_v + 1 there "
              f"is a direction that keeps the output; move along it until a weight hits 0. Any "
              f"such row is at least {floor:.3g} nats from the original (the JS divergence to the "
              f"original with its smallest weight removed and the rest rescaled).")


def expect_moved(result, weights, d_v, what):
    """The control of a property the original weights have too: where T > d_v + 1 there is room
    to move, and some row moved (returning the weights as they are passes no test)."""
    rows_new = result.reshape(-1, result.shape[-1])
    rows_old = weights.reshape(-1, weights.shape[-1])
    free = [(new, old) for new, old in zip(rows_new, rows_old) if (old > 0).sum() > d_v + 1]
    check(not free or any(np.abs(new - old).max() > 1e-6 for new, old in free),
          f"{what} returned the original weights unchanged, although with more than d_v + 1 = "
          f"{d_v + 1} positive weights in a row there is a direction that keeps the output: move "
          f"along it.")


@points(1, "equivalent_attention")
def test_equivalent_valid(submission):
    """returns valid attention weights: non-negative rows with the original sums"""
    for seed, (T, d_v) in enumerate([(8, 2), (12, 4), (5, 1)]):
        weights, V = attention_case(100 + seed, (6,), T, d_v)
        result = call_equivalent(submission, weights, V, seed, f"equivalent_attention (T={T}, d_v={d_v})")
        expect_valid(result, weights, f"equivalent_attention (T={T}, d_v={d_v})")
        expect_moved(result, weights, d_v, f"equivalent_attention (T={T}, d_v={d_v})")


@points(2, "equivalent_attention")
def test_equivalent_same_output(submission):
    """the new weights give the same output weights @ V, to 1e-8"""
    for seed, (T, d_v) in enumerate([(6, 2), (10, 3), (16, 1), (9, 7)]):
        weights, V = attention_case(110 + seed, (6,), T, d_v)
        V = V * 3.0
        what = f"equivalent_attention(weights, V) (T={T}, d_v={d_v})"
        result = call_equivalent(submission, weights, V, seed, what)
        expect_same_output(result, weights, V, what)
        expect_moved(result, weights, d_v, what)


@points(2, "equivalent_attention")
def test_equivalent_moves_to_the_edge(submission):
    """whenever T > d_v + 1, moves as far as possible: a positive weight reaches 0"""
    for seed, (T, d_v) in enumerate([(4, 2), (7, 2), (9, 4), (14, 3), (6, 1)]):
        weights, V = attention_case(120 + seed, (8,), T, d_v)
        what = f"equivalent_attention (T={T}, d_v={d_v})"
        result = call_equivalent(submission, weights, V, seed, what)
        expect_valid(result, weights, what)
        expect_same_output(result, weights, V, what)
        expect_edge(result, weights, d_v, what)


@points(1, "equivalent_attention")
def test_equivalent_no_freedom(submission):
    """when T <= d_v + 1 (and for T = 1) the only answer is the original weights"""
    for seed, (T, d_v) in enumerate([(3, 2), (4, 3), (2, 5), (1, 2)]):
        weights, V = attention_case(130 + seed, (3,), T, d_v)
        what = f"equivalent_attention (T={T}, d_v={d_v})"
        expect_close(call_equivalent(submission, weights, V, seed, what), weights,
                     f"equivalent_attention with T={T} keys and d_v={d_v} (no direction keeps both "
                     f"the output and the row sum, so the weights cannot change)")
    weights, V = attention_case(134, (3,), 8, 2)  # the control: here there is room to move
    what = "equivalent_attention (T=8, d_v=2)"
    expect_moved(call_equivalent(submission, weights, V, 4, what), weights, 2, what)


@points(1, "equivalent_attention")
def test_equivalent_masked_keys(submission):
    """zero weights (masked keys) stay zero, an all-zero row stays zero, the rest still moves"""
    weights, V = attention_case(140, (5,), 9, 2)
    weights[0, :4] = 0.0           # 5 keys left: still room to move (5 > d_v + 1)
    weights[1, 1::2] = 0.0         # 5 keys left
    weights[2, 3:] = 0.0           # 3 keys left: no room, must stay as it is
    weights[3] = 0.0               # a fully masked query
    sums = weights.sum(-1, keepdims=True)
    weights = weights / np.where(sums > 0, sums, 1.0)
    what = "equivalent_attention of weights with masked keys"
    result = call_equivalent(submission, weights, V, 3, what)
    masked = weights == 0
    check(np.all(np.abs(result[masked]) <= 1e-12),
          f"{what} puts weight {float(np.abs(result[masked]).max()):.3g} on a key whose original "
          f"weight is 0. A masked key must stay masked: look for directions among the keys with "
          f"positive weight only.")
    check(np.all(result[3] == 0), f"{what}: an all-zero row (a fully masked query) must stay all zero.")
    expect_close(result[2], weights[2], f"{what}, row 2 (only 3 unmasked keys, so no freedom)")
    expect_valid(result, weights, what)
    expect_same_output(result, weights, V, what)
    expect_edge(result, weights, 2, what)


@points(1, "equivalent_attention")
def test_equivalent_batch(submission):
    """leading batch dimensions: each batch element uses its own V"""
    weights, V = attention_case(150, (2, 3, 9), 9, 2)
    what = "equivalent_attention with weights (2, 3, 9) and V (2, 9, 2)"
    result = call_equivalent(submission, weights, V, 5, what)
    expect_valid(result, weights, what)
    expect_same_output(result, weights, V, what)
    expect_edge(result, weights, 2, what)


@points(1, "equivalent_attention")
def test_equivalent_float32(submission):
    """works on float32 input"""
    weights, V = attention_case(160, (4,), 9, 2)
    w32, v32 = weights.astype(np.float32), V.astype(np.float32)
    what = "equivalent_attention of float32 input"
    result = call_equivalent(submission, w32, v32, 6, what).astype(np.float64)
    expect_valid(result, w32.astype(np.float64), what, tol=1e-6)
    expect_same_output(result, w32.astype(np.float64), v32.astype(np.float64), what, atol=1e-5)
    expect_moved(result, w32.astype(np.float64), 2, what)


@points(1, "equivalent_attention")
def test_equivalent_uses_only_rng(submission):
    """randomness only from rng: the same seed gives the same weights; inputs untouched"""
    weights, V = attention_case(170, (4,), 10, 3)
    first = call_equivalent(submission, weights, V, 11, "equivalent_attention (first call)")
    second = call_equivalent(submission, weights, V, 11, "equivalent_attention (second call)")
    check(np.allclose(first, second, rtol=0, atol=1e-12),
          "two calls with generators built from the same seed returned different weights. Draw "
          "every random number from the rng argument (rng.standard_normal, rng.permutation...), "
          "never from np.random.* or a new default_rng().")
    expect_valid(first, weights, "equivalent_attention (first call)")
    expect_moved(first, weights, 3, "equivalent_attention (first call)")


# ================================================================== permutation_effect

def all_permutation_changes(local, x):
    prediction, weights = local(x)
    return np.array([tvd(local(x, weights=weights[list(p)])[0], prediction)
                     for p in itertools.permutations(range(len(weights)))])


def call_permutation(submission, marker, x, n_perm, seed, what):
    result = as_array(submission.permutation_effect(marker, x, n_perm, RNG(seed)), what)
    expect_shape(result, (n_perm,), what)
    check(np.all(np.isfinite(result)), f"{what} contains nan or inf.")
    return result


def in_set(values, allowed):
    return np.all(np.min(np.abs(values[:, None] - allowed[None, :]), axis=1)
                  <= 1e-9 + 1e-7 * np.abs(values))


@points(2, "permutation_effect")
def test_permutation_changes_are_tvds(submission):
    """each entry is the total variation distance for one shuffle of the model's weights"""
    for seed, T in [(200, 4), (201, 3)]:
        marker, local = classifier(seed)
        x = np.random.default_rng(seed).normal(size=(T, 3))
        what = f"permutation_effect(model, x, 200, rng) with T={T}"
        result = call_permutation(submission, marker, x, 200, seed, what)
        allowed = all_permutation_changes(local, x)
        if in_set(result, allowed):
            continue
        prediction, weights = local(x)
        bad = float(result[~np.array([np.any(np.abs(v - allowed) <= 1e-9 + 1e-7 * abs(v))
                                      for v in result])][0])
        message = (f"{what}: the entry {bad:.6g} is not the change caused by any shuffle of the "
                   f"model's own attention weights (the possible changes here are "
                   f"{', '.join(f'{v:.4g}' for v in np.unique(allowed.round(6))[:8])}...).")
        if in_set(result, 2 * allowed):
            message += (" This is what you get when you sum |y - y_perm| without the factor 1/2 "
                        "(the total variation distance is half the L1 distance).")
        elif np.allclose(result, 0):
            message += (" This is what you get when you shuffle the tokens x instead of the "
                        "weights: the model pools over tokens, so moving tokens changes nothing.")
        else:
            top = int(np.argmax(prediction))
            single = np.array([abs(local(x, weights=weights[list(p)])[0][top] - prediction[top])
                               for p in itertools.permutations(range(T))])
            if in_set(result, single):
                message += (" This is what you get when you measure only the change of the "
                            "predicted class's probability instead of the total variation "
                            "distance 0.5 * sum_c |y_c - y_perm_c|.")
            else:
                message += (" Shuffle the weights the model returns for x (weights[perm]) and pass "
                            "them back with model(x, weights=...), comparing with model(x)'s "
                            "prediction.")
        fail(message)


@points(1, "permutation_effect")
def test_permutation_fresh_shuffles(submission):
    """draws a fresh random permutation each time (the changes average out as they should)"""
    marker, local = classifier(210)
    x = np.random.default_rng(210).normal(size=(4, 3))
    result = call_permutation(submission, marker, x, 300, 21, "permutation_effect(model, x, 300, rng)")
    allowed = all_permutation_changes(local, x)
    check(not np.allclose(result, 0),
          "all 300 changes are 0, yet shuffling this model's weights does change its prediction. "
          "This is what you get when you shuffle the tokens x instead of the weights: the model "
          "pools over tokens, so moving each token together with its weight changes nothing.")
    distinct = len(np.unique(result.round(9)))
    check(distinct >= 5,
          f"300 shuffles of 4 weights gave only {distinct} different changes; there are 24 "
          f"permutations. Draw a new permutation for every one of the n_perm trials.")
    spread = allowed.std() / np.sqrt(len(result))
    check(abs(result.mean() - allowed.mean()) <= 5 * spread + 1e-9,
          f"the average change over 300 shuffles is {result.mean():.4g}, but the average over all "
          f"24 permutations is {allowed.mean():.4g}; the permutations should be uniformly random "
          f"(rng.permutation(T)).")


@points(1, "permutation_effect")
def test_permutation_attention_free_model(submission):
    """a model that ignores its attention gives zero change; so does T = 1"""
    marker, _ = suite_function(IGNORES_ATTENTION)
    x = np.random.default_rng(220).normal(size=(5, 2))
    what = "permutation_effect of a model whose prediction ignores its weights"
    expect_close(call_permutation(submission, marker, x, 20, 22, what), np.zeros(20), what)
    marker, _ = classifier(221)
    x = np.random.default_rng(221).normal(size=(1, 3))
    result = call_permutation(submission, marker, x, 5, 23, "permutation_effect with a single token")
    expect_close(result, np.zeros(5),
                 "permutation_effect with one token (the only permutation is the identity)")


@points(1, "permutation_effect")
def test_permutation_uses_only_rng(submission):
    """randomness only from rng: the same seed gives the same changes"""
    marker, _ = classifier(230)
    x = np.random.default_rng(230).normal(size=(6, 3))
    first = call_permutation(submission, marker, x, 30, 9, "permutation_effect (first call)")
    second = call_permutation(submission, marker, x, 30, 9, "permutation_effect (second call)")
    check(np.allclose(first, second, rtol=0, atol=1e-12),
          "two calls with generators built from the same seed returned different changes. Draw "
          "every permutation from the rng argument, never from np.random.*.")


@points(1, "permutation_effect")
def test_permutation_clean(submission):
    """leaves x untouched, no warnings, works on float32 input"""
    marker, local = classifier(240)
    x = np.random.default_rng(240).normal(size=(3, 3)).astype(np.float32)
    result = call_permutation(submission, marker, x, 40, 24, "permutation_effect of float32 x")
    expect_clean_call(submission, "permutation_effect", **CLEAN["permutation_effect"])
    allowed = all_permutation_changes(local, x)
    check(np.all(np.min(np.abs(result.astype(float)[:, None] - allowed[None, :]), axis=1) <= 1e-5),
          "permutation_effect of float32 x returned changes that no shuffle of the weights produces.")


# ================================================================== leave_one_out_importance

def loo(local, x):
    prediction, _ = local(x)
    return np.array([tvd(local(np.delete(x, t, axis=0))[0], prediction) for t in range(len(x))])


@points(2, "leave_one_out_importance")
def test_loo_values(submission):
    """entry t is the total variation distance when token t is removed from x"""
    for seed, T in [(300, 6), (301, 2), (302, 9)]:
        marker, local = classifier(seed)
        x = np.random.default_rng(seed).normal(size=(T, 3))
        expect_close(submission.leave_one_out_importance(marker, x), loo(local, x),
                     f"leave_one_out_importance(model, x) with T={T}",
                     mistakes=mistakes(ASSIGNMENT, "leave_one_out_importance", marker, x,
                                       learner=submission))


@points(1, "leave_one_out_importance")
def test_loo_contextual_values(submission):
    """removes the token from the input, so it also leaves the other tokens' values"""
    marker, local = classifier(310, mix=0.7)
    x = np.random.default_rng(310).normal(size=(7, 3))
    expect_close(submission.leave_one_out_importance(marker, x), loo(local, x),
                 "leave_one_out_importance for a model whose values mix information across tokens",
                 mistakes=mistakes(ASSIGNMENT, "leave_one_out_importance", marker, x,
                                   learner=submission))


@points(1, "leave_one_out_importance")
def test_loo_attention_free_model(submission):
    """a model whose prediction never changes gives zero importance everywhere"""
    marker, _ = suite_function(IGNORES_ATTENTION)
    x = np.random.default_rng(320).normal(size=(5, 2))
    expect_close(submission.leave_one_out_importance(marker, x), np.zeros(5),
                 "leave_one_out_importance of a model with a constant prediction")


@points(1, "leave_one_out_importance")
def test_loo_clean(submission):
    """leaves x untouched, no warnings, works on float32 input"""
    marker, local = classifier(330)
    x = np.random.default_rng(330).normal(size=(5, 3)).astype(np.float32)
    expect_close(submission.leave_one_out_importance(marker, x), loo(local, x.astype(float)),
                 "leave_one_out_importance of float32 x", rtol=1e-4, atol=1e-6,
                 mistakes=mistakes(ASSIGNMENT, "leave_one_out_importance", marker, x,
                                   learner=submission))
    expect_clean_call(submission, "leave_one_out_importance", **CLEAN["leave_one_out_importance"])


# ================================================================== kendall_tau

@points(2, "kendall_tau")
def test_tau_without_ties(submission):
    """without ties: (concordant - discordant) / number of pairs; 1 for equal, -1 for reversed rankings"""
    rng = np.random.default_rng(400)
    for n in (5, 8, 13):
        a, b = rng.normal(size=n), rng.normal(size=n)
        expect_close(as_float(submission.kendall_tau(a, b), "kendall_tau(a, b)"), tau_b(a, b),
                     f"kendall_tau of two random sequences of length {n}",
                     mistakes=mistakes(ASSIGNMENT, "kendall_tau", a, b, learner=submission))
        expect_clean_call(submission, "kendall_tau", **CLEAN["kendall_tau"])
    a = rng.normal(size=7)
    expect_close(as_float(submission.kendall_tau(a, a * 3 + 1), "kendall_tau(a, 3a + 1)"), 1.0,
                 "kendall_tau of two sequences in the same order")
    expect_close(as_float(submission.kendall_tau(a, -a), "kendall_tau(a, -a)"), -1.0,
                 "kendall_tau of two sequences in opposite orders")


@points(2, "kendall_tau")
def test_tau_with_ties(submission):
    """with ties: tau-b, (C - D) / sqrt((n0 - ties in a) (n0 - ties in b))"""
    cases = [([1, 1, 2], [1, 1, 2]),
             ([0.1, 0.1, 0.5, 0.3, 0.3, 0.0], [0.2, 0.0, 0.9, 0.4, 0.4, 0.0]),
             ([3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8])]
    rng = np.random.default_rng(410)
    cases.append((rng.integers(0, 3, size=12).astype(float), rng.integers(0, 4, size=12).astype(float)))
    for a, b in cases:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        expect_close(as_float(submission.kendall_tau(a, b), "kendall_tau(a, b)"), tau_b(a, b),
                     f"kendall_tau(a={a.tolist()}, b={b.tolist()})",
                     mistakes=mistakes(ASSIGNMENT, "kendall_tau", a, b, learner=submission))


@points(1, "kendall_tau")
def test_tau_rank_based(submission):
    """depends only on the orderings: unchanged by increasing transforms, symmetric in a and b"""
    rng = np.random.default_rng(420)
    a, b = rng.normal(size=10), rng.normal(size=10)
    a[3] = a[7]
    base = as_float(submission.kendall_tau(a, b), "kendall_tau(a, b)")
    expect_close(base, tau_b(a, b), "kendall_tau(a, b) with one tie in a",
                 mistakes=mistakes(ASSIGNMENT, "kendall_tau", a, b, learner=submission))
    expect_close(as_float(submission.kendall_tau(np.exp(3 * a), b ** 3), "kendall_tau(exp(3a), b^3)"),
                 base, "kendall_tau(exp(3a), b**3), which should equal kendall_tau(a, b)",
                 mistakes=mistakes(ASSIGNMENT, "kendall_tau", np.exp(3 * a), b ** 3,
                                   learner=submission))
    expect_close(as_float(submission.kendall_tau(b, a), "kendall_tau(b, a)"), base,
                 "kendall_tau(b, a), which should equal kendall_tau(a, b)")


@points(1, "kendall_tau")
def test_tau_undefined(submission):
    """nan, without a warning, when a or b is constant or has a single element"""
    for a, b, what in [(np.ones(5), np.arange(5.0), "a constant"),
                       (np.arange(4.0), np.full(4, 2.0), "b constant"),
                       (np.array([0.3]), np.array([0.7]), "a single element")]:
        value = as_float(submission.kendall_tau(a, b), f"kendall_tau with {what}")
        check(np.isnan(value), f"kendall_tau with {what} is undefined (no pair is untied) and "
                               f"should be nan, but it is {value:.6g}.")
        last = submission.last
        check(not last.warnings, f"kendall_tau with {what} emitted a warning ({last.warnings[:1]}); "
                                 f"return nan without dividing by zero (np.divide with where=, or a test).")


@points(1, "kendall_tau")
def test_tau_batch(submission):
    """leading batch dimensions, integer input, inputs untouched"""
    rng = np.random.default_rng(430)
    a = rng.integers(0, 5, size=(3, 4, 7))
    b = rng.integers(0, 5, size=(3, 4, 7))
    expected = np.array([[tau_b(a[i, j], b[i, j]) for j in range(4)] for i in range(3)])
    expect_close(submission.kendall_tau(a, b), expected, "kendall_tau of integer arrays of shape (3, 4, 7)",
                 mistakes=mistakes(ASSIGNMENT, "kendall_tau", a, b, learner=submission))
    expect_clean_call(submission, "kendall_tau", **CLEAN["kendall_tau"])
