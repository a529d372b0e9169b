"""Hidden suite of 05-self-attention: causal_mask, self_attention, future_influence and the
subject-verb design exercise (subject_verb_weights)."""

import numpy as np
import pytest
from helpers import grammar

from autograder.kit import (Lambda, Partial, RNG, as_array, as_float, as_pair, check, computed_once,
                            expect_close, expect_shape, fail, mistakes, points)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "05-self-attention"


# ------------------------------------------------------------------ shared helpers

# What expect_clean_call says about a warning or an in-place change in these functions.
CLEAN = {"hint": "An overflow in exp means the maximum was not subtracted; 'invalid value' usually "
                 "means -inf - (-inf) or 0/0 on a row whose every key is masked.",
         "copy_hint": "for example `S = np.where(mask, S, -np.inf)` rather than `S[~mask] = -np.inf` "
                      "on an input array"}


def projections(seed, batch, T, d_model, d_k, d_v, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(*batch, T, d_model))
    W_q = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    W_k = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    W_v = rng.normal(size=(d_model, d_v))
    return tuple(a.astype(dtype) for a in (X, W_q, W_k, W_v))


def expected(X, W_q, W_k, W_v, mask=None):
    """The right (output, weights), computed here in float64 from the contract: a row whose every
    key is masked gets zero weights and a zero output."""
    X, W_q, W_k, W_v = (np.asarray(a, dtype=np.float64) for a in (X, W_q, W_k, W_v))
    scores = (X @ W_q) @ np.swapaxes(X @ W_k, -1, -2) / np.sqrt(W_k.shape[-1])
    weights = softmax(scores, mask=mask)
    return weights @ (X @ W_v), weights


def attention_result(submission, X, W_q, W_k, W_v, mask=None, what="self_attention"):
    """Call the learner's self_attention; return (output, weights) as arrays."""
    result = as_pair(submission.self_attention(X, W_q, W_k, W_v, mask=mask), what)
    return as_array(result[0], f"the output of {what}"), as_array(result[1], f"the weights of {what}")


def compare(submission, X, W_q, W_k, W_v, mask=None, what="self_attention", rtol=1e-6, atol=1e-8,
            name_mistakes=True):
    out, A = attention_result(submission, X, W_q, W_k, W_v, mask, what)
    ref_out, ref_A = expected(X, W_q, W_k, W_v, mask)
    known_w = mistakes(ASSIGNMENT, "self_attention", X, W_q, W_k, W_v, mask=mask, pick=1,
                       learner=submission) \
        if name_mistakes else None
    known_o = mistakes(ASSIGNMENT, "self_attention", X, W_q, W_k, W_v, mask=mask, pick=0,
                       learner=submission) \
        if name_mistakes else None
    expect_close(A, ref_A, f"the weights of {what}", rtol=rtol, atol=atol, mistakes=known_w)
    expect_close(out, ref_out, f"the output of {what}", rtol=rtol, atol=atol, mistakes=known_o)
    return out, A


# ------------------------------------------------------------------ causal_mask

@points(1, "causal_mask")
@pytest.mark.parametrize("T", [2, 5, 9])
def test_causal_mask_pattern(submission, T):
    """True on and below the diagonal, False above it"""
    M = as_array(submission.causal_mask(T), f"causal_mask({T})", dtype_kind="fcb")
    expect_shape(M, (T, T), f"causal_mask({T})")
    expect_close(M.astype(float), np.tril(np.ones((T, T))), f"causal_mask({T})",
                 mistakes=mistakes(ASSIGNMENT, "causal_mask", T, learner=submission))


@points(1, "causal_mask")
def test_causal_mask_is_boolean(submission):
    """the mask is a boolean array (True = may attend)"""
    M = submission.causal_mask(6)
    kind = np.asarray(M).dtype if not isinstance(M, (tuple, dict)) else type(M).__name__
    check(isinstance(M, np.ndarray) and M.dtype == bool,
          f"causal_mask(6) should be a numpy array of booleans (True = may attend), but its type "
          f"is {kind}. `np.tril(np.ones((T, T)))` holds floats: pass dtype=bool.")


@points(1, "causal_mask")
def test_causal_mask_single_position(submission):
    """a sequence of length 1 may attend to itself: [[True]]"""
    M = as_array(submission.causal_mask(1), "causal_mask(1)", dtype_kind="fcb")
    expect_shape(M, (1, 1), "causal_mask(1)")
    check(bool(M[0, 0]), "causal_mask(1) should be [[True]]: a position may always attend to itself.")


# ------------------------------------------------------------------ self_attention

@points(1, "self_attention")
@pytest.mark.parametrize("T, d_model, d_k, d_v", [(4, 3, 5, 2), (7, 6, 4, 9), (5, 8, 8, 3)])
def test_self_attention_values(submission, T, d_model, d_k, d_v):
    """output and weights equal softmax(Q K^T / sqrt(d_k)) V, without a mask"""
    X, W_q, W_k, W_v = projections(T * 10 + d_k, (), T, d_model, d_k, d_v)
    compare(submission, X, W_q, W_k, W_v, what=f"self_attention on X of shape {X.shape}, d_k = {d_k}")


@points(1, "self_attention")
def test_self_attention_pair_and_shapes(submission):
    """returns (output (T, d_v), weights (T, T)), rows of weights summing to 1"""
    X, W_q, W_k, W_v = projections(1, (), 6, 5, 3, 4)
    out, A = attention_result(submission, X, W_q, W_k, W_v)
    expect_shape(out, (6, 4), "the output of self_attention for T = 6, d_v = 4")
    expect_shape(A, (6, 6), "the weights of self_attention for T = 6")
    expect_close(A.sum(axis=-1), np.ones(6), "the row sums of the weights (one row per query)",
                 mistakes=mistakes(ASSIGNMENT, "self_attention", X, W_q, W_k, W_v, pick=1,
                                   learner=submission))
    check((A >= 0).all(), "the weights of self_attention should all be >= 0.")


@points(1, "self_attention")
def test_self_attention_causal_mask(submission):
    """with a causal mask, nothing above the diagonal, and the right weights below it"""
    X, W_q, W_k, W_v = projections(2, (), 7, 4, 6, 3)
    mask = np.tril(np.ones((7, 7), dtype=bool))
    out, A = compare(submission, X, W_q, W_k, W_v, mask, what="self_attention with a causal mask")
    check(np.all(A[~mask] == 0), "weights above the diagonal should be exactly 0 with a causal mask.")


@points(1, "self_attention")
def test_self_attention_arbitrary_mask(submission):
    """any boolean mask: masked keys get weight 0, the rest are renormalised"""
    X, W_q, W_k, W_v = projections(3, (), 6, 5, 4, 4)
    mask = np.random.default_rng(3).random((6, 6)) < 0.5
    mask[np.arange(6), np.random.default_rng(4).integers(0, 6, 6)] = True   # no empty row here
    compare(submission, X, W_q, W_k, W_v, mask, what="self_attention with a random boolean mask")


@points(1, "self_attention")
def test_self_attention_fully_masked_rows(submission):
    """a query whose every key is masked gets zero weights and zero output, no nan, no warning"""
    X, W_q, W_k, W_v = projections(4, (), 5, 4, 4, 3)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    mask[1] = False
    mask[3] = False
    out, A = compare(submission, X, W_q, W_k, W_v, mask,
                     what="self_attention with rows 1 and 3 fully masked")
    expect_clean_call(submission, "self_attention", **CLEAN)


@points(1, "self_attention")
def test_self_attention_padding_batch(submission):
    """a (B, 1, T) padding mask broadcasts over queries, an empty sequence gives zeros"""
    X, W_q, W_k, W_v = projections(5, (3,), 6, 4, 5, 2)
    lengths = np.array([6, 2, 0])
    mask = (np.arange(6)[None, :] < lengths[:, None])[:, None, :]       # (3, 1, 6)
    compare(submission, X, W_q, W_k, W_v, mask,
            what="self_attention with a (3, 1, 6) padding mask (lengths 6, 2 and 0)")
    expect_clean_call(submission, "self_attention", **CLEAN)


@points(1, "self_attention")
def test_self_attention_batch_dimensions(submission):
    """leading batch axes (2, 3, T, d_model) with one (T, T) mask for the whole batch"""
    X, W_q, W_k, W_v = projections(6, (2, 3), 5, 4, 6, 3)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    compare(submission, X, W_q, W_k, W_v, mask,
            what="self_attention on X of shape (2, 3, 5, 4) with a causal mask")


@points(1, "self_attention")
def test_self_attention_float32(submission):
    """float32 input works, with and without a mask, even with huge values"""
    X, W_q, W_k, W_v = projections(7, (2,), 6, 5, 4, 3, dtype=np.float32)
    mask = np.tril(np.ones((6, 6), dtype=bool))
    compare(submission, X, W_q, W_k, W_v, None, what="self_attention on float32 input",
            rtol=1e-4, atol=1e-5, name_mistakes=False)
    compare(submission, X, W_q, W_k, W_v, mask, what="self_attention on float32 input with a mask",
            rtol=1e-4, atol=1e-5, name_mistakes=False)
    out, A = attention_result(submission, X * np.float32(1e3), W_q, W_k, W_v, mask,
                              "self_attention on float32 input times 1000")
    check(np.isfinite(out).all() and np.isfinite(A).all(),
          "self_attention on float32 input times 1000 returned nan or inf.")
    expect_close(A.sum(-1), np.ones((2, 6)), "the row sums of the weights for float32 input times 1000",
                 rtol=1e-4, atol=1e-5)
    expect_clean_call(submission, "self_attention", **CLEAN)


@points(1, "self_attention")
def test_self_attention_huge_inputs(submission):
    """huge inputs (scores near a million): correct, with no overflow warning"""
    X, W_q, W_k, W_v = projections(8, (2,), 6, 4, 4, 3)
    X = X * 1e3
    mask = np.tril(np.ones((6, 6), dtype=bool))
    compare(submission, X, W_q, W_k, W_v, None, what="self_attention on inputs times 1000")
    expect_clean_call(submission, "self_attention", **CLEAN)
    compare(submission, X, W_q, W_k, W_v, mask, what="self_attention on inputs times 1000, causal")
    expect_clean_call(submission, "self_attention", **CLEAN)


@points(1, "self_attention")
def test_self_attention_single_position(submission):
    """T = 1: the weight is [[1]], or [[0]] when the one key is masked"""
    X, W_q, W_k, W_v = projections(9, (), 1, 3, 2, 4)
    compare(submission, X, W_q, W_k, W_v, what="self_attention with T = 1")
    compare(submission, X, W_q, W_k, W_v, np.array([[False]]),
            what="self_attention with T = 1 and its only key masked", name_mistakes=False)
    expect_clean_call(submission, "self_attention", **CLEAN)


@points(1, "self_attention")
def test_self_attention_inputs_untouched(submission):
    """does not change X, the weights or the mask in place, print, or warn"""
    X, W_q, W_k, W_v = projections(10, (2,), 5, 4, 3, 3)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    mask[2] = False
    submission.self_attention(X, W_q, W_k, W_v, mask=mask)
    expect_clean_call(submission, "self_attention", **CLEAN)
    submission.self_attention(X, W_q, W_k, W_v)
    expect_clean_call(submission, "self_attention", **CLEAN)


# ------------------------------------------------------------------ future_influence

# Suite-written layers (evaluated in the learner's kernel with np in scope). ATTENTION returns
# (output, weights), ATTENTION_OUTPUT the output only.
_BODY = ("(lambda S: (lambda P: (P @ (X @ W_v), P))(np.exp(S - S.max(-1, keepdims=True)) / "
         "np.exp(S - S.max(-1, keepdims=True)).sum(-1, keepdims=True)))"
         "(np.where(True if mask is None else mask, (X @ W_q) @ np.swapaxes(X @ W_k, -1, -2) / "
         "np.sqrt(W_k.shape[-1]), -np.inf))")
ATTENTION = Lambda(f"lambda X, W_q, W_k, W_v, mask=None: {_BODY}")
ATTENTION_OUTPUT = Lambda(f"lambda X, W_q, W_k, W_v, mask=None: {_BODY}[0]")
# Output (..., T, 2): zero except entry [dst, 0], which is 1 while token `src` equals C.
WATCHER = Lambda("lambda X, C, src, dst: np.where((np.arange(X.shape[-2]) == dst)[:, None] & "
                 "(np.arange(2) == 0)[None, :], np.all(X[..., src, :] == C, axis=-1)[..., None, None]"
                 " * 1.0, 0.0)")
WATCHER_PAIR = Lambda("lambda X, C, src, dst: (np.where((np.arange(X.shape[-2]) == dst)[:, None] & "
                      "(np.arange(2) == 0)[None, :], np.all(X[..., src, :] == C, axis=-1)"
                      "[..., None, None] * 1.0, 0.0), None)")

def watcher_hint(value):
    """What a wrong value of a watcher layer (true influence 1) most likely means."""
    if abs(value) < 1e-9:
        return ("A value of 0 means the change was missed: position t left out of the comparison "
                "(use [..., :t+1, :]), not every token after t replaced (the last one included), "
                "or a signed difference taken instead of its absolute value. ")
    if value < 1:
        return "A value below 1 suggests a mean of the changes instead of the largest one. "
    return ""


WHERE_TO_LOOK = ("Replace every token after t (X[..., t+1:, :], along the sequence axis) and "
                 "compare the outputs at positions 0..t, t included ([..., :t+1, :]).")


def layer(seed, T, d, mask, returns="pair"):
    rng = np.random.default_rng(seed)
    W = {name: rng.normal(size=(d, d)) / np.sqrt(d) for name in ("W_q", "W_k", "W_v")}
    return Partial(ATTENTION if returns == "pair" else ATTENTION_OUTPUT, mask=mask, **W)


def watcher(X, src, dst, pair=False):
    return Partial(WATCHER_PAIR if pair else WATCHER, C=np.array(X[..., src, :]), src=src, dst=dst)


def influence(submission, attn_fn, X, t, seed, what):
    return as_float(submission.future_influence(attn_fn, X, t, RNG(seed)), what)


def expect_a_leak(submission, X, t, seed, what):
    """The control of a test whose answer is 0: the same input through a layer without a mask
    must show a clearly positive influence (a function that always returns 0 passes no test)."""
    T, d = X.shape[-2:]
    value = influence(submission, layer(seed, T, d, None), X, t, seed + 1, what)
    check(value > 1e-3,
          f"{what}: every output of an unmasked layer depends on every token, so the future "
          f"influence at t = {t} should be clearly positive, but yours returned {value:.3g}. "
          f"{WHERE_TO_LOOK}")


@points(1, "future_influence")
@pytest.mark.parametrize("t", [0, 3])
def test_future_influence_causal_is_zero(submission, t):
    """a causal self-attention layer has future influence 0"""
    T, d = 7, 4
    X = np.random.default_rng(20 + t).normal(size=(T, d))
    value = influence(submission, layer(21, T, d, np.tril(np.ones((T, T), dtype=bool))), X, t, 22,
                      f"future_influence of a causal layer at t = {t}")
    check(abs(value) <= 1e-9,
          f"a causal layer cannot see the tokens after t, so its future influence at t = {t} is "
          f"0, but yours returned {value:.3g}. {WHERE_TO_LOOK}")
    expect_a_leak(submission, X, t, 21, f"future_influence of the same layer unmasked at t = {t}")


@points(1, "future_influence")
def test_future_influence_unmasked_leaks(submission):
    """a layer without a mask leaks: the influence is clearly positive"""
    T, d = 6, 3
    X = np.random.default_rng(23).normal(size=(T, d))
    for t in (0, 2, 4):
        value = influence(submission, layer(24, T, d, None), X, t, 25,
                          f"future_influence of an unmasked layer at t = {t}")
        check(value > 1e-3,
              f"every output of an unmasked layer depends on every token, so the future influence "
              f"at t = {t} should be clearly positive, but yours returned {value:.3g}. "
              f"{WHERE_TO_LOOK}")


@points(1, "future_influence")
def test_future_influence_last_position(submission):
    """t = T - 1: nothing to replace, so the influence is 0"""
    T, d = 5, 3
    X = np.random.default_rng(26).normal(size=(T, d))
    value = influence(submission, layer(27, T, d, None), X, T - 1, 28,
                      "future_influence at t = T - 1")
    check(abs(value) <= 1e-12,
          f"with t = T - 1 = {T - 1} no token comes after t, so nothing changes and the influence "
          f"is 0, but yours returned {value:.3g}. Replace only X[..., t+1:, :].")
    expect_a_leak(submission, X, T - 2, 27, f"future_influence at t = T - 2 = {T - 2}")


@points(1, "future_influence")
@pytest.mark.parametrize("t", [0, 2])
def test_future_influence_position_t_included(submission, t):
    """the largest absolute change at positions 0..t, position t included"""
    T, d = 6, 3
    X = np.random.default_rng(29 + t).normal(size=(T, d))
    value = influence(submission, watcher(X, src=T - 1, dst=t), X, t, 30,
                      f"future_influence at t = {t}")
    check(abs(value - 1.0) <= 1e-9,
          f"in this layer only output [{t}, 0] depends on the last token: it is 1 for the "
          f"original input and 0 once the future is noise, so the largest absolute change at "
          f"positions 0..{t} is exactly 1, but yours returned {value:.3g}. " + watcher_hint(value)
          + "Return the largest absolute difference of any entry.")


@points(1, "future_influence")
def test_future_influence_every_future_token(submission):
    """every token after t is replaced: the next one and the last one"""
    T, d, t = 8, 3, 2
    X = np.random.default_rng(31).normal(size=(T, d))
    for src in (t + 1, T - 1):
        value = influence(submission, watcher(X, src=src, dst=0), X, t, 32,
                          f"future_influence at t = {t}")
        check(abs(value - 1.0) <= 1e-9,
              f"output [0, 0] of this layer depends only on token {src} (t = {t}, T = {T}). That "
              f"token comes after t, so it must be replaced by noise and the influence is 1, but "
              f"yours returned {value:.3g}. " + (watcher_hint(value) if 0 < value < 1 else
              "Replace every token from t + 1 to the end: X[..., t+1:, :]."))


@points(1, "future_influence")
def test_future_influence_tuple_or_array(submission):
    """attn_fn may return the output itself or a tuple (output, weights)"""
    T, d, t = 6, 3, 2
    X = np.random.default_rng(33).normal(size=(T, d))
    value = influence(submission, watcher(X, src=T - 1, dst=1, pair=True), X, t, 34,
                      "future_influence of an attn_fn returning (output, None)")
    check(abs(value - 1.0) <= 1e-9,
          f"for an attn_fn that returns a tuple (output, weights), use its first element; the "
          f"influence here is 1 but yours returned {value:.3g}. " + watcher_hint(value))
    causal = np.tril(np.ones((T, T), dtype=bool))
    for returns in ("pair", "output"):
        value = influence(submission, layer(35, T, d, causal, returns), X, t, 36,
                          f"future_influence of a causal layer returning its {returns}")
        check(abs(value) <= 1e-9,
              f"a causal layer returning {'(output, weights)' if returns == 'pair' else 'only its output'}"
              f" should have future influence 0, but yours returned {value:.3g}. Accept both: "
              f"if attn_fn(X) is a tuple, keep element 0, else keep the array itself.")


@points(1, "future_influence")
def test_future_influence_batch(submission):
    """batch axes come first: the future is replaced along the sequence axis (-2)"""
    B, T, d, t = 3, 6, 4, 2
    X = np.random.default_rng(37).normal(size=(B, T, d))
    causal = np.tril(np.ones((T, T), dtype=bool))
    value = influence(submission, layer(38, T, d, causal), X, t, 39,
                      "future_influence of a causal layer on a batch of shape (3, 6, 4)")
    check(abs(value) <= 1e-9,
          f"on a batch of shape {X.shape}, a causal layer should have future influence 0, but "
          f"yours returned {value:.3g}. Index the sequence axis from the end, X[..., t+1:, :], "
          f"not X[t+1:], which replaces whole batch entries.")
    expect_a_leak(submission, X, t, 38, "future_influence of the same layer unmasked, on a batch")
    value = influence(submission, watcher(X, src=T - 1, dst=t), X, t, 40,
                      "future_influence on a batch of shape (3, 6, 4)")
    check(abs(value - 1.0) <= 1e-9,
          f"on a batch of shape {X.shape}, the output [..., {t}, 0] of this layer depends on the "
          f"last token of each sequence; the influence is 1, but yours returned {value:.3g}. "
          + (watcher_hint(value) if 0 < value < 1 else WHERE_TO_LOOK))


@points(1, "future_influence")
def test_future_influence_inputs_untouched(submission):
    """does not change X in place, print, or warn"""
    T, d = 6, 3
    X = np.random.default_rng(41).normal(size=(2, T, d))
    submission.future_influence(layer(42, T, d, None), X, 2, RNG(43))
    expect_clean_call(submission, "future_influence", hint=CLEAN["hint"],
                      copy_hint="`noisy = X.copy()`, then write the noise into `noisy`")


# ------------------------------------------------------------------ subject_verb_weights

UNSEEN_NOUNS = (("otter", "otters"), ("heron", "herons"), ("teacher", "teachers"),
                ("lamp", "lamps"), ("goose", "geese"), ("badger", "badgers"))


def learner_weights(submission):
    pair = as_pair(submission.subject_verb_weights(), "subject_verb_weights()")
    W_q = as_array(pair[0], "W_q, the first array returned by subject_verb_weights()")
    W_k = as_array(pair[1], "W_k, the second array returned by subject_verb_weights()")
    check(W_q.ndim == 2 and W_q.shape[0] == grammar.D_MODEL and W_q.shape == W_k.shape,
          f"W_q and W_k should both have shape (D_MODEL, d_k) = ({grammar.D_MODEL}, d_k), "
          f"but they have shapes {W_q.shape} and {W_k.shape}.")
    check(np.isfinite(W_q).all() and np.isfinite(W_k).all(), "W_q and W_k contain nan or inf.")
    return W_q.astype(float), W_k.astype(float)


def expect_subjects_found(submission, sentences, what):
    W_q, W_k = learner_weights(submission)
    report = grammar.score_weights(W_q, W_k, sentences)
    if report["accuracy"] < 1.0:
        text, subject, rival = report["failures"][0]
        words = text.split()
        fail(f"on {what}, the main verb gives its subject strictly the largest weight in only "
             f"{report['accuracy']:.0%} of the sentences ({len(report['failures'])} of "
             f"{len(sentences)} fail). For example, in '{text}', '{words[rival]}' (word {rival}) "
             f"gets as much weight as the subject '{words[subject]}' (word {subject}), or more. A "
             f"design must rely on structure (part of speech and depth), not on particular words "
             f"or on number.")
    return report


@computed_once
def held_out_sets():
    return {
        "new sentences": grammar.generate_sentences(np.random.default_rng(101), 300),
        "deeply nested sentences": grammar.generate_sentences(
            np.random.default_rng(202), 200, max_depth=3, p_modifier=0.9),
        "unseen nouns": grammar.generate_sentences(
            np.random.default_rng(303), 200, nouns=UNSEEN_NOUNS, max_depth=3),
        "same-number attractors": grammar.generate_sentences(
            np.random.default_rng(404), 200, max_depth=3, attractors="same"),
    }


@points(1, "subject_verb_weights")
def test_subject_verb_weights_shapes(submission):
    """returns (W_q, W_k), both of shape (D_MODEL, d_k)"""
    learner_weights(submission)
    expect_clean_call(submission, "subject_verb_weights", **CLEAN)


@points(1, "subject_verb_weights")
def test_subject_verb_weights_example(submission):
    """in 'the cat that chased the mouse was hungry', 'was' attends most to 'cat'"""
    W_q, W_k = learner_weights(submission)
    sentence = grammar.example_sentence()
    w = grammar.verb_weights(W_q, W_k, sentence)
    others = w.copy()
    others[sentence.subject] = -1.0
    rival = int(np.argmax(others))
    check(grammar.finds_subject(w, sentence),
          f"in '{sentence}', 'was' gives 'cat' weight {w[sentence.subject]:.3f} and "
          f"'{sentence.words[rival]}' (word {rival}) weight {w[rival]:.3f}; 'cat' must get "
          f"strictly the largest weight.")


@points(1, "subject_verb_weights")
@pytest.mark.parametrize("which", ["new sentences", "deeply nested sentences", "unseen nouns",
                                   "same-number attractors"])
def test_subject_verb_weights_held_out(submission, which):
    """the main verb finds its subject in sentences never seen"""
    expect_subjects_found(submission, held_out_sets()[which], which)


@points(1, "subject_verb_weights")
def test_subject_verb_weights_confident(submission):
    """at least half of the verb's weight on its subject, in every sentence up to 25 words"""
    W_q, W_k = learner_weights(submission)
    sentences = [s for group in held_out_sets().values() for s in group if len(s) <= 25]
    sentences.append(grammar.example_sentence())
    weights = [grammar.verb_weights(W_q, W_k, s)[s.subject] for s in sentences]
    worst = int(np.argmin(weights))
    check(weights[worst] >= 0.5,
          f"in '{sentences[worst]}' the subject gets only {weights[worst]:.2f} of the verb's "
          f"weight (at least 0.5 is required). The pattern may be right but too flat: multiply "
          f"your weights by a larger constant so that the scores, divided by sqrt(d_k), differ "
          f"by several units.")
