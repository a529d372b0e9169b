"""Hidden suite of 00-getting-started: row_normalize."""
import numpy as np
import pytest

from autograder.kit import (as_array, check, expect_close, expect_shape, expect_sums_to_one,
                            mistakes, points)

from attention_kit import expect_clean_call

ASSIGNMENT = "00-getting-started"
# What expect_clean_call says about a warning in row_normalize.
CLEAN = {"hint": "A 'divide by zero' or 'invalid value' warning means a row of zeros was divided by "
                 "its sum, 0: divide by 1 where the sum is 0 (np.where)."}


def normalized(X):
    sums = X.sum(axis=-1, keepdims=True)
    return X / np.where(sums == 0, 1, sums)


def rows(seed, shape):
    return np.random.default_rng(seed).random(shape) * 3


@points(1, "row_normalize")
@pytest.mark.parametrize("shape", [(3, 4), (1, 7), (6, 2)], ids=["3x4", "1x7", "6x2"])
def test_values(submission, shape):
    """each entry is divided by its row's sum"""
    X = rows(sum(shape), shape)
    expect_close(submission.row_normalize(X), normalized(X), f"row_normalize of shape {shape}",
                 mistakes=mistakes(ASSIGNMENT, "row_normalize", X, learner=submission))


@points(1, "row_normalize")
def test_rows_sum_to_one(submission):
    """every row of the result sums to 1"""
    X = rows(1, (5, 9)) + 0.01
    P = as_array(submission.row_normalize(X), "row_normalize(X)")
    expect_shape(P, (5, 9), "row_normalize(X) for X of shape (5, 9)")
    expect_sums_to_one(P, "row_normalize(X) for X of shape (5, 9)", axis=-1)


@points(1, "row_normalize")
def test_zero_rows_stay_zero(submission):
    """a row of zeros stays zero, with no nan and no warning"""
    X = rows(2, (4, 3))
    X[1] = 0.0
    X[3] = 0.0
    P = expect_close(submission.row_normalize(X), normalized(X), "row_normalize with zero rows",
                     mistakes=mistakes(ASSIGNMENT, "row_normalize", X, learner=submission))
    check(not np.isnan(P).any(), "rows of zeros must stay zero, not become nan.")
    expect_clean_call(submission, "row_normalize", **CLEAN)


@points(1, "row_normalize")
def test_batch_dimensions(submission):
    """leading batch dimensions: rows are always the last axis"""
    X = rows(3, (2, 3, 4, 5))
    X[1, 2, 0] = 0.0
    expect_close(submission.row_normalize(X), normalized(X), "row_normalize of shape (2, 3, 4, 5)",
                 mistakes=mistakes(ASSIGNMENT, "row_normalize", X, learner=submission))


@points(1, "row_normalize")
def test_float32_and_scale(submission):
    """works on float32 input and on huge or tiny values"""
    X32 = rows(4, (3, 6)).astype(np.float32)
    expect_close(submission.row_normalize(X32), normalized(X32.astype(np.float64)),
                 "row_normalize of float32 input", rtol=1e-5, atol=1e-6)
    tiny = rows(5, (3, 6)) * 1e-300
    expect_close(submission.row_normalize(tiny), normalized(tiny), "row_normalize of values near 1e-300")
    huge = rows(6, (3, 6)) * 1e300
    expect_close(submission.row_normalize(huge), normalized(huge), "row_normalize of values near 1e300")


@points(1, "row_normalize")
def test_input_untouched(submission):
    """leaves its input unchanged and emits no warnings"""
    X = rows(6, (4, 4))
    expect_close(submission.row_normalize(X), normalized(X), "row_normalize(X)",
                 mistakes=mistakes(ASSIGNMENT, "row_normalize", X, learner=submission))
    expect_clean_call(submission, "row_normalize", **CLEAN)
