"""Hidden suite of 11-transformer-block: layer_norm, layer_norm_backward, feed_forward,
feed_forward_backward, transformer_block, transformer_block_backward, nats_above_floor.

Expected values come from the oracles below, written from the definitions in float64 (sums divided
by counts, one head at a time); expected gradients are central differences of those oracles, so
no backward pass of the suite's own stands between the learner's and the definition.
"""
import math

import numpy as np
import pytest

from autograder.kit import (as_array, as_float, as_pair, call, central_differences, check,
                            computed_once, expect_close, expect_plain_cache, expect_shape, fail,
                            forward_for_backward, mistakes, points)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "11-transformer-block"
F32 = {"rtol": 1e-4, "atol": 1e-5}          # float32 results against a float64 oracle
GRAD = {"rtol": 1e-5, "atol": 1e-7}         # analytic gradients against central differences

PARAMS = ("gamma_1", "beta_1", "W_q", "W_k", "W_v", "W_o", "gamma_2", "beta_2", "W_1", "b_1",
          "W_2", "b_2")


# ------------------------------------------------------------------ oracles (float64)

def oracle_layer_norm(X, gamma, beta, eps=1e-5):
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[-1]
    mean = X.sum(axis=-1, keepdims=True) / d
    var = ((X - mean) ** 2).sum(axis=-1, keepdims=True) / d
    return np.asarray(gamma, np.float64) * (X - mean) / np.sqrt(var + eps) + np.asarray(beta, np.float64)


def oracle_feed_forward(X, W_1, b_1, W_2, b_2):
    X, W_1, b_1, W_2, b_2 = (np.asarray(a, dtype=np.float64) for a in (X, W_1, b_1, W_2, b_2))
    return np.maximum(X @ W_1 + b_1, 0.0) @ W_2 + b_2


def oracle_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_k = X.shape[-1] // n_heads
    T = X.shape[-2]
    allowed = np.ones((T, T), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    heads, weights = [], []
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        Q, K, V = X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols]
        w = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k), mask=allowed)
        heads.append(w @ V)
        weights.append(w)
    return np.concatenate(heads, axis=-1) @ W_o, np.stack(weights, axis=-3)


def oracle_block(X, params, n_heads, mask=None):
    X = np.asarray(X, dtype=np.float64)
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    A, weights = oracle_attention(oracle_layer_norm(X, p["gamma_1"], p["beta_1"]), p["W_q"],
                                  p["W_k"], p["W_v"], p["W_o"], n_heads, mask)
    H = X + A
    F = oracle_feed_forward(oracle_layer_norm(H, p["gamma_2"], p["beta_2"]), p["W_1"], p["b_1"],
                            p["W_2"], p["b_2"])
    return H + F, weights


def gradient_of(forward, args, index, d_out):
    """d(sum(forward(*args) * d_out)) / d(args[index]), by central differences."""
    def loss(value):
        changed = list(args)
        changed[index] = value
        return float(np.sum(forward(*changed) * d_out))
    return central_differences(loss, args[index])


@computed_once
def block_gradients(X, params, n_heads, d_Y, mask=None, names=(), with_X=True):
    """d_X (or None) and {name: d_param} for ``names``, of sum(block(X) * d_Y), by central
    differences (about two thousand passes of the block: computed once per grading process, for
    the suite's own inputs)."""
    X = np.asarray(X, dtype=np.float64)
    params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    d_Y = np.asarray(d_Y, dtype=np.float64)
    d_X = central_differences(
        lambda X_: float(np.sum(oracle_block(X_, params, n_heads, mask)[0] * d_Y)), X) \
        if with_X else None
    grads = {}
    for name in names:
        def loss(value, name=name):
            return float(np.sum(oracle_block(X, {**params, name: value}, n_heads, mask)[0] * d_Y))
        grads[name] = central_differences(loss, params[name])
    return d_X, grads


def oracle_kl(logits, P, mask=None):
    logits, P = np.asarray(logits, dtype=np.float64), np.asarray(P, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    safe = np.where(P > 0, P, 1.0)
    kl = np.where(P > 0, P * (np.log(safe) - log_q), 0.0).sum(axis=-1)
    if mask is None:
        return float(kl.mean())
    return float(kl[np.broadcast_to(np.asarray(mask, dtype=bool), kl.shape)].mean())


# ------------------------------------------------------------------ inputs

def normal(seed, shape, scale=1.0, dtype=np.float64):
    return (np.random.default_rng(seed).normal(size=shape) * scale).astype(dtype)


def norm_params(seed, d, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (1.0 + 0.5 * rng.normal(size=d)).astype(dtype), (0.5 * rng.normal(size=d)).astype(dtype)


def ffn_params(seed, d_model, d_ff, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return tuple(a.astype(dtype) for a in (rng.normal(size=(d_model, d_ff)) / np.sqrt(d_model),
                                           0.5 * rng.normal(size=d_ff),
                                           rng.normal(size=(d_ff, d_model)) / np.sqrt(d_ff),
                                           0.5 * rng.normal(size=d_model)))


def block_params(seed, d_model, d_ff, dtype=np.float64):
    rng = np.random.default_rng(seed)
    params = {}
    for name in PARAMS:
        if name.startswith("gamma"):
            params[name] = 1.0 + 0.3 * rng.normal(size=d_model)
        elif name.startswith("beta") or name == "b_2":
            params[name] = 0.3 * rng.normal(size=d_model)
        elif name == "b_1":
            params[name] = 0.3 * rng.normal(size=d_ff)
        elif name == "W_1":
            params[name] = rng.normal(size=(d_model, d_ff)) / np.sqrt(d_model)
        elif name == "W_2":
            params[name] = rng.normal(size=(d_ff, d_model)) / np.sqrt(d_ff)
        else:   # W_q, W_k, W_v, W_o: scores large enough for the softmax to matter
            params[name] = 1.5 * rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
    return {k: v.astype(dtype) for k, v in params.items()}


def causal(T):
    return np.tril(np.ones((T, T), dtype=bool))


CLEAN = {"hint": "A warning in layer normalisation usually means dividing by sqrt(var) without eps "
                 "(a constant row has variance 0); in a softmax, exp of scores whose maximum was "
                 "not subtracted.",
         "copy_hint": "for example `H = X + A` rather than `X += A`"}


def named(submission, exercise, *args, pick=None, learner=True, **kwargs):
    return mistakes(ASSIGNMENT, exercise, *args, pick=pick,
                    learner=submission if learner else None, **kwargs)


def as_tuple(value, length, what, names):
    if not isinstance(value, (tuple, list)) or len(value) != length:
        fail(f"{what} should return {length} values, ({', '.join(names)}), but "
             f"{'a ' + type(value).__name__ if not isinstance(value, np.ndarray) else 'an array'}"
             f" came back.")
    return [as_array(v, f"{name} from {what}") for v, name in zip(value, names)]


# ------------------------------------------------------------------ pieces a block calls

def piece_notes(submission, names):
    """Sentences naming the learner's own pieces (called by their block) that are not right yet,
    so that a block that fails because of one of them says where to look."""
    X = normal(900, (3, 6))
    gamma, beta = norm_params(901, 6)
    W = ffn_params(902, 6, 5)
    d_Y = normal(903, (3, 6))
    checks = {
        "layer_norm": lambda: np.allclose(submission.layer_norm(X, gamma, beta),
                                          oracle_layer_norm(X, gamma, beta), atol=1e-7),
        "feed_forward": lambda: np.allclose(submission.feed_forward(X, *W),
                                            oracle_feed_forward(X, *W), atol=1e-7),
        "layer_norm_backward": lambda: np.allclose(
            submission.layer_norm_backward(d_Y, X, gamma)[0],
            gradient_of(lambda X_: oracle_layer_norm(X_, gamma, beta), (X,), 0, d_Y), atol=1e-6),
        "feed_forward_backward": lambda: np.allclose(
            submission.feed_forward_backward(d_Y, X, *W)[0],
            gradient_of(oracle_feed_forward, (X, *W), 0, d_Y), atol=1e-6),
    }
    broken = []
    for name in names:
        try:
            ok = checks[name]()
        except Exception:
            ok = False
        if not ok:
            broken.append(name)
    return broken


def explain_with_pieces(submission, names, function, run):
    """Run the comparisons of ``run``; if they fail and one of the learner's pieces is wrong, say
    so, since the block calls it."""
    try:
        return run()
    except AssertionError as error:
        broken = piece_notes(submission, names)
        if broken:
            fail(f"{error} Your {function} may call your {' and '.join(broken)}, which "
                 f"{'is' if len(broken) == 1 else 'are'} not right yet (see "
                 f"{'its' if len(broken) == 1 else 'their'} own tests): fix "
                 f"{'it' if len(broken) == 1 else 'them'} first.")
        raise


# ================================================================== layer_norm

def check_layer_norm(submission, X, gamma, beta, what, tol=None, **kwargs):
    expected = oracle_layer_norm(X, gamma, beta, **kwargs)
    result = submission.layer_norm(X, gamma, beta, **kwargs)
    expect_close(result, expected, what,
                 mistakes=named(submission, "layer_norm", X, gamma, beta, **kwargs), **(tol or {}))


@points(1, "layer_norm")
def test_layer_norm_values(submission):
    """each row is normalised over its own entries, then scaled by gamma and shifted by beta"""
    X = normal(1, (4, 6), scale=3.0) + np.arange(6.0)
    gamma, beta = norm_params(2, 6)
    check_layer_norm(submission, X, gamma, beta, "layer_norm(X, gamma, beta) for X of shape (4, 6)")


@points(1, "layer_norm")
def test_layer_norm_batch(submission):
    """leading batch axes: every position of every sequence is normalised on its own"""
    X = normal(3, (2, 3, 5), scale=2.0) - 1.0
    gamma, beta = norm_params(4, 5)
    check_layer_norm(submission, X, gamma, beta, "layer_norm for X of shape (2, 3, 5)")


@points(1, "layer_norm")
def test_layer_norm_eps(submission):
    """eps is added to the variance under the square root"""
    X = normal(5, (3, 4), scale=0.3)
    gamma, beta = norm_params(6, 4)
    check_layer_norm(submission, X, gamma, beta, "layer_norm(X, gamma, beta, eps=0.1)", eps=0.1)


@points(1, "layer_norm")
def test_layer_norm_constant_row(submission):
    """a constant row (variance 0) becomes beta: finite, no warning"""
    X = normal(7, (3, 5))
    X[1] = 2.5
    gamma, beta = norm_params(8, 5)
    check_layer_norm(submission, X, gamma, beta, "layer_norm when row 1 of X is constant")
    expect_clean_call(submission, "layer_norm", **CLEAN)


@points(1, "layer_norm")
def test_layer_norm_float32_and_clean(submission):
    """works on float32; changes nothing in place, prints nothing, no warning"""
    X = normal(9, (2, 4, 8), dtype=np.float32)
    gamma, beta = norm_params(10, 8, dtype=np.float32)
    check_layer_norm(submission, X, gamma, beta, "layer_norm of float32 X", tol=F32)
    expect_clean_call(submission, "layer_norm", **CLEAN)


# ================================================================== layer_norm_backward

def check_layer_norm_backward(submission, d_Y, X, gamma, what, which=(0, 1, 2), tol=None, **kwargs):
    beta = np.zeros_like(gamma)
    result = as_tuple(submission.layer_norm_backward(d_Y, X, gamma, **kwargs), 3,
                      "layer_norm_backward", ("d_X", "d_gamma", "d_beta"))
    forward = lambda X_, gamma_, beta_: oracle_layer_norm(X_, gamma_, beta_, **kwargs)  # noqa: E731
    names = ("d_X", "d_gamma", "d_beta")
    for index in which:
        expected = gradient_of(forward, (X, gamma, beta), index, d_Y)
        expect_close(result[index], expected, f"{names[index]} {what}",
                     mistakes=named(submission, "layer_norm_backward", d_Y, X, gamma, pick=index,
                                    **kwargs), **(tol or GRAD))
    return result


@points(1, "layer_norm_backward")
def test_layer_norm_backward_d_X(submission):
    """d_X: through the mean and the variance of each row, not only the division"""
    X = normal(20, (4, 6), scale=2.0)
    gamma, _ = norm_params(21, 6)
    d_Y = normal(22, (4, 6))
    check_layer_norm_backward(submission, d_Y, X, gamma, "for X of shape (4, 6)", which=(0,))


@points(1, "layer_norm_backward")
def test_layer_norm_backward_d_gamma_d_beta(submission):
    """d_gamma and d_beta are summed over the rows"""
    X = normal(23, (5, 4), scale=2.0)
    gamma, _ = norm_params(24, 4)
    d_Y = normal(25, (5, 4))
    check_layer_norm_backward(submission, d_Y, X, gamma, "for X of shape (5, 4)", which=(1, 2))


@points(1, "layer_norm_backward")
def test_layer_norm_backward_batch(submission):
    """leading batch axes: d_gamma and d_beta are summed over every position of every sequence"""
    X = normal(26, (2, 3, 5), scale=2.0)
    gamma, _ = norm_params(27, 5)
    d_Y = normal(28, (2, 3, 5))
    check_layer_norm_backward(submission, d_Y, X, gamma, "for X of shape (2, 3, 5)")


@points(1, "layer_norm_backward")
def test_layer_norm_backward_rows_of_d_X(submission):
    """each row of d_X sums to zero (shifting a row does not change its normalised values)"""
    X = normal(29, (6, 7), scale=2.0)
    gamma, _ = norm_params(30, 7)
    d_Y = normal(31, (6, 7)) + 2.0
    d_X = as_tuple(submission.layer_norm_backward(d_Y, X, gamma), 3, "layer_norm_backward",
                   ("d_X", "d_gamma", "d_beta"))[0]
    expect_shape(d_X, X.shape, "d_X")
    sums = d_X.sum(axis=-1)
    worst = int(np.argmax(np.abs(sums)))
    check(np.allclose(sums, 0.0, atol=1e-8),
          f"each row of d_X should sum to 0: adding a constant to a row of X leaves layer_norm's "
          f"output unchanged, so the loss cannot change in that direction. Row {worst} sums to "
          f"{sums[worst]:.4g}. The gradient through the row's mean is missing or wrong.")


@points(1, "layer_norm_backward")
def test_layer_norm_backward_eps(submission):
    """uses the eps it is given"""
    X = normal(32, (3, 5), scale=0.4)
    gamma, _ = norm_params(33, 5)
    d_Y = normal(34, (3, 5))
    check_layer_norm_backward(submission, d_Y, X, gamma, "with eps=0.1", which=(0, 1), eps=0.1)


@points(1, "layer_norm_backward")
def test_layer_norm_backward_float32(submission):
    """works on float32"""
    X = normal(35, (2, 4, 6), scale=2.0, dtype=np.float32)
    gamma, _ = norm_params(36, 6, dtype=np.float32)
    d_Y = normal(37, (2, 4, 6), dtype=np.float32)
    check_layer_norm_backward(submission, d_Y, X, gamma, "for float32 inputs", tol=F32)


@points(1, "layer_norm_backward")
def test_layer_norm_backward_clean(submission):
    """changes nothing in place, prints nothing, no warning (a constant row included)"""
    X = normal(38, (3, 4))
    X[2] = -1.0
    gamma, _ = norm_params(39, 4)
    d_Y = normal(40, (3, 4))
    check_layer_norm_backward(submission, d_Y, X, gamma, "when row 2 of X is constant")
    expect_clean_call(submission, "layer_norm_backward", **CLEAN)


# ================================================================== feed_forward

def check_feed_forward(submission, X, W, what, tol=None):
    expect_close(submission.feed_forward(X, *W), oracle_feed_forward(X, *W), what,
                 mistakes=named(submission, "feed_forward", X, *W), **(tol or {}))


@points(1, "feed_forward")
def test_feed_forward_values(submission):
    """ReLU(X W_1 + b_1) W_2 + b_2, d_ff wider than d_model"""
    X = normal(50, (5, 4))
    check_feed_forward(submission, X, ffn_params(51, 4, 9), "feed_forward for X (5, 4), d_ff = 9")


@points(1, "feed_forward")
def test_feed_forward_batch_and_float32(submission):
    """leading batch axes, in float64 and float32"""
    X = normal(52, (2, 3, 6))
    check_feed_forward(submission, X, ffn_params(53, 6, 8), "feed_forward for X of shape (2, 3, 6)")
    X32 = normal(54, (3, 2, 6), dtype=np.float32)
    check_feed_forward(submission, X32, ffn_params(55, 6, 4, np.float32),
                       "feed_forward for float32 X of shape (3, 2, 6)", tol=F32)


@points(1, "feed_forward")
def test_feed_forward_clean(submission):
    """changes nothing in place, prints nothing, no warning"""
    X = normal(56, (4, 5))
    check_feed_forward(submission, X, ffn_params(57, 5, 7), "feed_forward for X of shape (4, 5)")
    expect_clean_call(submission, "feed_forward", **CLEAN)


# ================================================================== feed_forward_backward

FFN_NAMES = ("d_X", "d_W_1", "d_b_1", "d_W_2", "d_b_2")


def batch_hint(error, X):
    """For a matrix product that failed on inputs with batch axes: the usual cause."""
    if np.ndim(X) > 2 and error.cause == "matmul":
        return (f"It was called with batch axes, X of shape {np.shape(X)}: `X.T` reverses every "
                f"axis of a batch. Flatten the rows first (the given weight_grad does) or swap only "
                f"the last two axes.")
    return None


def check_feed_forward_backward(submission, d_Y, X, W, what, which, tol=None):
    result = as_tuple(call(submission, "feed_forward_backward", d_Y, X, *W,
                           hint=lambda error: batch_hint(error, X)),
                      5, "feed_forward_backward", FFN_NAMES)
    for index in which:
        expected = gradient_of(oracle_feed_forward, (X, *W), index, d_Y)
        expect_close(result[index], expected, f"{FFN_NAMES[index]} {what}",
                     mistakes=named(submission, "feed_forward_backward", d_Y, X, *W, pick=index),
                     **(tol or GRAD))


@points(1, "feed_forward_backward")
def test_feed_forward_backward_d_X(submission):
    """d_X passes back through W_2, the ReLU and W_1"""
    X = normal(60, (5, 4))
    check_feed_forward_backward(submission, normal(61, (5, 4)), X, ffn_params(62, 4, 7),
                                "for X of shape (5, 4), d_ff = 7", which=(0,))


@points(1, "feed_forward_backward")
def test_feed_forward_backward_first_layer(submission):
    """d_W_1 and d_b_1: only where the ReLU let the signal through"""
    X = normal(63, (6, 3))
    check_feed_forward_backward(submission, normal(64, (6, 3)), X, ffn_params(65, 3, 8),
                                "for X of shape (6, 3), d_ff = 8", which=(1, 2))


@points(1, "feed_forward_backward")
def test_feed_forward_backward_second_layer(submission):
    """d_W_2 and d_b_2"""
    X = normal(66, (4, 5))
    check_feed_forward_backward(submission, normal(67, (4, 5)), X, ffn_params(68, 5, 6),
                                "for X of shape (4, 5), d_ff = 6", which=(3, 4))


@points(1, "feed_forward_backward")
def test_feed_forward_backward_batch(submission):
    """leading batch axes: weight and bias gradients are summed over every position"""
    X = normal(69, (2, 3, 4))
    check_feed_forward_backward(submission, normal(70, (2, 3, 4)), X, ffn_params(71, 4, 6),
                                "for X of shape (2, 3, 4)", which=range(5))


@points(1, "feed_forward_backward")
def test_feed_forward_backward_float32_and_clean(submission):
    """works on float32; changes nothing in place, prints nothing, no warning"""
    X = normal(72, (3, 4), dtype=np.float32)
    check_feed_forward_backward(submission, normal(73, (3, 4), dtype=np.float32), X,
                                ffn_params(74, 4, 5, np.float32), "for float32 inputs",
                                which=range(5), tol=F32)
    expect_clean_call(submission, "feed_forward_backward", **CLEAN)


# ================================================================== transformer_block

BLOCK_PIECES = ("layer_norm", "feed_forward")


def run_block(submission, X, params, n_heads, mask=None, what="transformer_block"):
    """The learner's (Y, weights, cache)."""
    args = (X, params, n_heads) if mask is None else (X, params, n_heads, mask)
    result = submission.transformer_block(*args)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail(f"{what} should return three values, (Y, weights, cache), but "
             f"{'a ' + type(result).__name__ if not isinstance(result, np.ndarray) else 'an array'}"
             f"{' of ' + str(len(result)) + ' values' if isinstance(result, (tuple, list)) else ''}"
             f" came back.")
    Y, weights, cache = result
    return as_array(Y, f"the output of {what}"), as_array(weights, f"the weights of {what}"), cache


def check_block(submission, X, params, n_heads, mask=None, what="transformer_block", tol=None):
    def run():
        Y, weights, cache = run_block(submission, X, params, n_heads, mask, what)
        expected_Y, expected_w = oracle_block(X, params, n_heads, mask)
        kwargs = {} if mask is None else {"mask": mask}
        if weights.shape == expected_w.shape[:-3] + expected_w.shape[-2:]:
            fail(f"the weights of {what} have shape {weights.shape}: there should be one map per "
                 f"head, shape {expected_w.shape}.")
        expect_close(weights, expected_w, f"the weights of {what}",
                     mistakes=named(submission, "transformer_block", X, params, n_heads, pick=1,
                                    **kwargs), **(tol or {}))
        expect_close(Y, expected_Y, f"the output of {what}",
                     mistakes=named(submission, "transformer_block", X, params, n_heads, pick=0,
                                    **kwargs), **(tol or {}))
        return Y, weights, cache
    return explain_with_pieces(submission, BLOCK_PIECES, "transformer_block", run)


@points(1, "transformer_block")
def test_transformer_block_values(submission):
    """pre-LN: X + MHA(LN_1(X)), then + FFN(LN_2(.)) of that sum"""
    check_block(submission, normal(80, (5, 8)), block_params(81, 8, 12), 2,
                what="transformer_block for X (5, 8), 2 heads")


@points(1, "transformer_block")
def test_transformer_block_causal_mask(submission):
    """the mask is shared by every head (a causal mask)"""
    check_block(submission, normal(82, (6, 8)), block_params(83, 8, 10), 2, causal(6),
                what="transformer_block with a causal mask")


@points(1, "transformer_block")
def test_transformer_block_heads(submission):
    """one map of weights per head, for 4 heads"""
    check_block(submission, normal(84, (4, 8)), block_params(85, 8, 6), 4, causal(4),
                what="transformer_block with 4 heads")


@points(1, "transformer_block")
def test_transformer_block_batch(submission):
    """leading batch axes (2, 3), one (T, T) mask for all"""
    check_block(submission, normal(86, (2, 3, 4, 6)), block_params(87, 6, 8), 3, causal(4),
                what="transformer_block for X of shape (2, 3, 4, 6)")


@points(1, "transformer_block")
def test_transformer_block_float32(submission):
    """works on float32"""
    check_block(submission, normal(88, (2, 5, 8), dtype=np.float32),
                block_params(89, 8, 8, np.float32), 2, causal(5),
                what="transformer_block for float32 inputs", tol=F32)


@points(1, "transformer_block")
def test_transformer_block_clean(submission):
    """a cache of plain data; changes nothing in place (X too), prints nothing"""
    X = normal(90, (2, 4, 6))
    _, _, cache = check_block(submission, X, block_params(91, 6, 6), 2, causal(4))
    expect_clean_call(submission, "transformer_block", **CLEAN)
    expect_plain_cache(cache, "transformer_block", "transformer_block_backward")


# ================================================================== transformer_block_backward

GROUPS = {"the LayerNorm parameters": ("gamma_1", "beta_1", "gamma_2", "beta_2"),
          "the attention weights": ("W_q", "W_k", "W_v", "W_o"),
          "the feed-forward parameters": ("W_1", "b_1", "W_2", "b_2")}


def reference_cache(X, params, n_heads, mask=None):
    """The cache laid out as the reference's, (X, H, H_2, attention, params), which the
    catalogue's mistakes of transformer_block_backward read; attention is the cache of the given
    multi_head_attention_forward, (X_1, W_q, W_k, W_v, W_o, Q, K, V, weights, merged heads)."""
    X = np.asarray(X, dtype=np.float64)
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    X_1 = oracle_layer_norm(X, p["gamma_1"], p["beta_1"])
    d_k = X.shape[-1] // n_heads
    Q, K, V = (np.stack([(X_1 @ p[W])[..., h * d_k:(h + 1) * d_k] for h in range(n_heads)], -3)
               for W in ("W_q", "W_k", "W_v"))
    allowed = None if mask is None else np.asarray(mask, dtype=bool)
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k), mask=allowed)
    merged = np.concatenate([(weights @ V)[..., h, :, :] for h in range(n_heads)], axis=-1)
    H = X + merged @ p["W_o"]
    H_2 = oracle_layer_norm(H, p["gamma_2"], p["beta_2"])
    attention = (X_1, p["W_q"], p["W_k"], p["W_v"], p["W_o"], Q, K, V, weights, merged)
    return (X, H, H_2, attention, p)


def block_cache(submission, X, params, n_heads, mask, d_Y, tol):
    """The cache of the learner's transformer_block, to be handed back, unchanged, to their
    transformer_block_backward; their forward pass must be right on this input first."""
    Y, _, cache = forward_for_backward(submission, "transformer_block", "transformer_block_backward",
                                       lambda: run_block(submission, X, params, n_heads, mask), d_Y)
    expect_plain_cache(cache, "transformer_block", "transformer_block_backward")
    expected = oracle_block(X, params, n_heads, mask)[0]
    check(Y.shape == expected.shape and np.allclose(Y, expected, **(tol or GRAD)),
          "transformer_block_backward is tested through the cache your transformer_block returns, "
          "and transformer_block is not right yet on this input: fix transformer_block first.")
    return cache


def run_block_backward(submission, d_Y, cache, params):
    d_X, grads = as_pair(submission.transformer_block_backward(d_Y, cache),
                         "transformer_block_backward")
    d_X = as_array(d_X, "d_X from transformer_block_backward")
    if not isinstance(grads, dict):
        fail("transformer_block_backward should return (d_X, grads) with grads a dict, one "
             "gradient per key of params, but the second value is not a dict.")
    missing = [name for name in params if name not in grads]
    check(not missing, f"the grads returned by transformer_block_backward have no entry for "
                       f"{', '.join(missing)}: give one gradient per key of params.")
    return d_X, {name: as_array(grads[name], f"grads[{name!r}]") for name in params}


def check_block_backward(submission, d_Y, X, params, n_heads, mask=None, names=(), with_X=True,
                         what="", tol=None):
    def run():
        cache = block_cache(submission, X, params, n_heads, mask, d_Y, tol)
        d_X, grads = run_block_backward(submission, d_Y, cache, params)
        expected_X, expected = block_gradients(X, params, n_heads, d_Y, mask, names, with_X)
        # named on this input alone: a learner's cache cannot be rebuilt for a second input
        found = mistakes(ASSIGNMENT, "transformer_block_backward", d_Y,
                         reference_cache(X, params, n_heads, mask))
        if with_X:
            expect_close(d_X, expected_X, f"d_X {what}", mistakes=found.derive(lambda v: v[0]),
                         **(tol or GRAD))
        for name in names:
            expect_close(grads[name], expected[name], f"grads[{name!r}] {what}",
                         mistakes=found.derive(lambda v, name=name: v[1][name]), **(tol or GRAD))
        return cache, d_X, grads
    return explain_with_pieces(submission, BACKWARD_PIECES, "transformer_block_backward", run)


BACKWARD_PIECES = ("layer_norm", "feed_forward", "layer_norm_backward", "feed_forward_backward")


@points(1, "transformer_block_backward")
def test_transformer_block_backward_d_X(submission):
    """d_X: both residual paths and both sublayers carry gradient back to X"""
    check_block_backward(submission, normal(100, (4, 6)), normal(101, (4, 6)),
                         block_params(102, 6, 8), 2, what="for X of shape (4, 6), 2 heads")


@points(1, "transformer_block_backward")
@pytest.mark.parametrize("group", list(GROUPS), ids=["layer_norm", "attention", "feed_forward"])
def test_transformer_block_backward_params(submission, group):
    """the gradient of every parameter of the block"""
    check_block_backward(submission, normal(103, (4, 6)), normal(104, (4, 6)),
                         block_params(105, 6, 8), 2, names=GROUPS[group], with_X=False,
                         what="for X of shape (4, 6), 2 heads")


@points(1, "transformer_block_backward")
def test_transformer_block_backward_causal_mask(submission):
    """with a causal mask: no gradient flows through masked weights"""
    check_block_backward(submission, normal(106, (5, 6)), normal(107, (5, 6)),
                         block_params(108, 6, 6), 3, causal(5), names=PARAMS,
                         what="with a causal mask")


@points(1, "transformer_block_backward")
def test_transformer_block_backward_batch(submission):
    """leading batch axes: parameter gradients are summed over every sequence"""
    check_block_backward(submission, normal(109, (2, 3, 6)), normal(110, (2, 3, 6)),
                         block_params(111, 6, 4), 2, causal(3), names=PARAMS,
                         what="for X of shape (2, 3, 6)")


@points(1, "transformer_block_backward")
def test_transformer_block_backward_float32(submission):
    """works on float32"""
    check_block_backward(submission, normal(112, (3, 6), dtype=np.float32),
                         normal(113, (3, 6), dtype=np.float32),
                         block_params(114, 6, 6, np.float32), 2, causal(3),
                         names=("gamma_1", "W_q", "W_1"), what="for float32 inputs", tol=F32)


@points(1, "transformer_block_backward")
def test_transformer_block_backward_uses_only_its_cache(submission):
    """uses only its cache: another forward pass in between changes nothing"""
    X, params, d_Y = normal(115, (2, 4, 4)), block_params(116, 4, 4), normal(117, (2, 4, 4))
    first = block_cache(submission, X, params, 2, causal(4), d_Y, None)
    run_block(submission, normal(118, (2, 4, 4)), block_params(119, 4, 4), 2, causal(4))
    d_X, grads = run_block_backward(submission, d_Y, first, params)
    expected_X, expected = block_gradients(X, params, 2, d_Y, causal(4), ("W_v", "b_1"))
    late = [(d_X, expected_X, "d_X")] + [(grads[k], expected[k], f"grads[{k!r}]") for k in expected]
    for got, want, name in late:
        check(got.shape == want.shape and np.allclose(got, want, **GRAD),
              f"{name} is wrong when another transformer_block ran between the forward pass and "
              f"transformer_block_backward: the backward pass must take everything it needs from "
              f"its cache, not from global variables.")
    expect_clean_call(submission, "transformer_block_backward", **CLEAN)


# ================================================================== nats_above_floor

def distributions(seed, shape, zeros=0.4):
    """Rows of next-token probabilities with some impossible tokens (probability exactly 0)."""
    rng = np.random.default_rng(seed)
    P = rng.random(shape) ** 2 * (rng.random(shape) > zeros)
    P[..., 0] += 0.05                    # every row can continue somehow
    return P / P.sum(axis=-1, keepdims=True)


def floor_value(submission, *args, what, **kwargs):
    return as_float(submission.nats_above_floor(*args, **kwargs), what)


def check_floor(submission, logits, P, what, mask=None, tol=None):
    kwargs = {} if mask is None else {"mask": mask}
    value = floor_value(submission, logits, P, what=what, **kwargs)
    expect_close(value, oracle_kl(logits, P, mask), what,
                 mistakes=named(submission, "nats_above_floor", logits, P, **kwargs),
                 **(tol or {}))
    return value


@points(1, "nats_above_floor")
def test_nats_above_floor_values(submission):
    """the mean over positions of KL(p || softmax(logits)), in nats; impossible tokens count 0"""
    logits = normal(120, (3, 5, 7), scale=2.0)
    check_floor(submission, logits, distributions(121, (3, 5, 7)),
                "nats_above_floor(logits, P) for 3 sentences of 5 positions, 7 tokens")


@points(1, "nats_above_floor")
def test_nats_above_floor_zero_at_the_truth(submission):
    """0 when the model's probabilities are the true ones, whatever constant the logits carry"""
    P = distributions(122, (4, 6), zeros=0.0)
    what = "nats_above_floor(log(P) + 3, P): the model predicts exactly P"
    value = floor_value(submission, np.log(P) + 3.0, P, what=what)
    check(abs(value) < 1e-9,
          f"{what} should be 0 (the model is as good as the language allows), but it is "
          f"{value:.6g}. Subtract the entropy of p: the floor is what remains when q = p.")
    check_floor(submission, normal(123, (4, 6)), P, "nats_above_floor on logits far from P")


@points(1, "nats_above_floor")
def test_nats_above_floor_huge_logits(submission):
    """logits in the thousands: no overflow, no warning"""
    logits = normal(124, (2, 4, 5), scale=800.0)
    check_floor(submission, logits, distributions(125, (2, 4, 5)),
                "nats_above_floor for logits in the thousands", tol={"rtol": 1e-6, "atol": 1e-6})
    expect_clean_call(submission, "nats_above_floor",
                      hint="An overflow in exp means the largest logit was not subtracted "
                           "before exp (compute log-softmax as z - max - log(sum(exp(z - max)))).")


@points(1, "nats_above_floor")
def test_nats_above_floor_mask(submission):
    """only the positions where mask is True count (padding is left out of the mean)"""
    logits = normal(126, (3, 6, 5), scale=2.0)
    P = distributions(127, (3, 6, 5))
    lengths = np.array([6, 4, 2])
    mask = np.arange(6)[None, :] < lengths[:, None]
    P[~mask] = 0.0                       # past the end there is nothing to predict
    check_floor(submission, logits, P, "nats_above_floor with padding (lengths 6, 4 and 2)",
                mask=mask)


@points(1, "nats_above_floor")
def test_nats_above_floor_float32_and_clean(submission):
    """works on float32; returns one number; changes nothing in place, no warning for p = 0"""
    logits = normal(128, (2, 3, 6), dtype=np.float32)
    P = distributions(129, (2, 3, 6)).astype(np.float32)
    check_floor(submission, logits, P, "nats_above_floor for float32 inputs", tol=F32)
    expect_clean_call(submission, "nats_above_floor",
                      hint="A warning for log(0) means p log p was computed where p = 0: that "
                           "term is 0 by convention (use np.where on p > 0).")
