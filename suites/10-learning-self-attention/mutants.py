"""Realistic wrong implementations of 10-learning-self-attention; the suite must take points from
each.

Each runs as if written in the answer cell: numpy as np, the given functions of the setup cell
(attention_backward among them) and the other reference functions in scope.
"""
import numpy as np

from autograder.kit import mutant

# ---------------------------------------------------------------- cross_entropy


@mutant("cross_entropy", "take exp of the logits without subtracting their maximum first, so "
                         "large logits overflow")
def no_max(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    e = np.exp(logits)
    probs = e / e.sum(axis=-1, keepdims=True)
    picked = np.take_along_axis(np.log(probs), targets[..., None], axis=-1)[..., 0]
    n_real = max(int(real.sum()), 1)
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked[real].sum() / n_real), np.where(real[..., None], probs - one_hot, 0.0) / n_real


@mutant("cross_entropy", "average over every position, padding included")
def padding_counted(logits, targets, pad_id=0):
    p = softmax(np.asarray(logits, dtype=float))
    one_hot = np.arange(p.shape[-1]) == np.asarray(targets)[..., None]
    return float(-np.log(p[one_hot]).mean()), (p - one_hot) / np.size(targets)


@mutant("cross_entropy", "leave out the padding in the loss but not in the gradient")
def padding_in_gradient(logits, targets, pad_id=0):
    p = softmax(np.asarray(logits, dtype=float))
    one_hot = np.arange(p.shape[-1]) == np.asarray(targets)[..., None]
    real = np.asarray(targets) != pad_id
    count = max(real.sum(), 1)
    return float(-np.log(p[one_hot & real[..., None]]).sum() / count), (p - one_hot) / count


@mutant("cross_entropy", "return the gradient of the summed loss, not of the mean (no division by "
                         "the number of targets)")
def gradient_of_sum(logits, targets, pad_id=0):
    real = (np.asarray(targets) != pad_id)[..., None]
    p = softmax(np.asarray(logits, dtype=float))
    target_mask = np.arange(p.shape[-1]) == np.asarray(targets)[..., None]
    losses = -np.log(np.sum(p * target_mask, axis=-1, keepdims=True))
    n = max(int(real.sum()), 1)
    return float(np.sum(losses * real) / n), (p - target_mask) * real


@mutant("cross_entropy", "average each sentence's loss first, then the sentences, so short "
                         "sentences weigh as much as long ones")
def mean_of_means(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    log_probs = np.log(softmax(logits))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    per_row = np.maximum(real.sum(axis=-1, keepdims=True), 1)
    rows = per_row.size
    gradient = np.exp(log_probs) - (np.arange(logits.shape[-1]) == targets[..., None])
    d = np.where(real[..., None], gradient, 0.0) / (per_row[..., None] * rows)
    return float(-np.sum(np.where(real, picked, 0.0) / per_row) / rows), d


@mutant("cross_entropy", "divide by the count of real targets without guarding against zero, so a "
                         "batch of padding gives 0/0")
def unguarded_mean(logits, targets, pad_id=0):
    real = np.asarray(targets) != pad_id
    flat, wanted = np.asarray(logits)[real], np.asarray(targets)[real]      # (n_real, n_vocab)
    shifted = flat - flat.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    loss = np.mean(log_norm - shifted[np.arange(len(wanted)), wanted])
    d = np.zeros(np.shape(logits))
    d[real] = np.exp(shifted - log_norm[:, None]) - np.eye(flat.shape[-1])[wanted]
    return float(loss), d / real.sum()


# ---------------------------------------------------------------- self_attention_backward


@mutant("self_attention_backward", "pass the gradient back to X through the values only, forgetting "
                                   "that X also made the queries and the keys")
def values_path_only(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    rows = X.reshape(-1, X.shape[-1])
    weight_grads = [rows.T @ G.reshape(len(rows), -1) for G in (dQ, dK, dV)]
    return (dV @ W_v.T, *weight_grads)


@mutant("self_attention_backward", "leave the keys' path out of dX")
def no_key_path(d_output, cache):
    X, W_q, W_k, W_v, (Q, K, V, weights) = cache
    dQ, dK, dV = attention_backward(d_output, (Q, K, V, weights))
    n = X.shape[-1]
    return (dQ @ W_q.T + dV @ W_v.T, np.einsum("nd,nk->dk", X.reshape(-1, n), dQ.reshape(-1, dQ.shape[-1])),
            np.einsum("nd,nk->dk", X.reshape(-1, n), dK.reshape(-1, dK.shape[-1])),
            np.einsum("nd,nk->dk", X.reshape(-1, n), dV.reshape(-1, dV.shape[-1])))


@mutant("self_attention_backward", "swap the gradients of the queries and the keys (dW_q from dK)")
def queries_and_keys_swapped(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    flat_X = X.reshape(-1, X.shape[-1]).T
    dX = dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T
    return dX, flat_X @ dK.reshape(-1, W_k.shape[1]), flat_X @ dQ.reshape(-1, W_q.shape[1]), \
        flat_X @ dV.reshape(-1, W_v.shape[1])


@mutant("self_attention_backward", "average the weight gradients over the batch instead of adding "
                                   "them up")
def batch_mean(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    gradients = attention_backward(d_output, attention_cache)
    per_item = [np.swapaxes(X, -1, -2) @ G for G in gradients]
    if X.ndim > 2:
        per_item = [G.reshape(-1, *G.shape[-2:]).mean(axis=0) for G in per_item]
    return (sum(G @ W.T for G, W in zip(gradients, (W_q, W_k, W_v))), *per_item)


@mutant("self_attention_backward", "give the weight gradients their shape with reshape instead of "
                                   "a transpose (dQ^T X reshaped to (d_model, d_k))")
def reshaped_not_transposed(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    rows = X.reshape(-1, X.shape[-1])
    flat = [G.reshape(-1, G.shape[-1]) for G in (dQ, dK, dV)]
    grads = [(G.T @ rows).reshape(rows.shape[-1], G.shape[-1]) for G in flat]
    return (dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T, *grads)


# ---------------------------------------------------------------- agreement_accuracy


@mutant("agreement_accuracy", "count a tie between the two forms as agreement (>= instead of >)")
def ties_count(logits, at, correct, wrong):
    logits = np.asarray(logits)
    rows = np.arange(len(at))
    scores = logits[rows, at]
    return float(np.mean(scores[rows, correct] >= scores[rows, wrong]))


@mutant("agreement_accuracy", "read the row of the verb itself (at + 1), which predicts the word "
                              "after the verb")
def row_of_the_verb(logits, at, correct, wrong):
    logits = np.asarray(logits)
    rows = np.arange(len(at))
    scores = logits[rows, np.minimum(at + 1, logits.shape[1] - 1)]
    return float(np.mean(scores[rows, correct] > scores[rows, wrong]))


@mutant("agreement_accuracy", "require the agreeing form to be the model's first choice over the "
                              "whole vocabulary")
def argmax_over_vocabulary(logits, at, correct, wrong):
    logits = np.asarray(logits)
    rows = np.arange(len(at))
    return float(np.mean(np.argmax(logits[rows, at], axis=-1) == correct))


@mutant("agreement_accuracy", "index logits[:, at, correct], which pairs every sentence with every "
                              "other sentence's verb position")
def every_pair(logits, at, correct, wrong):
    logits = np.asarray(logits)
    return float(np.mean(logits[:, at, correct] > logits[:, at, wrong]))


# ---------------------------------------------------------------- attention_on


@mutant("attention_on", "read the column of the chosen position (who attends to it) instead of its "
                        "row (what it attends to)")
def column(weights, rows, keys):
    weights = np.asarray(weights)
    column = weights[np.arange(len(rows)), :, rows]
    return np.sum(np.where(keys, column, 0.0), axis=-1)


@mutant("attention_on", "average the weights of the chosen keys instead of adding them up")
def mean_of_keys(weights, rows, keys):
    weights = np.asarray(weights)
    row = weights[np.arange(len(rows)), rows]
    return np.sum(np.where(keys, row, 0.0), axis=-1) / np.maximum(np.sum(keys, axis=-1), 1)


@mutant("attention_on", "read the last row of every map instead of the given one")
def last_row(weights, rows, keys):
    weights = np.asarray(weights)
    return np.sum(np.where(keys, weights[:, -1], 0.0), axis=-1)
