"""Correct row_normalize implementations written differently; each must keep full marks."""
import numpy as np

from autograder.kit import alternative


@alternative("row_normalize", "a Python loop over rows")
def loop(X):
    X = np.asarray(X, dtype=float)
    flat = X.reshape(-1, X.shape[-1])
    out = np.zeros_like(flat)
    for i, row in enumerate(flat):
        total = row.sum()
        if total != 0:
            out[i] = row / total
    return out.reshape(X.shape)


@alternative("row_normalize", "np.divide with out= and where=")
def divide_where(X):
    sums = np.sum(X, axis=-1, keepdims=True)
    return np.divide(X, sums, out=np.zeros(np.shape(X), dtype=np.result_type(X, 1.0)),
                     where=sums != 0)


@alternative("row_normalize", "multiplying by reciprocals computed with errstate")
def reciprocal(X):
    sums = X.sum(-1)[..., None]
    with np.errstate(divide="ignore"):
        inv = np.where(sums > 0, 1.0 / sums, 0.0)
    return X * inv
