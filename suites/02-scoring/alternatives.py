"""Correct implementations of the graded functions of 02-scoring, written differently from the
reference; each must keep full marks."""
import numpy as np

from autograder.kit import alternative


# ------------------------------------------------------------------ softmax

@alternative("softmax", "exp(z - logsumexp(z)), the log-sum-exp trick")
def log_sum_exp(z, axis=-1):
    z = np.asarray(z)
    m = np.max(z, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True))
    return np.exp(z - lse)


@alternative("softmax", "a Python loop over the slices, after moving the axis to the end")
def loop_over_slices(z, axis=-1):
    moved = np.moveaxis(np.array(z, dtype=float), axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = np.empty_like(flat)
    for i, row in enumerate(flat):
        e = np.exp(row - max(row))
        out[i] = e / sum(e)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


@alternative("softmax", "float64 internally, multiply by the reciprocal, cast back to the input dtype")
def float64_reciprocal(z, axis=-1):
    z = np.asarray(z)
    z64 = z.astype(np.float64)
    e = np.exp(np.subtract(z64, np.amax(z64, axis=axis, keepdims=True)))
    return (e * np.reciprocal(np.sum(e, axis=axis, keepdims=True))).astype(z.dtype)


# ------------------------------------------------------------------ dot_score

@alternative("dot_score", "np.einsum")
def einsum(s, H):
    return np.einsum("...d,...td->...t", s, H)


@alternative("dot_score", "broadcast multiply and sum over the features")
def broadcast_sum(s, H):
    return np.sum(np.asarray(H) * np.asarray(s)[..., None, :], axis=-1)


@alternative("dot_score", "a Python loop over the flattened batch")
def loop_over_batch(s, H):
    s, H = np.asarray(s), np.asarray(H)
    batch = s.shape[:-1]
    flat_s = s.reshape(-1, s.shape[-1])
    flat_H = H.reshape(-1, H.shape[-2], H.shape[-1])
    out = np.stack([h @ q for q, h in zip(flat_s, flat_H)])
    return out.reshape(batch + (H.shape[-2],))


@alternative("dot_score", "a row times a transposed matrix with np.swapaxes")
def row_times_matrix(s, H):
    return (np.asarray(s)[..., None, :] @ np.swapaxes(H, -1, -2))[..., 0, :]


# ------------------------------------------------------------------ general_score

@alternative("general_score", "one three-way np.einsum")
def einsum(s, H, W):
    return np.einsum("...i,ij,...tj->...t", s, W, H)


@alternative("general_score", "apply W to every h_i first (W h_i), then dot with s")
def keys_first(s, H, W):
    projected = np.asarray(H) @ np.asarray(W).T          # (..., T, d_s): row i is W h_i
    return np.sum(projected * np.asarray(s)[..., None, :], axis=-1)


@alternative("general_score", "reuse dot_score on the projected query s @ W")
def reuse_dot(s, H, W):
    return dot_score(np.asarray(s) @ W, H)


# ------------------------------------------------------------------ additive_score

@alternative("additive_score", "np.einsum for every product")
def einsum(s, H, W1, W2, v):
    hidden = np.einsum("ai,...i->...a", W1, s)[..., None, :] + np.einsum("aj,...tj->...ta", W2, H)
    return np.einsum("...ta,a->...t", np.tanh(hidden), v)


@alternative("additive_score", "a Python loop over the encoder positions")
def loop_over_positions(s, H, W1, W2, v):
    s, H = np.asarray(s), np.asarray(H)
    query = s @ W1.T
    scores = [np.tanh(query + H[..., i, :] @ W2.T) @ v for i in range(H.shape[-2])]
    return np.stack(scores, axis=-1)


@alternative("additive_score", "Luong's concat form, v^T tanh([W1 W2] [s; h_i])")
def concatenated(s, H, W1, W2, v):
    s, H = np.asarray(s), np.asarray(H)
    W = np.concatenate([W1, W2], axis=1)                 # (d_a, d_s + d_h)
    queries = np.broadcast_to(s[..., None, :], H.shape[:-1] + (s.shape[-1],))
    stacked = np.concatenate([queries, H], axis=-1)      # (..., T, d_s + d_h)
    return np.tanh(stacked @ W.T) @ v


# ------------------------------------------------------------------ attend

@alternative("attend", "its own stable softmax and np.einsum for the context")
def inline_softmax(s, H, score_fn):
    scores = np.asarray(score_fn(s, H))
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return np.einsum("t,td->d", weights, H), weights


@alternative("attend", "the context as a Python sum over the positions")
def loop_context(s, H, score_fn):
    weights = softmax(score_fn(s, H))
    context = np.zeros(np.shape(H)[-1], dtype=np.result_type(H, weights))
    for alpha, h in zip(weights, H):
        context = context + alpha * h
    return context, weights


# ------------------------------------------------------------------ align

@alternative("align", "stack the scores of every step, one softmax over rows, one matrix product")
def score_matrix(S, H, score_fn):
    scores = np.stack([score_fn(s, H) for s in S])
    weights = softmax(scores, axis=-1)
    return weights @ H, weights


@alternative("align", "one call of the score function on all decoder states at once (batched)")
def batched_scores(S, H, score_fn):
    weights = softmax(score_fn(S, H), axis=-1)
    return weights @ H, weights


@alternative("align", "preallocated arrays filled step by step")
def preallocated(S, H, score_fn):
    S, H = np.asarray(S), np.asarray(H)
    contexts = np.zeros((len(S), H.shape[-1]), dtype=np.result_type(S, H))
    weights = np.zeros((len(S), len(H)), dtype=np.result_type(S, H))
    for t in range(len(S)):
        contexts[t], weights[t] = attend(S[t], H, score_fn)
    return contexts, weights
