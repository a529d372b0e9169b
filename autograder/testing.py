"""What a hidden suite imports: points, the submission proxy's errors, and checks that explain.

A suite is plain pytest. Each test carries ``@points(n, "exercise")`` and a docstring whose first line
is the learner-facing name of the property it checks. Checks raise :class:`Feedback`, whose message
is all the learner sees of a failure (never the suite's code).

Naming a mistake: pass ``mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission)`` (from
``autograder.catalogue``) to :func:`expect_close`. A catalogued mistake is then named only when the
learner's function matches it on the checked input *and* on a second input; otherwise the message
describes the property that is off (``helpers.checks.describe_difference``).
"""
import numpy as np
import pytest
from helpers import checks
from helpers.checks import (CheckFailed as Feedback, check, describe_difference,  # noqa: F401
                            expect_dtype, expect_finite, expect_shape, expect_sums_to_one, fail,
                            name_mistake)

from .wire import Function, Lambda, Partial, RNG, Unsupported  # noqa: F401  (re-exported for suites)


class SubmissionError(Exception):
    """The learner's function could not be called or raised; the message says which and why."""


def points(value, exercise):
    """Mark a test as worth ``value`` points towards graded function ``exercise``."""
    return pytest.mark.grade(points=float(value), exercise=exercise)


# ------------------------------------------------------------------ values from the learner

def as_array(value, what, dtype_kind="fc"):
    """``value`` as a numeric ndarray, or a Feedback naming what came back instead."""
    if isinstance(value, Unsupported):
        fail(f"{what} should be a numpy array, but an object of type {value.type_name} came back.")
    if isinstance(value, (tuple, dict)) or value is None or isinstance(value, str):
        fail(f"{what} should be a numpy array, but {_kind(value)} came back.")
    try:
        array = np.asarray(value)
    except Exception:
        fail(f"{what} should be a numpy array, but {_kind(value)} came back.")
    if array.dtype.kind not in dtype_kind + ("iub" if "f" in dtype_kind else ""):
        fail(f"{what} should hold numbers, but its dtype is {array.dtype}.")
    return array


def as_float(value, what):
    array = as_array(value, what)
    if array.size != 1:
        fail(f"{what} should be a single number, but an array of shape {array.shape} came back.")
    return float(array.reshape(()))


def as_pair(value, what):
    """A 2-tuple such as ``(output, weights)``."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} should return a pair (two values, as a tuple), but {_kind(value)} came back.")
    return value


def _kind(value):
    if isinstance(value, Unsupported):
        return f"an object of type {value.type_name}"
    if value is None:
        return "None"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} values"
    if isinstance(value, (list, dict, str)):
        return f"a {type(value).__name__}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"a value of type {type(value).__name__}"


# ------------------------------------------------------------------ checks

def expect_close(actual, expected, what, rtol=1e-6, atol=1e-8, mistakes=None):
    """As :func:`helpers.checks.expect_close`, after making sure ``actual`` is a numeric array."""
    return checks.expect_close(as_array(actual, what), expected, what, rtol, atol, mistakes)


def expect_clean_call(submission, name, hint=None):
    """The last call raised no numpy warning, printed nothing and left its inputs untouched.

    ``hint`` replaces the default explanation of a warning (an overflow in exp).
    """
    last = submission.last
    if last.warnings:
        fail(f"{name} emitted a warning: {last.warnings[0]}. Valid input must not produce "
             f"warnings ({hint or 'an overflow in exp usually means the maximum was not subtracted'}).")
    if last.mutated:
        fail(f"{name} changed its input argument number {last.mutated[0] + 1} in place; "
             f"work on a copy instead (for example `X = X / s` rather than `X /= s`).")
    if last.stdout.strip():
        fail(f"{name} printed {last.stdout.strip()[:60]!r}; graded functions must not print "
             f"(remove debugging prints before submitting).")
