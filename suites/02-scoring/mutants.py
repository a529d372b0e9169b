"""Realistic wrong implementations of the graded functions of 02-scoring.

Each description completes "This is what you get when you ..."; the suite must take points from
every one of them on its own function.
"""
import numpy as np

from autograder.kit import mutant


# ------------------------------------------------------------------ softmax

@mutant("softmax", "skip subtracting the maximum, so np.exp overflows on large scores")
def no_max(z, axis=-1):
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


@mutant("softmax", "ignore the axis argument and always normalise along the last axis")
def ignores_axis(z, axis=-1):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@mutant("softmax", "subtract the maximum of the whole array instead of the maximum along the axis, "
                   "so slices far below it underflow to 0/0")
def global_max(z, axis=-1):
    e = np.exp(z - z.max())
    return e / e.sum(axis=axis, keepdims=True)


@mutant("softmax", "divide by the sum of all entries instead of the sum along the axis")
def sum_of_everything(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum()


@mutant("softmax", "sum along axis 1, which is the last axis only for 2-D input")
def axis_one(z, axis=-1):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@mutant("softmax", "subtract the maximum in place (z -= ...), changing the caller's array")
def in_place(z, axis=-1):
    z -= z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


@mutant("softmax", "sum without keepdims=True, so the sums broadcast against the wrong axis")
def no_keepdims(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


# ------------------------------------------------------------------ dot_score

@mutant("dot_score", "write H @ s, which is right for one query but not for a batch of queries")
def matmul_single_query(s, H):
    return H @ s


@mutant("dot_score", "divide by sqrt(d): that is the scaled score of notebook 04, not the plain dot")
def scaled(s, H):
    return (H @ s[..., :, None])[..., 0] / np.sqrt(s.shape[-1])


@mutant("dot_score", "use np.dot, which for batches multiplies every H with every query, not pair by pair")
def np_dot(s, H):
    return np.dot(H, s)


@mutant("dot_score", "multiply H * s without adding an axis for the T positions, "
                     "so batched queries are matched with the wrong rows")
def missing_axis(s, H):
    return (H * s).sum(axis=-1)


@mutant("dot_score", "transpose with H.T, which reverses every axis of a batch, not just the last two")
def full_transpose(s, H):
    return s @ H.T


# ------------------------------------------------------------------ general_score

@mutant("general_score", "compute h_i^T W s, which is s^T W^T h_i: W is applied on the wrong side")
def wrong_side(s, H, W):
    return (H @ W @ s[..., :, None])[..., 0]


@mutant("general_score", "write H @ (s @ W), which is right for one query but not for a batch")
def single_query(s, H, W):
    return H @ (s @ W)


@mutant("general_score", "leave W out, computing the plain dot score")
def forgets_W(s, H, W):
    return (H @ s[..., :, None])[..., 0]


@mutant("general_score", "multiply (s @ W) * H without adding an axis for the T positions")
def missing_axis(s, H, W):
    return ((s @ W) * H).sum(axis=-1)


# ------------------------------------------------------------------ additive_score

@mutant("additive_score", "apply tanh after the product with v instead of before it")
def tanh_outside(s, H, W1, W2, v):
    return np.tanh(((s @ W1.T)[..., None, :] + H @ W2.T) @ v)


@mutant("additive_score", "forget the tanh, leaving a linear score")
def no_tanh(s, H, W1, W2, v):
    return ((s @ W1.T)[..., None, :] + H @ W2.T) @ v


@mutant("additive_score", "write W1 @ s, which is right for one query but not for a batch")
def single_query(s, H, W1, W2, v):
    return np.tanh(W1 @ s + H @ W2.T) @ v


@mutant("additive_score", "swap W1 and W2, applying W2 to the decoder state and W1 to the encoder states")
def swapped_matrices(s, H, W1, W2, v):
    return np.tanh((s @ W2.T)[..., None, :] + H @ W1.T) @ v


# ------------------------------------------------------------------ attend

@mutant("attend", "use the raw scores as weights, forgetting the softmax")
def no_softmax(s, H, score_fn):
    scores = score_fn(s, H)
    return scores @ H, scores


@mutant("attend", "divide the scores by their sum instead of taking a softmax")
def divide_by_sum(s, H, score_fn):
    scores = score_fn(s, H)
    weights = scores / scores.sum()
    return weights @ H, weights


@mutant("attend", "call score_fn(H, s) with the arguments swapped")
def swapped_arguments(s, H, score_fn):
    weights = softmax(score_fn(H, s))
    return weights @ H, weights


@mutant("attend", "compute the weights with exp(scores) / sum, without subtracting the maximum")
def naive_exponential(s, H, score_fn):
    e = np.exp(score_fn(s, H))
    weights = e / e.sum()
    return weights @ H, weights


@mutant("attend", "return (weights, context) instead of (context, weights)")
def swapped_outputs(s, H, score_fn):
    weights = softmax(score_fn(s, H))
    return weights, weights @ H


@mutant("attend", "sum the weighted states over the feature axis instead of over the positions")
def context_wrong_axis(s, H, score_fn):
    weights = softmax(score_fn(s, H))
    return (weights[:, None] * H).sum(axis=1), weights


# ------------------------------------------------------------------ align

@mutant("align", "normalise each column (over decoder steps) instead of each row (over encoder positions)")
def column_softmax(S, H, score_fn):
    scores = np.stack([score_fn(s, H) for s in S])
    weights = softmax(scores, axis=0)
    return weights @ H, weights


@mutant("align", "return the weights transposed, (T_enc, T_dec) instead of (T_dec, T_enc)")
def transposed_weights(S, H, score_fn):
    pairs = [attend(s, H, score_fn) for s in S]
    return np.stack([c for c, w in pairs]), np.stack([w for c, w in pairs]).T


@mutant("align", "attend with the first decoder state only and repeat its result for every step")
def first_state_only(S, H, score_fn):
    context, weights = attend(S[0], H, score_fn)
    return np.tile(context, (len(S), 1)), np.tile(weights, (len(S), 1))


@mutant("align", "use the previous decoder state S[t - 1] at step t (and S[-1] at step 0)")
def shifted_by_one(S, H, score_fn):
    pairs = [attend(S[t - 1], H, score_fn) for t in range(len(S))]
    return np.stack([c for c, w in pairs]), np.stack([w for c, w in pairs])


@mutant("align", "take the weighted sum of the decoder states S instead of the encoder states H")
def sums_decoder_states(S, H, score_fn):
    weights = np.stack([attend(s, H, score_fn)[1] for s in S])
    return weights @ S, weights
