"""Realistic wrong implementations of 05-self-attention; the suite must take points from each.

Each runs as if written in the answer cell: numpy as np, the given softmax, the helpers.grammar
names of the setup cell (D_MODEL, MAX_DEPTH, feature) and the other reference functions in scope.
"""
import numpy as np

from autograder.kit import mutant

# ------------------------------------------------------------------ causal_mask


@mutant("causal_mask", "leave the diagonal out (np.tril(..., k=-1)), so a position may not read itself")
def strict_lower(T):
    return np.tril(np.ones((T, T), dtype=bool), k=-1)


@mutant("causal_mask", "use the opposite convention (True = blocked, as np.triu(..., k=1)) instead of "
                       "True = may attend")
def blocked_convention(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


@mutant("causal_mask", "build the upper triangle, letting each position read the future instead of the past")
def upper_triangle(T):
    return np.triu(np.ones((T, T), dtype=bool))


@mutant("causal_mask", "return np.tril(np.ones((T, T))), a float array, instead of a boolean mask")
def float_mask(T):
    return np.tril(np.ones((T, T)))


# ------------------------------------------------------------------ self_attention


@mutant("self_attention", "scale by sqrt(d_model) instead of sqrt(d_k)")
def scale_d_model(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "scale by sqrt(d_v), the width of the values, instead of sqrt(d_k)")
def scale_d_v(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_v.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "forget to divide the scores by sqrt(d_k)")
def no_scale(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "take the softmax down the columns (axis=-2) instead of along each row")
def column_softmax(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e30)
    weights = softmax(scores, axis=-2)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ V, weights


@mutant("self_attention", "project the keys with W_q instead of W_k")
def keys_from_w_q(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_q, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "return weights @ X, skipping the value projection W_v")
def no_value_projection(X, W_q, W_k, W_v, mask=None):
    Q, K = X @ W_q, X @ W_k
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ X, weights


@mutant("self_attention", "write K.T, which on a batch reverses every axis, not just the last two")
def dot_t(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ K.T / np.sqrt(W_k.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        empty = ~np.any(mask, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(mask, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "ignore the mask")
def ignore_mask(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1]), axis=-1)
    return weights @ V, weights


@mutant("self_attention", "zero the masked weights after the softmax without renormalising the rest")
def mask_after_softmax(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1]), axis=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights


@mutant("self_attention", "treat True as 'blocked' instead of 'may attend' (the opposite convention)")
def inverted_mask(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        allowed = ~np.asarray(mask, dtype=bool)
        empty = ~np.any(allowed, axis=-1, keepdims=True)
        weights = np.where(empty, 0.0, softmax(np.where(empty, 0.0, np.where(allowed, scores, -np.inf)), axis=-1))
    return weights @ V, weights


@mutant("self_attention", "fill masked scores with a large negative number (-1e9), so a fully masked "
                          "row becomes uniform instead of zero")
def large_negative_fill(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@mutant("self_attention", "set masked scores to -inf without handling rows where every key is masked "
                          "(the softmax of a row of -inf is nan)")
def unguarded_inf(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@mutant("self_attention", "exponentiate without subtracting the maximum, so exp overflows on large scores")
def no_max_subtraction(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_k.shape[-1])
    e = np.exp(scores)
    if mask is not None:
        e = e * mask
    sums = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(sums == 0, 1.0, sums)
    return weights @ V, weights


# ------------------------------------------------------------------ future_influence


@mutant("future_influence", "compare the outputs at every position, not only at positions 0..t")
def all_positions(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:, :] = rng.standard_normal(noisy[..., t + 1:, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(np.abs(b - a)))


@mutant("future_influence", "replace the tokens from t on (X[..., t:, :]), token t included")
def from_t(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t:, :] = rng.standard_normal(noisy[..., t:, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


@mutant("future_influence", "compare positions 0..t-1 only ([..., :t, :]), leaving position t out")
def t_excluded(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:, :] = rng.standard_normal(noisy[..., t + 1:, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    diff = np.abs(b[..., :t, :] - a[..., :t, :])
    return float(diff.max()) if diff.size else 0.0


@mutant("future_influence", "replace only the next token (t + 1) instead of every token after t")
def next_token_only(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:t + 2, :] = rng.standard_normal(noisy[..., t + 1:t + 2, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


@mutant("future_influence", "average the changes instead of taking the largest one")
def mean_change(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:, :] = rng.standard_normal(noisy[..., t + 1:, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.mean(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


@mutant("future_influence", "take the largest signed difference instead of the largest absolute one")
def signed_difference(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:, :] = rng.standard_normal(noisy[..., t + 1:, :].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(b[..., :t + 1, :] - a[..., :t + 1, :]))


@mutant("future_influence", "index X[t+1:], which on a batch replaces whole batch entries instead of "
                            "the future of each sequence")
def first_axis(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[t + 1:] = rng.standard_normal(noisy[t + 1:].shape)
    a, b = attn_fn(X), attn_fn(noisy)
    a = np.asarray(a[0] if isinstance(a, tuple) else a)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


@mutant("future_influence", "always take attn_fn(X)[0], which for a function returning only its output "
                            "is the first row (or batch entry), not the output")
def always_index_zero(attn_fn, X, t, rng):
    noisy = np.array(X, dtype=float)
    noisy[..., t + 1:, :] = rng.standard_normal(noisy[..., t + 1:, :].shape)
    a, b = np.asarray(attn_fn(X)[0]), np.asarray(attn_fn(noisy)[0])
    return float(np.max(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


@mutant("future_influence", "write the noise into X itself, changing the caller's array")
def in_place(attn_fn, X, t, rng):
    a = attn_fn(X)
    a = np.array(a[0] if isinstance(a, tuple) else a)
    X[..., t + 1:, :] = rng.standard_normal(X[..., t + 1:, :].shape)
    b = attn_fn(X)
    b = np.asarray(b[0] if isinstance(b, tuple) else b)
    return float(np.max(np.abs(b[..., :t + 1, :] - a[..., :t + 1, :])))


# ------------------------------------------------------------------ subject_verb_weights


@mutant("subject_verb_weights", "only pair 'verb' with 'noun', so every noun before the verb ties with "
                                "the subject")
def noun_only():
    W_q, W_k = np.zeros((D_MODEL, 1)), np.zeros((D_MODEL, 1))  # noqa: F821
    W_q[feature("verb"), 0] = 8.0  # noqa: F821
    W_k[feature("noun"), 0] = 1.0  # noqa: F821
    return W_q, W_k


@mutant("subject_verb_weights", "match the verb to nouns of its own number, which fails when an attractor "
                                "has the same number as the subject")
def number_match():
    W_q, W_k = np.zeros((D_MODEL, 3)), np.zeros((D_MODEL, 3))  # noqa: F821
    W_q[feature("verb"), 0], W_k[feature("noun"), 0] = 8.0, 1.0  # noqa: F821
    W_q[feature("singular"), 1], W_k[feature("singular"), 1] = 8.0, 1.0  # noqa: F821
    W_q[feature("plural"), 2], W_k[feature("plural"), 2] = 8.0, 1.0  # noqa: F821
    return W_q, W_k


@mutant("subject_verb_weights", "match depth only, so 'the' and the verb itself tie with the subject")
def depth_only():
    W_q = np.zeros((D_MODEL, MAX_DEPTH + 1))  # noqa: F821
    W_k = np.zeros((D_MODEL, MAX_DEPTH + 1))  # noqa: F821
    for d in range(MAX_DEPTH + 1):  # noqa: F821
        W_q[feature(f"depth{d}"), d] = 8.0  # noqa: F821
        W_k[feature(f"depth{d}"), d] = 1.0  # noqa: F821
    return W_q, W_k


@mutant("subject_verb_weights", "swap the roles, returning (W_k, W_q): the verb's key pattern becomes its "
                                "query")
def swapped():
    W_q, W_k = np.zeros((D_MODEL, 2)), np.zeros((D_MODEL, 2))  # noqa: F821
    W_q[feature("verb"), 0], W_k[feature("noun"), 0] = 8.0, 1.0  # noqa: F821
    W_q[feature("depth0"), 1], W_k[feature("depth0"), 1] = 8.0, 1.0  # noqa: F821
    return W_k, W_q


@mutant("subject_verb_weights", "build the right pattern with weights too small, so the softmax stays "
                                "nearly uniform and the subject gets under half the weight")
def too_flat():
    W_q, W_k = np.zeros((D_MODEL, 2)), np.zeros((D_MODEL, 2))  # noqa: F821
    W_q[feature("verb"), 0], W_k[feature("noun"), 0] = 1.0, 1.0  # noqa: F821
    W_q[feature("depth0"), 1], W_k[feature("depth0"), 1] = 1.0, 1.0  # noqa: F821
    return W_q, W_k
