"""Realistic wrong implementations of 04-scaling; the suite must take points from each."""
import numpy as np

from autograder.kit import mutant

# ------------------------------------------------------------------ dot_product_stats


@mutant("dot_product_stats", "divide the scores by √d_k here, measuring the scaled score "
                             "(whose variance is 1) instead of the raw q·k")
def scaled_scores(d_k, n_samples, rng):
    Q = rng.standard_normal((n_samples, d_k))
    K = rng.standard_normal((n_samples, d_k))
    s = (Q * K).sum(axis=-1) / np.sqrt(d_k)
    return float(s.mean()), float(s.var())


@mutant("dot_product_stats", "return the standard deviation instead of the variance")
def standard_deviation(d_k, n_samples, rng):
    Q = rng.standard_normal((n_samples, d_k))
    K = rng.standard_normal((n_samples, d_k))
    s = (Q * K).sum(axis=-1)
    return float(s.mean()), float(s.std())


@mutant("dot_product_stats", "use the same random vector as query and key, measuring q·q")
def same_vector(d_k, n_samples, rng):
    Q = rng.standard_normal((n_samples, d_k))
    K = Q
    s = (Q * K).sum(axis=-1)
    return float(s.mean()), float(s.var())


@mutant("dot_product_stats", "take the variance of the elementwise products q_i k_i, "
                             "forgetting to sum them into one dot product per pair")
def no_sum(d_k, n_samples, rng):
    Q = rng.standard_normal((n_samples, d_k))
    K = rng.standard_normal((n_samples, d_k))
    products = Q * K
    return float(products.mean()), float(products.var())


@mutant("dot_product_stats", "draw uniform numbers in [0, 1) (rng.random) instead of standard "
                             "normal ones")
def uniform(d_k, n_samples, rng):
    Q = rng.random((n_samples, d_k))
    K = rng.random((n_samples, d_k))
    s = (Q * K).sum(axis=-1)
    return float(s.mean()), float(s.var())


@mutant("dot_product_stats", "draw from numpy's global generator (np.random.randn) "
                             "instead of the rng argument")
def global_generator(d_k, n_samples, rng):
    Q = np.random.randn(n_samples, d_k)
    K = np.random.randn(n_samples, d_k)
    s = (Q * K).sum(axis=-1)
    return float(s.mean()), float(s.var())


@mutant("dot_product_stats", "create a generator with a fixed seed inside the function, "
                             "ignoring the rng argument")
def fixed_seed(d_k, n_samples, rng):
    own = np.random.default_rng(0)
    Q = own.standard_normal((n_samples, d_k))
    K = own.standard_normal((n_samples, d_k))
    s = (Q * K).sum(axis=-1)
    return float(s.mean()), float(s.var())


# ------------------------------------------------------------------ softmax_entropy


@mutant("softmax_entropy", "measure in bits (log base 2) instead of nats")
def bits(p, axis=-1):
    p = np.asarray(p)
    safe = np.where(p > 0, p, 1)
    return -np.sum(p * np.log2(safe), axis=axis)


@mutant("softmax_entropy", "forget the minus sign, so the entropy comes out negative")
def no_minus(p, axis=-1):
    p = np.asarray(p)
    safe = np.where(p > 0, p, 1)
    return np.sum(p * np.log(safe), axis=axis)


@mutant("softmax_entropy", "compute p * log(p) directly, so 0 * log(0) gives nan and a warning")
def direct_log(p, axis=-1):
    return -np.sum(p * np.log(p), axis=axis)


@mutant("softmax_entropy", "use np.where(p > 0, p * np.log(p), 0), which still evaluates log(0) "
                           "and warns")
def where_after_log(p, axis=-1):
    return -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=axis)


@mutant("softmax_entropy", "hide the nan with np.nansum, while log(0) still warns")
def nansum(p, axis=-1):
    return -np.nansum(p * np.log(p), axis=axis)


@mutant("softmax_entropy", "ignore `axis` and always reduce the last axis")
def last_axis_only(p, axis=-1):
    p = np.asarray(p)
    safe = np.where(p > 0, p, 1)
    return -np.sum(p * np.log(safe), axis=-1)


@mutant("softmax_entropy", "average p·log p over the axis instead of summing it")
def mean_not_sum(p, axis=-1):
    p = np.asarray(p)
    safe = np.where(p > 0, p, 1)
    return -np.mean(p * np.log(safe), axis=axis)


@mutant("softmax_entropy", "replace the zeros by ones in place (p[p == 0] = 1), changing the "
                           "caller's array")
def zeros_in_place(p, axis=-1):
    p[p == 0] = 1
    return -np.sum(p * np.log(p), axis=axis)


@mutant("softmax_entropy", "keep the reduced axis (keepdims=True), so the result has an extra "
                           "axis of length 1")
def keepdims(p, axis=-1):
    p = np.asarray(p)
    safe = np.where(p > 0, p, 1)
    return -np.sum(p * np.log(safe), axis=axis, keepdims=True)


# ------------------------------------------------------------------ softmax_jacobian


@mutant("softmax_jacobian", "compute p p^T - diag(p), the negative of the Jacobian")
def sign_flipped(p):
    n = p.shape[-1]
    return p[..., :, None] * p[..., None, :] - p[..., :, None] * np.eye(n)


@mutant("softmax_jacobian", "return diag(p) only, forgetting the outer product p p^T")
def diagonal_only(p):
    return p[..., :, None] * np.eye(p.shape[-1])


@mutant("softmax_jacobian", "keep only the diagonal p_i (1 - p_i), dropping the off-diagonal "
                            "terms -p_i p_j")
def no_off_diagonal(p):
    return (p * (1 - p))[..., :, None] * np.eye(p.shape[-1])


@mutant("softmax_jacobian", "use np.diag and np.outer, which handle a single 1-D row only "
                            "(np.outer flattens a batch)")
def diag_outer(p):
    return np.diag(p) - np.outer(p, p)


@mutant("softmax_jacobian", "subtract the inner product p·p (a number) instead of the outer "
                            "product p p^T (a matrix)")
def inner_product(p):
    n = p.shape[-1]
    return p[..., :, None] * np.eye(n) - np.sum(p * p, axis=-1)[..., None, None]


# ------------------------------------------------------------------ saturation_sweep


@mutant("saturation_sweep", "divide the scores by d_k instead of √d_k")
def divide_by_d_k(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        Q = rng.standard_normal((n_trials, d_k))
        K = rng.standard_normal((n_trials, n_keys, d_k))
        s = np.einsum("td,tkd->tk", Q, K)
        if scaled:
            s = s / d_k
        a = softmax(s)
        out["max_weight"].append(a.max(axis=-1).mean())
        out["entropy"].append(softmax_entropy(a).mean())
        out["grad_norm"].append(np.linalg.norm(softmax_jacobian(a), axis=(-2, -1)).mean())
    return {k: np.array(v) for k, v in out.items()}


@mutant("saturation_sweep", "always divide by √d_k, ignoring scaled=False")
def ignore_flag(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        Q = rng.standard_normal((n_trials, d_k))
        K = rng.standard_normal((n_trials, n_keys, d_k))
        a = softmax(np.einsum("td,tkd->tk", Q, K) / np.sqrt(d_k))
        out["max_weight"].append(a.max(axis=-1).mean())
        out["entropy"].append(softmax_entropy(a).mean())
        out["grad_norm"].append(np.linalg.norm(softmax_jacobian(a), axis=(-2, -1)).mean())
    return {k: np.array(v) for k, v in out.items()}


@mutant("saturation_sweep", "average the weights over the trials first and then take the "
                            "largest, entropy and Jacobian of that average row")
def average_row_first(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        Q = rng.standard_normal((n_trials, d_k))
        K = rng.standard_normal((n_trials, n_keys, d_k))
        s = np.einsum("td,tkd->tk", Q, K)
        if scaled:
            s = s / np.sqrt(d_k)
        a = softmax(s).mean(axis=0)
        out["max_weight"].append(a.max())
        out["entropy"].append(softmax_entropy(a))
        out["grad_norm"].append(np.linalg.norm(softmax_jacobian(a)))
    return {k: np.array(v) for k, v in out.items()}


@mutant("saturation_sweep", "take one norm of all the trials' Jacobians together instead of "
                            "one Frobenius norm per trial")
def one_norm_for_all(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        Q = rng.standard_normal((n_trials, d_k))
        K = rng.standard_normal((n_trials, n_keys, d_k))
        s = np.einsum("td,tkd->tk", Q, K)
        if scaled:
            s = s / np.sqrt(d_k)
        a = softmax(s)
        out["max_weight"].append(a.max(axis=-1).mean())
        out["entropy"].append(softmax_entropy(a).mean())
        out["grad_norm"].append(np.sqrt(np.sum(softmax_jacobian(a) ** 2)))
    return {k: np.array(v) for k, v in out.items()}


@mutant("saturation_sweep", "draw one query per d_k and reuse it in every trial, so the trials "
                            "are not independent")
def one_query(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        q = rng.standard_normal(d_k)
        K = rng.standard_normal((n_trials, n_keys, d_k))
        s = K @ q
        if scaled:
            s = s / np.sqrt(d_k)
        a = softmax(s)
        out["max_weight"].append(a.max(axis=-1).mean())
        out["entropy"].append(softmax_entropy(a).mean())
        out["grad_norm"].append(np.linalg.norm(softmax_jacobian(a), axis=(-2, -1)).mean())
    return {k: np.array(v) for k, v in out.items()}


@mutant("saturation_sweep", "take the softmax over the trials (axis 0) instead of over the keys")
def softmax_over_trials(d_ks, n_keys, n_trials, rng, scaled=True):
    out = {"max_weight": [], "entropy": [], "grad_norm": []}
    for d_k in d_ks:
        Q = rng.standard_normal((n_trials, d_k))
        K = rng.standard_normal((n_trials, n_keys, d_k))
        s = np.einsum("td,tkd->tk", Q, K)
        if scaled:
            s = s / np.sqrt(d_k)
        a = softmax(s, axis=0)
        out["max_weight"].append(a.max(axis=-1).mean())
        out["entropy"].append(softmax_entropy(a).mean())
        out["grad_norm"].append(np.linalg.norm(softmax_jacobian(a), axis=(-2, -1)).mean())
    return {k: np.array(v) for k, v in out.items()}
