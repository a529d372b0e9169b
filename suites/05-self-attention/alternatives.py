"""Correct implementations of 05-self-attention written differently; each must keep full marks.

Each runs as if written in the answer cell: numpy as np, the given softmax, the helpers.grammar
names of the setup cell (D_MODEL, MAX_DEPTH, feature) and the other reference functions in scope.
"""
import numpy as np

from autograder.kit import alternative

# ------------------------------------------------------------------ causal_mask


@alternative("causal_mask", "np.tri with dtype=bool")
def tri(T):
    return np.tri(T, dtype=bool)


@alternative("causal_mask", "a double loop filling a boolean array")
def loops(T):
    M = np.zeros((T, T), dtype=bool)
    for t in range(T):
        for i in range(t + 1):
            M[t, i] = True
    return M


@alternative("causal_mask", "the complement of the strict upper triangle")
def not_future(T):
    return ~np.triu(np.ones((T, T), dtype=bool), k=1)


# ------------------------------------------------------------------ self_attention


@alternative("self_attention", "einsum, the finite minimum of the dtype as fill, and renormalising "
                               "with a guarded division")
def einsum_finite_fill(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X)
    Q = np.einsum("...td,dk->...tk", X, W_q)
    K = np.einsum("...td,dk->...tk", X, W_k)
    V = np.einsum("...td,dv->...tv", X, W_v)
    scores = np.einsum("...tk,...sk->...ts", Q, K) / np.sqrt(Q.shape[-1])
    allowed = np.ones(scores.shape, dtype=bool) if mask is None else np.broadcast_to(mask, np.broadcast_shapes(np.shape(mask), scores.shape))
    scores = np.broadcast_to(scores, allowed.shape)
    filled = np.where(allowed, scores, np.finfo(scores.dtype).min)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True)) * allowed
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return np.einsum("...ts,...sv->...tv", weights, V), weights


@alternative("self_attention", "a Python loop over every query of every sequence")
def loop_per_query(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X, dtype=np.result_type(X, W_q, 1.0))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    T = X.shape[-2]
    full = np.broadcast_shapes(X.shape[:-2] + (T, T), np.shape(mask) if mask is not None else ())
    batch = full[:-2]
    allowed = np.broadcast_to(True if mask is None else mask, full)
    Q, K, V = (np.broadcast_to(A, batch + A.shape[-2:]) for A in (Q, K, V))
    weights = np.zeros(full, dtype=Q.dtype)
    out = np.zeros(batch + (T, V.shape[-1]), dtype=Q.dtype)
    scale = np.sqrt(K.shape[-1])
    for b in np.ndindex(*batch):
        for t in range(T):
            keys = np.flatnonzero(allowed[b + (t,)])
            if keys.size == 0:
                continue
            s = K[b][keys] @ Q[b][t] / scale
            w = np.exp(s - s.max())
            w = w / w.sum()
            weights[b + (t,)][keys] = w
            out[b + (t,)] = w @ V[b][keys]
    return out, weights


@alternative("self_attention", "an additive mask of -inf, then nan cleaned up inside np.errstate")
def additive_inf_mask(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) * (1.0 / np.sqrt(W_k.shape[1]))
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -np.inf)
    with np.errstate(invalid="ignore"):
        peak = np.max(scores, axis=-1, keepdims=True)
        e = np.exp(scores - peak)
        weights = e / np.sum(e, axis=-1, keepdims=True)
    weights = np.nan_to_num(weights, nan=0.0)
    return weights @ V, weights


# ------------------------------------------------------------------ future_influence


@alternative("future_influence", "noise of the full shape drawn with rng.normal, spliced in with "
                                 "concatenate, and a per-position Euclidean norm")
def concatenate_norm(attn_fn, X, t, rng):
    X = np.asarray(X, dtype=float)
    noise = rng.normal(0.0, 1.0, size=X.shape)
    noisy = np.concatenate([X[..., :t + 1, :], noise[..., t + 1:, :]], axis=-2)
    outputs = []
    for Z in (X, noisy):
        result = attn_fn(Z)
        if isinstance(result, tuple):
            result = result[0]
        outputs.append(np.asarray(result)[..., :t + 1, :])
    return float(np.linalg.norm(outputs[1] - outputs[0], axis=-1).max())


@alternative("future_influence", "moving the sequence axis first and looping over positions")
def loop_positions(attn_fn, X, t, rng):
    original = np.moveaxis(np.asarray(X), -2, 0)
    noisy = original.astype(float)
    for i in range(t + 1, noisy.shape[0]):
        noisy[i] = rng.standard_normal(noisy[i].shape)

    def out(Z):
        r = attn_fn(np.moveaxis(Z, 0, -2))
        return np.moveaxis(np.asarray(r[0] if type(r) is tuple else r), -2, 0)

    a, b = out(original), out(noisy)
    return max(float(np.abs(b[i] - a[i]).max()) for i in range(t + 1))


# ------------------------------------------------------------------ subject_verb_weights


@alternative("subject_verb_weights", "one key dimension: a verb rewards nouns and depth-0 words")
def rank_one():
    W_q, W_k = np.zeros((D_MODEL, 1)), np.zeros((D_MODEL, 1))  # noqa: F821
    W_q[feature("verb"), 0] = 6.0  # noqa: F821
    W_k[feature("noun"), 0] = 1.0  # noqa: F821
    W_k[feature("depth0"), 0] = 1.0  # noqa: F821
    return W_q, W_k


@alternative("subject_verb_weights", "reward nouns, penalise every depth below the main clause")
def depth_penalty():
    W_q, W_k = np.zeros((D_MODEL, 2)), np.zeros((D_MODEL, 2))  # noqa: F821
    W_q[feature("verb"), 0] = 10.0  # noqa: F821
    W_k[feature("noun"), 0] = 1.0  # noqa: F821
    W_q[feature("depth0"), 1] = 10.0  # noqa: F821
    for d in range(1, MAX_DEPTH + 1):  # noqa: F821
        W_k[feature(f"depth{d}"), 1] = -1.0  # noqa: F821
    return W_q, W_k
