"""Realistic wrong implementations of 09-attention-at-scale; the suite must take points from each.

Each description completes "This is what you get when you ...".
"""
import numpy as np

from autograder.kit import mutant


# ------------------------------------------------------------------ online_softmax

@mutant("online_softmax", "forget to rescale the running sum by exp(m_old - m_new) when the "
        "maximum changes")
def no_rescale(z, block_size):
    z = np.asarray(z, dtype=float)
    m = np.full(z.shape[:-1] + (1,), -np.inf)
    l = np.zeros(z.shape[:-1] + (1,))
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        m = np.maximum(m, block.max(axis=-1, keepdims=True))
        shift = np.where(m == -np.inf, 0.0, m)
        l = l + np.exp(block - shift).sum(axis=-1, keepdims=True)
    shift = np.where(m == -np.inf, 0.0, m)
    return np.exp(z - shift) / np.where(l > 0, l, 1.0)


@mutant("online_softmax", "rescale the running sum by exp(m_new - m_old) instead of "
        "exp(m_old - m_new) (the sign of the exponent flipped)")
def flipped_rescale(z, block_size):
    z = np.asarray(z, dtype=float)
    m = np.full(z.shape[:-1] + (1,), -np.inf)
    l = np.zeros(z.shape[:-1] + (1,))
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        old = np.where(m == -np.inf, 0.0, m)
        l = l * np.exp(shift - old) + np.exp(block - shift).sum(axis=-1, keepdims=True)
        m = m_new
    shift = np.where(m == -np.inf, 0.0, m)
    return np.exp(z - shift) / np.where(l > 0, l, 1.0)


@mutant("online_softmax", "start the running maximum at 0 instead of -inf, so that logits far "
        "below 0 all underflow to exp(z - 0) = 0")
def max_starts_at_zero(z, block_size):
    z = np.asarray(z, dtype=float)
    m = np.zeros(z.shape[:-1] + (1,))
    l = np.zeros(z.shape[:-1] + (1,))
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        l = l * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=-1, keepdims=True)
        m = m_new
    return np.exp(z - m) / l


@mutant("online_softmax", "normalise each block by its own sum")
def per_block(z, block_size):
    z = np.asarray(z, dtype=float)
    parts = []
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        e = np.exp(block - block.max(axis=-1, keepdims=True))
        parts.append(e / e.sum(axis=-1, keepdims=True))
    return np.concatenate(parts, axis=-1)


@mutant("online_softmax", "leave out the last, shorter block (looping over n // block_size "
        "blocks)")
def drops_last_block(z, block_size):
    z = np.asarray(z, dtype=float)
    m = np.full(z.shape[:-1] + (1,), -np.inf)
    l = np.zeros(z.shape[:-1] + (1,))
    for b in range(z.shape[-1] // block_size):
        block = z[..., b * block_size:(b + 1) * block_size]
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        l = l * np.exp(m - shift) + np.exp(block - shift).sum(axis=-1, keepdims=True)
        m = m_new
    shift = np.where(m == -np.inf, 0.0, m)
    return np.exp(z - shift) / np.where(l > 0, l, 1.0)


@mutant("online_softmax", "subtract the running maximum even while it is still -inf (first "
        "blocks holding only -inf), which gives -inf - (-inf) = NaN")
def no_minus_infinity_guard(z, block_size):
    z = np.asarray(z, dtype=float)
    m = np.full(z.shape[:-1] + (1,), -np.inf)
    l = np.zeros(z.shape[:-1] + (1,))
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        l = l * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=-1, keepdims=True)
        m = m_new
    return np.exp(z - m) / l


@mutant("online_softmax", "skip subtracting the maximum and sum exp(z) directly, which "
        "overflows for large logits")
def no_max(z, block_size):
    z = np.asarray(z, dtype=float)
    l = np.zeros(z.shape[:-1] + (1,))
    for start in range(0, z.shape[-1], block_size):
        l = l + np.exp(z[..., start:start + block_size]).sum(axis=-1, keepdims=True)
    return np.exp(z) / l


# ------------------------------------------------------------------ blockwise_attention

@mutant("blockwise_attention", "forget to rescale the running sum and the accumulated output "
        "when the running maximum changes")
def no_rescale_at_all(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m == -np.inf, 0.0, m)
        P = np.exp(S - shift)
        l = l + P.sum(axis=-1, keepdims=True)
        A = A + P @ V[..., start:stop, :]
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "rescale the running sum (the denominator) but not the "
        "accumulated output (the numerator) when the maximum changes")
def rescale_denominator_only(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        P = np.exp(S - shift)
        l = np.exp(m - shift) * l + P.sum(axis=-1, keepdims=True)
        A = A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "start the running maximum at 0 instead of -inf, so that when "
        "every score is far below 0 all the weights underflow to 0")
def max_starts_at_zero_attention(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.zeros(Q.shape[:-1] + (1,))
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        rescale = np.exp(m - m_new)
        P = np.exp(S - m_new)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "normalise each block on its own and average the block outputs")
def per_block_average(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    outputs = []
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        top = S.max(axis=-1, keepdims=True)
        P = np.exp(S - np.where(top == -np.inf, 0.0, top))
        total = P.sum(axis=-1, keepdims=True)
        outputs.append((P / np.where(total > 0, total, 1.0)) @ V[..., start:stop, :])
    return np.mean(outputs, axis=0)


@mutant("blockwise_attention", "apply the mask after exp: the masked scores still set the running "
        "maximum, so when a masked key has the largest score every allowed weight underflows to 0")
def mask_after_exp(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        rescale = np.exp(m - m_new)
        P = np.exp(S - m_new)
        if mask is not None:
            P = P * mask[..., start:stop]
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "leave out the last, shorter block of keys (looping over "
        "T_k // block_size blocks)")
def drops_last_key_block(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for b in range(T_k // block_size):
        start, stop = b * block_size, (b + 1) * block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        rescale, P = np.exp(m - shift), np.exp(S - shift)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "subtract the running maximum even while it is still -inf (a row "
        "whose first blocks are fully masked), which gives -inf - (-inf) = NaN")
def no_minus_infinity_guard_attention(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        rescale, P = np.exp(m - m_new), np.exp(S - m_new)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "divide by the running sum even when it is 0 (a query with no "
        "allowed key), which gives 0 / 0 = NaN instead of zeros")
def zero_over_zero(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        rescale, P = np.exp(m - shift), np.exp(S - shift)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / l


@mutant("blockwise_attention", "scale the scores by the square root of d_v instead of d_k")
def scale_by_d_v(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(V.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        rescale, P = np.exp(m - shift), np.exp(S - shift)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "transpose the key block with `.T`, which also reverses the batch "
        "axes")
def transpose_with_T(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ K[..., start:stop, :].T) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        rescale, P = np.exp(m - shift), np.exp(S - shift)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "compute the whole (T_q, T_k) score matrix first and only then "
        "walk over its blocks: the values are right, but the memory is that of naive attention")
def full_matrix_then_blocks(Q, K, V, block_size, mask=None):
    T_k = K.shape[-2]
    S_all = (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S_all = np.where(mask, S_all, -np.inf)
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = S_all[..., start:stop]
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        shift = np.where(m_new == -np.inf, 0.0, m_new)
        rescale, P = np.exp(m - shift), np.exp(S - shift)
        l = rescale * l + P.sum(axis=-1, keepdims=True)
        A = rescale * A + P @ V[..., start:stop, :]
        m = m_new
    return A / np.where(l > 0, l, 1.0)


@mutant("blockwise_attention", "tile only the queries, each block of queries against every key at "
        "once: exact, but with T_q <= block_size that is the whole (T_q, T_k) matrix")
def query_blocks_only(Q, K, V, block_size, mask=None):
    T_q, T_k = Q.shape[-2], K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(mask, Q.shape[:-1] + (T_k,))
    rows = []
    for start in range(0, T_q, block_size):
        stop = start + block_size
        S = (Q[..., start:stop, :] @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop, :], S, -np.inf)
        top = S.max(axis=-1, keepdims=True)
        P = np.exp(S - np.where(top == -np.inf, 0.0, top))
        total = P.sum(axis=-1, keepdims=True)
        rows.append((P / np.where(total > 0, total, 1.0)) @ V)
    return np.concatenate(rows, axis=-2)
