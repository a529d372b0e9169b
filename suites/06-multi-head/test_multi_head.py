"""Hidden suite of 06-multi-head: split_heads, merge_heads, multi_head_attention, sinusoidal_positions.

Expected values come from the independent, loop-based oracles below (one head at a time, column
blocks sliced by hand), not from the reference notebook, so the suite checks the curriculum's
contract rather than one implementation's habits.
"""
import math

import numpy as np
import pytest

from autograder.kit import (as_array, as_pair, check, computed_once, expect_close, expect_shape,
                            fail, mistakes, points)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "06-multi-head"
F32 = dict(rtol=1e-4, atol=1e-5)          # float32 results against a float64 oracle


# ------------------------------------------------------------------ oracles (float64, loops)

def oracle_split(X, n_heads):
    d_k = X.shape[-1] // n_heads
    return np.stack([X[..., h * d_k:(h + 1) * d_k] for h in range(n_heads)], axis=-3)


def oracle_merge(X):
    return np.concatenate([X[..., h, :, :] for h in range(X.shape[-3])], axis=-1)


def oracle_attention(Q, K, V, allowed):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), mask=allowed)
    return weights @ V, weights


def oracle_mha(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X, W_q, W_k, W_v, W_o = (np.asarray(A, dtype=np.float64) for A in (X, W_q, W_k, W_v, W_o))
    d_k = X.shape[-1] // n_heads
    allowed = np.ones((X.shape[-2], X.shape[-2]), dtype=bool) if mask is None else np.asarray(mask)
    heads, weights = [], []
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        out, w = oracle_attention(X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols], allowed)
        heads.append(out)
        weights.append(w)
    return np.concatenate(heads, axis=-1) @ W_o, np.stack(weights, axis=-3)


@computed_once  # a plain loop, for trust: 0.3 s for (2048, 64), once per grading process
def oracle_positions(T, d_model):
    P = np.zeros((T, d_model))
    for pos in range(T):
        for j in range(d_model):
            angle = pos / 10000.0 ** ((j - j % 2) / d_model)
            P[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return P


# ------------------------------------------------------------------ checks

def distinct(found, expected):
    """Only the mistakes whose result differs from the right answer on this input, so that a
    nearly-right result is never blamed on a mistake that happens to agree here."""
    expected = np.asarray(expected)

    def differs(result):
        result = np.asarray(result)
        return not (result.shape == expected.shape and np.allclose(
            result, expected, rtol=1e-4, atol=1e-6, equal_nan=True))
    return found.derive(keep=differs)


def catalogued(submission, expected, exercise, *args, pick=None, **kwargs):
    """The catalogued mistakes of ``exercise`` on these arguments that give a different result."""
    return distinct(mistakes(ASSIGNMENT, exercise, *args, pick=pick, learner=submission, **kwargs),
                    expected)


# What expect_clean_call says about a warning or an in-place change in these functions.
CLEAN = {"hint": "An overflow in exp usually means the maximum was not subtracted; an invalid value "
                 "usually means -inf - (-inf) or 0/0 on a fully masked row.",
         "copy_hint": "for example `X = X * s` rather than `X *= s`"}


# ------------------------------------------------------------------ inputs

def layer(seed, d_model, scale=1.0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(d_model, d_model)) * scale / np.sqrt(d_model) for _ in range(4))


def tokens(seed, shape, scale=1.0):
    return np.random.default_rng(seed).normal(size=shape) * scale


def run_mha(submission, X, W, n_heads, mask=None, what="multi_head_attention"):
    args = (X, *W, n_heads) if mask is None else (X, *W, n_heads, mask)
    out, weights = as_pair(submission.multi_head_attention(*args), what)
    return as_array(out, f"the output of {what}"), as_array(weights, f"the weights of {what}")


def named(submission, X, W, n_heads, mask=None, pick=0):
    kwargs = {} if mask is None else {"mask": mask}
    return mistakes(ASSIGNMENT, "multi_head_attention", X, *W, n_heads, pick=pick,
                    learner=submission, **kwargs)


def expect_weight_shape(weights, shape, what):
    weights = np.asarray(weights)
    if weights.shape == shape[:-3] + shape[-2:]:
        fail(f"{what} have shape {weights.shape}, but there should be one map per head, shape "
             f"{shape}. This is what you get when you average the weights over the heads.")
    return expect_shape(weights, shape, what)


def compare_mha(submission, X, W, n_heads, mask=None, what="multi_head_attention", tol=None):
    tol = tol or {}
    out, weights = run_mha(submission, X, W, n_heads, mask, what)
    expected_out, expected_w = oracle_mha(X, *W, n_heads, mask)
    expect_weight_shape(weights, expected_w.shape, f"the weights of {what}")
    expect_close(weights, expected_w, f"the weights of {what}",
                 mistakes=distinct(named(submission, X, W, n_heads, mask, 1), expected_w), **tol)
    expect_close(out, expected_out, f"the output of {what}",
                 mistakes=distinct(named(submission, X, W, n_heads, mask, 0), expected_out), **tol)
    return out, weights


# ================================================================== split_heads

SPLIT_CASES = [(3, 4, 2), (5, 12, 3), (4, 8, 8)]     # (T, d_model, n_heads)


@points(1, "split_heads")
@pytest.mark.parametrize("T,d_model,n_heads", SPLIT_CASES, ids=lambda v: str(v))
def test_split_values(submission, T, d_model, n_heads):
    """head j holds the contiguous columns j*d_k:(j+1)*d_k"""
    X = tokens(T * d_model + n_heads, (T, d_model))
    expected = oracle_split(X, n_heads)
    expect_close(submission.split_heads(X, n_heads), expected,
                 f"split_heads(X, {n_heads}) for X of shape {X.shape}",
                 mistakes=catalogued(submission, expected, "split_heads", X, n_heads))


@points(1, "split_heads")
def test_split_batch_dimensions(submission):
    """leading batch dimensions stay in front: (..., T, d_model) -> (..., H, T, d_k)"""
    X = tokens(11, (2, 3, 5, 12))
    expect_close(submission.split_heads(X, 4), oracle_split(X, 4),
                 "split_heads(X, 4) for X of shape (2, 3, 5, 12)",
                 mistakes=catalogued(submission, oracle_split(X, 4), "split_heads", X, 4))
    X = tokens(12, (2, 1, 6))
    expect_close(submission.split_heads(X, 1), oracle_split(X, 1),
                 "split_heads(X, 1) for X of shape (2, 1, 6) (one head, T = 1)",
                 mistakes=catalogued(submission, oracle_split(X, 1), "split_heads", X, 1))


@points(1, "split_heads")
def test_split_float32_and_clean(submission):
    """works on float32, leaves its input untouched, no warnings or prints"""
    X = tokens(13, (3, 7, 10)).astype(np.float32)
    expect_close(submission.split_heads(X, 5), oracle_split(X, 5).astype(np.float64),
                 "split_heads of float32 X of shape (3, 7, 10)", **F32)
    expect_clean_call(submission, "split_heads", **CLEAN)


# ================================================================== merge_heads

MERGE_CASES = [(2, 3, 2), (3, 5, 4), (6, 4, 1)]      # (n_heads, T, d_k)


@points(1, "merge_heads")
@pytest.mark.parametrize("n_heads,T,d_k", MERGE_CASES, ids=lambda v: str(v))
def test_merge_values(submission, n_heads, T, d_k):
    """head j fills columns j*d_k:(j+1)*d_k, so merge_heads undoes split_heads"""
    X = tokens(n_heads * 100 + T * 10 + d_k, (n_heads, T, d_k))
    expect_close(submission.merge_heads(X), oracle_merge(X),
                 f"merge_heads of heads of shape {X.shape}",
                 mistakes=catalogued(submission, oracle_merge(X), "merge_heads", X))


@points(1, "merge_heads")
def test_merge_batch_dimensions(submission):
    """leading batch dimensions stay in front: (..., H, T, d_k) -> (..., T, H*d_k)"""
    X = tokens(21, (2, 3, 4, 5, 3))
    expect_close(submission.merge_heads(X), oracle_merge(X), "merge_heads of shape (2, 3, 4, 5, 3)",
                 mistakes=catalogued(submission, oracle_merge(X), "merge_heads", X))
    X = tokens(22, (3, 2, 1, 4))
    expect_close(submission.merge_heads(X), oracle_merge(X), "merge_heads of shape (3, 2, 1, 4) (T = 1)",
                 mistakes=catalogued(submission, oracle_merge(X), "merge_heads", X))


@points(1, "merge_heads")
def test_merge_float32_and_clean(submission):
    """works on float32, leaves its input untouched, no warnings or prints"""
    X = tokens(23, (2, 5, 7, 2)).astype(np.float32)
    expect_close(submission.merge_heads(X), oracle_merge(X).astype(np.float64),
                 "merge_heads of float32 heads of shape (2, 5, 7, 2)", **F32)
    expect_clean_call(submission, "merge_heads", **CLEAN)


# ================================================================== multi_head_attention

MHA_CASES = [(4, 8, 2), (6, 12, 3), (5, 16, 4)]     # (T, d_model, n_heads)


@points(1, "multi_head_attention")
@pytest.mark.parametrize("T,d_model,n_heads", MHA_CASES, ids=lambda v: str(v))
def test_mha_values(submission, T, d_model, n_heads):
    """output and per-head weights match the definition, head by head"""
    X = tokens(T + d_model, (T, d_model))
    W = layer(d_model + n_heads, d_model, scale=1.5)
    compare_mha(submission, X, W, n_heads, what=f"multi_head_attention with T = {T}, "
                                                f"d_model = {d_model}, n_heads = {n_heads}")


@points(1, "multi_head_attention")
def test_mha_weights_are_distributions(submission):
    """weights have shape (..., n_heads, T, T) and every row sums to 1"""
    X = tokens(31, (2, 7, 12))
    W = layer(32, 12)
    _, weights = run_mha(submission, X, W, 4)
    expect_weight_shape(weights, (2, 4, 7, 7), "the weights of a batch of 2 sequences, 4 heads")
    check(np.all(weights >= 0), "some attention weights are negative; each row should be a "
                                "probability distribution.")
    expect_close(weights.sum(axis=-1), np.ones((2, 4, 7)), "the row sums of the weights",
                 mistakes=distinct(named(submission, X, W, 4, pick=1).derive(
                                       lambda w: np.sum(w, axis=-1)), np.ones((2, 4, 7))))


@points(1, "multi_head_attention")
def test_mha_scale_is_per_head(submission):
    """each head's scores are divided by sqrt(d_k) = sqrt(d_model / n_heads)"""
    X = tokens(33, (6, 32), scale=1.5)
    W = layer(34, 32, scale=1.5)
    compare_mha(submission, X, W, 8, what="multi_head_attention with d_model = 32, 8 heads")


@points(1, "multi_head_attention")
def test_mha_batch_dimensions(submission):
    """leading batch dimensions: every sequence of the batch is attended on its own"""
    X = tokens(35, (2, 3, 5, 12))
    W = layer(36, 12)
    compare_mha(submission, X, W, 3, what="multi_head_attention on a batch of shape (2, 3, 5, 12)")


@points(1, "multi_head_attention")
def test_mha_causal_mask(submission):
    """a (T, T) causal mask is applied to every head of every sequence"""
    X = tokens(37, (3, 6, 8))
    W = layer(38, 8, scale=1.5)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    _, weights = compare_mha(submission, X, W, 2, causal,
                             what="multi_head_attention with a causal (T, T) mask")
    leak = np.abs(weights[..., ~causal]).max()
    check(leak <= 1e-12, f"with a causal mask, weights on future positions must be 0 in every head, "
                         f"but one is {leak:.3g}.")


@points(1, "multi_head_attention")
def test_mha_per_sequence_masks(submission):
    """padding masks (B, 1, T) and per-sequence masks (B, T, T) broadcast over the heads"""
    X = tokens(39, (3, 5, 12))
    W = layer(40, 12, scale=1.5)
    padding = np.arange(5)[None, None, :] < np.array([5, 3, 1])[:, None, None]   # (3, 1, 5)
    compare_mha(submission, X, W, 4, padding, what="multi_head_attention with a (B, 1, T) padding mask")
    rng = np.random.default_rng(41)
    own = rng.random((3, 5, 5)) < 0.6
    own[..., 0] = True
    compare_mha(submission, X, W, 4, own, what="multi_head_attention with a (B, T, T) mask")


@points(1, "multi_head_attention")
def test_mha_fully_masked_rows(submission):
    """a query with every key masked gets zero weights and a zero output, no nan, no warning"""
    X = tokens(42, (2, 5, 8))
    W = layer(43, 8)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    mask[1] = False
    mask[3] = False
    out, weights = compare_mha(submission, X, W, 2, mask,
                               what="multi_head_attention with queries 1 and 3 fully masked")
    check(np.abs(weights[..., [1, 3], :]).max() <= 1e-12 and np.abs(out[:, [1, 3]]).max() <= 1e-12,
          "fully masked queries must get all-zero weights and an all-zero output.")
    expect_clean_call(submission, "multi_head_attention", **CLEAN)


@points(1, "multi_head_attention")
def test_mha_huge_logits(submission):
    """scores in the thousands: no overflow, no nan, no warning"""
    X = tokens(44, (5, 8), scale=30.0)
    W = layer(45, 8, scale=4.0)
    compare_mha(submission, X, W, 2, what="multi_head_attention with scores of size ~1e4")
    expect_clean_call(submission, "multi_head_attention", **CLEAN)
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 2] = False
    mask[4] = False
    compare_mha(submission, X, W, 2, mask,
                what="multi_head_attention with scores of size ~1e4 and a mask")
    expect_clean_call(submission, "multi_head_attention", **CLEAN)


@points(1, "multi_head_attention")
def test_mha_float32(submission):
    """float32 inputs give the float64 result to float32 precision"""
    X = tokens(46, (2, 6, 12)).astype(np.float32)
    W = tuple(A.astype(np.float32) for A in layer(47, 12, scale=1.5))
    mask = np.tril(np.ones((6, 6), dtype=bool))
    compare_mha(submission, X, W, 3, mask, what="multi_head_attention on float32 input", tol=F32)
    expect_clean_call(submission, "multi_head_attention", **CLEAN)


@points(1, "multi_head_attention")
def test_mha_edge_cases(submission):
    """T = 1, one head (d_k = d_model) and one feature per head (d_k = 1)"""
    W = layer(48, 6, scale=1.5)
    X1 = tokens(49, (2, 1, 6))
    compare_mha(submission, X1, W, 3, what="multi_head_attention with T = 1")
    X = tokens(50, (5, 6))
    compare_mha(submission, X, W, 1, what="multi_head_attention with n_heads = 1")
    compare_mha(submission, X, W, 6, what="multi_head_attention with n_heads = d_model = 6")


@points(1, "multi_head_attention")
def test_mha_no_mask_argument_and_clean(submission):
    """mask is optional; inputs stay untouched; no warnings or prints"""
    X = tokens(51, (4, 8))
    W = layer(52, 8)
    out, _ = run_mha(submission, X, W, 2, what="multi_head_attention(X, W_q, W_k, W_v, W_o, 2)")
    expect_close(out, oracle_mha(X, *W, 2)[0], "the output when mask is left out")
    expect_clean_call(submission, "multi_head_attention", **CLEAN)
    run_mha(submission, X, W, 2, np.ones((4, 4), dtype=bool), what="multi_head_attention with a mask")
    expect_clean_call(submission, "multi_head_attention", **CLEAN)


# ================================================================== sinusoidal_positions

def named_positions(submission, T, d_model):
    return catalogued(submission, oracle_positions(T, d_model), "sinusoidal_positions", T, d_model)


@points(1, "sinusoidal_positions")
@pytest.mark.parametrize("T,d_model", [(1, 2), (7, 8), (50, 128)], ids=lambda v: str(v))
def test_positions_values(submission, T, d_model):
    """P[pos, 2i] = sin(pos / 10000^(2i/d)), P[pos, 2i+1] = cos(same angle), pos from 0"""
    expect_close(submission.sinusoidal_positions(T, d_model), oracle_positions(T, d_model),
                 f"sinusoidal_positions({T}, {d_model})", atol=1e-5,
                 mistakes=named_positions(submission, T, d_model))


@points(1, "sinusoidal_positions")
def test_positions_pairs_and_offsets(submission):
    """each column pair lies on the unit circle, and dot products depend only on the offset"""
    P = as_array(submission.sinusoidal_positions(40, 16), "sinusoidal_positions(40, 16)")
    expect_shape(P, (40, 16), "sinusoidal_positions(40, 16)")
    wrong = named_positions(submission, 40, 16)
    expect_close(P[:, 0::2] ** 2 + P[:, 1::2] ** 2, np.ones((40, 8)),
                 "sin^2 + cos^2 of each column pair (2i, 2i+1)", atol=1e-5,
                 mistakes=distinct(wrong.derive(lambda m: m[:, 0::2] ** 2 + m[:, 1::2] ** 2),
                                   np.ones((40, 8))))
    expect_close(P[0], np.tile([0.0, 1.0], 8), "the encoding of position 0", atol=1e-5,
                 mistakes=distinct(wrong.derive(lambda m: m[0]), np.tile([0.0, 1.0], 8)))
    near = np.array([P[p] @ P[p + 3] for p in range(30)])
    expect_close(near, np.full(30, near[0]), "the dot products P[p] . P[p + 3] for p = 0..29 "
                 "(they should not depend on p)", rtol=1e-5, atol=1e-5)
    expect_close(P, oracle_positions(40, 16), "sinusoidal_positions(40, 16)", atol=1e-5,
                 mistakes=wrong)


@points(1, "sinusoidal_positions")
@pytest.mark.parametrize("T,d_model", [(6, 7), (3, 1)], ids=lambda v: str(v))
def test_positions_odd_width(submission, T, d_model):
    """odd d_model: shape (T, d_model), the last column a sine without its cosine"""
    P = as_array(submission.sinusoidal_positions(T, d_model), f"sinusoidal_positions({T}, {d_model})")
    expect_shape(P, (T, d_model), f"sinusoidal_positions({T}, {d_model})")
    formula = oracle_positions(T, d_model)                  # d_model in the exponent
    truncated = oracle_positions(T, d_model + 1)[:, :d_model]   # the d_model + 1 convention
    if not (np.allclose(P, formula, atol=1e-5) or np.allclose(P, truncated, atol=1e-5)):
        expect_close(P, formula, f"sinusoidal_positions({T}, {d_model})", atol=1e-5,
                     mistakes=named_positions(submission, T, d_model))


@points(1, "sinusoidal_positions")
def test_positions_long_sequence(submission):
    """long sequences (T = 2048) stay accurate; no warnings or prints"""
    P = submission.sinusoidal_positions(2048, 64)
    expect_close(P, oracle_positions(2048, 64), "sinusoidal_positions(2048, 64)", rtol=1e-5,
                 atol=5e-4, mistakes=named_positions(submission, 2048, 64))
    expect_clean_call(submission, "sinusoidal_positions", **CLEAN)
