"""Correct implementations of 07-explanations written differently; each must keep full marks."""
import numpy as np

from autograder.kit import alternative


# ------------------------------------------------------------------ js_divergence

@alternative("js_divergence", "entropies: H(M) - (H(p) + H(q)) / 2")
def entropies(p, q):
    def entropy(r):
        safe = np.where(r > 0, r, 1.0)
        return -np.sum(r * np.log(safe), axis=-1)

    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    return entropy((p + q) / 2) - (entropy(p) + entropy(q)) / 2


@alternative("js_divergence", "np.log with where= and out=, in the input's precision")
def log_where(p, q):
    p = np.asarray(p)
    q = np.asarray(q)
    m = (p + q) / 2
    total = 0
    for r in (p, q):
        log_ratio = np.zeros(np.broadcast(r, m).shape, dtype=np.result_type(r, m, np.float32))
        np.log(r / np.where(m > 0, m, 1), out=log_ratio, where=r > 0)
        total = total + (r * log_ratio).sum(axis=-1)
    return total / 2


# ------------------------------------------------------------------ equivalent_attention

@alternative("equivalent_attention", "one step to the edge along a direction projected with the "
                                     "pseudo-inverse, the longer of the two sides")
def projected_step(weights, V, rng):
    W = np.asarray(weights, dtype=np.float64)
    Vs = np.broadcast_to(np.asarray(V, dtype=np.float64), W.shape[:-2] + np.shape(V)[-2:])
    result = W.copy()
    for index in np.ndindex(W.shape[:-1]):
        row = W[index]
        keep = row > 0
        n = int(keep.sum())
        if n <= Vs.shape[-1] + 1:
            continue
        A = np.concatenate([Vs[index[:-1]][keep].T, np.ones((1, n))])
        projector = np.eye(n) - np.linalg.pinv(A) @ A
        u = projector @ rng.normal(size=n)
        u = u - np.linalg.pinv(A) @ (A @ u)       # one more projection against round-off
        if np.abs(u).max() < 1e-12:
            continue
        options = []
        for d in (u, -u):
            neg = d < 0
            steps = row[keep][neg] / -d[neg]
            options.append((steps.min(), d, np.flatnonzero(keep)[neg][steps.argmin()]))
        t, d, hit = max(options, key=lambda o: o[0] * np.abs(o[1]).sum())
        new = row.copy()
        new[keep] = np.clip(row[keep] + t * d, 0, None)
        new[hit] = 0.0
        result[index] = new
    return result


@alternative("equivalent_attention", "deterministic: the last right-singular vector, walked to "
                                     "the edge on its positive side (the rng is never needed)")
def deterministic(weights, V, rng):
    W = np.array(weights, dtype=float)
    V = np.asarray(V, dtype=float)
    flat = W.reshape(-1, W.shape[-1])
    T_q = W.shape[-2] if W.ndim >= 2 else 1
    values = np.broadcast_to(V, W.shape[:-2] + V.shape[-2:]).reshape(-1, *V.shape[-2:]) \
        if W.ndim >= 2 else V[None]
    for r in range(flat.shape[0]):
        a = flat[r]
        idx = np.nonzero(a)[0]
        Vr = values[r // T_q]
        A = np.vstack([Vr[idx].T, np.ones((1, len(idx)))])
        if len(idx) == 0 or np.linalg.matrix_rank(A) == len(idx):
            continue
        u = np.linalg.svd(A)[2][-1]
        if not (u < 0).any():
            u = -u
        ratios = np.where(u < 0, a[idx] / np.where(u < 0, -u, 1), np.inf)
        k = int(np.argmin(ratios))
        a[idx] = np.maximum(a[idx] + ratios[k] * u, 0)
        a[idx[k]] = 0.0
    return flat.reshape(W.shape)


# ------------------------------------------------------------------ permutation_effect

@alternative("permutation_effect", "permutations from argsort of uniform numbers; TVD as the sum "
                                   "of the positive parts")
def argsort_shuffle(model, x, n_perm, rng):
    y, alpha = model(x)
    out = []
    for _ in range(n_perm):
        order = np.argsort(rng.random(len(alpha)))
        y_perm, _ = model(x, weights=alpha[order])
        out.append(np.clip(y_perm - y, 0, None).sum())
    return np.array(out, dtype=float).reshape(n_perm)


@alternative("permutation_effect", "rng.shuffle on a copy of the weights")
def shuffle_copy(model, x, n_perm, rng):
    base, w = model(x)
    changes = np.empty(n_perm)
    for k in range(n_perm):
        shuffled = np.array(w, copy=True)
        rng.shuffle(shuffled)
        changes[k] = np.abs(model(x, shuffled)[0] - base).sum() / 2
    return changes


# ------------------------------------------------------------------ leave_one_out_importance

@alternative("leave_one_out_importance", "boolean masks to drop each row; TVD as the sum of the "
                                         "positive parts")
def boolean_mask(model, x):
    y, _ = model(x)
    T = len(x)
    return np.array([np.clip(model(x[np.arange(T) != t])[0] - y, 0, None).sum()
                     for t in range(T)])


@alternative("leave_one_out_importance", "concatenating the slices before and after the token")
def concatenate(model, x):
    full = model(x)[0]
    scores = []
    for t in range(x.shape[0]):
        rest = np.concatenate([x[:t], x[t + 1:]], axis=0)
        scores.append(0.5 * np.sum(np.abs(full - model(rest)[0])))
    return np.asarray(scores)


# ------------------------------------------------------------------ kendall_tau

@alternative("kendall_tau", "a double loop over pairs for each batch element")
def loops(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    out = np.empty(a.shape[:-1])
    for index in np.ndindex(a.shape[:-1]):
        x, y = a[index], b[index]
        n = len(x)
        c = d = ta = tb = 0
        for i in range(n):
            for j in range(i + 1, n):
                if x[i] == x[j]:
                    ta += 1
                if y[i] == y[j]:
                    tb += 1
                s = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
                c += s > 0
                d += s < 0
        pairs = n * (n - 1) // 2
        denom = (pairs - ta) * (pairs - tb)
        out[index] = (c - d) / np.sqrt(denom) if denom > 0 else np.nan
    return out


@alternative("kendall_tau", "full sign matrices, halved, with an errstate guard")
def sign_matrices(a, b):
    sa = np.sign(np.subtract.outer(a, a) if np.ndim(a) == 1 else
                 np.asarray(a)[..., :, None] - np.asarray(a)[..., None, :])
    sb = np.sign(np.subtract.outer(b, b) if np.ndim(b) == 1 else
                 np.asarray(b)[..., :, None] - np.asarray(b)[..., None, :])
    score = (sa * sb).sum(axis=(-2, -1)) / 2
    norm = np.sqrt((sa != 0).sum(axis=(-2, -1)) / 2 * ((sb != 0).sum(axis=(-2, -1)) / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norm > 0, score / np.where(norm > 0, norm, 1), np.nan)
