"""Hidden suite of 01-bottleneck: rnn_encode, fit_readout, recall_accuracy.

The expected values are computed here, by code written independently of the solution notebook.
``fit_readout`` accepts both usual ridge conventions for the bias row (penalised like every other
entry of W, or left out of the penalty): the curriculum only asks for "ridge least squares so that
[F, 1] @ W ≈ Y", and the notebook says that both are accepted.
"""
import numpy as np
import pytest

from autograder.kit import (as_array, as_float, check, expect_close, expect_finite, expect_shape,
                            fail, mistakes, name_mistake, points)

from attention_kit import expect_clean_call

ASSIGNMENT = "01-bottleneck"


# ------------------------------------------------------------------ trusted expectations

def rnn_states(X, W_xh, W_hh, b_h):
    """Every state of the recurrence, one sequence and one step at a time (float64)."""
    X = np.asarray(X, dtype=np.float64)
    W_xh, W_hh, b_h = (np.asarray(a, dtype=np.float64) for a in (W_xh, W_hh, b_h))
    T, d_in = X.shape[-2:]
    d_h = W_hh.shape[0]
    flat = X.reshape(-1, T, d_in)
    out = np.empty((flat.shape[0], T, d_h))
    for n in range(flat.shape[0]):
        h = np.zeros(d_h)
        for t in range(T):
            h = np.tanh(flat[n, t] @ W_xh + h @ W_hh + b_h)
            out[n, t] = h
    return out.reshape(X.shape[:-1] + (d_h,))


def rnn_problem(seed, batch, T, d_in, d_h, dtype=np.float64):
    """Random inputs and weights; W_hh is not symmetric and d_in != d_h where possible."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=batch + (T, d_in))
    W_xh = rng.normal(size=(d_in, d_h)) / np.sqrt(d_in)
    W_hh = 0.8 * rng.normal(size=(d_h, d_h)) / np.sqrt(d_h)
    b_h = 0.3 * rng.normal(size=d_h)
    return tuple(a.astype(dtype) for a in (X, W_xh, W_hh, b_h))


def augmented(F):
    F = np.asarray(F, dtype=np.float64)
    return np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)


def ridge_solutions(F, Y, ridge):
    """The two accepted readouts: bias row penalised like the rest, or not penalised."""
    A = augmented(F)
    Y = np.asarray(Y, dtype=np.float64)
    gram, rhs = A.T @ A, A.T @ Y
    everything = np.eye(A.shape[1])
    features_only = everything.copy()
    features_only[-1, -1] = 0.0
    return {"bias penalised": np.linalg.solve(gram + ridge * everything, rhs),
            "bias not penalised": np.linalg.solve(gram + ridge * features_only, rhs)}


def expect_readout(W, F, Y, ridge, what, rtol=1e-6, atol=1e-8, known=None):
    """W solves the ridge problem in one of the two accepted conventions."""
    W = as_array(W, what)
    solutions = ridge_solutions(F, Y, ridge)
    expected_shape = next(iter(solutions.values())).shape
    expect_shape(W, expected_shape, what)
    expect_finite(W, what)
    for solution in solutions.values():
        if np.allclose(W, solution, rtol=rtol, atol=atol):
            return W
    nearest = min(solutions.values(), key=lambda s: np.max(np.abs(W - s)))
    where = np.unravel_index(int(np.argmax(np.abs(W - nearest))), W.shape)
    where = tuple(int(i) for i in where)
    message = (f"{what} does not solve the ridge least-squares problem with ridge={ridge:g}: at "
               f"index {where} it is {W[where]:.6g}, expected {nearest[where]:.6g}. W should "
               f"satisfy the normal equations (A^T A + ridge * I) W = A^T Y with A = [F, 1] "
               f"(the bias row may be left out of the penalty).")
    hint = name_mistake(W, known)
    if hint:
        message += f" This is what you get when you {hint}."
    fail(message)


def readout_problem(seed, n, d, k, scale=1.0, noise=0.3):
    rng = np.random.default_rng(seed)
    F = scale * rng.normal(size=(n, d)) + 0.5
    W_true = rng.normal(size=(d + 1, k))
    Y = augmented(F) @ W_true + noise * rng.normal(size=(n, k))
    return F, Y, W_true


def accuracy_problem(seed, n, d, k, n_correct):
    """Features, a readout and labels of which exactly ``n_correct`` match the prediction."""
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, d))
    W = rng.normal(size=(d + 1, k))
    W[-1] += 2.0 * rng.normal(size=k)       # a bias that matters
    predicted = np.argmax(augmented(F) @ W, axis=-1)
    labels = predicted.copy()
    wrong = rng.choice(n, size=n - n_correct, replace=False)
    labels[wrong] = (predicted[wrong] + rng.integers(1, k, size=wrong.size)) % k
    return F, W, labels


# ------------------------------------------------------------------ rnn_encode

@points(1, "rnn_encode")
@pytest.mark.parametrize("shape", [(6, 3, 4), (9, 5, 2)], ids=["T6-din3-dh4", "T9-din5-dh2"])
def test_rnn_values(submission, shape):
    """every state follows h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h), with h_0 = 0"""
    T, d_in, d_h = shape
    args = rnn_problem(sum(shape), (), T, d_in, d_h)
    H = submission.rnn_encode(*args)
    expect_close(H, rnn_states(*args), f"rnn_encode for X of shape {(T, d_in)} and d_h = {d_h}",
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))


@points(1, "rnn_encode")
def test_rnn_first_state(submission):
    """the first state is h_1 = tanh(x_1 W_xh + b_h), because h_0 = 0"""
    X, W_xh, W_hh, b_h = rnn_problem(11, (), 5, 4, 3)
    W_hh = W_hh + 1.0            # any non-zero h_0 would now show clearly
    H = as_array(submission.rnn_encode(X, W_xh, W_hh, b_h), "rnn_encode(X, ...)")
    expect_shape(H, (5, 3), "rnn_encode for X of shape (5, 4) and d_h = 3")
    known = mistakes(ASSIGNMENT, "rnn_encode", X, W_xh, W_hh, b_h, learner=submission).derive(
        lambda result: np.asarray(result)[0], keep=lambda row: np.shape(row) == (3,))
    expect_close(H[0], np.tanh(X[0] @ W_xh + b_h), "the first state h_1 (row 0 of the result)",
                 mistakes=known)


@points(1, "rnn_encode")
def test_rnn_batch_dimensions(submission):
    """leading batch dimensions: each sequence is encoded on its own, time is axis -2"""
    args = rnn_problem(12, (2, 3), 4, 5, 6)
    H = submission.rnn_encode(*args)
    expect_close(H, rnn_states(*args), "rnn_encode for X of shape (2, 3, 4, 5) and d_h = 6",
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))
    expect_clean_call(submission, "rnn_encode", hint=None)
    args = rnn_problem(13, (7,), 3, 2, 4)
    expect_close(submission.rnn_encode(*args), rnn_states(*args),
                 "rnn_encode for X of shape (7, 3, 2) and d_h = 4",
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))


@points(1, "rnn_encode")
def test_rnn_single_step(submission):
    """a sequence of length T = 1 gives one state, shape (..., 1, d_h)"""
    args = rnn_problem(14, (), 1, 3, 5)
    expect_close(submission.rnn_encode(*args), rnn_states(*args),
                 "rnn_encode for X of shape (1, 3) and d_h = 5",
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))
    args = rnn_problem(15, (4,), 1, 2, 3)
    expect_close(submission.rnn_encode(*args), rnn_states(*args),
                 "rnn_encode for X of shape (4, 1, 2) and d_h = 3",
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))


@points(1, "rnn_encode")
def test_rnn_float32(submission):
    """works on float32 inputs and weights"""
    args = rnn_problem(16, (3,), 7, 4, 5, dtype=np.float32)
    expect_close(submission.rnn_encode(*args), rnn_states(*args),
                 "rnn_encode of float32 inputs, X of shape (3, 7, 4)", rtol=1e-4, atol=1e-5,
                 mistakes=mistakes(ASSIGNMENT, "rnn_encode", *args, learner=submission))


@points(1, "rnn_encode")
def test_rnn_saturation_is_clean(submission):
    """huge inputs saturate the states at ±1 with no overflow, warning, print or change to the inputs"""
    X, W_xh, W_hh, b_h = rnn_problem(17, (2,), 6, 3, 4)
    X = 1e4 * X
    H = submission.rnn_encode(X, W_xh, W_hh, b_h)
    if submission.last.warnings:
        fail(f"rnn_encode emitted a warning on inputs of size about 1e4: "
             f"{submission.last.warnings[0]}. np.tanh handles huge arguments safely (it returns "
             f"±1); computing tanh from np.exp overflows there.")
    expect_clean_call(submission, "rnn_encode", hint=None)
    H = expect_close(H, rnn_states(X, W_xh, W_hh, b_h),
                     "rnn_encode of inputs of size about 1e4 (tanh saturates at ±1)",
                     mistakes=mistakes(ASSIGNMENT, "rnn_encode", X, W_xh, W_hh, b_h,
                                       learner=submission))
    check(np.all(np.abs(H) <= 1.0), "every state of a tanh RNN lies in [-1, 1].")


# ------------------------------------------------------------------ fit_readout

@points(1, "fit_readout")
def test_readout_shape(submission):
    """returns W of shape (d + 1, k): one row per feature, then the bias row"""
    for n, d, k in [(30, 4, 3), (12, 1, 5), (50, 6, 1)]:
        F, Y, _ = readout_problem(20 + n, n, d, k)
        W = as_array(submission.fit_readout(F, Y, 0.1), "fit_readout(F, Y, 0.1)")
        expect_shape(W, (d + 1, k), f"fit_readout for F of shape {(n, d)} and Y of shape {(n, k)}")


@points(1, "fit_readout")
def test_readout_exact_on_consistent_data(submission):
    """recovers the exact readout when Y = [F, 1] W exactly and the ridge goes to 0"""
    F, _, W_true = readout_problem(21, 40, 5, 3)
    Y = augmented(F) @ W_true
    known = mistakes(ASSIGNMENT, "fit_readout", F, Y, 1e-10, learner=submission)
    expect_close(submission.fit_readout(F, Y, 1e-10), W_true,
                 "fit_readout(F, Y, ridge=1e-10) on data that [F, 1] @ W_true explains exactly",
                 rtol=1e-6, atol=1e-6, mistakes=known)
    lstsq = np.linalg.lstsq(augmented(F), Y, rcond=None)[0]
    expect_close(submission.fit_readout(F, Y, 0.0), lstsq,
                 "fit_readout(F, Y, ridge=0), which is ordinary least squares", rtol=1e-6,
                 atol=1e-6, mistakes=mistakes(ASSIGNMENT, "fit_readout", F, Y, 0.0,
                                              learner=submission))


@points(1, "fit_readout")
@pytest.mark.parametrize("ridge", [None, 0.5, 4.0], ids=["default-1e-3", "ridge0.5", "ridge4"])
def test_readout_normal_equations(submission, ridge):
    """solves the ridge normal equations (A^T A + ridge I) W = A^T Y, with A = [F, 1]"""
    # Small features (scale 0.01) so that even the default ridge of 1e-3 changes W visibly.
    F, Y, _ = readout_problem(22, 12, 3, 2, scale=0.01 if ridge is None else 1.0)
    if ridge is None:
        W = submission.fit_readout(F, Y)
        known = mistakes(ASSIGNMENT, "fit_readout", F, Y, learner=submission)
        ridge, what = 1e-3, "fit_readout(F, Y) with the default ridge"
    else:
        W = submission.fit_readout(F, Y, ridge)
        known = mistakes(ASSIGNMENT, "fit_readout", F, Y, ridge, learner=submission)
        what = f"fit_readout(F, Y, ridge={ridge:g})"
    expect_readout(W, F, Y, ridge, what, known=known)


@points(1, "fit_readout")
def test_readout_large_ridge_shrinks(submission):
    """a huge ridge shrinks the feature weights to zero"""
    F, Y, _ = readout_problem(23, 30, 4, 3)
    W = as_array(submission.fit_readout(F, Y, 1e9), "fit_readout(F, Y, ridge=1e9)")
    expect_shape(W, (5, 3), "fit_readout(F, Y, ridge=1e9)")
    expect_finite(W, "fit_readout(F, Y, ridge=1e9)")
    largest = float(np.max(np.abs(W[:-1])))
    if largest > 1e-6:
        message = (f"with ridge=1e9 the feature rows W[:-1] should be almost zero (the penalty "
                   f"dominates), but their largest entry is {largest:.3g}.")
        hint = name_mistake(W, mistakes(ASSIGNMENT, "fit_readout", F, Y, 1e9, learner=submission))
        fail(message + (f" This is what you get when you {hint}." if hint else ""))


@points(1, "fit_readout")
def test_readout_more_features_than_samples(submission):
    """with more features than samples the ridge keeps the problem well posed"""
    F, Y, _ = readout_problem(24, 5, 12, 2)
    expect_readout(submission.fit_readout(F, Y, 0.1), F, Y, 0.1,
                   "fit_readout(F, Y, ridge=0.1) for F of shape (5, 12)",
                   known=mistakes(ASSIGNMENT, "fit_readout", F, Y, 0.1, learner=submission))


@points(1, "fit_readout")
def test_readout_float32_and_clean(submission):
    """works on float32 features and targets, without warnings, prints or changing its inputs"""
    F, Y, _ = readout_problem(25, 60, 5, 4)
    F32, Y32 = F.astype(np.float32), Y.astype(np.float32)
    W = submission.fit_readout(F32, Y32, 0.01)
    expect_clean_call(submission, "fit_readout", hint=None)
    expect_readout(W, F32.astype(np.float64), Y32.astype(np.float64), 0.01,
                   "fit_readout of float32 F and Y", rtol=1e-3, atol=1e-4,
                   known=mistakes(ASSIGNMENT, "fit_readout", F32, Y32, 0.01, learner=submission))


# ------------------------------------------------------------------ recall_accuracy

@points(1, "recall_accuracy")
@pytest.mark.parametrize("case", [(40, 3, 4, 27), (25, 6, 10, 8)], ids=["n40-k4", "n25-k10"])
def test_accuracy_fraction(submission, case):
    """the fraction of rows whose argmax([F, 1] @ W) equals the label"""
    n, d, k, n_correct = case
    F, W, labels = accuracy_problem(30 + n, n, d, k, n_correct)
    value = submission.recall_accuracy(F, W, labels)
    known = mistakes(ASSIGNMENT, "recall_accuracy", F, W, labels, learner=submission)
    expect_close(as_float(value, "recall_accuracy(F, W, labels)"), n_correct / n,
                 f"recall_accuracy when {n_correct} of {n} predictions are right",
                 rtol=0, atol=1e-9, mistakes=known)


@points(1, "recall_accuracy")
def test_accuracy_uses_bias_row(submission):
    """the last row of W is the bias: it adds to every row's scores"""
    rng = np.random.default_rng(31)
    F = 0.01 * rng.normal(size=(20, 3))
    W = np.zeros((4, 5))
    W[:-1] = rng.normal(size=(3, 5))
    W[-1] = [0.0, 0.2, 3.0, -1.0, 0.5]            # the bias alone decides: class 2 everywhere
    labels = np.full(20, 2)
    labels[:5] = [0, 1, 3, 4, 0]
    value = as_float(submission.recall_accuracy(F, W, labels), "recall_accuracy(F, W, labels)")
    expect_close(value, 0.75, "recall_accuracy when a large bias picks class 2 for every row",
                 rtol=0, atol=1e-9, mistakes=mistakes(ASSIGNMENT, "recall_accuracy", F, W, labels,
                                                      learner=submission))


@points(1, "recall_accuracy")
def test_accuracy_extremes(submission):
    """gives 1.0 when every label is predicted, 0.0 when none is, and works for one row"""
    F, W, labels = accuracy_problem(32, 15, 4, 3, 15)
    value = as_float(submission.recall_accuracy(F, W, labels), "recall_accuracy(F, W, labels)")
    expect_close(value, 1.0, "recall_accuracy when every prediction is right", rtol=0, atol=1e-9,
                 mistakes=mistakes(ASSIGNMENT, "recall_accuracy", F, W, labels, learner=submission))
    F, W, labels = accuracy_problem(33, 15, 4, 3, 0)
    value = as_float(submission.recall_accuracy(F, W, labels), "recall_accuracy(F, W, labels)")
    expect_close(value, 0.0, "recall_accuracy when no prediction is right", rtol=0, atol=1e-9)
    F, W, labels = accuracy_problem(34, 1, 4, 3, 1)
    value = as_float(submission.recall_accuracy(F, W, labels), "recall_accuracy of a single row")
    expect_close(value, 1.0, "recall_accuracy of a single, correctly predicted row", rtol=0,
                 atol=1e-9, mistakes=mistakes(ASSIGNMENT, "recall_accuracy", F, W, labels,
                                              learner=submission))


@points(1, "recall_accuracy")
def test_accuracy_float32_huge_scores_clean(submission):
    """float32 inputs and huge scores: no overflow, warning or print, inputs unchanged"""
    F, W, labels = accuracy_problem(35, 30, 3, 4, 21)
    F32, W32 = F.astype(np.float32), (1e30 * W).astype(np.float32)
    expected = 21 / 30                          # scaling every score by 1e30 keeps each argmax
    value = submission.recall_accuracy(F32, W32, labels)
    expect_clean_call(submission, "recall_accuracy", hint=None)
    expect_close(as_float(value, "recall_accuracy(F, W, labels)"), expected,
                 "recall_accuracy of float32 F and W with scores near 1e30", rtol=0, atol=1e-9,
                 mistakes=mistakes(ASSIGNMENT, "recall_accuracy", F32, W32, labels,
                                   learner=submission))
