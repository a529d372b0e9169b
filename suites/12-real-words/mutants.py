"""Realistic wrong implementations of 12-real-words; the suite must take points from each.

Mutants of cross_attention_backward read the reference cache, (X, M, W_q, W_k, W_v, W_o, Q, K, V,
weights, merged).
"""
import math

import numpy as np

from autograder.kit import mutant

# ---------------------------------------------------------------- edit_distance


@mutant("edit_distance", "let a substitution cost 2 (a deletion plus an insertion), which counts "
                         "the edits of a longest common subsequence instead")
def substitution_costs_two(a, b):
    a, b = list(a), list(b)
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            substitute = previous[j - 1] + 2 * (a[i - 1] != b[j - 1])
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitute)
        previous = current
    return previous[len(b)]


@mutant("edit_distance", "start row 0 and column 0 of the table at 0 instead of at the prefix "
                         "lengths, so deleting or inserting at the start is free")
def zero_borders(a, b):
    a, b = list(a), list(b)
    previous = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            substitute = previous[j - 1] + (a[i - 1] != b[j - 1])
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitute)
        previous = current
    return previous[len(b)]


@mutant("edit_distance", "compare a[i] with b[j] instead of a[i - 1] with b[j - 1] (the table's "
                         "row i is the prefix of i symbols)")
def shifted_symbols(a, b):
    a, b = list(a), list(b)
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            same = i < len(a) and j < len(b) and a[i] == b[j]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (not same))
        previous = current
    return previous[len(b)]


@mutant("edit_distance", "count the positions where the two sequences differ (a Hamming distance, "
                         "plus the difference in length)")
def positionwise(a, b):
    a, b = list(a), list(b)
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))


# ---------------------------------------------------------------- error_rates


@mutant("error_rates", "compare each output with the first accepted pronunciation only")
def first_reference_only(hypotheses, references):
    errors = length = wrong = 0
    for hypothesis, accepted in zip(hypotheses, references):
        d = edit_distance(hypothesis, accepted[0])
        errors, length, wrong = errors + d, length + len(accepted[0]), wrong + (d > 0)
    return errors / length, wrong / len(hypotheses)


@mutant("error_rates", "average each word's own phoneme error rate instead of dividing the total "
                       "edits by the total length")
def mean_of_word_rates(hypotheses, references):
    rates, wrong = [], 0
    for hypothesis, accepted in zip(hypotheses, references):
        distances = [edit_distance(hypothesis, r) for r in accepted]
        best = int(np.argmin(distances))
        rates.append(distances[best] / len(accepted[best]))
        wrong += distances[best] > 0
    return float(np.mean(rates)), wrong / len(hypotheses)


@mutant("error_rates", "divide the edits by the lengths of the outputs instead of the references")
def by_output_length(hypotheses, references):
    errors = length = wrong = 0
    for hypothesis, accepted in zip(hypotheses, references):
        distances = [edit_distance(hypothesis, r) for r in accepted]
        best = int(np.argmin(distances))
        errors, length, wrong = errors + distances[best], length + len(hypothesis), wrong + (distances[best] > 0)
    return errors / length, wrong / len(hypotheses)


@mutant("error_rates", "take the length of the longest accepted pronunciation, not of the closest")
def longest_reference(hypotheses, references):
    errors = length = wrong = 0
    for hypothesis, accepted in zip(hypotheses, references):
        d = min(edit_distance(hypothesis, r) for r in accepted)
        errors, length, wrong = errors + d, length + max(len(r) for r in accepted), wrong + (d > 0)
    return errors / length, wrong / len(hypotheses)


# ---------------------------------------------------------------- cross_attention


def _cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask, *, keys_from_X=False, causal=False, scale=None):
    X, M = np.asarray(X), np.asarray(M)
    source = X if keys_from_X else M
    Q = split_heads(X @ W_q, n_heads)
    K, V = split_heads(source @ W_k, n_heads), split_heads(source @ W_v, n_heads)
    if mask is not None:
        mask = np.expand_dims(np.asarray(mask, dtype=bool), -3)
    if causal:
        T_q, T_k = Q.shape[-2], K.shape[-2]
        lower = np.arange(T_q)[:, None] >= np.arange(T_k)[None, :]
        mask = lower if mask is None else mask & lower
    if scale is not None:
        Q = Q * math.sqrt(Q.shape[-1]) / scale
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    merged = merge_heads(heads)
    return merged @ W_o, weights, (X, M, W_q, W_k, W_v, W_o, Q, K, V, weights, merged)


@mutant("cross_attention", "mask causally, as in the decoder's self-attention: an output step may "
                           "read every letter, not only the first ones")
def causal_cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask=None):
    return _cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask, causal=True)


@mutant("cross_attention", "take the keys and the values from X, as in self-attention, instead of "
                           "from the encoder's M")
def keys_from_decoder(X, M, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X, M = np.asarray(X), np.asarray(M)
    if X.shape[-2] != M.shape[-2]:
        mask = None
    return _cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask, keys_from_X=True)


@mutant("cross_attention", "scale the scores by sqrt(d_model) instead of sqrt(d_k)")
def scaled_by_d_model(X, M, W_q, W_k, W_v, W_o, n_heads, mask=None):
    return _cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask, scale=math.sqrt(np.shape(X)[-1]))


@mutant("cross_attention", "leave out the padding mask")
def ignore_mask(X, M, W_q, W_k, W_v, W_o, n_heads, mask=None):
    return _cross(X, M, W_q, W_k, W_v, W_o, n_heads, None)


# ---------------------------------------------------------------- cross_attention_backward


def _backward(d_output, cache, *, through_K=True, through_V=True, scaled=True, all_to_X=False):
    X, M, W_q, W_k, W_v, W_o, Q, K, V, weights, merged = cache
    d_heads = split_heads(d_output @ W_o.T, Q.shape[-3])
    d_V = np.swapaxes(weights, -1, -2) @ d_heads
    d_scores = softmax_backward(weights, d_heads @ np.swapaxes(V, -1, -2))
    if scaled:
        d_scores = d_scores / math.sqrt(Q.shape[-1])
    d_Q, d_K = merge_heads(d_scores @ K), merge_heads(np.swapaxes(d_scores, -1, -2) @ Q)
    d_V = merge_heads(d_V)
    d_X = d_Q @ W_q.T
    d_M = (d_K @ W_k.T if through_K else 0) + (d_V @ W_v.T if through_V else 0) + np.zeros_like(M)
    if all_to_X:
        d_M = np.zeros_like(M)
    return (d_X, d_M, weight_grad(X, d_Q), weight_grad(M, d_K), weight_grad(M, d_V),
            weight_grad(merged, d_output))


@mutant("cross_attention_backward", "send M only the gradient through the values, forgetting the "
                                    "path through the keys")
def d_M_values_only(d_output, cache):
    return _backward(d_output, cache, through_K=False)


@mutant("cross_attention_backward", "send M only the gradient through the keys, forgetting the "
                                    "path through the values")
def d_M_keys_only(d_output, cache):
    return _backward(d_output, cache, through_V=False)


@mutant("cross_attention_backward", "leave the 1/sqrt(d_k) out of the scores' gradient")
def unscaled_backward(d_output, cache):
    return _backward(d_output, cache, scaled=False)


@mutant("cross_attention_backward", "return no gradient for M, as if the keys and values were "
                                    "constants (the encoder would never learn)")
def no_d_M(d_output, cache):
    return _backward(d_output, cache, all_to_X=True)


# ---------------------------------------------------------------- cached_attention_step


@mutant("cached_attention_step", "attend over the cache before adding the new position's key and "
                                 "value, so a position never reads itself")
def drops_newest(x, cache, W_q, W_k, W_v, W_o, n_heads):
    x = np.asarray(x)[..., None, :]
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    head, _ = scaled_dot_product_attention(q, cache["K"], cache["V"])
    K = np.concatenate([cache["K"], k], axis=-2)
    V = np.concatenate([cache["V"], v], axis=-2)
    return merge_heads(head)[..., 0, :] @ W_o, {"K": K, "V": V}


@mutant("cached_attention_step", "attend with the new position's key and value only, forgetting "
                                 "the cached ones")
def forgets_cache(x, cache, W_q, W_k, W_v, W_o, n_heads):
    x = np.asarray(x)[..., None, :]
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    head, _ = scaled_dot_product_attention(q, k, v)
    K = np.concatenate([cache["K"], k], axis=-2)
    V = np.concatenate([cache["V"], v], axis=-2)
    return merge_heads(head)[..., 0, :] @ W_o, {"K": K, "V": V}


@mutant("cached_attention_step", "store the keys in the cache's place of the values and the values "
                                 "in the keys'")
def swapped_cache(x, cache, W_q, W_k, W_v, W_o, n_heads):
    x = np.asarray(x)[..., None, :]
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    K = np.concatenate([cache["K"], k], axis=-2)
    V = np.concatenate([cache["V"], v], axis=-2)
    head, _ = scaled_dot_product_attention(q, K, V)
    return merge_heads(head)[..., 0, :] @ W_o, {"K": V, "V": K}


@mutant("cached_attention_step", "leave out the output projection W_o")
def no_output_projection(x, cache, W_q, W_k, W_v, W_o, n_heads):
    x = np.asarray(x)[..., None, :]
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    K = np.concatenate([cache["K"], k], axis=-2)
    V = np.concatenate([cache["V"], v], axis=-2)
    head, _ = scaled_dot_product_attention(q, K, V)
    return merge_heads(head)[..., 0, :], {"K": K, "V": V}


# ---------------------------------------------------------------- beam_search


def _beam(next_log_probs, start_id, end_id, beam_size, max_length, *, worst=False, normalise=True,
          keep_finished=False, drop_unfinished=False):
    beam, totals, finished = [[start_id]], np.zeros(1), []
    for _ in range(max_length):
        log_probs = np.asarray(next_log_probs(np.array(beam)), dtype=np.float64)
        candidates = totals[:, None] + log_probs
        order = np.argsort(candidates if worst else -candidates, axis=None, kind="stable")
        if worst:
            order = order[np.isfinite(candidates.ravel()[order])]
        best = order[:beam_size]
        rows, tokens = np.unravel_index(best, candidates.shape)
        extended = [beam[r] + [int(t)] for r, t in zip(rows, tokens)]
        kept = candidates[rows, tokens]
        ended = tokens == end_id
        finished += [(total / (len(h) - 1) if normalise else total, h[1:])
                     for h, total, e in zip(extended, kept, ended) if e]
        if keep_finished:
            beam, totals = extended, kept
        else:
            beam, totals = [h for h, e in zip(extended, ended) if not e], kept[~ended]
        if not beam:
            break
    if not drop_unfinished or not finished:
        finished += [(total / (len(h) - 1) if normalise else total, h[1:]) for h, total in zip(beam, totals)
                     if not keep_finished or end_id not in h]
    score, tokens = max(finished, key=lambda found: found[0])
    return tokens, float(score)


@mutant("beam_search", "keep the candidates with the lowest totals instead of the highest")
def keeps_worst(next_log_probs, start_id, end_id, beam_size, max_length):
    return _beam(next_log_probs, start_id, end_id, beam_size, max_length, worst=True)


@mutant("beam_search", "rank the finished outputs by their total log-probability, without dividing "
                       "by the length as the text asks")
def no_length_normalisation(next_log_probs, start_id, end_id, beam_size, max_length):
    return _beam(next_log_probs, start_id, end_id, beam_size, max_length, normalise=False)


@mutant("beam_search", "keep finished hypotheses in the beam, where they are extended past the end "
                       "token and crowd out the others")
def finished_stay_in_beam(next_log_probs, start_id, end_id, beam_size, max_length):
    return _beam(next_log_probs, start_id, end_id, beam_size, max_length, keep_finished=True)


@mutant("beam_search", "return only hypotheses that finished, dropping the beam left at "
                       "max_length whenever one did")
def drops_unfinished(next_log_probs, start_id, end_id, beam_size, max_length):
    return _beam(next_log_probs, start_id, end_id, beam_size, max_length, drop_unfinished=True)
