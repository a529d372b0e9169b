"""Correct implementations of 01-bottleneck written differently; each must keep full marks."""
import numpy as np

from autograder.kit import alternative


# ------------------------------------------------------------------ rnn_encode

@alternative("rnn_encode", "a preallocated output filled with einsum, one time step at a time")
def preallocated_einsum(X, W_xh, W_hh, b_h):
    X = np.asarray(X)
    d_h = W_hh.shape[0]
    H = np.zeros(X.shape[:-1] + (d_h,), dtype=np.result_type(X, W_xh, W_hh, b_h, np.float32))
    h = np.zeros(X.shape[:-2] + (d_h,), dtype=H.dtype)
    for t in range(X.shape[-2]):
        h = np.tanh(np.einsum("...i,ij->...j", X[..., t, :], W_xh)
                    + np.einsum("...i,ij->...j", h, W_hh) + b_h)
        H[..., t, :] = h
    return H


@alternative("rnn_encode", "flatten the batch, loop over sequences and steps in Python, reshape back")
def nested_loops(X, W_xh, W_hh, b_h):
    X = np.asarray(X, dtype=float)
    T, d_in = X.shape[-2], X.shape[-1]
    d_h = len(b_h)
    sequences = X.reshape(-1, T, d_in)
    out = []
    for sequence in sequences:
        h = np.zeros(d_h)
        states = []
        for x in sequence:
            h = np.tanh(x.dot(W_xh) + h.dot(W_hh) + b_h)
            states.append(h)
        out.append(states)
    return np.array(out).reshape(X.shape[:-2] + (T, d_h))


@alternative("rnn_encode", "time moved to the front with moveaxis, inputs projected once")
def time_major(X, W_xh, W_hh, b_h):
    steps = np.moveaxis(np.asarray(X) @ W_xh + b_h, -2, 0)     # (T, ..., d_h)
    H = np.empty_like(steps)
    previous = np.zeros_like(steps[0])
    for t, step in enumerate(steps):
        previous = np.tanh(step + previous @ W_hh)
        H[t] = previous
    return np.moveaxis(H, 0, -2)


# ------------------------------------------------------------------ fit_readout

@alternative("fit_readout", "least squares on the data stacked over sqrt(ridge) * I (no normal "
             "equations formed)")
def stacked_lstsq(F, Y, ridge=1e-3):
    F = np.asarray(F, dtype=float)
    Y = np.asarray(Y, dtype=float)
    A = np.column_stack([F, np.ones(len(F))])
    m = A.shape[1]
    big_A = np.vstack([A, np.sqrt(ridge) * np.eye(m)])
    big_Y = np.vstack([Y, np.zeros((m, Y.shape[1]))])
    return np.linalg.lstsq(big_A, big_Y, rcond=None)[0]


@alternative("fit_readout", "the dual (kernel) form A^T (A A^T + ridge I)^-1 Y")
def dual_form(F, Y, ridge=1e-3):
    A = np.concatenate([F, np.ones_like(F[:, :1])], axis=1).astype(float)
    if ridge == 0:
        return np.linalg.pinv(A) @ Y
    return A.T @ np.linalg.solve(A @ A.T + ridge * np.eye(A.shape[0]), Y)


@alternative("fit_readout", "the other convention: centre the data so the bias is not penalised")
def unpenalised_bias(F, Y, ridge=1e-3):
    F = np.asarray(F, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    f_mean, y_mean = F.mean(axis=0), Y.mean(axis=0)
    Fc, Yc = F - f_mean, Y - y_mean
    W_f = np.linalg.solve(Fc.T @ Fc + ridge * np.eye(F.shape[1]), Fc.T @ Yc)
    bias = y_mean - f_mean @ W_f
    return np.vstack([W_f, bias])


@alternative("fit_readout", "an SVD of A with shrunk singular values s / (s^2 + ridge)")
def svd_shrinkage(F, Y, ridge=1e-3):
    A = np.hstack([F, np.ones((F.shape[0], 1), dtype=F.dtype)]).astype(np.float64)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    shrink = np.divide(s, s ** 2 + ridge, out=np.zeros_like(s), where=s ** 2 + ridge > 0)
    return Vt.T @ (shrink[:, None] * (U.T @ Y))


# ------------------------------------------------------------------ recall_accuracy

@alternative("recall_accuracy", "a Python loop over rows with the augmented row [f, 1]")
def row_loop(F, W, labels):
    hits = 0
    for f, label in zip(F, labels):
        scores = np.append(f, 1.0) @ W
        hits += int(np.argmax(scores) == label)
    return hits / len(labels)


@alternative("recall_accuracy", "count_nonzero over the augmented matrix, returned as a numpy scalar")
def count_nonzero(F, W, labels):
    A = np.concatenate([F, np.ones((len(F), 1), dtype=F.dtype)], axis=-1)
    predictions = (A @ W).argmax(-1)
    return np.count_nonzero(predictions == np.asarray(labels)) / np.size(labels)
