"""Hidden suite of the second course's one assignment: center(X) subtracts each row's mean."""
import numpy as np

from autograder.kit import call, expect_clean_call, expect_close, expect_dtype, mistakes, points

ASSIGNMENT = "centering"


def centered(X):
    """The trusted answer, in float64."""
    X = np.asarray(X, dtype=np.float64)
    return X - X.mean(axis=-1, keepdims=True)


@points(1, "center")
def test_each_row_loses_its_own_mean(submission):
    """each row of a matrix loses its own mean"""
    X = np.random.default_rng(0).normal(size=(4, 5)) + np.arange(4)[:, None]
    expect_close(call(submission, "center", X), centered(X), "center(X) for X of shape (4, 5)",
                 mistakes=mistakes(ASSIGNMENT, "center", X, learner=submission))


@points(1, "center")
def test_leading_dimensions_are_batches(submission):
    """leading dimensions are batches: every row of every matrix loses its own mean"""
    X = np.random.default_rng(1).normal(size=(2, 3, 4)) * 5 + 1
    expect_close(call(submission, "center", X), centered(X), "center(X) for X of shape (2, 3, 4)",
                 mistakes=mistakes(ASSIGNMENT, "center", X, learner=submission))


@points(1, "center")
def test_float32_stays_float32_and_the_input_is_untouched(submission):
    """float32 input gives float32, and the input is left as it was"""
    X = np.random.default_rng(2).normal(size=(3, 6)).astype(np.float32)
    result = expect_dtype(call(submission, "center", X), np.float32, "center(X) for float32 X")
    expect_close(result, centered(X), "center(X) for float32 X", rtol=1e-5, atol=1e-6)
    expect_clean_call(submission, "center", copy_hint="for example `X - m`, not `X -= m`")
