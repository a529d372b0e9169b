"""Correct implementations of 10-learning-self-attention written differently; each must keep full
marks.

Each runs as if written in the answer cell: numpy as np, the given functions of the setup cell
(attention_backward among them) and the other reference functions in scope.
"""
import numpy as np

from autograder.kit import alternative

# ---------------------------------------------------------------- cross_entropy


@alternative("cross_entropy", "rows flattened to a 2-D table, the real ones picked by a boolean "
                              "index, log-sum-exp with the maximum added back")
def flat_rows(logits, targets, pad_id=0):
    logits = np.asarray(logits)
    n_vocab = logits.shape[-1]
    flat = logits.reshape(-1, n_vocab)
    wanted = np.asarray(targets).reshape(-1)
    real = wanted != pad_id
    top = flat.max(axis=1)
    log_sum = np.log(np.exp(flat - top[:, None]).sum(axis=1)) + top
    d = np.exp(flat - log_sum[:, None])
    d[np.arange(len(wanted)), wanted] -= 1.0
    d[~real] = 0.0
    count = real.sum()
    if count == 0:
        return 0.0, np.zeros_like(logits)
    loss = np.sum(log_sum[real] - flat[real, wanted[real]]) / count
    return float(loss), (d / count).reshape(logits.shape)


@alternative("cross_entropy", "a loop over positions with a one-hot vector built for each")
def loops(logits, targets, pad_id=0):
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    d = np.zeros_like(logits)
    total, count = 0.0, 0
    for index in np.ndindex(targets.shape):
        if targets[index] == pad_id:
            continue
        z = logits[index] - logits[index].max()
        p = np.exp(z) / np.exp(z).sum()
        one_hot = np.zeros_like(p)
        one_hot[targets[index]] = 1.0
        total -= z[targets[index]] - np.log(np.exp(z).sum())
        d[index] = p - one_hot
        count += 1
    if count:
        return total / count, d / count
    return 0.0, d


# ---------------------------------------------------------------- self_attention_backward


@alternative("self_attention_backward", "einsum, with every position of every batch item as one "
                                        "axis")
def einsum(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    dX = (np.einsum("...tk,dk->...td", dQ, W_q) + np.einsum("...tk,dk->...td", dK, W_k)
          + np.einsum("...tv,dv->...td", dV, W_v))
    n = X.shape[-1]
    return (dX, np.einsum("nd,nk->dk", X.reshape(-1, n), dQ.reshape(-1, dQ.shape[-1])),
            np.einsum("nd,nk->dk", X.reshape(-1, n), dK.reshape(-1, dK.shape[-1])),
            np.einsum("nd,nv->dv", X.reshape(-1, n), dV.reshape(-1, dV.shape[-1])))


@alternative("self_attention_backward", "batched products swapaxes(X) @ dQ, then summed over the "
                                        "batch axes")
def batched_then_summed(d_output, cache):
    X, W_q, W_k, W_v, attention_cache = cache
    dQ, dK, dV = attention_backward(d_output, attention_cache)
    XT = np.swapaxes(X, -1, -2)
    lead = tuple(range(X.ndim - 2))
    grads = [np.sum(XT @ G, axis=lead) if lead else XT @ G for G in (dQ, dK, dV)]
    dX = dQ @ np.swapaxes(W_q, 0, 1) + dK @ np.swapaxes(W_k, 0, 1) + dV @ np.swapaxes(W_v, 0, 1)
    return (dX, *grads)


# ---------------------------------------------------------------- agreement_accuracy


@alternative("agreement_accuracy", "a loop over sentences comparing log-probabilities")
def loop_log_probs(logits, at, correct, wrong):
    hits = 0
    for b in range(len(at)):
        row = np.asarray(logits[b][at[b]], dtype=np.float64)
        log_probs = row - row.max() - np.log(np.sum(np.exp(row - row.max())))
        hits += int(log_probs[correct[b]] > log_probs[wrong[b]])
    return hits / len(at)


@alternative("agreement_accuracy", "np.take_along_axis twice")
def take_along(logits, at, correct, wrong):
    logits = np.asarray(logits)
    rows = np.take_along_axis(logits, np.asarray(at)[:, None, None], axis=1)[:, 0]
    pick = lambda ids: np.take_along_axis(rows, np.asarray(ids)[:, None], axis=1)[:, 0]  # noqa: E731
    return float((pick(correct) > pick(wrong)).mean())


# ---------------------------------------------------------------- attention_on


@alternative("attention_on", "einsum with the keys as floats")
def einsum_keys(weights, rows, keys):
    weights = np.asarray(weights)
    chosen = np.take_along_axis(weights, np.asarray(rows)[:, None, None], axis=1)[:, 0]
    return np.einsum("bt,bt->b", chosen, np.asarray(keys, dtype=weights.dtype))


@alternative("attention_on", "a loop over sentences with a boolean index")
def loop(weights, rows, keys):
    return np.array([np.sum(weights[b][rows[b]][keys[b]]) for b in range(len(rows))])
