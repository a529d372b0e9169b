"""Realistic wrong implementations of 10-learning-self-attention; the suite must take points from
each.

Each runs as if written in the answer cell: numpy as np, the given functions of the setup cell
(attention_backward among them) and the other reference functions in scope.
"""
import numpy as np

from autograder.catalogue import mutant

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
    logits, targets = np.asarray(logits), np.asarray(targets)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked.mean()), (np.exp(log_probs) - one_hot) / targets.size


@mutant("cross_entropy", "leave out the padding in the loss but not in the gradient")
def padding_in_gradient(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    n_real = max(int(real.sum()), 1)
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked[real].sum() / n_real), (np.exp(log_probs) - one_hot) / n_real


@mutant("cross_entropy", "return the gradient of the summed loss, not of the mean (no division by "
                         "the number of targets)")
def gradient_of_sum(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    n_real = max(int(real.sum()), 1)
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked[real].sum() / n_real), np.where(real[..., None], np.exp(log_probs) - one_hot, 0.0)


@mutant("cross_entropy", "average each sentence's loss first, then the sentences, so short "
                         "sentences weigh as much as long ones")
def mean_of_means(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    per_row = np.maximum(real.sum(axis=-1, keepdims=True), 1)
    rows = per_row.size
    loss = -np.sum(np.where(real, picked, 0.0) / per_row) / rows
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    d = np.where(real[..., None], np.exp(log_probs) - one_hot, 0.0) / (per_row[..., None] * rows)
    return float(loss), d


@mutant("cross_entropy", "divide by the count of real targets without guarding against zero, so a "
                         "batch of padding gives 0/0")
def unguarded_mean(logits, targets, pad_id=0):
    logits, targets = np.asarray(logits), np.asarray(targets)
    real = targets != pad_id
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    return float(-picked[real].mean()), np.where(real[..., None], np.exp(log_probs) - one_hot, 0.0) / real.sum()


# ---------------------------------------------------------------- self_attention_backward


@mutant("self_attention_backward", "pass the gradient back to X through the values only, forgetting "
                                   "that X also made the queries and the keys")
def values_path_only(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    rows = X.reshape(-1, X.shape[-1])
    return (dV @ W_v.T, rows.T @ dQ.reshape(-1, dQ.shape[-1]),
            rows.T @ dK.reshape(-1, dK.shape[-1]), rows.T @ dV.reshape(-1, dV.shape[-1]))


@mutant("self_attention_backward", "leave the keys' path out of dX")
def no_key_path(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    rows = X.reshape(-1, X.shape[-1])
    return (dQ @ W_q.T + dV @ W_v.T, rows.T @ dQ.reshape(-1, dQ.shape[-1]),
            rows.T @ dK.reshape(-1, dK.shape[-1]), rows.T @ dV.reshape(-1, dV.shape[-1]))


@mutant("self_attention_backward", "swap the gradients of the queries and the keys (dW_q from dK)")
def queries_and_keys_swapped(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    rows = X.reshape(-1, X.shape[-1])
    return (dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T, rows.T @ dK.reshape(-1, dK.shape[-1]),
            rows.T @ dQ.reshape(-1, dQ.shape[-1]), rows.T @ dV.reshape(-1, dV.shape[-1]))


@mutant("self_attention_backward", "average the weight gradients over the batch instead of adding "
                                   "them up")
def batch_mean(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    n = int(np.prod(X.shape[:-2]))
    rows = X.reshape(-1, X.shape[-1])
    return (dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T, rows.T @ dQ.reshape(-1, dQ.shape[-1]) / n,
            rows.T @ dK.reshape(-1, dK.shape[-1]) / n, rows.T @ dV.reshape(-1, dV.shape[-1]) / n)


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
