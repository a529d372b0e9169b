"""Correct implementations of center, written otherwise than the reference; the suite must give
each full marks."""
from autograder.kit import alternative


@alternative("center", "divide each row's sum by its length, and subtract that")
def by_sum(X):
    return X - X.sum(axis=-1, keepdims=True) / X.shape[-1]
