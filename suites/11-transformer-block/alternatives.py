"""Correct implementations of 11-transformer-block written differently from the reference; the
suite must give each full marks.

Alternatives of transformer_block_backward read the reference cache, (X, H, H_2, attention,
params).
"""
import numpy as np

from autograder.kit import alternative


@alternative("layer_norm", "moments from sums divided by d, one row at a time through einsum")
def from_sums(X, gamma, beta, eps=1e-5):
    X = np.asarray(X)
    d = X.shape[-1]
    mean = np.einsum("...i->...", X)[..., None] / d
    centred = X - mean
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / d
    return centred / np.sqrt(var + eps) * gamma + beta


@alternative("layer_norm", "computed in float64 and cast back to the input's precision")
def in_float64(X, gamma, beta, eps=1e-5):
    X64 = np.asarray(X, dtype=np.float64)
    mean = X64.mean(axis=-1, keepdims=True)
    std = np.sqrt(((X64 - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    return (gamma * (X64 - mean) / std + beta).astype(np.result_type(X, gamma, beta))


@alternative("layer_norm_backward", "the computational graph walked node by node, as in CS231n's "
                                    "batch normalisation (mean, centring, variance, division)")
def node_by_node(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X)
    d = X.shape[-1]
    mean = X.mean(axis=-1, keepdims=True)
    centred = X - mean
    var = (centred ** 2).mean(axis=-1, keepdims=True)
    std = np.sqrt(var + eps)
    X_hat = centred / std
    batch = tuple(range(X.ndim - 1))
    d_gamma = (d_Y * X_hat).sum(axis=batch)
    d_beta = d_Y.sum(axis=batch)
    d_X_hat = d_Y * gamma
    d_std = -(d_X_hat * centred).sum(axis=-1, keepdims=True) / std ** 2
    d_var = d_std / (2 * std)
    d_centred = d_X_hat / std + d_var * 2 * centred / d
    d_mean = -d_centred.sum(axis=-1, keepdims=True)
    return d_centred + d_mean / d, d_gamma, d_beta


@alternative("layer_norm_backward", "the Jacobian of each row, built and applied with einsum")
def row_jacobians(d_Y, X, gamma, eps=1e-5):
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[-1]
    X_hat = (X - X.mean(axis=-1, keepdims=True)) / np.sqrt(X.var(axis=-1, keepdims=True) + eps)
    inv_std = 1.0 / np.sqrt(X.var(axis=-1) + eps)
    # dX_hat_i / dX_j = (delta_ij - 1/d - X_hat_i X_hat_j / d) / std
    jacobian = (np.eye(d) - 1.0 / d - np.einsum("...i,...j->...ij", X_hat, X_hat) / d) \
        * inv_std[..., None, None]
    d_X = np.einsum("...i,...ij->...j", d_Y * gamma, jacobian)
    flat = d_Y.reshape(-1, d)
    return d_X, (flat * X_hat.reshape(-1, d)).sum(axis=0), flat.sum(axis=0)


@alternative("feed_forward", "einsum, and the ReLU as a product with a boolean")
def with_einsum(X, W_1, b_1, W_2, b_2):
    Z = np.einsum("...i,ij->...j", np.asarray(X), W_1) + b_1
    return np.einsum("...j,jk->...k", Z * (Z > 0), W_2) + b_2


@alternative("feed_forward_backward", "rows flattened to a matrix, gradients as plain matrix "
                                      "products, reshaped back")
def flattened(d_Y, X, W_1, b_1, W_2, b_2):
    X, d_Y = np.asarray(X), np.asarray(d_Y)
    X2, d_Y2 = X.reshape(-1, X.shape[-1]), d_Y.reshape(-1, d_Y.shape[-1])
    Z = X2 @ W_1 + b_1
    H = np.where(Z > 0, Z, 0.0)
    d_Z = np.where(Z > 0, d_Y2 @ W_2.T, 0.0)
    return ((d_Z @ W_1.T).reshape(X.shape), X2.T @ d_Z, d_Z.sum(axis=0), H.T @ d_Y2,
            d_Y2.sum(axis=0))


@alternative("transformer_block", "the sublayers written as two small functions, the cache a dict")
def sublayer_functions(X, params, n_heads, mask=None):
    p = params

    def attention_sublayer(Z):
        normed = layer_norm(Z, p["gamma_1"], p["beta_1"])
        return multi_head_attention_forward(normed, p["W_q"], p["W_k"], p["W_v"], p["W_o"],
                                            n_heads, mask)

    def feed_forward_sublayer(Z):
        normed = layer_norm(Z, p["gamma_2"], p["beta_2"])
        return feed_forward(normed, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), normed

    X = np.array(X)
    A, weights, attention = attention_sublayer(X)
    H = X + A
    F, H_2 = feed_forward_sublayer(H)
    return H + F, weights, (X, H, H_2, attention, dict(p))


@alternative("transformer_block_backward", "gradients gathered into the dict as they are found, "
                                           "the two paths into d_X summed at the end")
def gathered(d_Y, cache):
    X, H, H_2, attention, p = cache
    grads = {}
    d_H_2, grads["W_1"], grads["b_1"], grads["W_2"], grads["b_2"] = feed_forward_backward(
        d_Y, H_2, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
    through_norm, grads["gamma_2"], grads["beta_2"] = layer_norm_backward(d_H_2, H, p["gamma_2"])
    d_H = through_norm + d_Y
    d_normed, grads["W_q"], grads["W_k"], grads["W_v"], grads["W_o"] = \
        multi_head_attention_backward(d_H, attention)
    through_attention, grads["gamma_1"], grads["beta_1"] = layer_norm_backward(d_normed, X,
                                                                               p["gamma_1"])
    return sum([d_H, through_attention]), grads


@alternative("nats_above_floor", "np.log of the softmax probabilities, floored, with the entropy "
                                 "and the cross-entropy computed apart")
def entropy_and_cross_entropy(logits, P, mask=None):
    z = np.asarray(logits, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    log_q = z - z.max(axis=-1, keepdims=True)
    log_q = log_q - np.log(np.exp(log_q).sum(axis=-1, keepdims=True))
    positive = P > 0
    entropy = -np.sum(P * np.log(np.where(positive, P, 1.0)), axis=-1)
    cross = -np.sum(np.where(positive, P * log_q, 0.0), axis=-1)
    kl = cross - entropy
    if mask is not None:
        kl = kl[np.broadcast_to(np.asarray(mask, dtype=bool), kl.shape)]
    return float(np.mean(kl))
