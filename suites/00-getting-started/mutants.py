"""Realistic wrong row_normalize implementations; the suite must take points from each."""
import numpy as np

from autograder.kit import mutant


@mutant("row_normalize", "divide by the column sums (axis=0) instead of the row sums")
def column_sums(X):
    sums = X.sum(axis=0, keepdims=True)
    return X / np.where(sums == 0, 1, sums)


@mutant("row_normalize", "divide by the row sums without guarding rows of zeros (0/0 gives nan)")
def no_zero_guard(X):
    return X / X.sum(axis=-1, keepdims=True)


@mutant("row_normalize", "divide by the row maximum instead of the row sum")
def row_max(X):
    m = X.max(axis=-1, keepdims=True)
    return X / np.where(m == 0, 1, m)


@mutant("row_normalize", "normalise in place, changing the caller's array")
def in_place(X):
    sums = X.sum(axis=-1, keepdims=True)
    X /= np.where(sums == 0, 1, sums)
    return X


@mutant("row_normalize", "sum over axis=1, which is the last axis only for 2-D input")
def axis_one(X):
    sums = X.sum(axis=1, keepdims=True)
    return X / np.where(sums == 0, 1, sums)
