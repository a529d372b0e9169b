"""Realistic wrong implementations of 03-qkv; the suite must take points from each.

Each description completes "This is what you get when you ...". The bodies run as if written in
the answer cell: `np` and the notebook's given `softmax` are in scope.
"""
import numpy as np

from autograder.kit import mutant

# ------------------------------------------------------------------ hard_lookup


@mutant("hard_lookup", "take the smallest dot product (argmin) instead of the largest")
def argmin(query, keys, values):
    return values[np.argmin(keys @ query)]


@mutant("hard_lookup", "pick the key nearest to the query (Euclidean distance) instead of the one "
                       "with the largest dot product")
def nearest(query, keys, values):
    return values[np.argmin(np.sum((keys - query) ** 2, axis=-1))]


@mutant("hard_lookup", "compare by cosine similarity (normalising the keys) instead of the raw "
                       "dot product")
def cosine(query, keys, values):
    return values[np.argmax(keys @ query / np.linalg.norm(keys, axis=-1))]


@mutant("hard_lookup", "keep the last of several equally good keys instead of the first")
def last_on_ties(query, keys, values):
    scores = keys @ query
    return values[np.flatnonzero(scores == scores.max())[-1]]


@mutant("hard_lookup", "return the best key instead of its value")
def returns_key(query, keys, values):
    return keys[np.argmax(keys @ query)]


# ------------------------------------------------------------------ soft_lookup


@mutant("soft_lookup", "multiply the scores by the temperature instead of dividing by it")
def times_temperature(query, keys, values, temperature=1.0):
    return softmax(keys @ query * temperature) @ values


@mutant("soft_lookup", "ignore the temperature")
def no_temperature(query, keys, values, temperature=1.0):
    return softmax(keys @ query) @ values


@mutant("soft_lookup", "exponentiate the scores without subtracting their maximum, so small "
                       "temperatures overflow")
def no_max(query, keys, values, temperature=1.0):
    e = np.exp(keys @ query / temperature)
    return e / e.sum() @ values


@mutant("soft_lookup", "divide the raw scores by their sum instead of taking a softmax")
def sum_normalised(query, keys, values, temperature=1.0):
    scores = keys @ query / temperature
    return scores / scores.sum() @ values


@mutant("soft_lookup", "divide the scores by √d as well (soft_lookup uses the temperature only)")
def extra_sqrt_d(query, keys, values, temperature=1.0):
    return softmax(keys @ query / np.sqrt(len(query)) / temperature) @ values


@mutant("soft_lookup", "leave a debugging print in the function")
def debug_print(query, keys, values, temperature=1.0):
    weights = softmax(keys @ query / temperature)
    print("weights:", weights)
    return weights @ values


@mutant("soft_lookup", "return the weights instead of the weighted average of the values")
def returns_weights(query, keys, values, temperature=1.0):
    return softmax(keys @ query / temperature)


# ------------------------------------------------------------------ scaled_dot_product_attention


@mutant("scaled_dot_product_attention", "forget to divide the scores by √d_k")
def unscaled(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        weights = softmax(scores)
    else:
        allowed = np.broadcast_to(mask, scores.shape)
        has_key = allowed.any(axis=-1, keepdims=True)
        weights = softmax(np.where(has_key, np.where(allowed, scores, -np.inf), 0.0)) * has_key
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "divide the scores by d_k instead of √d_k")
def scaled_by_d(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / K.shape[-1]
    if mask is None:
        weights = softmax(scores)
    else:
        allowed = np.broadcast_to(mask, scores.shape)
        has_key = allowed.any(axis=-1, keepdims=True)
        weights = softmax(np.where(has_key, np.where(allowed, scores, -np.inf), 0.0)) * has_key
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "divide the scores by √d_v (the width of the values) "
                                        "instead of √d_k")
def scaled_by_dv(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])
    if mask is None:
        weights = softmax(scores)
    else:
        allowed = np.broadcast_to(mask, scores.shape)
        has_key = allowed.any(axis=-1, keepdims=True)
        weights = softmax(np.where(has_key, np.where(allowed, scores, -np.inf), 0.0)) * has_key
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "take the softmax over the queries (axis -2) instead of "
                                        "the keys (axis -1)")
def softmax_over_queries(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-2)
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "transpose the keys with K.T, which reverses every axis "
                                        "of a batch instead of swapping the last two")
def k_dot_t(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is None:
        weights = softmax(scores)
    else:
        has_key = np.broadcast_to(mask, scores.shape).any(-1, keepdims=True)
        weights = softmax(np.where(has_key, np.where(mask, scores, -np.inf), 0.0)) * has_key
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "mask the weights after the softmax and renormalise: right "
                                        "on paper, but when a masked key has the largest score the "
                                        "allowed weights underflow to 0")
def renormalise_after_softmax(Q, K, V, mask=None):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    if mask is not None:
        weights = weights * mask
        total = weights.sum(axis=-1, keepdims=True)
        weights = weights / np.where(total == 0, 1, total)
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "zero the masked weights after the softmax without "
                                        "renormalising the rows")
def mask_after_softmax(Q, K, V, mask=None):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "read True in the mask as 'blocked' instead of 'may attend'")
def inverted_mask(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is None:
        weights = softmax(scores)
    else:
        allowed = np.broadcast_to(~np.asarray(mask), scores.shape)
        has_key = allowed.any(-1, keepdims=True)
        weights = softmax(np.where(has_key, np.where(allowed, scores, -np.inf), 0.0)) * has_key
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "give masked keys a large negative score, so a fully "
                                        "masked row becomes uniform instead of zero")
def large_negative_fill(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    weights = softmax(scores if mask is None else np.where(mask, scores, -1e9))
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "fill masked scores with -inf, so a fully masked row "
                                        "becomes NaN (-inf minus -inf, then 0/0)")
def minus_inf_fill(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    weights = softmax(scores if mask is None else np.where(mask, scores, -np.inf))
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "fill masked scores with -inf and repair the NaN rows "
                                        "with np.nan_to_num afterwards (the 0/0 still emits a "
                                        "warning)")
def nan_to_num(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    weights = np.nan_to_num(softmax(scores if mask is None else np.where(mask, scores, -np.inf)))
    return weights @ V, weights


@mutant("scaled_dot_product_attention", "exponentiate the scores without subtracting the row "
                                        "maximum, so large scores overflow")
def no_max(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    e = np.exp(scores)
    if mask is not None:
        e = e * mask
    total = e.sum(-1, keepdims=True)
    weights = e / np.where(total == 0, 1, total)
    return weights @ V, weights


# ------------------------------------------------------------------ padding_mask


@mutant("padding_mask", "mark position i as real when i <= length (one position too many)")
def off_by_one(lengths, T):
    return np.arange(T)[None, :] <= np.asarray(lengths)[:, None]


@mutant("padding_mask", "mark the padding as True instead of the real tokens")
def inverted(lengths, T):
    return np.arange(T)[None, :] >= np.asarray(lengths)[:, None]


@mutant("padding_mask", "mark the last `length` positions as real (padding at the start)")
def left_padded(lengths, T):
    return np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]


@mutant("padding_mask", "build the mask with shape (T, B) instead of (B, T)")
def transposed(lengths, T):
    return np.arange(T)[:, None] < np.asarray(lengths)[None, :]


@mutant("padding_mask", "return 0.0/1.0 numbers instead of booleans")
def floats(lengths, T):
    return (np.arange(T)[None, :] < np.asarray(lengths)[:, None]).astype(float)


# ------------------------------------------------------------------ nadaraya_watson


@mutant("nadaraya_watson", "skip dividing by the sum of the kernel values")
def unnormalised(x_query, x_keys, y_values, bandwidth):
    kernel = np.exp(-(x_query[:, None] - x_keys[None, :]) ** 2 / (2 * bandwidth ** 2))
    return kernel @ y_values


@mutant("nadaraya_watson", "use exp(-(x - x_i)^2 / σ^2), dropping the factor 2")
def no_factor_two(x_query, x_keys, y_values, bandwidth):
    return softmax(-(x_query[:, None] - x_keys[None, :]) ** 2 / bandwidth ** 2) @ y_values


@mutant("nadaraya_watson", "divide the squared distance by 2σ instead of 2σ^2")
def bandwidth_not_squared(x_query, x_keys, y_values, bandwidth):
    return softmax(-(x_query[:, None] - x_keys[None, :]) ** 2 / (2 * bandwidth)) @ y_values


@mutant("nadaraya_watson", "exponentiate the kernel directly, so tiny bandwidths give 0/0")
def naive_kernel(x_query, x_keys, y_values, bandwidth):
    kernel = np.exp(-(x_query[:, None] - x_keys[None, :]) ** 2 / (2 * bandwidth ** 2))
    return kernel @ y_values / kernel.sum(axis=-1)


@mutant("nadaraya_watson", "normalise the weights over the queries (axis 0) instead of the keys")
def normalised_over_queries(x_query, x_keys, y_values, bandwidth):
    return softmax(-(x_query[:, None] - x_keys[None, :]) ** 2 / (2 * bandwidth ** 2), axis=0) @ y_values


@mutant("nadaraya_watson", "use the distance |x - x_i| instead of its square")
def absolute_distance(x_query, x_keys, y_values, bandwidth):
    return softmax(-np.abs(x_query[:, None] - x_keys[None, :]) / (2 * bandwidth ** 2)) @ y_values
