"""Hidden suite of 02-scoring: softmax, the three scores, attend and align.

Every expected value is computed here, by trusted code written for this suite, from the contract of
the curriculum (not from the reference notebook's quirks). attend and align are called with score
functions written by the suite (``Lambda``/``Partial``), so they are graded independently of the
learner's own score functions; those score functions accept batches and broadcast, so a vectorised
``align`` that scores every decoder state in one call is graded the same as a loop.
"""
import numpy as np
import pytest

from autograder.kit import (as_array, as_pair, call, check, expect_close, expect_shape, mistakes,
                            points, suite_function)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "02-scoring"

F32 = dict(rtol=1e-4, atol=1e-5)     # float32 results against float64 truth

BATCH_HINT = ("Leading dimensions are batches, one query per batch entry: write the products so that "
              "they work for any number of leading dimensions (for example `H @ s[..., :, None]`, "
              "`s @ W1.T`, or np.einsum with `...`).")
SCORE_FN_HINT = ("If the error comes from the score function: call it as score_fn(s, H), one decoder "
                 "state first and the encoder states second; it returns one score per encoder state.")


def softmax_hint(error):
    if error.cause == "broadcast":
        return ("The shapes did not broadcast: did you take the maximum or the sum without "
                "keepdims=True?")
    if error.cause == "out-of-bounds":
        return "Use the axis you are given (by default -1, the last one), not a fixed axis number."
    return None


# ------------------------------------------------------------------ trusted implementations

def dot(s, H):
    return np.einsum("...d,...td->...t", np.asarray(s, np.float64), np.asarray(H, np.float64))


def general(s, H, W):
    return np.einsum("...i,ij,...tj->...t", np.asarray(s, np.float64), np.asarray(W, np.float64),
                     np.asarray(H, np.float64))


def additive(s, H, W1, W2, v):
    s, H = np.asarray(s, np.float64), np.asarray(H, np.float64)
    hidden = np.einsum("ai,...i->...a", W1, s)[..., None, :] + np.einsum("aj,...tj->...ta", W2, H)
    return np.einsum("...ta,a->...t", np.tanh(hidden), np.asarray(v, np.float64))


def attention(s, H, score_fn):
    weights = softmax(score_fn(s, H))
    return weights @ np.asarray(H, np.float64), weights


def alignment(S, H, score_fn):
    pairs = [attention(s, H, score_fn) for s in S]
    return np.stack([c for c, _ in pairs]), np.stack([w for _, w in pairs])


# ------------------------------------------------------------------ score functions for attend/align

BILINEAR = "lambda s, H, M: np.einsum('...i,ij,...tj->...t', s, M, H)"
SCALED_BILINEAR = "lambda s, H, M, scale: scale * np.einsum('...i,ij,...tj->...t', s, M, H)"
NEG_DISTANCE = "lambda s, H: -np.sum((H - s[..., None, :]) ** 2, axis=-1)"


def bilinear(d_s, d_h, seed, scale=None):
    M = np.random.default_rng(seed).normal(size=(d_s, d_h)) / np.sqrt(d_h)
    if scale is None:
        return suite_function(BILINEAR, M=M)
    return suite_function(SCALED_BILINEAR, M=M, scale=float(scale))


def normal(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape)


# ================================================================== softmax

@points(1, "softmax")
@pytest.mark.parametrize("shape", [(7,), (4, 5), (2, 3, 6)], ids=["vector", "matrix", "3-d"])
def test_softmax_values(submission, shape):
    """matches exp(z) / sum(exp(z)) along the last axis"""
    z = normal(len(shape), *shape) * 2.0
    p = expect_close(call(submission, "softmax", z, hint=softmax_hint), softmax(z),
                     f"softmax(z) for z of shape {shape}",
                     mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission))
    check((p >= 0).all(), "softmax returned a negative weight; every weight must be >= 0.")


@points(1, "softmax")
def test_softmax_any_axis(submission):
    """normalises along the axis it is given (0, 1, -2, ...), leaving the others alone"""
    z = normal(10, 3, 4, 5)
    for axis in (0, 1, -2, 2):
        expect_close(call(submission, "softmax", z, axis=axis, hint=softmax_hint), softmax(z, axis=axis),
                     f"softmax(z, axis={axis}) for z of shape (3, 4, 5)",
                     mistakes=mistakes(ASSIGNMENT, "softmax", z, axis=axis, learner=submission))
    expect_close(call(submission, "softmax", z, 0, hint=softmax_hint), softmax(z, 0),
                 "softmax(z, 0) with the axis passed by position",
                 mistakes=mistakes(ASSIGNMENT, "softmax", z, 0, learner=submission))


@points(1, "softmax")
def test_softmax_huge_logits(submission):
    """huge logits (thousands, of both signs): no overflow, no nan, no warning"""
    z = normal(11, 3, 6) * 30.0
    z[0] += 5000.0
    z[1] -= 5000.0
    z[2] *= 100.0
    p = expect_close(call(submission, "softmax", z, hint=softmax_hint), softmax(z),
                     "softmax of logits near ±5000",
                     mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission))
    expect_clean_call(submission, "softmax")
    expect_close(p.sum(axis=-1), np.ones(3), "the row sums of softmax of huge logits")


@points(1, "softmax")
def test_softmax_minus_infinity(submission):
    """a score of -inf gets weight exactly 0 (the usual way to mask), with no warning"""
    z = normal(12, 3, 5)
    z[0, [1, 3]] = -np.inf
    z[2, 0] = -np.inf
    expect_close(call(submission, "softmax", z, hint=softmax_hint), softmax(z),
                 "softmax of scores containing -inf",
                 mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission))
    expect_clean_call(submission, "softmax")


@points(1, "softmax")
def test_softmax_float32(submission):
    """works in float32, where exp already overflows at 89"""
    z = (normal(13, 4, 6) * 40.0).astype(np.float32)
    expect_close(call(submission, "softmax", z, hint=softmax_hint), softmax(z),
                 "softmax of float32 logits up to about 100",
                 mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission), **F32)
    expect_clean_call(submission, "softmax")


@points(1, "softmax")
def test_softmax_input_untouched(submission):
    """leaves its input unchanged, prints nothing, emits no warning"""
    z = normal(14, 3, 4)
    submission.softmax(z)
    expect_clean_call(submission, "softmax")
    submission.softmax(z, axis=0)
    expect_clean_call(submission, "softmax")


# ================================================================== dot_score

@points(1, "dot_score")
@pytest.mark.parametrize("T, d", [(5, 3), (1, 4)], ids=["T=5,d=3", "T=1,d=4"])
def test_dot_values(submission, T, d):
    """one query: entry i is the dot product s . h_i"""
    s, H = normal(20 + T, d), normal(30 + T, T, d)
    expect_close(submission.dot_score(s, H), dot(s, H), f"dot_score(s, H) for s {s.shape}, H {H.shape}",
                 mistakes=mistakes(ASSIGNMENT, "dot_score", s, H, learner=submission))


@points(1, "dot_score")
def test_dot_batch(submission):
    """batches: s (..., d) and H (..., T, d) give (..., T), one row of scores per query"""
    for shape_s, shape_H in [((2, 3, 4), (2, 3, 6, 4)), ((5, 3), (5, 5, 3))]:
        s, H = normal(21, *shape_s), normal(31, *shape_H)
        expect_close(call(submission, "dot_score", s, H, hint=BATCH_HINT), dot(s, H),
                     f"dot_score for s of shape {shape_s} and H of shape {shape_H}",
                     mistakes=mistakes(ASSIGNMENT, "dot_score", s, H, learner=submission))


@points(1, "dot_score")
def test_dot_large_dimension(submission):
    """long vectors (d = 300): the plain dot product, with no scaling"""
    s, H = normal(22, 300), normal(32, 7, 300)
    expect_close(submission.dot_score(s, H), dot(s, H), "dot_score with d = 300",
                 mistakes=mistakes(ASSIGNMENT, "dot_score", s, H, learner=submission))


@points(1, "dot_score")
def test_dot_float32(submission):
    """works on float32 input"""
    s, H = normal(23, 8).astype(np.float32), normal(33, 6, 8).astype(np.float32)
    expect_close(submission.dot_score(s, H), dot(s, H), "dot_score of float32 input", **F32)


@points(1, "dot_score")
def test_dot_input_untouched(submission):
    """leaves its inputs unchanged, prints nothing, emits no warning"""
    submission.dot_score(normal(24, 5), normal(34, 4, 5))
    expect_clean_call(submission, "dot_score")


# ================================================================== general_score

@points(1, "general_score")
@pytest.mark.parametrize("d_s, d_h, T", [(3, 5, 4), (4, 4, 6)], ids=["W 3x5", "W 4x4"])
def test_general_values(submission, d_s, d_h, T):
    """one query: entry i is s^T W h_i, with W of shape (d_s, d_h)"""
    s, H, W = normal(40 + d_s, d_s), normal(41 + d_h, T, d_h), normal(42 + T, d_s, d_h)
    hint = ("Check which side of W each vector meets: in s^T W h_i, s (size d_s) multiplies W "
            "(d_s, d_h) from the left and each h_i (size d_h) from the right.")
    expect_close(call(submission, "general_score", s, H, W, hint=hint), general(s, H, W),
                 f"general_score with s {s.shape}, H {H.shape}, W {W.shape}",
                 mistakes=mistakes(ASSIGNMENT, "general_score", s, H, W, learner=submission))


@points(1, "general_score")
def test_general_identity_is_dot(submission):
    """with W = I it is the dot score"""
    s, H = normal(43, 6), normal(44, 5, 6)
    expect_close(submission.general_score(s, H, np.eye(6)), dot(s, H),
                 "general_score(s, H, W) with W the identity (it should equal s . h_i)",
                 mistakes=mistakes(ASSIGNMENT, "general_score", s, H, np.eye(6),
                                   learner=submission))


@points(1, "general_score")
def test_general_batch(submission):
    """batches: s (..., d_s) and H (..., T, d_h) give (..., T)"""
    W = normal(45, 3, 5)
    for shape_s, shape_H in [((4, 3), (4, 6, 5)), ((2, 3, 3), (2, 3, 2, 5)), ((6, 3), (6, 6, 5))]:
        s, H = normal(46, *shape_s), normal(47, *shape_H)
        expect_close(call(submission, "general_score", s, H, W, hint=BATCH_HINT), general(s, H, W),
                     f"general_score for s of shape {shape_s} and H of shape {shape_H}",
                     mistakes=mistakes(ASSIGNMENT, "general_score", s, H, W, learner=submission))


@points(1, "general_score")
def test_general_float32(submission):
    """works on float32 input"""
    s, H, W = (normal(48, 4).astype(np.float32), normal(49, 5, 6).astype(np.float32),
               normal(50, 4, 6).astype(np.float32))
    expect_close(submission.general_score(s, H, W), general(s, H, W), "general_score of float32 input",
                 **F32)


@points(1, "general_score")
def test_general_input_untouched(submission):
    """leaves its inputs unchanged, prints nothing, emits no warning"""
    submission.general_score(normal(51, 4), normal(52, 5, 2), normal(53, 4, 2))
    expect_clean_call(submission, "general_score")


# ================================================================== additive_score

def additive_params(seed, d_s, d_h, d_a):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(d_a, d_s)), rng.normal(size=(d_a, d_h)), rng.normal(size=d_a)


@points(1, "additive_score")
@pytest.mark.parametrize("d_s, d_h, d_a, T", [(3, 5, 4, 6), (2, 2, 7, 1)], ids=["sizes 3,5,4", "T=1"])
def test_additive_values(submission, d_s, d_h, d_a, T):
    """one query: entry i is v^T tanh(W1 s + W2 h_i)"""
    W1, W2, v = additive_params(60 + T, d_s, d_h, d_a)
    s, H = normal(61, d_s) * 0.7, normal(62, T, d_h) * 0.7
    hint = "W1 (d_a, d_s) acts on the decoder state s, W2 (d_a, d_h) on each encoder state h_i."
    expect_close(call(submission, "additive_score", s, H, W1, W2, v, hint=hint),
                 additive(s, H, W1, W2, v), f"additive_score with d_s={d_s}, d_h={d_h}, d_a={d_a}, T={T}",
                 mistakes=mistakes(ASSIGNMENT, "additive_score", s, H, W1, W2, v,
                                   learner=submission))


@points(1, "additive_score")
def test_additive_batch(submission):
    """batches: s (..., d_s) and H (..., T, d_h) give (..., T)"""
    W1, W2, v = additive_params(63, 3, 4, 5)
    for shape_s, shape_H in [((2, 3), (2, 6, 4)), ((2, 2, 3), (2, 2, 3, 4))]:
        s, H = normal(64, *shape_s) * 0.7, normal(65, *shape_H) * 0.7
        expect_close(call(submission, "additive_score", s, H, W1, W2, v, hint=BATCH_HINT),
                     additive(s, H, W1, W2, v),
                     f"additive_score for s of shape {shape_s} and H of shape {shape_H}",
                     mistakes=mistakes(ASSIGNMENT, "additive_score", s, H, W1, W2, v,
                                       learner=submission))


@points(1, "additive_score")
def test_additive_saturates(submission):
    """large states: tanh saturates, every score stays within ±sum|v|, no warning"""
    W1, W2, v = additive_params(66, 4, 4, 6)
    s, H = normal(67, 4) * 50.0, normal(68, 8, 4) * 50.0
    scores = expect_close(submission.additive_score(s, H, W1, W2, v), additive(s, H, W1, W2, v),
                          "additive_score of states of size about 50",
                          mistakes=mistakes(ASSIGNMENT, "additive_score", s, H, W1, W2, v,
                                            learner=submission))
    check(np.abs(scores).max() <= np.abs(v).sum() + 1e-9,
          "an additive score is larger than sum |v|, which tanh makes impossible.")
    expect_clean_call(submission, "additive_score")


@points(1, "additive_score")
def test_additive_float32(submission):
    """works on float32 input"""
    W1, W2, v = (a.astype(np.float32) for a in additive_params(69, 3, 5, 4))
    s, H = normal(70, 3).astype(np.float32), normal(71, 6, 5).astype(np.float32)
    expect_close(submission.additive_score(s, H, W1, W2, v), additive(s, H, W1, W2, v),
                 "additive_score of float32 input", **F32)


@points(1, "additive_score")
def test_additive_input_untouched(submission):
    """leaves its inputs unchanged, prints nothing, emits no warning"""
    W1, W2, v = additive_params(72, 3, 5, 4)
    submission.additive_score(normal(73, 3), normal(74, 4, 5), W1, W2, v)
    expect_clean_call(submission, "additive_score")


# ================================================================== attend

def attend_result(submission, s, H, wire_fn, what):
    context, weights = as_pair(call(submission, "attend", s, H, wire_fn, hint=SCORE_FN_HINT), what)
    return as_array(context, f"the context returned by {what}"), \
        as_array(weights, f"the weights returned by {what}")


@points(1, "attend")
def test_attend_returns_context_and_weights(submission):
    """returns the pair (context of shape (d_h,), weights of shape (T,))"""
    wire_fn, _ = bilinear(3, 5, 80)
    s, H = normal(81, 3), normal(82, 7, 5)
    context, weights = attend_result(submission, s, H, wire_fn, "attend(s, H, score_fn)")
    check(not (context.shape == (7,) and weights.shape == (5,)),
          "attend returned (weights, context) for H of shape (7, 5): return the context first, "
          "then the weights.")
    expect_shape(context, (5,), "the context (the first value attend returns) for H of shape (7, 5)")
    expect_shape(weights, (7,), "the weights (the second value attend returns) for H of shape (7, 5)")


@points(1, "attend")
@pytest.mark.parametrize("kind", ["bilinear", "distance"])
def test_attend_weights(submission, kind):
    """weights are the softmax of the scores score_fn(s, H), and sum to 1"""
    if kind == "bilinear":
        (wire_fn, local_fn), s, H = bilinear(4, 6, 83), normal(84, 4), normal(85, 9, 6)
    else:
        (wire_fn, local_fn), s, H = suite_function(NEG_DISTANCE), normal(86, 3), normal(87, 6, 3)
    _, weights = attend_result(submission, s, H, wire_fn, "attend(s, H, score_fn)")
    expected = attention(s, H, local_fn)[1]
    expect_close(weights, expected, f"the weights of attend with a {kind} score function",
                 mistakes=mistakes(ASSIGNMENT, "attend", s, H, wire_fn, pick=1,
                                   learner=submission))
    expect_close(weights.sum(), 1.0, "the sum of the weights of attend")


@points(1, "attend")
def test_attend_context(submission):
    """the context is the weighted sum of the encoder states, sum_i alpha_i h_i"""
    (wire_fn, local_fn), s, H = bilinear(5, 3, 88), normal(89, 5), normal(90, 8, 3)
    context, _ = attend_result(submission, s, H, wire_fn, "attend(s, H, score_fn)")
    expect_close(context, attention(s, H, local_fn)[0], "the context vector of attend",
                 mistakes=mistakes(ASSIGNMENT, "attend", s, H, wire_fn, pick=0,
                                   learner=submission))


@points(1, "attend")
def test_attend_huge_scores(submission):
    """scores in the thousands: no overflow, no nan, no warning"""
    (wire_fn, local_fn), s, H = bilinear(4, 4, 91, scale=2000.0), normal(92, 4), normal(93, 6, 4)
    context, weights = attend_result(submission, s, H, wire_fn, "attend with scores in the thousands")
    expected_context, expected_weights = attention(s, H, local_fn)
    expect_close(weights, expected_weights, "the weights of attend for scores in the thousands",
                 mistakes=mistakes(ASSIGNMENT, "attend", s, H, wire_fn, pick=1,
                                   learner=submission))
    expect_close(context, expected_context, "the context of attend for scores in the thousands")
    expect_clean_call(submission, "attend")


@points(1, "attend")
def test_attend_single_state(submission):
    """with a single encoder state (T = 1): weight 1, and the context is that state"""
    (wire_fn, local_fn), s, H = bilinear(3, 4, 94), normal(95, 3), normal(96, 1, 4)
    context, weights = attend_result(submission, s, H, wire_fn, "attend with T = 1")
    expect_close(weights, [1.0], "the weights of attend with a single encoder state",
                 mistakes=mistakes(ASSIGNMENT, "attend", s, H, wire_fn, pick=1,
                                   learner=submission))
    expect_close(context, H[0], "the context of attend with a single encoder state",
                 mistakes=mistakes(ASSIGNMENT, "attend", s, H, wire_fn, pick=0,
                                   learner=submission))


@points(1, "attend")
def test_attend_float32(submission):
    """works on float32 input"""
    M = normal(97, 4, 6).astype(np.float32) / 2
    wire_fn, local_fn = suite_function(BILINEAR, M=M)
    s, H = normal(98, 4).astype(np.float32), normal(99, 5, 6).astype(np.float32)
    context, weights = attend_result(submission, s, H, wire_fn, "attend on float32 input")
    expected_context, expected_weights = attention(s, H, local_fn)
    expect_close(weights, expected_weights, "the weights of attend on float32 input", **F32)
    expect_close(context, expected_context, "the context of attend on float32 input", **F32)


@points(1, "attend")
def test_attend_input_untouched(submission):
    """leaves its inputs unchanged, prints nothing, emits no warning"""
    wire_fn, _ = bilinear(3, 5, 100)
    submission.attend(normal(101, 3), normal(102, 4, 5), wire_fn)
    expect_clean_call(submission, "attend")


# ================================================================== align

def align_result(submission, S, H, wire_fn, what):
    contexts, weights = as_pair(call(submission, "align", S, H, wire_fn, hint=SCORE_FN_HINT), what)
    return as_array(contexts, f"the contexts returned by {what}"), \
        as_array(weights, f"the weights returned by {what}")


@points(1, "align")
def test_align_shapes(submission):
    """returns (contexts (T_dec, d_h), weights (T_dec, T_enc))"""
    wire_fn, _ = bilinear(3, 5, 110)
    S, H = normal(111, 4, 3), normal(112, 7, 5)
    contexts, weights = align_result(submission, S, H, wire_fn, "align(S, H, score_fn)")
    check(weights.shape != (7, 4),
          "the weights returned by align for S (4, 3) and H (7, 5) have shape (7, 4): they look "
          "transposed. Row t should hold the weights of decoder step t: shape (T_dec, T_enc) = (4, 7).")
    expect_shape(contexts, (4, 5),
                 "the contexts (the first value align returns) for S (4, 3) and H (7, 5): (T_dec, d_h)")
    expect_shape(weights, (4, 7),
                 "the weights (the second value align returns) for S (4, 3) and H (7, 5): (T_dec, T_enc)")


@points(1, "align")
@pytest.mark.parametrize("kind", ["bilinear", "distance"])
def test_align_weights(submission, kind):
    """row t of the weights is the softmax of score_fn(S[t], H); every row sums to 1"""
    if kind == "bilinear":
        (wire_fn, local_fn), S, H = bilinear(4, 6, 113), normal(114, 5, 4), normal(115, 8, 6)
    else:
        (wire_fn, local_fn), S, H = suite_function(NEG_DISTANCE), normal(116, 6, 3), normal(117, 6, 3)
    _, weights = align_result(submission, S, H, wire_fn, "align(S, H, score_fn)")
    expect_close(weights, alignment(S, H, local_fn)[1],
                 f"the alignment matrix of align with a {kind} score function",
                 mistakes=mistakes(ASSIGNMENT, "align", S, H, wire_fn, pick=1, learner=submission))
    expect_close(weights.sum(axis=1), np.ones(len(S)), "the row sums of the alignment matrix")


@points(1, "align")
def test_align_contexts(submission):
    """row t of the contexts is sum_i alpha_{t,i} h_i"""
    (wire_fn, local_fn), S, H = bilinear(5, 3, 118), normal(119, 4, 5), normal(120, 6, 3)
    contexts, _ = align_result(submission, S, H, wire_fn, "align(S, H, score_fn)")
    expect_close(contexts, alignment(S, H, local_fn)[0], "the contexts returned by align",
                 mistakes=mistakes(ASSIGNMENT, "align", S, H, wire_fn, pick=0, learner=submission))


@points(1, "align")
def test_align_single_steps(submission):
    """one decoder step (T_dec = 1) and one encoder state (T_enc = 1)"""
    (wire_fn, local_fn) = bilinear(3, 4, 121)
    for T_dec, T_enc in [(1, 5), (3, 1)]:
        S, H = normal(122 + T_dec, T_dec, 3), normal(123 + T_enc, T_enc, 4)
        contexts, weights = align_result(submission, S, H, wire_fn,
                                         f"align with T_dec = {T_dec}, T_enc = {T_enc}")
        expected_contexts, expected_weights = alignment(S, H, local_fn)
        expect_close(weights, expected_weights,
                     f"the weights of align with T_dec = {T_dec}, T_enc = {T_enc}",
                     mistakes=mistakes(ASSIGNMENT, "align", S, H, wire_fn, pick=1,
                                       learner=submission))
        expect_close(contexts, expected_contexts,
                     f"the contexts of align with T_dec = {T_dec}, T_enc = {T_enc}",
                     mistakes=mistakes(ASSIGNMENT, "align", S, H, wire_fn, pick=0,
                                       learner=submission))


@points(1, "align")
def test_align_huge_scores(submission):
    """scores in the thousands: no overflow, no nan, no warning"""
    (wire_fn, local_fn), S, H = bilinear(4, 4, 125, scale=3000.0), normal(126, 3, 4), normal(127, 5, 4)
    contexts, weights = align_result(submission, S, H, wire_fn, "align with scores in the thousands")
    expected_contexts, expected_weights = alignment(S, H, local_fn)
    expect_close(weights, expected_weights, "the weights of align for scores in the thousands",
                 mistakes=mistakes(ASSIGNMENT, "align", S, H, wire_fn, pick=1, learner=submission))
    expect_close(contexts, expected_contexts, "the contexts of align for scores in the thousands")
    expect_clean_call(submission, "align")


@points(1, "align")
def test_align_float32(submission):
    """works on float32 input"""
    M = normal(128, 3, 5).astype(np.float32) / 2
    wire_fn, local_fn = suite_function(BILINEAR, M=M)
    S, H = normal(129, 4, 3).astype(np.float32), normal(130, 6, 5).astype(np.float32)
    contexts, weights = align_result(submission, S, H, wire_fn, "align on float32 input")
    expected_contexts, expected_weights = alignment(S, H, local_fn)
    expect_close(weights, expected_weights, "the weights of align on float32 input", **F32)
    expect_close(contexts, expected_contexts, "the contexts of align on float32 input", **F32)


@points(1, "align")
def test_align_input_untouched(submission):
    """leaves its inputs unchanged, prints nothing, emits no warning"""
    wire_fn, _ = bilinear(3, 5, 131)
    submission.align(normal(132, 4, 3), normal(133, 6, 5), wire_fn)
    expect_clean_call(submission, "align")
