"""Realistic wrong implementations of 08-learning-to-attend; the suite must take points from each.

Mutants of attention_backward read the reference cache, (Q, K, V, weights).
"""
import numpy as np

from autograder.kit import mutant

# ---------------------------------------------------------------- numerical_gradient


@mutant("numerical_gradient", "use the one-sided difference (f(x + eps) - f(x)) / eps instead of "
                              "the central one")
def one_sided(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    f_x = f(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        grad[i] = (f(x) - f_x) / eps
        x[i] = old
    return grad


@mutant("numerical_gradient", "divide the difference by eps instead of 2 * eps")
def no_half(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        f_plus = f(x)
        x[i] = old - eps
        f_minus = f(x)
        x[i] = old
        grad[i] = (f_plus - f_minus) / eps
    return grad


@mutant("numerical_gradient", "nudge x in place and undo the nudge with arithmetic (+eps, -2 eps, "
                              "+eps), which leaves rounding errors in the caller's x")
def restore_by_arithmetic(f, x, eps=1e-6):
    grad = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        x[i] += eps
        f_plus = f(x)
        x[i] -= 2 * eps
        f_minus = f(x)
        x[i] += eps
        grad[i] = (f_plus - f_minus) / (2 * eps)
    return grad


@mutant("numerical_gradient", "nudge the caller's x in place and never put the old value back")
def never_restored(f, x, eps=1e-6):
    grad = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        x[i] = x[i] + eps
        f_plus = f(x)
        x[i] = x[i] - 2 * eps
        f_minus = f(x)
        grad[i] = (f_plus - f_minus) / (2 * eps)
    return grad


@mutant("numerical_gradient", "loop over range(len(x)), which nudges whole rows of a 2-D x at once")
def rows_only(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in range(len(x)):
        old = x[i].copy()
        x[i] = old + eps
        f_plus = f(x)
        x[i] = old - eps
        f_minus = f(x)
        x[i] = old
        grad[i] = (f_plus - f_minus) / (2 * eps)
    return grad


@mutant("numerical_gradient", "nudge the whole array at once, which gives one directional "
                              "derivative instead of one partial derivative per entry")
def whole_array(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@mutant("numerical_gradient", "ignore the eps argument and always step by 1e-6")
def fixed_step(f, x, eps=1e-6):
    step = 1e-6
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + step
        f_plus = f(x)
        x[i] = old - step
        f_minus = f(x)
        x[i] = old
        grad[i] = (f_plus - f_minus) / (2 * step)
    return grad


# ---------------------------------------------------------------- softmax_backward


@mutant("softmax_backward", "forget the term -p * sum(p * d_p) that comes from the normalisation")
def no_normalisation_term(p, d_p):
    return p * d_p


@mutant("softmax_backward", "subtract the plain sum of d_p instead of the p-weighted sum of d_p")
def plain_sum(p, d_p):
    return p * (d_p - np.sum(d_p, axis=-1, keepdims=True))


@mutant("softmax_backward", "keep only the diagonal of the Jacobian, p * (1 - p) * d_p")
def diagonal_only(p, d_p):
    return p * (1 - p) * d_p


@mutant("softmax_backward", "take the weighted sum along axis 0 instead of the last axis")
def axis_zero(p, d_p):
    return p * (d_p - np.sum(p * d_p, axis=0, keepdims=True))


@mutant("softmax_backward", "drop keepdims=True, so each row's sum is broadcast along the wrong axis")
def no_keepdims(p, d_p):
    return p * (d_p - np.sum(p * d_p, axis=-1))


@mutant("softmax_backward", "build the Jacobian with np.diag and np.outer, which only works for "
                            "a single vector")
def diag_outer(p, d_p):
    return (np.diag(p) - np.outer(p, p)) @ d_p


@mutant("softmax_backward", "update d_p in place, changing the caller's array")
def in_place(p, d_p):
    d_p -= np.sum(p * d_p, axis=-1, keepdims=True)
    d_p *= p
    return d_p


# ---------------------------------------------------------------- attention_forward


@mutant("attention_forward", "forget to divide the scores by sqrt(d_k)")
def unscaled(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "divide the scores by d_k instead of sqrt(d_k)")
def scale_by_dk(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / Q.shape[-1], axis=-1)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "divide by sqrt(d_v), the size of the values, instead of sqrt(d_k)")
def scale_by_dv(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1]), axis=-1)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "take the softmax over the queries (axis=-2) instead of over the keys")
def softmax_over_queries(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-2)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "skip subtracting the row maximum, so exp overflows on large scores")
def no_max_subtraction(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores)
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "transpose K with .T, which reverses every axis of a batch instead of "
                             "swapping the last two")
def dot_T(Q, K, V):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, (Q, K, V, weights)


@mutant("attention_forward", "keep a Python function (a closure) as the cache, which cannot be "
                             "passed back to attention_backward")
def closure_cache(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)

    def backward(d_output):
        return d_output

    return weights @ V, backward


# ---------------------------------------------------------------- attention_backward


@mutant("attention_backward", "forget the factor 1 / sqrt(d_k) in dQ and dK")
def no_scale(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = softmax_backward(weights, d_weights)
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "divide dQ and dK by d_k instead of sqrt(d_k)")
def scale_by_dk(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = softmax_backward(weights, d_weights) / Q.shape[-1]
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "skip the softmax step and use d_weights as the gradient of the scores")
def skip_softmax(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = d_weights / np.sqrt(Q.shape[-1])
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "multiply d_weights by the weights elementwise and forget the "
                              "softmax's -p * sum(p * d_p) term")
def softmax_diagonal(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = weights * d_weights / np.sqrt(Q.shape[-1])
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "take the softmax backward along the queries axis (-2) instead of "
                              "the keys")
def softmax_wrong_axis(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = weights * (d_weights - np.sum(weights * d_weights, axis=-2, keepdims=True))
    d_scores = d_scores / np.sqrt(Q.shape[-1])
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "compute dV as weights @ d_output, without transposing the weights")
def dV_untransposed(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = weights @ d_output
    d_scores = softmax_backward(weights, d_weights) / np.sqrt(Q.shape[-1])
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, dV


@mutant("attention_backward", "compute dK as d_scores @ Q, without transposing d_scores")
def dK_untransposed(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ d_output
    d_scores = softmax_backward(weights, d_weights) / np.sqrt(Q.shape[-1])
    return d_scores @ K, d_scores @ Q, dV


@mutant("attention_backward", "transpose with .T, which reverses every axis of a batch instead of "
                              "swapping the last two")
def dot_T(d_output, cache):
    Q, K, V, weights = cache
    d_weights = d_output @ V.T
    dV = weights.T @ d_output
    d_scores = softmax_backward(weights, d_weights) / np.sqrt(Q.shape[-1])
    return d_scores @ K, d_scores.T @ Q, dV


# ---------------------------------------------------------------- alignment_accuracy


@mutant("alignment_accuracy", "take the largest weight along axis -2 (over the target words) "
                              "instead of along each row")
def argmax_wrong_axis(weights, alignment):
    best = np.argmax(weights, axis=-2)
    return float(np.mean(best == alignment))


@mutant("alignment_accuracy", "call np.argmax without an axis, which finds one position in the "
                              "whole flattened array")
def argmax_no_axis(weights, alignment):
    return float(np.mean(np.argmax(weights) == alignment))


@mutant("alignment_accuracy", "count a word as aligned when its true source word gets more than "
                              "half of the weight, instead of the largest weight")
def more_than_half(weights, alignment):
    on_true = np.take_along_axis(weights, alignment[..., None], axis=-1)[..., 0]
    return float(np.mean(on_true > 0.5))


@mutant("alignment_accuracy", "average the weight on the true source word instead of checking "
                              "where the largest weight is")
def mean_weight_on_truth(weights, alignment):
    return float(np.mean(np.take_along_axis(weights, alignment[..., None], axis=-1)))


@mutant("alignment_accuracy", "forget that a row of zeros has no largest weight (np.argmax of a "
                              "zero row is 0, so it counts whenever the true position is 0)")
def zero_rows_count(weights, alignment):
    return float(np.mean(np.argmax(weights, axis=-1) == alignment))
