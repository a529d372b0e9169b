"""Correct implementations of 04-scaling written differently; each must keep full marks."""
import numpy as np

from autograder.kit import alternative

# ------------------------------------------------------------------ dot_product_stats


@alternative("dot_product_stats", "a Python loop over samples with running sums, keys drawn first")
def running_sums(d_k, n_samples, rng):
    total, total_sq = 0.0, 0.0
    for _ in range(n_samples):
        k = rng.normal(0.0, 1.0, size=d_k)
        q = rng.normal(0.0, 1.0, size=d_k)
        s = float(np.dot(q, k))
        total += s
        total_sq += s * s
    mean = total / n_samples
    return mean, total_sq / n_samples - mean * mean


@alternative("dot_product_stats", "one draw of shape (2, d_k, n_samples) and the unbiased "
                                  "variance (ddof=1)")
def one_draw_unbiased(d_k, n_samples, rng):
    pairs = rng.standard_normal(size=(2, d_k, n_samples))
    scores = np.einsum("in,in->n", pairs[0], pairs[1])
    return np.mean(scores), np.var(scores, ddof=1)


# ------------------------------------------------------------------ softmax_entropy


@alternative("softmax_entropy", "np.log with where= and out=, so log(0) is never evaluated")
def log_where(p, axis=-1):
    p = np.asarray(p, dtype=np.result_type(p, np.float32))
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=axis)


@alternative("softmax_entropy", "clipping at the smallest positive float before the log")
def clip_tiny(p, axis=-1):
    p = np.asarray(p, dtype=float)
    return -np.sum(p * np.log(np.maximum(p, np.finfo(p.dtype).tiny)), axis=axis)


@alternative("softmax_entropy", "moving the axis last and looping over rows with only the "
                                "positive entries")
def loop_rows(p, axis=-1):
    p = np.moveaxis(np.asarray(p, dtype=float), axis, -1)
    flat = p.reshape(-1, p.shape[-1])
    out = np.empty(len(flat))
    for i, row in enumerate(flat):
        positive = row[row > 0]
        out[i] = -np.dot(positive, np.log(positive))
    return out.reshape(p.shape[:-1])


# ------------------------------------------------------------------ softmax_jacobian


@alternative("softmax_jacobian", "einsum for the outer product and a diagonal embedding")
def einsum_form(p):
    p = np.asarray(p)
    n = p.shape[-1]
    J = -np.einsum("...i,...j->...ij", p, p)
    idx = np.arange(n)
    J[..., idx, idx] += p
    return J


@alternative("softmax_jacobian", "p_i (delta_ij - p_j) as one broadcast product")
def factored(p):
    p = np.asarray(p)
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])


@alternative("softmax_jacobian", "a loop over the rows of a flattened batch with np.diag and np.outer")
def loop_diag_outer(p):
    p = np.asarray(p, dtype=float)
    n = p.shape[-1]
    flat = p.reshape(-1, n)
    out = np.stack([np.diag(row) - np.outer(row, row) for row in flat]) if len(flat) else \
        np.zeros((0, n, n))
    return out.reshape(p.shape + (n,))


# ------------------------------------------------------------------ saturation_sweep


@alternative("saturation_sweep", "one trial at a time in a Python loop, keys drawn before the query, "
                                 "entropy and norm computed inline")
def trial_loop(d_ks, n_keys, n_trials, rng, scaled=True):
    names = ("max_weight", "entropy", "grad_norm")
    out = {name: np.zeros(len(d_ks)) for name in names}
    for i, d_k in enumerate(d_ks):
        totals = np.zeros(3)
        for _ in range(n_trials):
            K = rng.standard_normal((n_keys, d_k))
            q = rng.standard_normal(d_k)
            s = K @ q
            if scaled:
                s = s / np.sqrt(d_k)
            a = np.exp(s - s.max())
            a = a / a.sum()
            positive = a[a > 0]
            J = np.diag(a) - np.outer(a, a)
            totals += [a.max(), -np.sum(positive * np.log(positive)), np.sqrt(np.sum(J * J))]
        for name, total in zip(names, totals):
            out[name][i] = total / n_trials
    return out


@alternative("saturation_sweep", "keys as (d_k, n_keys) matrices, a matmul, the closed-form "
                                 "Frobenius norm and lists of floats")
def closed_form(d_ks, n_keys, n_trials, rng, scaled=True):
    maxes, entropies, norms = [], [], []
    for d_k in d_ks:
        q = rng.standard_normal((n_trials, 1, d_k))
        K = rng.standard_normal((n_trials, d_k, n_keys))
        s = (q @ K)[:, 0, :] / (np.sqrt(d_k) if scaled else 1.0)
        a = softmax(s, axis=1)
        s2 = (a ** 2).sum(axis=1)
        s3 = (a ** 3).sum(axis=1)
        maxes.append(float(np.mean(np.max(a, axis=1))))
        entropies.append(float(np.mean(softmax_entropy(a, axis=1))))
        norms.append(float(np.mean(np.sqrt(np.clip(s2 - 2 * s3 + s2 ** 2, 0, None)))))
    return {"max_weight": maxes, "entropy": entropies, "grad_norm": norms}
