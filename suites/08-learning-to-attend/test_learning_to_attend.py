"""Hidden suite of 08-learning-to-attend: numerical_gradient, softmax_backward, attention_forward,
attention_backward, alignment_accuracy.

The cache of attention_forward is the learner's own: the suite never looks inside it. It only
checks that it can cross the wire (plain data), then hands it back, unchanged, to the learner's
attention_backward, and compares the resulting gradients with gradients computed here.
"""
import numpy as np
import pytest

from autograder.kit import (as_array, as_float, central_differences, check, expect_close,
                            expect_plain_cache, expect_shape, fail, forward_for_backward, mistakes,
                            mutants, points, suite_function)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "08-learning-to-attend"

# float32 results are compared with float64 truth at this tolerance.
F32 = {"rtol": 1e-4, "atol": 1e-5}


# ---------------------------------------------------------------- trusted math, written here

def true_softmax_backward(p, d_p):
    p = np.asarray(p, dtype=np.float64)
    d_p = np.asarray(d_p, dtype=np.float64)
    return p * d_p - p * np.sum(p * d_p, axis=-1, keepdims=True)


def swap(X):
    return np.swapaxes(X, -1, -2)


def true_forward(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    weights = softmax(Q @ swap(K) / np.sqrt(Q.shape[-1]))
    return weights @ V, weights


def true_backward(Q, K, V, d_output, softmax_backward=true_softmax_backward):
    Q, K, V, d_output = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, d_output))
    _, weights = true_forward(Q, K, V)
    d_scores = softmax_backward(weights, d_output @ swap(V)) / np.sqrt(Q.shape[-1])
    return d_scores @ K, swap(d_scores) @ Q, swap(weights) @ d_output


def qkv(seed, T_q, T_k, d_k, d_v, lead=(), scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Q = scale * rng.normal(size=lead + (T_q, d_k))
    K = scale * rng.normal(size=lead + (T_k, d_k))
    V = rng.normal(size=lead + (T_k, d_v))
    d_output = rng.normal(size=lead + (T_q, d_v))
    return tuple(a.astype(dtype) for a in (Q, K, V, d_output))


# What expect_clean_call says about a warning or an in-place change in these functions.
CLEAN = {"hint": "An overflow in exp usually means the row maximum was not subtracted first.",
         "copy_hint": "for example `d = d - s` rather than `d -= s`"}


# ---------------------------------------------------------------- numerical_gradient

SMOOTH = "lambda x: float(np.sum(np.sin(x) * x ** 2 + 0.5 * x ** 3))"


def ng_mistakes(f, x, **kwargs):
    return mistakes(ASSIGNMENT, "numerical_gradient", f, x, **kwargs)


def expect_gradient_shape(g, x, what):
    g = as_array(g, what)
    check(g.shape == np.shape(x),
          f"{what} should have the shape of x, {np.shape(x)}, one partial derivative per entry, "
          f"but it has shape {g.shape}. A single number usually means the whole array was nudged at "
          f"once instead of one entry at a time.")
    return g


@points(1, "numerical_gradient")
def test_numerical_gradient_central_differences(submission):
    """central differences (f(x + eps e_i) - f(x - eps e_i)) / (2 eps) of a smooth function"""
    wire_f, f = suite_function(SMOOTH)
    x = np.random.default_rng(10).normal(size=7)
    g = expect_gradient_shape(submission.numerical_gradient(wire_f, x), x,
                              "numerical_gradient(f, x) for x of shape (7,)")
    expect_close(g, central_differences(f, x, 1e-6), "numerical_gradient(f, x) with the default eps",
                 rtol=1e-6, atol=1e-8, mistakes=ng_mistakes(f, x))


@points(1, "numerical_gradient")
def test_numerical_gradient_every_entry_of_any_shape(submission):
    """nudges every entry on its own, for x of 2 and 3 dimensions"""
    cases = [("lambda x: float(np.sum(np.tanh(x @ (np.arange(12.0).reshape(4, 3) / 10 - 0.5))))",
              (3, 4)),
             ("lambda x: float(np.sum(x[0] ** 2 * x[1]) + np.sum(np.cos(x)))", (2, 2, 3))]
    for seed, (source, shape) in enumerate(cases):
        wire_f, f = suite_function(source)
        x = np.random.default_rng(20 + seed).normal(size=shape)
        what = f"numerical_gradient(f, x) for x of shape {shape}"
        g = expect_gradient_shape(submission.numerical_gradient(wire_f, x), x, what)
        expect_close(g, central_differences(f, x, 1e-6), what, rtol=1e-6, atol=1e-8,
                     mistakes=ng_mistakes(f, x))


@points(1, "numerical_gradient")
def test_numerical_gradient_uses_eps(submission):
    """uses the step eps it is given (eps=0.1 on a sum of cubes gives 3x^2 + eps^2)"""
    wire_f, f = suite_function("lambda x: float(np.sum(x ** 3))")
    x = np.random.default_rng(30).normal(size=(2, 3))
    what = "numerical_gradient(sum of cubes, x, eps=0.1)"
    g = expect_gradient_shape(submission.numerical_gradient(wire_f, x, eps=0.1), x, what)
    expect_close(g, 3 * x ** 2 + 0.01, what, rtol=1e-7, atol=1e-9,
                 mistakes=ng_mistakes(f, x, eps=0.1))


@points(1, "numerical_gradient")
def test_numerical_gradient_accuracy(submission):
    """close to the true gradient: log-sum-exp, whose gradient is softmax"""
    wire_f, f = suite_function("lambda z: float(np.log(np.sum(np.exp(z - z.max()))) + z.max())")
    z = np.random.default_rng(40).normal(size=(9,)) * 2
    g = expect_gradient_shape(submission.numerical_gradient(wire_f, z), z,
                              "numerical_gradient(logsumexp, z)")
    expect_close(g, softmax(z), "numerical_gradient(logsumexp, z), whose exact value is softmax(z)",
                 rtol=1e-5, atol=1e-8, mistakes=ng_mistakes(f, z))


@points(1, "numerical_gradient")
def test_numerical_gradient_leaves_x_unchanged(submission):
    """leaves x exactly as it was (not even a rounding error), prints nothing, no warnings"""
    wire_f, _ = suite_function(SMOOTH)
    x = np.random.default_rng(50).normal(size=(5, 4))
    submission.numerical_gradient(wire_f, x)
    last = submission.last
    if 1 in last.mutated:
        fail("numerical_gradient left x changed after it returned. Save each entry before "
             "nudging it and put the saved value back (undoing the nudge with arithmetic, "
             "x + eps - 2 eps + eps, leaves rounding errors), or nudge a copy.")
    expect_clean_call(submission, "numerical_gradient", **CLEAN)


@points(1, "numerical_gradient")
def test_numerical_gradient_float32(submission):
    """works for a float32 x (with eps = 1e-3)"""
    wire_f, _ = suite_function("lambda x: float(np.sum(x.astype(np.float64) ** 2))")
    x = np.random.default_rng(60).normal(size=(6,)).astype(np.float32)
    what = "numerical_gradient(sum of squares, x, eps=1e-3) for a float32 x"
    g = expect_gradient_shape(submission.numerical_gradient(wire_f, x, eps=1e-3), x, what)
    expect_close(g, 2 * x.astype(np.float64), what, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------- softmax_backward

def softmax_pair(seed, shape, dtype=np.float64):
    rng = np.random.default_rng(seed)
    p = softmax(rng.normal(size=shape) * 2)
    d_p = rng.normal(size=shape)
    return p.astype(dtype), d_p.astype(dtype)


def sb_mistakes(p, d_p):
    return mistakes(ASSIGNMENT, "softmax_backward", p, d_p)


@points(1, "softmax_backward")
@pytest.mark.parametrize("shape", [(6,), (3, 7), (4, 4)], ids=["n=6", "3x7", "4x4"])
def test_softmax_backward_values(submission, shape):
    """equals p * (d_p - sum(p * d_p)) along the last axis"""
    p, d_p = softmax_pair(sum(shape), shape)
    expect_close(submission.softmax_backward(p, d_p), true_softmax_backward(p, d_p),
                 f"softmax_backward(p, d_p) for shape {shape}", mistakes=sb_mistakes(p, d_p))


@points(1, "softmax_backward")
def test_softmax_backward_batch(submission):
    """leading batch axes: the softmax is always over the last axis"""
    p, d_p = softmax_pair(70, (2, 3, 4, 5))
    expect_close(submission.softmax_backward(p, d_p), true_softmax_backward(p, d_p),
                 "softmax_backward(p, d_p) for shape (2, 3, 4, 5)", mistakes=sb_mistakes(p, d_p))


@points(1, "softmax_backward")
def test_softmax_backward_rows_sum_to_zero(submission):
    """each row of the result sums to zero (softmax ignores a constant added to every score)"""
    p, d_p = softmax_pair(80, (5, 9))
    d_p = d_p + 3.0
    d_z = as_array(submission.softmax_backward(p, d_p), "softmax_backward(p, d_p)")
    expect_shape(d_z, p.shape, "softmax_backward(p, d_p)")
    sums = d_z.sum(axis=-1)
    check(np.allclose(sums, 0.0, atol=1e-10),
          f"the rows of softmax_backward(p, d_p) should sum to 0, because adding the same constant "
          f"to every score leaves the softmax unchanged; row {int(np.argmax(np.abs(sums)))} sums to "
          f"{float(sums[np.argmax(np.abs(sums))]):.4g}. Subtract the p-weighted average of d_p, "
          f"sum(p * d_p), not its plain sum.")
    # the control: rows of zeros sum to zero too, but these scores do get a gradient
    check(float(np.abs(d_z).max()) > 1e-3,
          "softmax_backward(p, d_p) returned all zeros, but these rows of p are not saturated: "
          "each score gets p_i * (d_p_i - sum_j p_j d_p_j), which is not zero here.")


@points(1, "softmax_backward")
def test_softmax_backward_saturated(submission):
    """a saturated (one-hot) row, a fully masked (all-zero) row and a single entry pass back zero"""
    # the last row is an ordinary one (its gradient is not zero): the control that a function
    # returning zeros everywhere does not pass
    p = softmax(np.array([[900.0, 0.0, -400.0, 5.0], [0.0, -1e4, 1e4, 0.0], [0.3, -0.2, 1.0, 0.1]]))
    p = np.concatenate([p[:2], np.zeros((1, 4)), p[2:]])
    d_p = np.random.default_rng(90).normal(size=p.shape)
    expect_close(submission.softmax_backward(p, d_p), true_softmax_backward(p, d_p),
                 "softmax_backward of saturated rows and an all-zero row of p", atol=1e-12,
                 mistakes=sb_mistakes(p, d_p))
    expect_clean_call(submission, "softmax_backward", **CLEAN)
    single, d_single = np.ones((3, 1)), np.array([[2.0], [-1.0], [0.5]])
    expect_close(submission.softmax_backward(single, d_single), np.zeros((3, 1)),
                 "softmax_backward over a last axis of length 1", atol=1e-12)


@points(1, "softmax_backward")
def test_softmax_backward_float32(submission):
    """works on float32 input"""
    p, d_p = softmax_pair(100, (4, 6), dtype=np.float32)
    expect_close(submission.softmax_backward(p, d_p), true_softmax_backward(p, d_p),
                 "softmax_backward(p, d_p) for float32 p and d_p", rtol=1e-4, atol=1e-6)


@points(1, "softmax_backward")
def test_softmax_backward_clean(submission):
    """does not change p or d_p in place, prints nothing, emits no warning"""
    p, d_p = softmax_pair(110, (3, 5))
    submission.softmax_backward(p, d_p)
    expect_clean_call(submission, "softmax_backward", **CLEAN)


# ---------------------------------------------------------------- attention_forward

def forward_output(submission, Q, K, V):
    result = submission.attention_forward(Q, K, V)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail("attention_forward(Q, K, V) should return a pair (output, cache), but "
             f"{'a ' + type(result).__name__ if not isinstance(result, np.ndarray) else 'an array'} "
             f"came back.")
    return result[0], result[1]


def af_mistakes(Q, K, V):
    return mistakes(ASSIGNMENT, "attention_forward", Q, K, V, pick=0)


@points(1, "attention_forward")
@pytest.mark.parametrize("sizes", [(3, 5, 4, 2), (4, 4, 9, 3), (1, 6, 3, 5)],
                         ids=["Tq=3,Tk=5,dk=4,dv=2", "Tq=4,Tk=4,dk=9,dv=3", "Tq=1,Tk=6,dk=3,dv=5"])
def test_attention_forward_values(submission, sizes):
    """the output equals softmax(Q K^T / sqrt(d_k)) V"""
    Q, K, V, _ = qkv(sum(sizes), *sizes)
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, true_forward(Q, K, V)[0],
                 "the output of attention_forward(Q, K, V) for (T_q, T_k, d_k, d_v) = "
                 f"{sizes}", mistakes=af_mistakes(Q, K, V))


@points(1, "attention_forward")
def test_attention_forward_batch(submission):
    """leading batch axes (2, 3): every batch item attends on its own"""
    Q, K, V, _ = qkv(120, 5, 6, 4, 7, lead=(2, 3))
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, true_forward(Q, K, V)[0],
                 "the output of attention_forward for Q (2, 3, 5, 4), K (2, 3, 6, 4), V (2, 3, 6, 7)",
                 mistakes=af_mistakes(Q, K, V))


@points(1, "attention_forward")
def test_attention_forward_float32(submission):
    """works on float32 input"""
    Q, K, V, _ = qkv(130, 4, 5, 8, 3, lead=(2,), dtype=np.float32)
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, true_forward(Q, K, V)[0], "the output of attention_forward for float32 "
                 "Q, K, V", mistakes=af_mistakes(Q, K, V), **F32)


@points(1, "attention_forward")
def test_attention_forward_huge_scores(submission):
    """scores in the thousands: no overflow, no NaN, no warning"""
    Q, K, V, _ = qkv(140, 3, 5, 4, 2, lead=(2,), scale=60.0)
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, true_forward(Q, K, V)[0],
                 "the output of attention_forward when the scores are in the thousands",
                 mistakes=af_mistakes(Q, K, V))
    expect_clean_call(submission, "attention_forward", **CLEAN)


@points(1, "attention_forward")
def test_attention_forward_single_key(submission):
    """with a single key every query gets weight 1 on it: the output is that value"""
    Q, K, V, _ = qkv(150, 3, 1, 4, 5, lead=(2,))
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, np.broadcast_to(V, (2, 3, 5)),
                 "the output of attention_forward with T_k = 1", mistakes=af_mistakes(Q, K, V))
    Q, K, V, _ = qkv(151, 1, 1, 2, 3)
    output, _ = forward_output(submission, Q, K, V)
    expect_close(output, V, "the output of attention_forward with T_q = T_k = 1")


@points(1, "attention_forward")
def test_attention_forward_cache_is_plain_data(submission):
    """the cache is plain data (arrays and numbers in a tuple, list or dict) the grader can pass back"""
    Q, K, V, _ = qkv(160, 3, 4, 2, 2)
    _, cache = forward_output(submission, Q, K, V)
    expect_plain_cache(cache, "attention_forward", "attention_backward")


@points(1, "attention_forward")
def test_attention_forward_clean(submission):
    """does not change Q, K or V in place, prints nothing, emits no warning"""
    Q, K, V, _ = qkv(170, 4, 3, 5, 2, lead=(2,))
    forward_output(submission, Q, K, V)
    expect_clean_call(submission, "attention_forward", **CLEAN)


# ---------------------------------------------------------------- attention_backward

def forward_of(submission, Q, K, V, d_output):
    """The learner's (output, cache) of attention_forward, run to test attention_backward."""
    return forward_for_backward(submission, "attention_forward", "attention_backward",
                                lambda: forward_output(submission, Q, K, V), d_output)


def learner_gradients(submission, Q, K, V, d_output, forward_tolerance=None):
    """Run the learner's forward pass, hand its cache back to their backward pass unchanged."""
    output, cache = forward_of(submission, Q, K, V, d_output)
    expect_plain_cache(cache, "attention_forward", "attention_backward")
    expected = true_forward(Q, K, V)[0]
    output = as_array(output, "the output of attention_forward")
    tolerance = forward_tolerance or {"rtol": 1e-6, "atol": 1e-8}
    check(output.shape == expected.shape and np.allclose(output, expected, **tolerance),
          "attention_backward is tested through the cache your attention_forward returns, and "
          "attention_forward(Q, K, V) is not right yet on this input: fix attention_forward first.")
    grads = submission.attention_backward(d_output, cache)
    if not isinstance(grads, (tuple, list)) or len(grads) != 3:
        fail("attention_backward(d_output, cache) should return three arrays (dQ, dK, dV).")
    names = ("dQ", "dK", "dV")
    arrays = []
    for name, grad, like in zip(names, grads, (Q, K, V)):
        grad = as_array(grad, name)
        expect_shape(grad, np.shape(like), f"{name} (the gradient has the shape of {name[1]})")
        arrays.append(grad)
    return arrays


def backward_mistakes(Q, K, V, d_output):
    """What each catalogued mistake of attention_backward (run on a cache laid out as the
    reference's) and each softmax_backward mistake (inside an otherwise correct backward pass)
    gives for dQ, dK and dV."""
    reference_cache = (Q, K, V, true_forward(Q, K, V)[1])
    whole = mistakes(ASSIGNMENT, "attention_backward", d_output, reference_cache)
    found = [dict(whole.derive(lambda grads, i=i: grads[i])) for i in range(3)]
    for entry in mutants(ASSIGNMENT, "softmax_backward"):
        try:
            with np.errstate(all="ignore"):
                wrong = entry.namespace()["softmax_backward"]
                grads = true_backward(Q, K, V, d_output,
                                      softmax_backward=lambda p, d, wrong=wrong: wrong(p, d.copy()))
            description = f"use a softmax_backward that would {entry.description}"
            for part, value in zip(found, grads):
                part.setdefault(description, value)
        except Exception:
            continue
    return found


def expect_gradients(submission, Q, K, V, d_output, what, which=(0, 1, 2), rtol=1e-6, atol=1e-8,
                     forward_tolerance=None):
    got = learner_gradients(submission, Q, K, V, d_output, forward_tolerance)
    truth = true_backward(Q, K, V, d_output)
    named = backward_mistakes(Q, K, V, d_output)
    for index in which:
        name = ("dQ", "dK", "dV")[index]
        expect_close(got[index], truth[index], f"{name} {what}", rtol=rtol, atol=atol,
                     mistakes=named[index])
    return got


SHAPES = [(3, 5, 4, 2), (4, 4, 6, 3)]
SHAPE_IDS = ["Tq=3,Tk=5,dk=4,dv=2", "Tq=4,Tk=4,dk=6,dv=3"]


@points(1, "attention_backward")
@pytest.mark.parametrize("sizes", SHAPES, ids=SHAPE_IDS)
def test_attention_backward_dV(submission, sizes):
    """dV equals the transposed weights times d_output"""
    Q, K, V, d_output = qkv(200 + sum(sizes), *sizes)
    expect_gradients(submission, Q, K, V, d_output, f"for (T_q, T_k, d_k, d_v) = {sizes}", which=(2,))


@points(1, "attention_backward")
@pytest.mark.parametrize("sizes", SHAPES, ids=SHAPE_IDS)
def test_attention_backward_dQ(submission, sizes):
    """dQ goes through the softmax backward and the 1/sqrt(d_k) scale"""
    Q, K, V, d_output = qkv(210 + sum(sizes), *sizes)
    expect_gradients(submission, Q, K, V, d_output, f"for (T_q, T_k, d_k, d_v) = {sizes}", which=(0,))


@points(1, "attention_backward")
@pytest.mark.parametrize("sizes", SHAPES, ids=SHAPE_IDS)
def test_attention_backward_dK(submission, sizes):
    """dK goes through the softmax backward, transposed, and the 1/sqrt(d_k) scale"""
    Q, K, V, d_output = qkv(220 + sum(sizes), *sizes)
    expect_gradients(submission, Q, K, V, d_output, f"for (T_q, T_k, d_k, d_v) = {sizes}", which=(1,))


@points(1, "attention_backward")
def test_attention_backward_batch(submission):
    """leading batch axes (2, 3): transposes swap only the last two axes"""
    Q, K, V, d_output = qkv(230, 5, 6, 4, 7, lead=(2, 3))
    expect_gradients(submission, Q, K, V, d_output, "for a batch, Q (2, 3, 5, 4), K (2, 3, 6, 4), "
                     "V (2, 3, 6, 7)")


@points(1, "attention_backward")
def test_attention_backward_float32(submission):
    """works on float32 input"""
    Q, K, V, d_output = qkv(240, 4, 5, 8, 3, lead=(2,), dtype=np.float32)
    expect_gradients(submission, Q, K, V, d_output, "for float32 inputs", forward_tolerance=F32,
                     **F32)


@points(1, "attention_backward")
def test_attention_backward_saturated(submission):
    """scores in the thousands: finite gradients, almost none through the saturated softmax"""
    Q, K, V, d_output = qkv(250, 3, 5, 4, 2, lead=(2,), scale=60.0)
    expect_gradients(submission, Q, K, V, d_output, "when the scores are in the thousands")
    expect_clean_call(submission, "attention_backward", **CLEAN)


@points(1, "attention_backward")
def test_attention_backward_single_key(submission):
    """with a single key: no gradient for Q and K, and dV is the sum of d_output over queries"""
    Q, K, V, d_output = qkv(260, 3, 1, 4, 5, lead=(2,))
    dQ, dK, dV = learner_gradients(submission, Q, K, V, d_output)
    expect_close(dQ, np.zeros_like(Q), "dQ with T_k = 1 (the only weight is always 1)", atol=1e-10)
    expect_close(dK, np.zeros_like(K), "dK with T_k = 1 (the only weight is always 1)", atol=1e-10)
    expect_close(dV, d_output.sum(axis=-2, keepdims=True), "dV with T_k = 1")


@points(1, "attention_backward")
def test_attention_backward_key_gradients_sum_to_zero(submission):
    """adding one vector to every key changes nothing, so dK sums to zero over the keys"""
    Q, K, V, d_output = qkv(270, 4, 6, 3, 2)
    _, dK, _ = learner_gradients(submission, Q, K, V, d_output)
    total = dK.sum(axis=-2)
    check(np.allclose(total, 0.0, atol=1e-10),
          f"dK summed over the keys should be 0 (adding one vector to every key adds the same "
          f"number to all the scores of a row, which softmax ignores), but it is "
          f"{np.array2string(total, precision=4)}. The softmax backward step is the likely culprit.")


@points(1, "attention_backward")
def test_attention_backward_uses_only_its_cache(submission):
    """uses only its cache: another forward pass in between changes nothing"""
    Q, K, V, d_output = qkv(280, 3, 4, 5, 2)
    _, first_cache = forward_of(submission, Q, K, V, d_output)
    expect_plain_cache(first_cache, "attention_forward", "attention_backward")
    forward_output(submission, *qkv(281, 3, 4, 5, 2)[:3])
    late = submission.attention_backward(d_output, first_cache)
    if not isinstance(late, (tuple, list)) or len(late) != 3:
        fail("attention_backward(d_output, cache) should return three arrays (dQ, dK, dV).")
    right_away = learner_gradients(submission, Q, K, V, d_output)
    truth = true_backward(Q, K, V, d_output)
    named = backward_mistakes(Q, K, V, d_output)
    for index, name in enumerate(("dQ", "dK", "dV")):
        late_grad = as_array(late[index], name)
        if (np.allclose(right_away[index], truth[index]) and not
                (late_grad.shape == truth[index].shape and np.allclose(late_grad, truth[index]))):
            fail(f"{name} is right when attention_backward runs just after attention_forward, but "
                 f"wrong when another forward pass ran in between: attention_backward must take "
                 f"everything it needs from its cache, not from global variables.")
        expect_close(late_grad, truth[index], f"{name} computed from the cache of an earlier "
                     f"forward pass", mistakes=named[index])


@points(1, "attention_backward")
def test_attention_backward_clean(submission):
    """does not change d_output in place, prints nothing, emits no warning"""
    Q, K, V, d_output = qkv(290, 4, 3, 5, 2, lead=(2,))
    learner_gradients(submission, Q, K, V, d_output)
    expect_clean_call(submission, "attention_backward", **CLEAN)


# ---------------------------------------------------------------- alignment_accuracy

def true_alignment_accuracy(weights, alignment):
    weights = np.asarray(weights, dtype=np.float64)
    rows = weights.reshape(-1, weights.shape[-1])
    truth = np.asarray(alignment).reshape(-1)
    hits = [row.max() > 0 and int(np.argmax(row)) == int(t) for row, t in zip(rows, truth)]
    return float(np.mean(hits))


def random_alignment_case(seed, lead, T_out, T_in, hit_rate=0.6):
    """Softmax weights whose largest entry sits at the true position in about ``hit_rate`` of the
    rows, and a clear margin everywhere (no ties)."""
    rng = np.random.default_rng(seed)
    alignment = rng.integers(0, T_in, size=lead + (T_out,))
    scores = rng.normal(size=lead + (T_out, T_in))
    best = np.where(rng.random(lead + (T_out,)) < hit_rate, alignment,
                    (alignment + 1 + rng.integers(0, T_in - 1, size=alignment.shape)) % T_in)
    np.put_along_axis(scores, best[..., None], scores.max(axis=-1, keepdims=True) + 1.5, axis=-1)
    return softmax(scores), alignment


def aa_mistakes(weights, alignment):
    return mistakes(ASSIGNMENT, "alignment_accuracy", weights, alignment)


def accuracy_of(submission, weights, alignment, what):
    return as_float(submission.alignment_accuracy(weights, alignment), what)


def expect_accuracy(submission, weights, alignment, what):
    value = accuracy_of(submission, weights, alignment, what)
    expect_close(value, true_alignment_accuracy(weights, alignment), what, rtol=0, atol=1e-12,
                 mistakes=aa_mistakes(weights, alignment))


@points(1, "alignment_accuracy")
def test_alignment_accuracy_one_sentence(submission):
    """the fraction of target words whose largest weight is on their true source word"""
    weights, alignment = random_alignment_case(300, (), 7, 9)
    expect_accuracy(submission, weights, alignment,
                    "alignment_accuracy(weights, alignment) for 7 target and 9 source words")


@points(1, "alignment_accuracy")
def test_alignment_accuracy_batch(submission):
    """leading batch axes: every target word of every sentence counts once"""
    weights, alignment = random_alignment_case(310, (3, 2), 5, 6, hit_rate=0.5)
    expect_accuracy(submission, weights, alignment,
                    "alignment_accuracy for weights of shape (3, 2, 5, 6)")


@points(1, "alignment_accuracy")
def test_alignment_accuracy_only_the_largest_weight_matters(submission):
    """only where the largest weight sits matters, not how large it is"""
    weights = np.array([[0.40, 0.30, 0.30, 0.00],     # true 0: the largest, though below one half
                        [0.05, 0.45, 0.50, 0.00],     # true 1: close, but not the largest
                        [0.00, 0.00, 0.05, 0.95],     # true 3
                        [0.34, 0.33, 0.00, 0.33],     # true 3: not the largest
                        [0.10, 0.60, 0.10, 0.20]])    # true 1
    alignment = np.array([0, 1, 3, 3, 1])
    expect_accuracy(submission, weights, alignment,
                    "alignment_accuracy of five rows whose largest weights are 0.40, 0.50, 0.95, "
                    "0.34 and 0.60")


@points(1, "alignment_accuracy")
def test_alignment_accuracy_all_zero_rows(submission):
    """a row of all-zero weights (nothing could be attended to) never counts as aligned"""
    weights, alignment = random_alignment_case(320, (2,), 4, 5, hit_rate=1.0)
    weights[0, 1] = 0.0
    weights[1, 3] = 0.0
    alignment[0, 1] = 0
    alignment[1, 3] = 2
    expect_accuracy(submission, weights, alignment,
                    "alignment_accuracy when two rows of the weights are all zero")


@points(1, "alignment_accuracy")
def test_alignment_accuracy_float32_and_clean(submission):
    """works on float32 weights; returns one number; changes nothing in place, prints nothing"""
    weights, alignment = random_alignment_case(330, (4,), 6, 6, hit_rate=0.7)
    weights = weights.astype(np.float32)
    expect_accuracy(submission, weights, alignment, "alignment_accuracy for float32 weights")
    expect_clean_call(submission, "alignment_accuracy", **CLEAN)
