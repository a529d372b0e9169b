"""Realistic wrong implementations of 06-multi-head; the suite must take points from each.

Each description completes "This is what you get when you ...". Entries run in the reference
namespace: np, math, softmax, scaled_dot_product_attention, split_heads and merge_heads are in scope.
"""
import numpy as np

from autograder.kit import mutant

# ------------------------------------------------------------------ split_heads


@mutant("split_heads", "reshape straight to (n_heads, T, d_k), which cuts the flat memory instead "
                       "of the columns")
def reshape_only(X, n_heads):
    *batch, T, d_model = X.shape
    return X.reshape(*batch, n_heads, T, d_model // n_heads)


@mutant("split_heads", "give head j the interleaved columns j, j + n_heads, j + 2 n_heads, ... "
                       "instead of one contiguous block")
def interleaved(X, n_heads):
    *batch, T, d_model = X.shape
    return np.moveaxis(X.reshape(*batch, T, d_model // n_heads, n_heads), -1, -3)


@mutant("split_heads", "hard-code the axes of a single sequence (transpose(1, 0, 2)), which breaks "
                       "with batch dimensions")
def unbatched(X, n_heads):
    T, d_model = X.shape[-2:]
    return X.reshape(T, n_heads, d_model // n_heads).transpose(1, 0, 2)


@mutant("split_heads", "swap the head axis with the feature axis instead of the time axis")
def wrong_swap(X, n_heads):
    *batch, T, d_model = X.shape
    return np.swapaxes(X.reshape(*batch, T, n_heads, d_model // n_heads), -1, -2)


@mutant("split_heads", "compute d_k with / instead of //, so reshape receives a float")
def float_width(X, n_heads):
    *batch, T, d_model = X.shape
    return np.swapaxes(X.reshape(*batch, T, n_heads, d_model / n_heads), -3, -2)


# ------------------------------------------------------------------ merge_heads


@mutant("merge_heads", "reshape straight to (T, n_heads * d_k) without first moving the time axis "
                       "in front of the head axis")
def merge_reshape_only(X):
    *batch, n_heads, T, d_k = X.shape
    return X.reshape(*batch, T, n_heads * d_k)


@mutant("merge_heads", "interleave the heads' columns instead of placing the heads side by side")
def merge_interleaved(X):
    *batch, n_heads, T, d_k = X.shape
    return np.moveaxis(X, -3, -1).reshape(*batch, T, n_heads * d_k)


@mutant("merge_heads", "hard-code the axes of a single sequence (transpose(1, 0, 2)), which breaks "
                       "with batch dimensions")
def merge_unbatched(X):
    n_heads, T, d_k = X.shape[-3:]
    return X.transpose(1, 0, 2).reshape(T, n_heads * d_k)


@mutant("merge_heads", "add the heads together instead of placing them side by side")
def merge_sum(X):
    return X.sum(axis=-3)


# ------------------------------------------------------------------ multi_head_attention


@mutant("multi_head_attention", "divide the scores by sqrt(d_model) instead of sqrt(d_k) of one head")
def scale_d_model(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    Q = split_heads(X @ W_q, n_heads) * np.sqrt(X.shape[-1] // n_heads) / np.sqrt(d_model)
    K, V = split_heads(X @ W_k, n_heads), split_heads(X @ W_v, n_heads)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads) @ W_o, weights


@mutant("multi_head_attention", "leave out the division by sqrt(d_k)")
def no_scale(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_k = X.shape[-1] // n_heads
    Q = split_heads(X @ W_q, n_heads) * np.sqrt(d_k)
    K, V = split_heads(X @ W_k, n_heads), split_heads(X @ W_v, n_heads)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads) @ W_o, weights


@mutant("multi_head_attention", "forget the output projection W_o")
def no_output_projection(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads), weights


@mutant("multi_head_attention", "split the heads with a plain reshape to (n_heads, T, d_k), which "
                                "mixes positions and columns")
def reshape_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, T, d_model = X.shape
    d_k = d_model // n_heads
    Q, K, V = ((X @ W).reshape(*batch, n_heads, T, d_k) for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return heads.reshape(*batch, T, d_model) @ W_o, weights


@mutant("multi_head_attention", "return the weights averaged over the heads (PyTorch's default) "
                                "instead of one map per head")
def averaged_weights(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads) @ W_o, weights.mean(axis=-3)


@mutant("multi_head_attention", "ignore the mask")
def ignore_mask(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    heads, weights = scaled_dot_product_attention(Q, K, V)
    return merge_heads(heads) @ W_o, weights


@mutant("multi_head_attention", "apply the mask after the softmax, without renormalising")
def mask_after_softmax(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    _, weights = scaled_dot_product_attention(Q, K, V)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        weights = weights * (mask[..., None, :, :] if mask.ndim >= 2 else mask)
    return merge_heads(weights @ V) @ W_o, weights


@mutant("multi_head_attention", "fill masked scores with -1e9, so a fully masked query spreads its "
                                "weight evenly instead of getting zero")
def large_negative_fill(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask[..., None, :, :] if mask.ndim >= 2 else mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return merge_heads(weights @ V) @ W_o, weights


@mutant("multi_head_attention", "fill masked scores with -inf and take a plain softmax, so a fully "
                                "masked query gets nan")
def nan_rows(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask[..., None, :, :] if mask.ndim >= 2 else mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return merge_heads(weights @ V) @ W_o, weights


@mutant("multi_head_attention", "skip subtracting the row maximum before exp, so large scores "
                                "overflow")
def no_max_subtraction(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        e = e * (mask[..., None, :, :] if mask.ndim >= 2 else mask)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0, 1, total)
    return merge_heads(weights @ V) @ W_o, weights


@mutant("multi_head_attention", "take the softmax over the queries (axis -2) instead of the keys")
def softmax_wrong_axis(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-2)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        weights = weights * (mask[..., None, :, :] if mask.ndim >= 2 else mask)
    return merge_heads(weights @ V) @ W_o, weights


@mutant("multi_head_attention", "cut X into heads before projecting, so each head only sees its own "
                                "d_k input features (through a diagonal block of W)")
def split_before_projecting(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_k = X.shape[-1] // n_heads
    Xh = split_heads(X, n_heads)
    blocks = [slice(h * d_k, (h + 1) * d_k) for h in range(n_heads)]
    Q, K, V = (np.stack([Xh[..., h, :, :] @ W[b, b] for h, b in enumerate(blocks)], axis=-3)
               for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads) @ W_o, weights


@mutant("multi_head_attention", "insert the head axis of the mask with mask[:, None], which is right "
                                "for a (B, T, T) mask but not for a (T, T) one")
def mask_axis_one(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)[:, None]
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return merge_heads(heads) @ W_o, weights


# ------------------------------------------------------------------ sinusoidal_positions


@mutant("sinusoidal_positions", "swap sine and cosine (cosine on the even columns)")
def swapped(T, d_model):
    angles = np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    P = np.zeros((T, d_model))
    P[:, 0::2] = np.cos(angles)
    P[:, 1::2] = np.sin(angles[:, :d_model // 2])
    return P


@mutant("sinusoidal_positions", "put all the sines first and all the cosines after, instead of "
                                "alternating")
def halves(T, d_model):
    angles = np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)[:, :d_model]


@mutant("sinusoidal_positions", "use the column index j in the exponent (10000**(j/d_model)) for every "
                                "column, instead of 2i for both columns of a pair")
def per_column_frequency(T, d_model):
    j = np.arange(d_model)
    angles = np.arange(T)[:, None] / 10000.0 ** (j / d_model)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


@mutant("sinusoidal_positions", "number the positions from 1 instead of 0")
def from_one(T, d_model):
    angles = np.arange(1, T + 1)[:, None] / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    P = np.zeros((T, d_model))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, :d_model // 2])
    return P


@mutant("sinusoidal_positions", "multiply the position by 10000**(2i/d_model) instead of dividing")
def multiplied(T, d_model):
    angles = np.arange(T)[:, None] * 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    P = np.zeros((T, d_model))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, :d_model // 2])
    return P


@mutant("sinusoidal_positions", "use floor division in the exponent (2 * i // d_model), so every "
                                "pair gets frequency 1")
def floor_exponent(T, d_model):
    i = np.arange((d_model + 1) // 2)
    angles = np.arange(T)[:, None] / 10000.0 ** (2 * i // d_model)
    P = np.zeros((T, d_model))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, :d_model // 2])
    return P
