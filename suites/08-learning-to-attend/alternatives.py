"""Correct implementations of 08-learning-to-attend written differently; each must keep full marks.

Alternatives of attention_forward keep the reference cache, (Q, K, V, weights), because they are
graded together with the reference attention_backward; pairs with other cache layouts (dicts,
lists, scores instead of weights, nothing but the inputs) are graded in tests/assignments/test_08_learning_to_attend.py.
"""
import numpy as np

from autograder.kit import alternative

# ---------------------------------------------------------------- numerical_gradient


@alternative("numerical_gradient", "CS231n style: np.nditer over the caller's x, nudged in place "
                                   "and restored from the saved value")
def nditer_in_place(f, x, eps=1e-6):
    grad = np.zeros(x.shape, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = x[ix]
        x[ix] = old + eps
        f_plus = f(x)
        x[ix] = old - eps
        f_minus = f(x)
        x[ix] = old
        grad[ix] = (f_plus - f_minus) / (2 * eps)
        it.iternext()
    return grad


@alternative("numerical_gradient", "a perturbation array added to a fresh copy for every entry")
def perturbation_array(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    grad = np.empty(x.size)
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        step = step.reshape(x.shape)
        grad[k] = 0.5 * (f(x + step) - f(x - step)) / eps
    return grad.reshape(x.shape)


@alternative("numerical_gradient", "a flat float64 copy nudged through a reshaped view")
def flat_view(f, x, eps=1e-6):
    work = np.array(x, dtype=np.float64).ravel()
    shaped = work.reshape(np.shape(x))
    grad = np.zeros_like(work)
    for k in range(work.size):
        saved = work[k]
        work[k] = saved + eps
        up = f(shaped)
        work[k] = saved - eps
        down = f(shaped)
        work[k] = saved
        grad[k] = (up - down) / (2.0 * eps)
    return grad.reshape(np.shape(x))


# ---------------------------------------------------------------- softmax_backward


@alternative("softmax_backward", "the explicit Jacobian diag(p) - p p^T applied with einsum")
def explicit_jacobian(p, d_p):
    n = p.shape[-1]
    jacobian = p[..., :, None] * np.eye(n) - p[..., :, None] * p[..., None, :]
    return np.einsum("...ij,...i->...j", jacobian, d_p)


@alternative("softmax_backward", "a Python loop over the rows of a flattened batch")
def row_loop(p, d_p):
    p = np.asarray(p)
    flat_p = p.reshape(-1, p.shape[-1])
    flat_d = np.asarray(d_p).reshape(-1, p.shape[-1])
    out = np.empty(flat_p.shape, dtype=np.result_type(p, d_p))
    for r in range(flat_p.shape[0]):
        average = float(np.dot(flat_p[r], flat_d[r]))
        out[r] = flat_p[r] * (flat_d[r] - average)
    return out.reshape(p.shape)


@alternative("softmax_backward", "p * d_p minus p times its own row sum, with einsum for the sum")
def product_first(p, d_p):
    weighted = p * d_p
    return weighted - p * np.einsum("...i->...", weighted)[..., None]


# ---------------------------------------------------------------- attention_forward


@alternative("attention_forward", "einsum and a log-sum-exp softmax")
def einsum_logsumexp(Q, K, V):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(K.shape[-1])
    top = scores.max(axis=-1, keepdims=True)
    log_norm = top + np.log(np.exp(scores - top).sum(axis=-1, keepdims=True))
    weights = np.exp(scores - log_norm)
    return np.einsum("...qk,...kv->...qv", weights, V), (Q, K, V, weights)


@alternative("attention_forward", "a loop over the flattened batch, one matrix at a time")
def batch_loop(Q, K, V):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    lead = Q.shape[:-2]
    q = Q.reshape((-1,) + Q.shape[-2:])
    k = K.reshape((-1,) + K.shape[-2:])
    v = V.reshape((-1,) + V.shape[-2:])
    dtype = np.result_type(Q, K, V, np.float32)
    weights = np.empty((q.shape[0], q.shape[1], k.shape[1]), dtype=dtype)
    out = np.empty((q.shape[0], q.shape[1], v.shape[2]), dtype=dtype)
    for b in range(q.shape[0]):
        s = q[b] @ k[b].T * (1.0 / np.sqrt(q.shape[-1]))
        e = np.exp(s - s.max(axis=1)[:, None])
        weights[b] = e / e.sum(axis=1)[:, None]
        out[b] = weights[b] @ v[b]
    weights = weights.reshape(lead + weights.shape[1:])
    return out.reshape(lead + out.shape[1:]), (Q, K, V, weights)


# ---------------------------------------------------------------- attention_backward


@alternative("attention_backward", "recompute the weights from Q and K instead of trusting the cache")
def recompute_weights(d_output, cache):
    Q, K, V, _ = cache
    scale = 1.0 / np.sqrt(Q.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    d_weights = np.matmul(d_output, np.swapaxes(V, -1, -2))
    d_scores = weights * d_weights
    d_scores -= weights * d_scores.sum(axis=-1, keepdims=True)
    d_scores *= scale
    return (np.matmul(d_scores, K), np.matmul(np.swapaxes(d_scores, -1, -2), Q),
            np.matmul(np.swapaxes(weights, -1, -2), d_output))


@alternative("attention_backward", "einsum everywhere, with the softmax Jacobian built explicitly")
def einsum_jacobian(d_output, cache):
    Q, K, V, weights = cache
    n = weights.shape[-1]
    jacobian = weights[..., :, None] * np.eye(n) - weights[..., :, None] * weights[..., None, :]
    d_weights = np.einsum("...qv,...kv->...qk", d_output, V)
    d_scores = np.einsum("...qij,...qi->...qj", jacobian, d_weights) / np.sqrt(Q.shape[-1])
    dQ = np.einsum("...qk,...kd->...qd", d_scores, K)
    dK = np.einsum("...qk,...qd->...kd", d_scores, Q)
    dV = np.einsum("...qk,...qv->...kv", weights, d_output)
    return dQ, dK, dV


# ---------------------------------------------------------------- alignment_accuracy


@alternative("alignment_accuracy", "compare the weight on the true word with the row's maximum")
def weight_at_truth_is_the_maximum(weights, alignment):
    weights = np.asarray(weights)
    on_true = np.take_along_axis(weights, np.asarray(alignment)[..., None], axis=-1)[..., 0]
    top = weights.max(axis=-1)
    return float(np.count_nonzero((on_true == top) & (top > 0)) / top.size)


@alternative("alignment_accuracy", "a loop over the rows of the flattened batch")
def row_loop(weights, alignment):
    rows = np.reshape(weights, (-1, np.shape(weights)[-1]))
    truth = np.reshape(alignment, -1)
    hits = 0
    for row, true_position in zip(rows, truth):
        if row.max() > 0 and row.argmax() == true_position:
            hits += 1
    return hits / len(rows)
