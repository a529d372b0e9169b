"""Hidden suite of 10-learning-self-attention: cross_entropy, self_attention_backward,
agreement_accuracy, attention_on.

self_attention_backward receives the cache of the notebook's given self_attention_forward, laid
out as (X, W_q, W_k, W_v, (Q, K, V, weights)); the suite builds that cache here, from the inputs,
and compares the learner's gradients with gradients computed here.
"""
import numpy as np
import pytest

from autograder.kit import (as_array, as_float, check, expect_close, expect_shape, fail, mistakes,
                            points)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "10-learning-self-attention"

# float32 results are compared with float64 truth at this tolerance.
F32 = {"rtol": 1e-4, "atol": 1e-5}

# What expect_clean_call says about a warning or an in-place change in these functions.
CLEAN = {"hint": "An overflow in exp means the maximum was not subtracted first; 'invalid value' or "
                 "'divide by zero' usually means a mean over no elements or a log of 0.",
         "copy_hint": "for example `d = d - one_hot` rather than `d -= one_hot` on an input array"}


def swap(A):
    return np.swapaxes(A, -1, -2)


# ---------------------------------------------------------------- cross_entropy

def true_cross_entropy(logits, targets, pad_id=0):
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    real = targets != pad_id
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    n_real = max(int(real.sum()), 1)
    one_hot = np.arange(logits.shape[-1]) == targets[..., None]
    gradient = np.where(real[..., None], softmax(logits) - one_hot, 0.0) / n_real
    return float(-picked[real].sum() / n_real), gradient


def lm_case(seed, lead, T, n_vocab, scale=2.0, pad_id=0, padded=True, dtype=np.float64):
    """Logits and targets shaped like a padded batch: each row has a random length, padding after."""
    rng = np.random.default_rng(seed)
    logits = (scale * rng.normal(size=lead + (T, n_vocab))).astype(dtype)
    targets = rng.integers(0, n_vocab, size=lead + (T,))
    targets[targets == pad_id] = (pad_id + 1) % n_vocab        # padding only where placed below
    if padded:
        lengths = rng.integers(1, T + 1, size=lead)
        targets = np.where(np.arange(T) < lengths[..., None], targets, pad_id)
    return logits, targets


def loss_of(submission, logits, targets, what, **kwargs):
    """The learner's (loss, d_logits), checked for form."""
    result = submission.cross_entropy(logits, targets, **kwargs)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail(f"{what} should return a pair (loss, d_logits).")
    loss = as_float(result[0], f"the loss of {what}")
    d_logits = as_array(result[1], f"the gradient d_logits of {what}")
    return loss, d_logits


def expect_cross_entropy(submission, logits, targets, what, pad_id=None, rtol=1e-6, atol=1e-8,
                         parts=(0, 1)):
    kwargs = {} if pad_id is None else {"pad_id": pad_id}
    loss, d_logits = loss_of(submission, logits, targets, what, **kwargs)
    truth = true_cross_entropy(logits, targets, **kwargs)
    for part, name, got in ((0, "the loss", loss), (1, "d_logits", d_logits)):
        if part in parts:
            expect_close(got, truth[part], f"{name} of {what}", rtol=rtol, atol=atol,
                         mistakes=mistakes(ASSIGNMENT, "cross_entropy", logits, targets, pick=part,
                                           learner=submission, **kwargs))
    return loss, d_logits


@points(1, "cross_entropy")
def test_cross_entropy_values(submission):
    """the mean of -log softmax(logits)[target] over the targets, without padding"""
    logits, targets = lm_case(10, (), 7, 11, padded=False)
    expect_cross_entropy(submission, logits, targets, "cross_entropy for 7 positions and 11 tokens",
                         parts=(0,))


@points(1, "cross_entropy")
def test_cross_entropy_gradient(submission):
    """d_logits is (softmax - one_hot) / number of targets"""
    logits, targets = lm_case(20, (3,), 6, 9, padded=False)
    expect_cross_entropy(submission, logits, targets, "cross_entropy for a batch (3, 6, 9)",
                         parts=(1,))


@points(2, "cross_entropy")
def test_cross_entropy_skips_padding(submission):
    """padded targets add nothing to the loss, count nowhere in the mean and get zero gradient"""
    logits, targets = lm_case(30, (4,), 8, 10)
    _, d_logits = expect_cross_entropy(submission, logits, targets,
                                       "cross_entropy for 4 padded rows of 8 positions")
    padding = targets == 0
    check(np.allclose(d_logits[padding], 0.0),
          f"d_logits should be 0 at padded positions (target = pad_id), but its largest entry "
          f"there is {np.abs(d_logits[padding]).max():.3g}.")
    logits, targets = lm_case(31, (3,), 6, 9, pad_id=4)
    expect_cross_entropy(submission, logits, targets, "cross_entropy(logits, targets, pad_id=4)",
                         pad_id=4)


@points(1, "cross_entropy")
def test_cross_entropy_huge_logits(submission):
    """logits of size 10^4: no overflow, no NaN, no warning"""
    logits, targets = lm_case(40, (2,), 5, 7, scale=1e4)
    expect_cross_entropy(submission, logits, targets,
                         "cross_entropy when the logits are in the thousands", rtol=1e-6, atol=1e-6)
    expect_clean_call(submission, "cross_entropy", **CLEAN)


@points(1, "cross_entropy")
def test_cross_entropy_batch_axes(submission):
    """any leading batch axes: every real target of every row counts once"""
    logits, targets = lm_case(50, (2, 3), 5, 6)
    expect_cross_entropy(submission, logits, targets, "cross_entropy for a batch (2, 3, 5, 6)")


@points(1, "cross_entropy")
def test_cross_entropy_float32(submission):
    """works on float32 logits"""
    logits, targets = lm_case(60, (3,), 6, 8, dtype=np.float32)
    expect_cross_entropy(submission, logits, targets, "cross_entropy for float32 logits", **F32)


@points(1, "cross_entropy")
def test_cross_entropy_nothing_real(submission):
    """with every target padding: loss 0, zero gradient, no warning"""
    logits, _ = lm_case(70, (2,), 4, 5)
    targets = np.zeros((2, 4), dtype=np.int64)
    loss, d_logits = loss_of(submission, logits, targets, "cross_entropy when every target is padding")
    check(loss == 0.0 and np.allclose(d_logits, 0.0) and d_logits.shape == logits.shape,
          f"when every target is padding there is nothing to average: the loss should be 0 and "
          f"d_logits all zeros of shape {logits.shape}, but the loss is {loss:.3g} and d_logits "
          f"has shape {d_logits.shape}. (A mean over no targets is 0/0.)")
    expect_clean_call(submission, "cross_entropy", **CLEAN)


@points(1, "cross_entropy")
def test_cross_entropy_clean(submission):
    """does not change logits or targets in place, prints nothing, emits no warning"""
    logits, targets = lm_case(80, (3,), 6, 7)
    loss_of(submission, logits, targets, "cross_entropy")
    expect_clean_call(submission, "cross_entropy", **CLEAN)


# ---------------------------------------------------------------- self_attention_backward

def layer(seed, lead, T, d_model, d_k, d_v, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=lead + (T, d_model))
    W_q, W_k = (rng.normal(size=(d_model, d_k)) for _ in range(2))
    W_v = rng.normal(size=(d_model, d_v)) / np.sqrt(d_model)
    d_output = rng.normal(size=lead + (T, d_v))
    return tuple(a.astype(dtype) for a in (X, W_q, W_k, W_v, d_output))


def causal(T):
    return np.tril(np.ones((T, T), dtype=bool))


def forward_cache(X, W_q, W_k, W_v, mask=None):
    """The cache of the notebook's self_attention_forward, in the inputs' dtype."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(Q @ swap(K) / np.sqrt(W_k.shape[-1]), mask=mask).astype(X.dtype)
    return (X, W_q, W_k, W_v, (Q, K, V, weights))


def true_gradients(X, W_q, W_k, W_v, d_output, mask=None):
    X, W_q, W_k, W_v, d_output = (np.asarray(a, dtype=np.float64) for a in (X, W_q, W_k, W_v, d_output))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(Q @ swap(K) / np.sqrt(W_k.shape[-1]), mask=mask)
    d_weights = d_output @ swap(V)
    d_scores = weights * (d_weights - np.sum(weights * d_weights, axis=-1, keepdims=True))
    d_scores = d_scores / np.sqrt(W_k.shape[-1])
    dQ, dK, dV = d_scores @ K, swap(d_scores) @ Q, swap(weights) @ d_output
    rows = X.reshape(-1, X.shape[-1])
    flat = lambda G: G.reshape(-1, G.shape[-1])  # noqa: E731
    return (dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T,
            rows.T @ flat(dQ), rows.T @ flat(dK), rows.T @ flat(dV))


NAMES = ("dX", "dW_q", "dW_k", "dW_v")


def learner_gradients(submission, cache, d_output):
    grads = submission.self_attention_backward(d_output, cache)
    if not isinstance(grads, (tuple, list)) or len(grads) != 4:
        fail("self_attention_backward(d_output, cache) should return four arrays "
             "(dX, dW_q, dW_k, dW_v).")
    arrays = []
    for name, grad, like in zip(NAMES, grads, cache[:4]):
        grad = as_array(grad, name)
        expect_shape(grad, np.shape(like), f"{name} (it has the shape of {name[1:]})")
        arrays.append(grad)
    return arrays


def expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output, what, mask=None,
                           which=(0, 1, 2, 3), rtol=1e-6, atol=1e-8):
    cache = forward_cache(X, W_q, W_k, W_v, mask)
    got = learner_gradients(submission, cache, d_output)
    truth = true_gradients(X, W_q, W_k, W_v, d_output, mask)
    for index in which:
        expect_close(got[index], truth[index], f"{NAMES[index]} {what}", rtol=rtol, atol=atol,
                     mistakes=mistakes(ASSIGNMENT, "self_attention_backward", d_output, cache,
                                       pick=index, learner=submission))
    return got


WEIGHTS = [("dW_v", 3, (5, 4, 3, 2)), ("dW_q", 1, (6, 5, 3, 4)), ("dW_k", 2, (6, 5, 3, 4))]


@points(1, "self_attention_backward")
@pytest.mark.parametrize("name, index, sizes", WEIGHTS, ids=[name for name, _, _ in WEIGHTS])
def test_self_attention_backward_weights(submission, name, index, sizes):
    """each weight's gradient: the inputs, transposed, times the gradient of its projection"""
    X, W_q, W_k, W_v, d_output = layer(100 + index, (), *sizes)
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output,
                           f"for one sequence, (T, d_model, d_k, d_v) = {sizes}", which=(index,))


@points(1, "self_attention_backward")
@pytest.mark.parametrize("sizes", [(5, 4, 3, 2), (4, 3, 3, 3)], ids=["T=5,d=4,3,2", "T=4,d=3,3,3"])
def test_self_attention_backward_inputs(submission, sizes):
    """dX: X feeds the queries, the keys and the values, so its gradient adds three paths"""
    X, W_q, W_k, W_v, d_output = layer(130 + sum(sizes), (), *sizes)
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output,
                           f"for (T, d_model, d_k, d_v) = {sizes}", which=(0,))


@points(2, "self_attention_backward")
def test_self_attention_backward_batch(submission):
    """a batch of sequences: dX per sequence, weight gradients summed over the batch"""
    X, W_q, W_k, W_v, d_output = layer(140, (3,), 5, 4, 3, 2)
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output,
                           "for a batch, X of shape (3, 5, 4)", mask=causal(5))


@points(1, "self_attention_backward")
def test_self_attention_backward_two_batch_axes(submission):
    """two leading batch axes (2, 3)"""
    X, W_q, W_k, W_v, d_output = layer(150, (2, 3), 4, 3, 2, 3)
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output,
                           "for X of shape (2, 3, 4, 3)", mask=causal(4))


@points(1, "self_attention_backward")
def test_self_attention_backward_masks(submission):
    """a causal mask with padding and a query with no allowed key: masked keys get no gradient"""
    X, W_q, W_k, W_v, d_output = layer(160, (2,), 6, 4, 3, 2)
    mask = causal(6) & np.array([[True] * 6, [True] * 4 + [False] * 2])[:, None, :]
    mask[1, 2] = False                                          # a query with nothing to read
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output,
                           "for a causal mask with padded keys and a fully masked query", mask=mask)


@points(1, "self_attention_backward")
def test_self_attention_backward_gradient_check(submission):
    """agrees with central differences of the loss sum(output * G) for every weight"""
    X, W_q, W_k, W_v, G = layer(170, (2,), 4, 3, 2, 2)
    mask = causal(4)
    got = learner_gradients(submission, forward_cache(X, W_q, W_k, W_v, mask), G)

    def loss(X_, W_q_, W_k_, W_v_):
        cache = forward_cache(X_, W_q_, W_k_, W_v_, mask)
        return float(np.sum(cache[4][3] @ cache[4][2] * G))

    arguments = [X, W_q, W_k, W_v]
    for index, name in enumerate(NAMES):
        numeric = np.zeros_like(arguments[index])
        for entry in np.ndindex(numeric.shape):
            bumped = [a.copy() for a in arguments]
            bumped[index][entry] += 1e-6
            up = loss(*bumped)
            bumped[index][entry] -= 2e-6
            numeric[entry] = (up - loss(*bumped)) / 2e-6
        expect_close(got[index], numeric, f"{name} against central differences of sum(output * G)",
                     rtol=1e-5, atol=1e-7)


@points(1, "self_attention_backward")
def test_self_attention_backward_float32(submission):
    """works on float32 inputs"""
    X, W_q, W_k, W_v, d_output = layer(180, (2,), 5, 4, 3, 2, dtype=np.float32)
    expect_layer_gradients(submission, X, W_q, W_k, W_v, d_output, "for float32 inputs",
                           mask=causal(5), **F32)


@points(1, "self_attention_backward")
def test_self_attention_backward_clean(submission):
    """does not change d_output or the cache in place, prints nothing, emits no warning"""
    X, W_q, W_k, W_v, d_output = layer(190, (2,), 4, 3, 2, 2)
    learner_gradients(submission, forward_cache(X, W_q, W_k, W_v, causal(4)), d_output)
    expect_clean_call(submission, "self_attention_backward", **CLEAN)


# ---------------------------------------------------------------- agreement_accuracy

def true_agreement(logits, at, correct, wrong):
    logits = np.asarray(logits, dtype=np.float64)
    hits = [logits[b, at[b], correct[b]] > logits[b, at[b], wrong[b]] for b in range(len(at))]
    return float(np.mean(hits))


def agreement_case(seed, B, T, n_vocab, dtype=np.float64):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(B, T, n_vocab)).astype(dtype)
    at = rng.integers(0, T, size=B)
    correct = rng.integers(0, n_vocab, size=B)
    wrong = (correct + rng.integers(1, n_vocab, size=B)) % n_vocab
    return logits, at, correct, wrong


def expect_agreement(submission, logits, at, correct, wrong, what):
    value = as_float(submission.agreement_accuracy(logits, at, correct, wrong), what)
    expect_close(value, true_agreement(logits, at, correct, wrong), what, rtol=0, atol=1e-12,
                 mistakes=mistakes(ASSIGNMENT, "agreement_accuracy", logits, at, correct, wrong,
                                   learner=submission))


@points(1, "agreement_accuracy")
def test_agreement_accuracy_values(submission):
    """the fraction of sentences whose verb row scores the agreeing form above the other"""
    expect_agreement(submission, *agreement_case(300, 40, 9, 12),
                     "agreement_accuracy for 40 sentences of 9 positions and 12 tokens")


@points(1, "agreement_accuracy")
def test_agreement_accuracy_reads_the_row_at(submission):
    """reads each sentence's own row `at`, not its neighbours"""
    logits, at, correct, wrong = agreement_case(310, 12, 8, 6)
    at = np.clip(at, 1, 6)
    rows = np.arange(12)
    for shift, sign in ((-1, -1.0), (1, -1.0), (0, 1.0)):      # neighbours prefer the wrong form
        logits[rows, at + shift, correct] = 3.0 * sign
        logits[rows, at + shift, wrong] = -3.0 * sign
    logits[rows[::3], at[::3], correct[::3]] = -5.0             # a third of the sentences: wrong
    expect_agreement(submission, logits, at, correct, wrong,
                     "agreement_accuracy when the rows before and after each verb row prefer the "
                     "wrong form")


@points(1, "agreement_accuracy")
def test_agreement_accuracy_only_the_two_forms(submission):
    """only the two forms are compared: other tokens may score higher than both"""
    logits, at, correct, wrong = agreement_case(320, 20, 6, 10)
    rows = np.arange(20)
    logits[rows, at, correct] = np.where(rows % 2 == 0, 1.0, -1.0)
    logits[rows, at, wrong] = -logits[rows, at, correct]
    others = np.ones(10, dtype=bool)
    for b in rows:
        others[:] = True
        others[[correct[b], wrong[b]]] = False
        logits[b, at[b], others] = 5.0
    expect_agreement(submission, logits, at, correct, wrong,
                     "agreement_accuracy when other tokens score higher than both verb forms")


@points(1, "agreement_accuracy")
def test_agreement_accuracy_ties_are_mistakes(submission):
    """a tie between the two forms counts as a mistake (strictly greater)"""
    logits, at, correct, wrong = agreement_case(330, 10, 5, 7)
    rows = np.arange(10)
    logits[rows[:4], at[:4], correct[:4]] = logits[rows[:4], at[:4], wrong[:4]]
    expect_agreement(submission, logits, at, correct, wrong,
                     "agreement_accuracy when 4 of 10 sentences score both forms equally")


@points(1, "agreement_accuracy")
def test_agreement_accuracy_float32_and_one_sentence(submission):
    """works on float32 logits and on a single sentence; returns one number"""
    expect_agreement(submission, *agreement_case(340, 25, 7, 9, dtype=np.float32),
                     "agreement_accuracy for float32 logits")
    expect_agreement(submission, *agreement_case(341, 1, 4, 5),
                     "agreement_accuracy for a single sentence")


@points(1, "agreement_accuracy")
def test_agreement_accuracy_clean(submission):
    """changes nothing in place, prints nothing, emits no warning"""
    submission.agreement_accuracy(*agreement_case(350, 8, 5, 6))
    expect_clean_call(submission, "agreement_accuracy", **CLEAN)


# ---------------------------------------------------------------- attention_on

def true_attention_on(weights, rows, keys):
    weights = np.asarray(weights, dtype=np.float64)
    return np.array([weights[b, rows[b]][np.asarray(keys[b], dtype=bool)].sum()
                     for b in range(len(rows))])


def attention_case(seed, B, T, dtype=np.float64):
    rng = np.random.default_rng(seed)
    weights = softmax(2 * rng.normal(size=(B, T, T)), mask=causal(T)).astype(dtype)
    rows = rng.integers(0, T, size=B)
    keys = rng.random((B, T)) < 0.4
    return weights, rows, keys


def expect_attention_on(submission, weights, rows, keys, what, **tolerance):
    got = as_array(submission.attention_on(weights, rows, keys), what)
    expect_close(got, true_attention_on(weights, rows, keys), what,
                 mistakes=mistakes(ASSIGNMENT, "attention_on", weights, rows, keys,
                                   learner=submission), **tolerance)


@points(1, "attention_on")
def test_attention_on_values(submission):
    """the sum of row rows[b] of weights[b] over the chosen keys, for every sentence"""
    expect_attention_on(submission, *attention_case(400, 12, 7),
                        "attention_on for 12 causal maps of 7 positions")


@points(1, "attention_on")
def test_attention_on_rows_not_columns(submission):
    """reads the query row, not the key column (the maps are not symmetric)"""
    weights, rows, keys = attention_case(410, 6, 5)
    weights = softmax(np.random.default_rng(411).normal(size=(6, 5, 5)) * 3)
    expect_attention_on(submission, weights, rows, keys,
                        "attention_on for full (not causal) maps that are not symmetric")


@points(1, "attention_on")
def test_attention_on_one_key_and_all_keys(submission):
    """one chosen key gives that weight; every key gives the row's total (0 for a masked row)"""
    weights, rows, _ = attention_case(420, 5, 6)
    one = np.zeros((5, 6), dtype=bool)
    one[np.arange(5), rows // 2] = True
    expect_attention_on(submission, weights, rows, one, "attention_on with one chosen key per sentence")
    weights[1, rows[1]] = 0.0                                   # a query that read nothing
    expect_attention_on(submission, weights, rows, np.ones((5, 6), dtype=bool),
                        "attention_on with every key chosen (row totals 1, or 0 for a masked row)")


@points(1, "attention_on")
def test_attention_on_float32_and_shape(submission):
    """works on float32 weights; one number per sentence"""
    expect_attention_on(submission, *attention_case(430, 9, 8, dtype=np.float32),
                        "attention_on for float32 weights", **F32)


@points(1, "attention_on")
def test_attention_on_clean(submission):
    """changes nothing in place, prints nothing, emits no warning"""
    submission.attention_on(*attention_case(440, 4, 5))
    expect_clean_call(submission, "attention_on", **CLEAN)
