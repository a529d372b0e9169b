"""Checks with messages a learner can act on.

The notebooks' visible checks and the hidden suites use these same functions: a failure raises
:class:`CheckFailed` whose message says which property broke, where, and, when the wrong result
matches a known mistake, which mistake it probably is.
"""
import numpy as np

__all__ = ["CheckFailed", "fail", "check", "expect_shape", "expect_finite", "expect_close",
           "expect_dtype", "name_mistake", "passed"]


class CheckFailed(AssertionError):
    """A property of the learner's function does not hold; the message says which."""


def fail(message):
    raise CheckFailed(message)


def check(condition, message):
    """Fail with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailed(message)


def expect_shape(array, shape, what):
    array = np.asarray(array)
    check(array.shape == tuple(shape),
          f"{what} should have shape {tuple(shape)}, but it has shape {array.shape}.")
    return array


def expect_finite(array, what):
    array = np.asarray(array)
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        fail(f"{what} contains {array[where]} at index {where}; every entry should be a finite "
             f"number (a NaN or inf usually means an overflow in exp, or 0/0).")
    return array


def expect_dtype(array, dtype, what):
    array = np.asarray(array)
    check(array.dtype == np.dtype(dtype),
          f"{what} should keep the input's precision ({np.dtype(dtype)}), but it is {array.dtype}.")
    return array


def expect_close(actual, expected, what, rtol=1e-6, atol=1e-8, mistakes=None):
    """``actual`` equals ``expected`` within tolerance.

    On failure the message locates the largest error and, when ``actual`` matches one of
    ``mistakes`` (a dict: description -> what that mistake returns), names the mistake: the
    description completes "This is what you get when you ...".
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    expect_shape(actual, expected.shape, what)
    check(actual.dtype.kind in "biufc", f"{what} should hold numbers, but its dtype is {actual.dtype}.")
    if np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        return actual
    hint = name_mistake(actual, mistakes, expected)
    named = f" This is what you get when you {hint}." if hint else ""
    if np.issubdtype(expected.dtype, np.number) and np.isfinite(expected).all():
        try:
            expect_finite(actual, what)
        except CheckFailed as error:
            raise CheckFailed(str(error) + named) from None
    diff = np.abs(actual.astype(np.complex128) - expected.astype(np.complex128))
    both_nan = np.isnan(actual) & np.isnan(expected) if actual.dtype.kind in "fc" else False
    diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.ndim else ()
    fail(f"{what} is not what it should be: at index {where} it is "
         f"{_number(actual[where])}, expected {_number(expected[where])}.{named}")


def name_mistake(actual, mistakes, expected=None):
    """The description of the first mistake whose result matches ``actual``, else None.

    Mistakes that happen to give the right answer for this input (``expected``) are skipped."""
    actual = np.asarray(actual)
    for description, result in (mistakes or {}).items():
        try:
            result = np.asarray(result)
            if expected is not None and result.shape == np.shape(expected) and np.allclose(
                    result, expected, rtol=1e-5, atol=1e-7, equal_nan=True):
                continue
            if result.shape == actual.shape and np.allclose(actual, result, rtol=1e-5,
                                                            atol=1e-7, equal_nan=True):
                return description
        except (TypeError, ValueError):
            continue
    return None


def _number(x):
    x = complex(x)
    if x.imag:
        return str(x)
    x = x.real
    return np.format_float_positional(x, precision=6, trim="-") if np.isfinite(x) else str(x)


def passed(name):
    """Print the line a learner sees when every visible check of ``name`` holds."""
    print(f"\u2714 {name}: all visible checks pass. (The hidden tests check more cases.)")
