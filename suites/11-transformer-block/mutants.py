"""Realistic wrong implementations of 11-transformer-block; the suite must take points from each.

Mutants of transformer_block_backward read the reference cache, (X, H, H_2, attention, params),
attention being the cache of the given multi_head_attention_forward.
"""
import numpy as np

from autograder.kit import mutant

# ---------------------------------------------------------------- layer_norm


@mutant("layer_norm", "normalise each column over the rows (axis 0) instead of each row over its "
                      "last axis")
def over_rows(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=0, keepdims=True)
    var = X.var(axis=0, keepdims=True)
    return gamma * (X - mean) / np.sqrt(var + eps) + beta


@mutant("layer_norm", "use the unbiased variance (dividing by d - 1, ddof=1) instead of the "
                      "biased one (dividing by d)")
def unbiased_variance(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True, ddof=1)
    return gamma * (X - mean) / np.sqrt(var + eps) + beta


@mutant("layer_norm", "add eps to the standard deviation instead of to the variance under the "
                      "square root")
def eps_outside(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    return gamma * (X - mean) / (X.std(axis=-1, keepdims=True) + eps) + beta


@mutant("layer_norm", "leave eps out, so a constant row divides 0 by 0")
def no_eps(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    return gamma * (X - mean) / X.std(axis=-1, keepdims=True) + beta


@mutant("layer_norm", "divide by the variance instead of the standard deviation")
def by_variance(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    return gamma * (X - mean) / (X.var(axis=-1, keepdims=True) + eps) + beta


@mutant("layer_norm", "swap gamma and beta (shift by gamma, scale by beta)")
def swapped_affine(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    return beta * (X - mean) / np.sqrt(X.var(axis=-1, keepdims=True) + eps) + gamma


# ---------------------------------------------------------------- layer_norm_backward


@mutant("layer_norm_backward", "treat the mean and the variance as constants, so d_X is only "
                               "gamma * d_Y / sqrt(var + eps)")
def constant_statistics(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    mean = X.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    rows = tuple(range(X.ndim - 1))
    return d_Y * gamma * inv_std, np.sum(d_Y * (X - mean) * inv_std, axis=rows), np.sum(d_Y, axis=rows)


@mutant("layer_norm_backward", "forget the path through the mean (subtract only the variance term)")
def no_mean_path(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    rows = tuple(range(X.ndim - 1))
    d_X_hat = d_Y * gamma
    d_X = inv_std * (d_X_hat - X_hat * np.mean(d_X_hat * X_hat, axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X_hat, axis=rows), np.sum(d_Y, axis=rows)


@mutant("layer_norm_backward", "forget the path through the variance (subtract only the mean of "
                               "the gradient)")
def no_variance_path(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    rows = tuple(range(X.ndim - 1))
    d_X_hat = d_Y * gamma
    d_X = inv_std * (d_X_hat - d_X_hat.mean(axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X_hat, axis=rows), np.sum(d_Y, axis=rows)


@mutant("layer_norm_backward", "sum d_gamma and d_beta over axis 0 only, which leaves a batch's "
                               "other leading axes in them")
def sum_axis_zero(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    d_X_hat = d_Y * gamma
    d_X = inv_std * (d_X_hat - d_X_hat.mean(axis=-1, keepdims=True)
                     - X_hat * np.mean(d_X_hat * X_hat, axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X_hat, axis=0), np.sum(d_Y, axis=0)


@mutant("layer_norm_backward", "forget the factor gamma in d_X")
def no_gamma(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    rows = tuple(range(X.ndim - 1))
    d_X = inv_std * (d_Y - d_Y.mean(axis=-1, keepdims=True)
                     - X_hat * np.mean(d_Y * X_hat, axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X_hat, axis=rows), np.sum(d_Y, axis=rows)


@mutant("layer_norm_backward", "use X instead of the normalised X_hat in d_gamma")
def d_gamma_from_X(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    rows = tuple(range(X.ndim - 1))
    d_X_hat = d_Y * gamma
    d_X = inv_std * (d_X_hat - d_X_hat.mean(axis=-1, keepdims=True)
                     - X_hat * np.mean(d_X_hat * X_hat, axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X, axis=rows), np.sum(d_Y, axis=rows)


@mutant("layer_norm_backward", "use the unbiased variance (ddof=1) in the backward pass")
def unbiased_backward(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1, keepdims=True, ddof=1) + eps)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) * inv_std
    rows = tuple(range(X.ndim - 1))
    d_X_hat = d_Y * gamma
    d_X = inv_std * (d_X_hat - d_X_hat.mean(axis=-1, keepdims=True)
                     - X_hat * np.mean(d_X_hat * X_hat, axis=-1, keepdims=True))
    return d_X, np.sum(d_Y * X_hat, axis=rows), np.sum(d_Y, axis=rows)


# ---------------------------------------------------------------- feed_forward


@mutant("feed_forward", "leave out the ReLU, which makes the layer one linear map")
def no_relu(X, W_1, b_1, W_2, b_2):
    return (np.asarray(X) @ W_1 + b_1) @ W_2 + b_2


@mutant("feed_forward", "apply the ReLU to the output as well")
def relu_on_output(X, W_1, b_1, W_2, b_2):
    return np.maximum(0, np.maximum(0, np.asarray(X) @ W_1 + b_1) @ W_2 + b_2)


@mutant("feed_forward", "apply the ReLU before adding the bias b_1")
def bias_after_relu(X, W_1, b_1, W_2, b_2):
    return (np.maximum(0, np.asarray(X) @ W_1) + b_1) @ W_2 + b_2


@mutant("feed_forward", "forget the output bias b_2")
def no_output_bias(X, W_1, b_1, W_2, b_2):
    return np.maximum(0, np.asarray(X) @ W_1 + b_1) @ W_2


# ---------------------------------------------------------------- feed_forward_backward


@mutant("feed_forward_backward", "skip the ReLU's gradient, passing d_H back as if the ReLU were "
                                 "not there")
def no_relu_gradient(d_Y, X, W_1, b_1, W_2, b_2):
    X = np.asarray(X)
    H = np.maximum(0, X @ W_1 + b_1)
    d_Z = d_Y @ W_2.T
    rows = tuple(range(X.ndim - 1))
    return (d_Z @ W_1.T, weight_grad(X, d_Z), d_Z.sum(axis=rows), weight_grad(H, d_Y),
            d_Y.sum(axis=rows))


@mutant("feed_forward_backward", "compute d_W_2 from the pre-activation Z instead of the ReLU's "
                                 "output H")
def d_W_2_from_Z(d_Y, X, W_1, b_1, W_2, b_2):
    X = np.asarray(X)
    Z = X @ W_1 + b_1
    d_Z = (d_Y @ W_2.T) * (Z > 0)
    rows = tuple(range(X.ndim - 1))
    return (d_Z @ W_1.T, weight_grad(X, d_Z), d_Z.sum(axis=rows), weight_grad(Z, d_Y),
            d_Y.sum(axis=rows))


@mutant("feed_forward_backward", "transpose with .T, which reverses every axis of a batch instead "
                                 "of swapping the last two")
def dot_T(d_Y, X, W_1, b_1, W_2, b_2):
    X = np.asarray(X)
    Z = X @ W_1 + b_1
    H = np.maximum(0, Z)
    d_Z = (d_Y @ W_2.T) * (Z > 0)
    return d_Z @ W_1.T, X.T @ d_Z, d_Z.sum(axis=0), H.T @ d_Y, d_Y.sum(axis=0)


@mutant("feed_forward_backward", "sum the bias gradients over the features (last axis) instead of "
                                 "over the positions")
def bias_wrong_axis(d_Y, X, W_1, b_1, W_2, b_2):
    X = np.asarray(X)
    Z = X @ W_1 + b_1
    H = np.maximum(0, Z)
    d_Z = (d_Y @ W_2.T) * (Z > 0)
    return (d_Z @ W_1.T, weight_grad(X, d_Z), d_Z.sum(axis=-1), weight_grad(H, d_Y),
            d_Y.sum(axis=-1))


# ---------------------------------------------------------------- transformer_block


@mutant("transformer_block", "build a post-LN block, LN(X + MHA(X)) then LN(H + FFN(H)), where "
                             "pre-LN was asked")
def post_ln(X, params, n_heads, mask=None):
    p = params
    X = np.asarray(X)
    A, weights, attention = multi_head_attention_forward(X, p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads, mask)
    H = layer_norm(X + A, p["gamma_1"], p["beta_1"])
    Y = layer_norm(H + feed_forward(H, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), p["gamma_2"],
                   p["beta_2"])
    return Y, weights, (X, H, attention, p)


@mutant("transformer_block", "leave out the first residual connection, H = MHA(LN_1(X))")
def no_first_residual(X, params, n_heads, mask=None):
    p = params
    X = np.asarray(X)
    H, weights, attention = multi_head_attention_forward(layer_norm(X, p["gamma_1"], p["beta_1"]),
                                                         p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads, mask)
    H_2 = layer_norm(H, p["gamma_2"], p["beta_2"])
    return H + feed_forward(H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), weights, (X, H, H_2, attention, p)


@mutant("transformer_block", "give the feed-forward layer LN_2(X), the block's input, instead of "
                             "LN_2(H) after the attention")
def parallel_sublayers(X, params, n_heads, mask=None):
    p = params
    X = np.asarray(X)
    A, weights, attention = multi_head_attention_forward(layer_norm(X, p["gamma_1"], p["beta_1"]),
                                                         p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads, mask)
    H = X + A
    H_2 = layer_norm(X, p["gamma_2"], p["beta_2"])
    return H + feed_forward(H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), weights, (X, H, H_2, attention, p)


@mutant("transformer_block", "use gamma_1 and beta_1 for both LayerNorms")
def one_layer_norm(X, params, n_heads, mask=None):
    p = params
    X = np.asarray(X)
    A, weights, attention = multi_head_attention_forward(layer_norm(X, p["gamma_1"], p["beta_1"]),
                                                         p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads, mask)
    H = X + A
    H_2 = layer_norm(H, p["gamma_1"], p["beta_1"])
    return H + feed_forward(H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), weights, (X, H, H_2, attention, p)


@mutant("transformer_block", "never pass the mask on to the attention")
def mask_ignored(X, params, n_heads, mask=None):
    p = params
    X = np.asarray(X)
    A, weights, attention = multi_head_attention_forward(layer_norm(X, p["gamma_1"], p["beta_1"]),
                                                         p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads)
    H = X + A
    H_2 = layer_norm(H, p["gamma_2"], p["beta_2"])
    return H + feed_forward(H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), weights, (X, H, H_2, attention, p)


@mutant("transformer_block", "add the residual in place (X += A), changing the caller's X")
def residual_in_place(X, params, n_heads, mask=None):
    p = params
    A, weights, attention = multi_head_attention_forward(layer_norm(X, p["gamma_1"], p["beta_1"]),
                                                         p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                                         n_heads, mask)
    X_in = X.copy()
    X += A
    H_2 = layer_norm(X, p["gamma_2"], p["beta_2"])
    return (X + feed_forward(H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), weights,
            (X_in, X.copy(), H_2, attention, p))


# ---------------------------------------------------------------- transformer_block_backward


@mutant("transformer_block_backward", "forget the residual in the backward pass: d_H gets only the "
                                      "feed-forward path, not d_Y itself")
def no_residual_gradient(d_Y, cache):
    X, H, H_2, attention, p = cache
    d_H_2, d_W_1, d_b_1, d_W_2, d_b_2 = feed_forward_backward(d_Y, H_2, p["W_1"], p["b_1"],
                                                              p["W_2"], p["b_2"])
    d_H, d_gamma_2, d_beta_2 = layer_norm_backward(d_H_2, H, p["gamma_2"])
    d_X_1, d_W_q, d_W_k, d_W_v, d_W_o = multi_head_attention_backward(d_H, attention)
    d_X_attention, d_gamma_1, d_beta_1 = layer_norm_backward(d_X_1, X, p["gamma_1"])
    return d_H + d_X_attention, {"gamma_1": d_gamma_1, "beta_1": d_beta_1, "W_q": d_W_q,
                                 "W_k": d_W_k, "W_v": d_W_v, "W_o": d_W_o, "gamma_2": d_gamma_2,
                                 "beta_2": d_beta_2, "W_1": d_W_1, "b_1": d_b_1, "W_2": d_W_2,
                                 "b_2": d_b_2}


@mutant("transformer_block_backward", "forget the first residual in the backward pass: d_X gets "
                                      "only the path through the attention")
def no_first_residual_gradient(d_Y, cache):
    X, H, H_2, attention, p = cache
    d_H_2, d_W_1, d_b_1, d_W_2, d_b_2 = feed_forward_backward(d_Y, H_2, p["W_1"], p["b_1"],
                                                              p["W_2"], p["b_2"])
    d_H_ffn, d_gamma_2, d_beta_2 = layer_norm_backward(d_H_2, H, p["gamma_2"])
    d_H = d_Y + d_H_ffn
    d_X_1, d_W_q, d_W_k, d_W_v, d_W_o = multi_head_attention_backward(d_H, attention)
    d_X, d_gamma_1, d_beta_1 = layer_norm_backward(d_X_1, X, p["gamma_1"])
    return d_X, {"gamma_1": d_gamma_1, "beta_1": d_beta_1, "W_q": d_W_q, "W_k": d_W_k,
                 "W_v": d_W_v, "W_o": d_W_o, "gamma_2": d_gamma_2, "beta_2": d_beta_2,
                 "W_1": d_W_1, "b_1": d_b_1, "W_2": d_W_2, "b_2": d_b_2}


@mutant("transformer_block_backward", "send the gradient around the LayerNorms, as if LN_1 and LN_2 "
                                      "were not there")
def skip_layer_norm_gradients(d_Y, cache):
    X, H, H_2, attention, p = cache
    d_H_2, d_W_1, d_b_1, d_W_2, d_b_2 = feed_forward_backward(d_Y, H_2, p["W_1"], p["b_1"],
                                                              p["W_2"], p["b_2"])
    d_H = d_Y + d_H_2
    d_X_1, d_W_q, d_W_k, d_W_v, d_W_o = multi_head_attention_backward(d_H, attention)
    _, d_gamma_1, d_beta_1 = layer_norm_backward(d_X_1, X, p["gamma_1"])
    _, d_gamma_2, d_beta_2 = layer_norm_backward(d_H_2, H, p["gamma_2"])
    return d_H + d_X_1, {"gamma_1": d_gamma_1, "beta_1": d_beta_1, "W_q": d_W_q, "W_k": d_W_k,
                         "W_v": d_W_v, "W_o": d_W_o, "gamma_2": d_gamma_2, "beta_2": d_beta_2,
                         "W_1": d_W_1, "b_1": d_b_1, "W_2": d_W_2, "b_2": d_b_2}


@mutant("transformer_block_backward", "give layer_norm_backward the LayerNorm's output instead of "
                                      "its input")
def layer_norm_of_output(d_Y, cache):
    X, H, H_2, attention, p = cache
    X_1 = attention[0]
    d_H_2, d_W_1, d_b_1, d_W_2, d_b_2 = feed_forward_backward(d_Y, H_2, p["W_1"], p["b_1"],
                                                              p["W_2"], p["b_2"])
    d_H_ffn, d_gamma_2, d_beta_2 = layer_norm_backward(d_H_2, H_2, p["gamma_2"])
    d_H = d_Y + d_H_ffn
    d_X_1, d_W_q, d_W_k, d_W_v, d_W_o = multi_head_attention_backward(d_H, attention)
    d_X_attention, d_gamma_1, d_beta_1 = layer_norm_backward(d_X_1, X_1, p["gamma_1"])
    return d_H + d_X_attention, {"gamma_1": d_gamma_1, "beta_1": d_beta_1, "W_q": d_W_q,
                                 "W_k": d_W_k, "W_v": d_W_v, "W_o": d_W_o, "gamma_2": d_gamma_2,
                                 "beta_2": d_beta_2, "W_1": d_W_1, "b_1": d_b_1, "W_2": d_W_2,
                                 "b_2": d_b_2}


@mutant("transformer_block_backward", "swap the gradients of the two LayerNorms' parameters")
def swapped_norm_gradients(d_Y, cache):
    X, H, H_2, attention, p = cache
    d_H_2, d_W_1, d_b_1, d_W_2, d_b_2 = feed_forward_backward(d_Y, H_2, p["W_1"], p["b_1"],
                                                              p["W_2"], p["b_2"])
    d_H_ffn, d_gamma_2, d_beta_2 = layer_norm_backward(d_H_2, H, p["gamma_2"])
    d_H = d_Y + d_H_ffn
    d_X_1, d_W_q, d_W_k, d_W_v, d_W_o = multi_head_attention_backward(d_H, attention)
    d_X_attention, d_gamma_1, d_beta_1 = layer_norm_backward(d_X_1, X, p["gamma_1"])
    return d_H + d_X_attention, {"gamma_1": d_gamma_2, "beta_1": d_beta_2, "W_q": d_W_q,
                                 "W_k": d_W_k, "W_v": d_W_v, "W_o": d_W_o, "gamma_2": d_gamma_1,
                                 "beta_2": d_beta_1, "W_1": d_W_1, "b_1": d_b_1, "W_2": d_W_2,
                                 "b_2": d_b_2}


# ---------------------------------------------------------------- nats_above_floor


@mutant("nats_above_floor", "return the cross-entropy sum_w p(w) (-ln q(w)) and forget to "
                            "subtract the entropy of p")
def cross_entropy_only(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    ce = -np.sum(P * log_q, axis=-1)
    return float(ce.mean() if mask is None else ce[np.asarray(mask, dtype=bool)].mean())


@mutant("nats_above_floor", "compute KL(q || p) instead of KL(p || q)")
def reversed_kl(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    q = np.exp(log_q)
    kl = np.sum(q * (log_q - np.log(np.maximum(P, 1e-300))), axis=-1)
    return float(kl.mean() if mask is None else kl[np.asarray(mask, dtype=bool)].mean())


@mutant("nats_above_floor", "take the softmax without subtracting the largest logit, so exp "
                            "overflows")
def no_max(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    log_q = np.log(np.exp(logits) / np.sum(np.exp(logits), axis=-1, keepdims=True))
    log_p = np.log(np.where(P > 0, P, 1.0))
    kl = np.sum(np.where(P > 0, P * (log_p - log_q), 0.0), axis=-1)
    return float(kl.mean() if mask is None else kl[np.asarray(mask, dtype=bool)].mean())


@mutant("nats_above_floor", "average over the padding too, ignoring the mask")
def padding_counted(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    log_p = np.log(np.where(P > 0, P, 1.0))
    return float(np.sum(np.where(P > 0, P * (log_p - log_q), 0.0), axis=-1).mean())


@mutant("nats_above_floor", "measure in bits (log base 2) instead of nats")
def in_bits(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    log_p = np.log(np.where(P > 0, P, 1.0))
    kl = np.sum(np.where(P > 0, P * (log_p - log_q), 0.0), axis=-1) / np.log(2)
    return float(kl.mean() if mask is None else kl[np.asarray(mask, dtype=bool)].mean())


@mutant("nats_above_floor", "compute p ln p where p = 0, which gives nan instead of 0")
def zero_log_zero(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    kl = np.sum(P * (np.log(P) - log_q), axis=-1)
    return float(kl.mean() if mask is None else kl[np.asarray(mask, dtype=bool)].mean())


@mutant("nats_above_floor", "average over the vocabulary instead of summing over it")
def mean_over_vocabulary(logits, P, mask=None):
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)
    log_q = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    log_p = np.log(np.where(P > 0, P, 1.0))
    kl = np.mean(np.where(P > 0, P * (log_p - log_q), 0.0), axis=-1)
    return float(kl.mean() if mask is None else kl[np.asarray(mask, dtype=bool)].mean())
