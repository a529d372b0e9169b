"""Correct implementations of 09-attention-at-scale written differently; each must keep full marks."""
import numpy as np

from autograder.kit import alternative


# ------------------------------------------------------------------ online_softmax

@alternative("online_softmax", "a single running log-sum-exp per row, merged block by block with "
             "np.logaddexp")
def running_logsumexp(z, block_size):
    z = np.asarray(z, dtype=np.float64)
    lse = np.full(z.shape[:-1] + (1,), -np.inf)
    for start in range(0, z.shape[-1], block_size):
        block = z[..., start:start + block_size]
        top = block.max(axis=-1, keepdims=True)
        safe = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):          # log(0) = -inf for a block of only -inf
            block_lse = safe + np.log(np.exp(block - safe).sum(axis=-1, keepdims=True))
        lse = np.logaddexp(lse, block_lse)
    safe = np.where(np.isfinite(lse), lse, 0.0)
    return np.where(np.isfinite(lse), np.exp(z - safe), 0.0)


@alternative("online_softmax", "pad with -inf to a whole number of blocks, reshape to "
             "(..., n_blocks, block_size) and walk over the block axis; float32 stays float32")
def padded_blocks(z, block_size):
    z = np.asarray(z)
    if z.dtype.kind != "f":
        z = z.astype(np.float64)
    n = z.shape[-1]
    n_blocks = -(-n // block_size)
    padded = np.full(z.shape[:-1] + (n_blocks * block_size,), -np.inf, dtype=z.dtype)
    padded[..., :n] = z
    blocks = padded.reshape(z.shape[:-1] + (n_blocks, block_size))
    running_max = np.full(z.shape[:-1], -np.inf, dtype=z.dtype)
    running_sum = np.zeros(z.shape[:-1], dtype=z.dtype)
    for b in range(n_blocks):
        block = blocks[..., b, :]
        new_max = np.maximum(running_max, block.max(axis=-1))
        finite = np.isfinite(new_max)
        reference = np.where(finite, new_max, 0)
        running_sum = (running_sum * np.exp(running_max - reference)
                       + np.exp(block - reference[..., None]).sum(axis=-1))
        running_max = new_max
    reference = np.where(np.isfinite(running_max), running_max, 0)[..., None]
    total = np.where(running_sum > 0, running_sum, 1)[..., None]
    return np.exp(z - reference) / total


@alternative("online_softmax", "plain Python loops over flattened rows and their blocks, with "
             "math.exp and floats")
def python_loops(z, block_size):
    import math
    z = np.asarray(z, dtype=np.float64)
    rows = z.reshape(-1, z.shape[-1])
    out = np.zeros_like(rows)
    for r, row in enumerate(rows):
        m, total = -math.inf, 0.0
        for start in range(0, len(row), block_size):
            block = [float(x) for x in row[start:start + block_size]]
            new_m = max([m] + block)
            if new_m > -math.inf:
                total = (total * math.exp(m - new_m) if m > -math.inf else 0.0)
                total += sum(math.exp(x - new_m) for x in block if x > -math.inf)
            m = new_m
        for i, x in enumerate(row):
            out[r, i] = math.exp(x - m) / total if x > -math.inf else 0.0
    return out.reshape(z.shape)


# ------------------------------------------------------------------ blockwise_attention

@alternative("blockwise_attention", "FlashAttention-2 loop order: an outer loop over blocks of "
             "queries, an inner loop over blocks of keys, with einsum")
def query_and_key_tiles(Q, K, V, block_size, mask=None):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    T_q, T_k = Q.shape[-2], K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), Q.shape[:-1] + (T_k,))
    dtype = np.result_type(Q, K, V, np.float32)
    out = np.zeros(Q.shape[:-1] + (V.shape[-1],), dtype=dtype)
    scale = 1.0 / np.sqrt(Q.shape[-1])
    for qs in range(0, T_q, block_size):
        q = Q[..., qs:qs + block_size, :]
        m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=dtype)
        l = np.zeros(q.shape[:-1] + (1,), dtype=dtype)
        acc = np.zeros(q.shape[:-1] + (V.shape[-1],), dtype=dtype)
        for ks in range(0, T_k, block_size):
            s = np.einsum("...qd,...kd->...qk", q, K[..., ks:ks + block_size, :]) * scale
            if mask is not None:
                s = np.where(mask[..., qs:qs + block_size, ks:ks + block_size], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            ref = np.where(np.isneginf(m_new), 0.0, m_new)
            factor = np.exp(m - ref)
            p = np.exp(s - ref)
            l = l * factor + p.sum(axis=-1, keepdims=True)
            acc = acc * factor + np.einsum("...qk,...kv->...qv", p, V[..., ks:ks + block_size, :])
            m = m_new
        out[..., qs:qs + block_size, :] = np.divide(acc, l, out=np.zeros_like(acc), where=l > 0)
    return out


@alternative("blockwise_attention", "FlashAttention-1 style: the output is kept normalised and "
             "renormalised after every block")
def normalised_running_output(Q, K, V, block_size, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    T_k = K.shape[-2]
    allowed = None
    if mask is not None:
        allowed = np.broadcast_to(np.asarray(mask, dtype=bool), Q.shape[:-1] + (T_k,))
    m = np.full(Q.shape[:-1] + (1,), -np.inf)
    l = np.zeros(Q.shape[:-1] + (1,))
    O = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        Kj, Vj = K[..., start:start + block_size, :], V[..., start:start + block_size, :]
        S = np.matmul(Q, np.swapaxes(Kj, -1, -2)) / np.sqrt(Q.shape[-1])
        if allowed is not None:
            S = np.where(allowed[..., start:start + block_size], S, -np.inf)
        m_block = S.max(axis=-1, keepdims=True)
        m_new = np.maximum(m, m_block)
        ref = np.where(m_new > -np.inf, m_new, 0.0)
        P = np.exp(S - ref)
        l_new = np.exp(m - ref) * l + P.sum(axis=-1, keepdims=True)
        safe = np.where(l_new > 0, l_new, 1.0)
        O = (np.exp(m - ref) * l * O + P @ Vj) / safe
        m, l = m_new, l_new
    return O


@alternative("blockwise_attention", "Rabe & Staats style: a (max, sum, weighted values) summary "
             "per chunk of keys, merged after the loop")
def chunk_summaries(Q, K, V, block_size, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    T_k = K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), Q.shape[:-1] + (T_k,))
    maxima, sums, values = [], [], []
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)
        S = np.einsum("...qd,...kd->...qk", Q, K[..., start:stop, :]) / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask[..., start:stop], S, -np.inf)
        top = S.max(axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        E = np.exp(S - top)
        maxima.append(np.where(E.sum(axis=-1, keepdims=True) > 0, top, -np.inf))
        sums.append(E.sum(axis=-1, keepdims=True))
        values.append(E @ V[..., start:stop, :])
    overall = np.max(maxima, axis=0)
    overall = np.where(np.isfinite(overall), overall, 0.0)
    total = np.zeros_like(sums[0])
    out = np.zeros_like(values[0])
    for top, s, v in zip(maxima, sums, values):
        w = np.exp(top - overall)
        total = total + w * s
        out = out + w * v
    return out / np.where(total > 0, total, 1.0)


@alternative("blockwise_attention", "masked scores set to a large finite negative number instead "
             "of -inf, and rows with no allowed key zeroed at the end")
def finite_mask_fill(Q, K, V, block_size, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    T_k = K.shape[-2]
    NEG = -1e30
    any_allowed = None
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), Q.shape[:-1] + (T_k,))
        any_allowed = np.zeros(Q.shape[:-1] + (1,), dtype=bool)
    m = np.full(Q.shape[:-1] + (1,), NEG)
    l = np.zeros(Q.shape[:-1] + (1,))
    A = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    for start in range(0, T_k, block_size):
        stop = start + block_size
        S = (Q @ np.swapaxes(K[..., start:stop, :], -1, -2)) / np.sqrt(Q.shape[-1])
        if mask is not None:
            block_mask = mask[..., start:stop]
            S = np.where(block_mask, S, NEG)
            any_allowed = any_allowed | block_mask.any(axis=-1, keepdims=True)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        c = np.exp(m - m_new)
        P = np.exp(S - m_new)
        if mask is not None:
            P = P * block_mask         # exp(NEG - NEG) = 1 for rows with nothing allowed yet
        l = c * l + P.sum(axis=-1, keepdims=True)
        A = c * A + P @ V[..., start:stop, :]
        m = m_new
    out = A / np.where(l > 0, l, 1.0)
    if any_allowed is not None:
        out = np.where(any_allowed, out, 0.0)
    return out
