"""Realistic wrong implementations of 01-bottleneck; the suite must take points from each."""
import numpy as np

from autograder.kit import mutant


# ------------------------------------------------------------------ rnn_encode

@mutant("rnn_encode", "drop the recurrent term h_{t-1} W_hh, so each state only sees its own input")
def no_recurrence(X, W_xh, W_hh, b_h):
    return np.tanh(X @ W_xh + b_h)


@mutant("rnn_encode", "multiply the previous state by W_hh transposed (W_hh h_{t-1} in column-vector "
        "habit) instead of h_{t-1} W_hh")
def transposed_recurrence(X, W_xh, W_hh, b_h):
    h = np.zeros(X.shape[:-2] + (W_hh.shape[0],))
    states = []
    for t in range(X.shape[-2]):
        h = np.tanh(X[..., t, :] @ W_xh + h @ W_hh.T + b_h)
        states.append(h)
    return np.stack(states, axis=-2)


@mutant("rnn_encode", "store each state before updating it, returning h_0 .. h_{T-1} instead of "
        "h_1 .. h_T")
def off_by_one(X, W_xh, W_hh, b_h):
    h = np.zeros(X.shape[:-2] + (W_hh.shape[0],))
    states = []
    for t in range(X.shape[-2]):
        states.append(h)
        h = np.tanh(X[..., t, :] @ W_xh + h @ W_hh + b_h)
    return np.stack(states, axis=-2)


@mutant("rnn_encode", "loop `for x_t in X`, which walks along the first axis: time only for a "
        "single sequence, the batch otherwise")
def loop_first_axis(X, W_xh, W_hh, b_h):
    h = np.zeros(W_hh.shape[0])
    states = []
    for x_t in X:
        h = np.tanh(x_t @ W_xh + h @ W_hh + b_h)
        states.append(h)
    return np.array(states)


@mutant("rnn_encode", "compute tanh by hand as (e^{2a} - 1) / (e^{2a} + 1), which overflows for "
        "large pre-activations")
def tanh_by_hand(X, W_xh, W_hh, b_h):
    h = np.zeros(X.shape[:-2] + (W_hh.shape[0],))
    states = []
    for t in range(X.shape[-2]):
        a = X[..., t, :] @ W_xh + h @ W_hh + b_h
        e = np.exp(2 * a)
        h = (e - 1) / (e + 1)
        states.append(h)
    return np.stack(states, axis=-2)


@mutant("rnn_encode", "apply tanh to the input term only and add h_{t-1} W_hh after it, "
        "h_t = tanh(x_t W_xh + b_h) + h_{t-1} W_hh")
def tanh_outside_recurrence(X, W_xh, W_hh, b_h):
    h = np.zeros(X.shape[:-2] + (W_hh.shape[0],))
    states = []
    for t in range(X.shape[-2]):
        h = np.tanh(X[..., t, :] @ W_xh + b_h) + h @ W_hh
        states.append(h)
    return np.stack(states, axis=-2)


# ------------------------------------------------------------------ fit_readout

@mutant("fit_readout", "ignore the ridge and solve plain least squares")
def no_ridge(F, Y, ridge=1e-3):
    A = np.hstack([F, np.ones((F.shape[0], 1))])
    return np.linalg.lstsq(A, Y, rcond=None)[0]


@mutant("fit_readout", "add the ridge to every entry of A^T A (`A.T @ A + ridge`) instead of to its "
        "diagonal (`+ ridge * np.eye(d + 1)`)")
def ridge_everywhere(F, Y, ridge=1e-3):
    A = np.hstack([F, np.ones((F.shape[0], 1))])
    return np.linalg.solve(A.T @ A + ridge, A.T @ Y)


@mutant("fit_readout", "put the column of ones first, [1, F], so the bias ends up in row 0 "
        "instead of the last row")
def bias_first(F, Y, ridge=1e-3):
    A = np.hstack([np.ones((F.shape[0], 1)), F])
    return np.linalg.solve(A.T @ A + ridge * np.eye(A.shape[1]), A.T @ Y)


@mutant("fit_readout", "forget the column of ones, so W has no bias row")
def no_bias(F, Y, ridge=1e-3):
    return np.linalg.solve(F.T @ F + ridge * np.eye(F.shape[1]), F.T @ Y)


@mutant("fit_readout", "average the squared error over the n samples, which multiplies the "
        "effective ridge by n")
def mean_squared_error(F, Y, ridge=1e-3):
    A = np.hstack([F, np.ones((F.shape[0], 1))])
    n = A.shape[0]
    return np.linalg.solve(A.T @ A / n + ridge * np.eye(A.shape[1]), A.T @ Y / n)


# ------------------------------------------------------------------ recall_accuracy

@mutant("recall_accuracy", "score with F @ W[:-1] and forget the bias row of W")
def forget_bias(F, W, labels):
    return float(np.mean(np.argmax(F @ W[:-1], axis=-1) == labels))


@mutant("recall_accuracy", "call np.argmax without axis=-1, which returns one index into the "
        "flattened scores instead of one class per row")
def argmax_no_axis(F, W, labels):
    scores = np.hstack([F, np.ones((F.shape[0], 1))]) @ W
    return float(np.mean(np.argmax(scores) == labels))


@mutant("recall_accuracy", "return the number of correct rows instead of the fraction")
def count_not_fraction(F, W, labels):
    scores = np.hstack([F, np.ones((F.shape[0], 1))]) @ W
    return float(np.sum(np.argmax(scores, axis=-1) == labels))


@mutant("recall_accuracy", "put the column of ones first, [1, F], so the bias row is read as a "
        "feature row")
def ones_first(F, W, labels):
    scores = np.hstack([np.ones((F.shape[0], 1)), F]) @ W
    return float(np.mean(np.argmax(scores, axis=-1) == labels))
