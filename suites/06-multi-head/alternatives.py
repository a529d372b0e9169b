"""Correct implementations of 06-multi-head written differently; each must keep full marks.

Entries run in the reference namespace (np, math, softmax, scaled_dot_product_attention,
split_heads, merge_heads in scope); several deliberately use none of them.
"""
import numpy as np

from autograder.kit import alternative

# ------------------------------------------------------------------ split_heads


@alternative("split_heads", "np.split of the columns, stacked on a new axis -3")
def split_stack(X, n_heads):
    return np.stack(np.split(np.asarray(X), n_heads, axis=-1), axis=-3)


@alternative("split_heads", "reshape then np.moveaxis, returning a contiguous copy")
def split_moveaxis(X, n_heads):
    X = np.asarray(X)
    shape = X.shape[:-1] + (n_heads, X.shape[-1] // n_heads)
    return np.ascontiguousarray(np.moveaxis(X.reshape(shape), -2, -3))


@alternative("split_heads", "a Python loop filling a preallocated array")
def split_loop(X, n_heads):
    X = np.asarray(X)
    d_k = X.shape[-1] // n_heads
    out = np.empty(X.shape[:-2] + (n_heads, X.shape[-2], d_k), dtype=X.dtype)
    for h in range(n_heads):
        out[..., h, :, :] = X[..., h * d_k:(h + 1) * d_k]
    return out


# ------------------------------------------------------------------ merge_heads


@alternative("merge_heads", "np.concatenate of the heads along the last axis")
def merge_concatenate(X):
    X = np.asarray(X)
    return np.concatenate([X[..., h, :, :] for h in range(X.shape[-3])], axis=-1)


@alternative("merge_heads", "np.moveaxis then reshape with -1")
def merge_moveaxis(X):
    X = np.asarray(X)
    return np.moveaxis(X, -3, -2).reshape(X.shape[:-3] + (X.shape[-2], -1))


# ------------------------------------------------------------------ multi_head_attention


@alternative("multi_head_attention", "a loop over heads with column slices of the weights")
def mha_loop(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X = np.asarray(X)
    d_k = X.shape[-1] // n_heads
    outs, maps = [], []
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        out, w = scaled_dot_product_attention(X @ W_q[:, cols], X @ W_k[:, cols],
                                              X @ W_v[:, cols], mask)
        outs.append(out)
        maps.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(maps, axis=-3)


@alternative("multi_head_attention", "einsum with per-head weight tensors and its own masked softmax "
                                     "(most negative float, then zeroing rows with no allowed key)")
def mha_einsum(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X = np.asarray(X, dtype=float)
    d_model = X.shape[-1]
    d_k = d_model // n_heads
    Wq, Wk, Wv = (np.asarray(W, dtype=float).reshape(d_model, n_heads, d_k) for W in (W_q, W_k, W_v))
    Q = np.einsum("...td,dhk->...htk", X, Wq)
    K = np.einsum("...td,dhk->...htk", X, Wk)
    V = np.einsum("...td,dhk->...htk", X, Wv)
    scores = np.einsum("...hqk,...hsk->...hqs", Q, K) / np.sqrt(d_k)
    T = X.shape[-2]
    allowed = np.ones((T, T), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if allowed.ndim >= 2:
        allowed = allowed[..., None, :, :]
    allowed = np.broadcast_to(allowed, scores.shape)
    scores = np.where(allowed, scores, np.finfo(scores.dtype).min)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores) * allowed
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    heads = np.einsum("...hqs,...hsk->...qhk", weights, V)
    out = heads.reshape(heads.shape[:-2] + (d_model,)) @ np.asarray(W_o, dtype=float)
    return out, weights


@alternative("multi_head_attention", "W_o applied head by head to its block of rows, then summed")
def mha_sum_of_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X = np.asarray(X)
    d_k = X.shape[-1] // n_heads
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim >= 2:
            mask = mask[..., np.newaxis, :, :]
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    out = sum(heads[..., h, :, :] @ W_o[h * d_k:(h + 1) * d_k] for h in range(n_heads))
    return out, weights


@alternative("multi_head_attention", "computed in float64 whatever the input, the result cast back "
                                     "to the input's dtype; the mask broadcast to the full batch "
                                     "shape first")
def mha_keep_dtype(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    dtype = np.result_type(X, W_q)
    X = np.asarray(X, dtype=np.float64)
    W_q, W_k, W_v, W_o = (np.asarray(W, dtype=np.float64) for W in (W_q, W_k, W_v, W_o))
    T = X.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), X.shape[:-2] + (T, T))
        mask = np.expand_dims(mask, -3)
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return (merge_heads(heads) @ W_o).astype(dtype), weights.astype(dtype)


# ------------------------------------------------------------------ sinusoidal_positions


@alternative("sinusoidal_positions", "two Python loops with the math module")
def positions_loops(T, d_model):
    import math
    P = np.zeros((T, d_model))
    for pos in range(T):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            P[pos, i] = math.sin(angle)
            if i + 1 < d_model:
                P[pos, i + 1] = math.cos(angle)
    return P


@alternative("sinusoidal_positions", "frequencies as exp(-2i ln(10000) / d_model), the d_model + 1 "
                                     "columns computed and the extra one dropped")
def positions_exp_log(T, d_model):
    width = d_model + d_model % 2
    div = np.exp(np.arange(0, width, 2) * (-np.log(10000.0) / d_model))
    angles = np.arange(T, dtype=float)[:, None] * div
    P = np.empty((T, width))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P[:, :d_model]


@alternative("sinusoidal_positions", "complex exponentials: imaginary part = sine, real part = cosine")
def positions_complex(T, d_model):
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    z = np.exp(1j * np.outer(np.arange(T), omega))
    pairs = np.stack([z.imag, z.real], axis=-1).reshape(T, -1)
    return pairs[:, :d_model]


@alternative("sinusoidal_positions", "the other odd-width convention: compute d_model + 1 columns "
                                     "(d_model + 1 in the exponent) and drop the last, in float32")
def positions_wider_float32(T, d_model):
    width = d_model + d_model % 2
    angles = (np.arange(T, dtype=np.float32)[:, None]
              / np.float32(10000.0) ** (np.arange(0, width, 2, dtype=np.float32) / np.float32(width)))
    P = np.zeros((T, width), dtype=np.float32)
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P[:, :d_model]


@alternative("sinusoidal_positions", "one angle per column with 2 * (j // 2) in the exponent, then "
                                     "sin and cos applied in place to the even and odd columns")
def positions_in_place(T, d_model):
    j = np.arange(d_model)[np.newaxis, :]
    angles = np.arange(T)[:, np.newaxis] / np.power(10000, (2 * (j // 2)) / np.float32(d_model))
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return angles
