"""Realistic wrong implementations of 07-explanations; the suite must take points from each."""
import numpy as np

from autograder.kit import mutant


# ------------------------------------------------------------------ js_divergence

@mutant("js_divergence", "use log base 2, which measures the divergence in bits, not nats")
def bits(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    kp = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1) / np.where(p > 0, m, 1)), 0).sum(-1)
    kq = np.where(q > 0, q * np.log2(np.where(q > 0, q, 1) / np.where(q > 0, m, 1)), 0).sum(-1)
    return 0.5 * (kp + kq)


@mutant("js_divergence", "keep only KL(p||M), forgetting the half that compares q with M")
def one_half(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    return np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(p > 0, m, 1)), 0).sum(-1)


@mutant("js_divergence", "add KL(p||M) and KL(q||M) without halving, so the maximum is 2 ln 2")
def no_halves(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    kp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(p > 0, m, 1)), 0).sum(-1)
    kq = np.where(q > 0, q * np.log(np.where(q > 0, q, 1) / np.where(q > 0, m, 1)), 0).sum(-1)
    return kp + kq


@mutant("js_divergence", "compute p log(p / M) without the convention 0 log 0 = 0, so exact zeros "
                         "give nan and a warning")
def no_zero_convention(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    return 0.5 * (p * np.log(p / m)).sum(-1) + 0.5 * (q * np.log(q / m)).sum(-1)


@mutant("js_divergence", "mask p log(p / M) with np.where after computing it, which still "
                         "evaluates log(0) and warns")
def where_after_log(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    kp = np.where(p > 0, p * np.log(p / m), 0.0).sum(-1)
    kq = np.where(q > 0, q * np.log(q / m), 0.0).sum(-1)
    return 0.5 * (kp + kq)


@mutant("js_divergence", "sum over axis 0 instead of the last axis")
def first_axis(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    kp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(p > 0, m, 1)), 0).sum(0)
    kq = np.where(q > 0, q * np.log(np.where(q > 0, q, 1) / np.where(q > 0, m, 1)), 0).sum(0)
    return 0.5 * (kp + kq)


@mutant("js_divergence", "compare p and q directly with KL(p||q) instead of comparing each with "
                         "their mixture M")
def plain_kl(p, q):
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0).sum(-1)


# ------------------------------------------------------------------ equivalent_attention
# Each one follows the reference's plan (one row at a time, a random null-space direction, a step
# to the edge) with one thing wrong.

@mutant("equivalent_attention", "take the direction from the null space of V^T alone, forgetting "
                                "that it must also sum to 0 to keep the row sum at 1")
def no_sum_constraint(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        U, s, _ = np.linalg.svd(V[index[:-1]][support])
        null = U[:, int(np.sum(s > 1e-10 * s.max())) if s.size else 0:].T
        if null.shape[0] == 0:
            continue
        u = rng.standard_normal(null.shape[0]) @ null
        if not np.any(u < 0):
            u = -u
        down = u < 0
        a = a.copy()
        a[support] = np.maximum(a[support] + np.min(a[support][down] / -u[down]) * u, 0)
        out[index] = a
    return out


@mutant("equivalent_attention", "subtract the mean from a null-space direction of V^T to make it "
                                "sum to 0, which takes it out of the null space")
def recentred(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size <= V.shape[-1] + 1:
            continue
        U, s, _ = np.linalg.svd(V[index[:-1]][support])
        null = U[:, int(np.sum(s > 1e-10 * s.max())):].T
        u = rng.standard_normal(null.shape[0]) @ null
        u = u - u.mean()
        down = u < 0
        a = a.copy()
        a[support] = np.maximum(a[support] + np.min(a[support][down] / -u[down]) * u, 0)
        out[index] = a
    return out


@mutant("equivalent_attention", "stop halfway to the edge, so the new weights stay close to the "
                                "original ones")
def half_step(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        A = np.vstack([V[index[:-1]][support].T, np.ones(support.size)])
        _, s, Vt = np.linalg.svd(A)
        null = Vt[int(np.sum(s > 1e-10 * s[0])):]
        if null.shape[0] == 0:
            continue
        u = rng.standard_normal(null.shape[0]) @ null
        down = u < 0
        a = a.copy()
        a[support] = a[support] + 0.5 * np.min(a[support][down] / -u[down]) * u
        out[index] = a
    return out


@mutant("equivalent_attention", "step past the edge, clip the negative weights to 0 and "
                                "renormalise, which changes the output")
def clip_and_renormalise(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        A = np.vstack([V[index[:-1]][support].T, np.ones(support.size)])
        _, s, Vt = np.linalg.svd(A)
        null = Vt[int(np.sum(s > 1e-10 * s[0])):]
        if null.shape[0] == 0:
            continue
        u = rng.standard_normal(null.shape[0]) @ null
        down = u < 0
        a = a.copy()
        a[support] = np.maximum(a[support] + 2.0 * np.min(a[support][down] / -u[down]) * u, 0)
        out[index] = a / a.sum()
    return out


@mutant("equivalent_attention", "look for directions over all T keys, so masked keys (zero "
                                "weights) can receive weight")
def whole_row(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        A = np.vstack([V[index[:-1]].T, np.ones(a.size)])
        _, s, Vt = np.linalg.svd(A)
        null = Vt[int(np.sum(s > 1e-10 * s[0])):]
        if null.shape[0] == 0 or a.sum() == 0:
            continue
        u = rng.standard_normal(null.shape[0]) @ null
        down = u < 0
        out[index] = np.maximum(a + np.min(a[down] / -u[down]) * u, 0)
    return out


@mutant("equivalent_attention", "draw the random direction from np.random instead of the rng "
                                "argument, so the same seed gives different weights")
def global_random(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        A = np.vstack([V[index[:-1]][support].T, np.ones(support.size)])
        _, s, Vt = np.linalg.svd(A)
        null = Vt[int(np.sum(s > 1e-10 * s[0])):]
        if null.shape[0] == 0:
            continue
        u = np.random.standard_normal(null.shape[0]) @ null
        down = u < 0
        k = np.argmin(a[support][down] / -u[down])
        a = a.copy()
        a[support] = np.maximum(a[support] + (a[support][down] / -u[down])[k] * u, 0)
        a[support[down][k]] = 0.0
        out[index] = a
    return out


@mutant("equivalent_attention", "assume there is always a null-space direction, which fails when "
                                "T <= d_v + 1")
def assumes_freedom(weights, V, rng):
    weights = np.asarray(weights, dtype=float)
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    out = weights.copy()
    d_v = V.shape[-1]
    for index in np.ndindex(out.shape[:-1]):
        a = out[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        A = np.vstack([V[index[:-1]][support].T, np.ones(support.size)])
        _, _, Vt = np.linalg.svd(A)
        null = Vt[d_v + 1:]
        u = rng.standard_normal(null.shape[0]) @ null
        down = u < 0
        a = a.copy()
        a[support] = np.maximum(a[support] + np.min(a[support][down] / -u[down]) * u, 0)
        out[index] = a
    return out


@mutant("equivalent_attention", "update the rows of the weights array in place, changing the "
                                "caller's attention weights")
def in_place(weights, V, rng):
    V = np.broadcast_to(np.asarray(V, dtype=float), weights.shape[:-2] + np.shape(V)[-2:])
    for index in np.ndindex(weights.shape[:-1]):
        a = weights[index]
        support = np.flatnonzero(a > 0)
        if support.size == 0:
            continue
        A = np.vstack([V[index[:-1]][support].T, np.ones(support.size)])
        _, s, Vt = np.linalg.svd(A)
        null = Vt[int(np.sum(s > 1e-10 * s[0])):]
        if null.shape[0] == 0:
            continue
        u = rng.standard_normal(null.shape[0]) @ null
        down = u < 0
        k = np.argmin(a[support][down] / -u[down])
        step = (a[support][down] / -u[down])[k]
        a[support] = np.maximum(a[support] + step * u, 0)
        a[support[down][k]] = 0.0
    return weights


# ------------------------------------------------------------------ permutation_effect

@mutant("permutation_effect", "shuffle the tokens x instead of the attention weights")
def shuffle_tokens(model, x, n_perm, rng):
    prediction, _ = model(x)
    x = np.asarray(x)
    return np.array([0.5 * np.abs(model(x[rng.permutation(len(x))])[0] - prediction).sum()
                     for _ in range(n_perm)])


@mutant("permutation_effect", "sum |y - y_perm| without the factor 1/2 of the total variation "
                              "distance")
def l1_distance(model, x, n_perm, rng):
    prediction, weights = model(x)
    return np.array([np.abs(model(x, weights=weights[rng.permutation(len(weights))])[0]
                            - prediction).sum() for _ in range(n_perm)])


@mutant("permutation_effect", "draw fresh random weights (a Dirichlet sample) instead of "
                              "shuffling the model's own")
def random_weights(model, x, n_perm, rng):
    prediction, weights = model(x)
    return np.array([0.5 * np.abs(model(x, weights=rng.dirichlet(np.ones(len(weights))))[0]
                                  - prediction).sum() for _ in range(n_perm)])


@mutant("permutation_effect", "draw the permutations from np.random instead of the rng argument")
def global_permutations(model, x, n_perm, rng):
    prediction, weights = model(x)
    return np.array([0.5 * np.abs(model(x, weights=np.random.permutation(weights))[0]
                                  - prediction).sum() for _ in range(n_perm)])


@mutant("permutation_effect", "draw one permutation before the loop and reuse it for every trial")
def one_permutation(model, x, n_perm, rng):
    prediction, weights = model(x)
    perm = rng.permutation(len(weights))
    return np.array([0.5 * np.abs(model(x, weights=weights[perm])[0] - prediction).sum()
                     for _ in range(n_perm)])


@mutant("permutation_effect", "measure only how much the predicted class's probability moves")
def top_class(model, x, n_perm, rng):
    prediction, weights = model(x)
    top = int(np.argmax(prediction))
    return np.array([abs(model(x, weights=weights[rng.permutation(len(weights))])[0][top]
                         - prediction[top]) for _ in range(n_perm)])


# ------------------------------------------------------------------ leave_one_out_importance

@mutant("leave_one_out_importance", "set the token's row of x to zeros instead of removing it")
def zero_row(model, x):
    x = np.asarray(x)
    prediction, _ = model(x)
    out = []
    for t in range(len(x)):
        erased = x.copy()
        erased[t] = 0
        out.append(0.5 * np.abs(model(erased)[0] - prediction).sum())
    return np.array(out)


@mutant("leave_one_out_importance", "set the token's attention weight to 0 without renormalising "
                                    "the others")
def zero_weight(model, x):
    prediction, weights = model(x)
    out = []
    for t in range(len(weights)):
        erased = weights.copy()
        erased[t] = 0
        out.append(0.5 * np.abs(model(x, weights=erased)[0] - prediction).sum())
    return np.array(out)


@mutant("leave_one_out_importance", "erase the token's attention weight and renormalise the others "
                                    "(attention erasure), which leaves the token in the values")
def erase_weight(model, x):
    prediction, weights = model(x)
    out = []
    for t in range(len(weights)):
        erased = weights.copy()
        erased[t] = 0
        out.append(0.5 * np.abs(model(x, weights=erased / erased.sum())[0] - prediction).sum())
    return np.array(out)


@mutant("leave_one_out_importance", "sum |y - y_without| without the factor 1/2")
def l1(model, x):
    prediction, _ = model(x)
    return np.array([np.abs(model(np.delete(x, t, axis=0))[0] - prediction).sum()
                     for t in range(len(x))])


@mutant("leave_one_out_importance", "return the signed change of the first class's probability")
def signed_first_class(model, x):
    prediction, _ = model(x)
    return np.array([model(np.delete(x, t, axis=0))[0][0] - prediction[0] for t in range(len(x))])


# ------------------------------------------------------------------ kendall_tau

@mutant("kendall_tau", "divide by the number of pairs n(n-1)/2 even when there are ties (tau-a "
                       "instead of tau-b)")
def tau_a(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = a.shape[-1]
    i, j = np.triu_indices(n, 1)
    s = np.sum(np.sign(a[..., i] - a[..., j]) * np.sign(b[..., i] - b[..., j]), axis=-1)
    return s / (n * (n - 1) / 2) if n > 1 else np.full(s.shape, np.nan)


@mutant("kendall_tau", "compute Pearson's correlation of the values instead of comparing orderings")
def pearson(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    denominator = np.sqrt((a * a).sum(-1) * (b * b).sum(-1))
    return np.divide((a * b).sum(-1), denominator, out=np.full(denominator.shape, np.nan),
                     where=denominator > 0)


@mutant("kendall_tau", "compute Spearman's correlation (Pearson's correlation of the ranks)")
def spearman(a, b):
    a = np.argsort(np.argsort(np.asarray(a), axis=-1), axis=-1).astype(float)
    b = np.argsort(np.argsort(np.asarray(b), axis=-1), axis=-1).astype(float)
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    denominator = np.sqrt((a * a).sum(-1) * (b * b).sum(-1))
    return np.divide((a * b).sum(-1), denominator, out=np.full(denominator.shape, np.nan),
                     where=denominator > 0)


@mutant("kendall_tau", "count tied pairs as concordant")
def ties_concordant(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = a.shape[-1]
    i, j = np.triu_indices(n, 1)
    product = np.sign(a[..., i] - a[..., j]) * np.sign(b[..., i] - b[..., j])
    score = np.sum(product >= 0, axis=-1) - np.sum(product < 0, axis=-1)
    untied = np.sum(a[..., i] != a[..., j], -1) * np.sum(b[..., i] != b[..., j], -1)
    return np.divide(score, np.sqrt(untied), out=np.full(score.shape, np.nan), where=untied > 0)


@mutant("kendall_tau", "count every pair twice, (i, j) and (j, i), but divide by n(n-1)/2 pairs")
def pairs_twice(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    sa = np.sign(a[..., :, None] - a[..., None, :])
    sb = np.sign(b[..., :, None] - b[..., None, :])
    untied = np.sqrt((np.abs(sa).sum((-1, -2)) / 2) * (np.abs(sb).sum((-1, -2)) / 2))
    return np.divide((sa * sb).sum((-1, -2)), untied, out=np.full(untied.shape, np.nan),
                     where=untied > 0)


@mutant("kendall_tau", "divide by zero when a or b is constant, which warns")
def unguarded(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = a.shape[-1]
    i, j = np.triu_indices(n, 1)
    sa = np.sign(a[..., i] - a[..., j])
    sb = np.sign(b[..., i] - b[..., j])
    return np.sum(sa * sb, -1) / np.sqrt(np.abs(sa).sum(-1) * np.abs(sb).sum(-1))
