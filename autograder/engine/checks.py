"""The hidden suites' checks, with messages a learner can act on: a failure raises
:class:`Feedback`, whose message says which property broke and where. When the wrong result matches
a known mistake, the message names that mistake; otherwise it says, where it can, which property of
the result is off (it sums to 1 along the wrong axis, it is off by a constant factor, it is the
transpose of the right answer...).

A course's notebooks usually carry visible checks of their own, run in the learner's kernel; this
module is the trusted side's, so that the engine imports nothing of any course. The attention
course's visible checks (``helpers.checks``) say the same things in the same words
(tests/engine/test_checks.py compares them), so that hidden and visible checks speak alike.

A known mistake is only named when it is sure. ``mistakes`` is a dict, description -> what that
mistake returns on the checked input. The hidden suites pass a dict that can also *confirm* a
candidate on other inputs (it has a ``confirm(description)`` method, see
:func:`autograder.engine.catalogue.mistakes`): a mistake that matches on the checked input is then
named only if it matches on a second input too, because a correct but fragile implementation can
coincide with a mistake on one special input (all keys masked, huge logits) and must not be told
it made it.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, NoReturn, Sequence

import numpy as np

__all__ = ["Feedback", "fail", "check", "case", "expect_shape", "expect_finite", "expect_close",
           "expect_dtype", "expect_sums_to_one", "name_mistake", "describe_difference", "passed"]


class Feedback(AssertionError):
    """A property of the learner's function does not hold; the message says which (all the
    learner sees of a failed hidden test)."""


def fail(message: str) -> NoReturn:
    raise Feedback(message)


def check(condition: object, message: str) -> None:
    """Fail with ``message`` unless ``condition`` holds."""
    if not condition:
        raise Feedback(message)


@contextlib.contextmanager
def case(what: str, hint: str = "") -> Iterator[None]:
    """Name the case a check is trying: an error the learner's code raises inside the block fails
    the check with a sentence that says which case it was (``what``) and, when given, what usually
    causes it (``hint``), followed by the error itself."""
    try:
        yield
    except Feedback:
        raise
    except Exception as error:
        message = str(error).strip().rstrip(".")
        raise Feedback(f"{what} raised {type(error).__name__}: {message}."
                          + (f" {hint}" if hint else "")) from error


def expect_shape(array: Any, shape: Sequence[int], what: str) -> np.ndarray:
    array = np.asarray(array)
    check(array.shape == tuple(shape),
          f"The shape of {what} should be {tuple(shape)}, not {array.shape}.")
    return np.asarray(array)


def expect_finite(array: Any, what: str) -> np.ndarray:
    array = np.asarray(array)
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        fail(f"The entry at index {where} of {what} is {array[where]}; every entry should be a "
             f"finite number (a nan or inf usually means an overflow in exp, or 0/0).")
    return np.asarray(array)


def expect_dtype(array: Any, dtype: Any, what: str) -> np.ndarray:
    array = np.asarray(array)
    check(array.dtype == np.dtype(dtype),
          f"The dtype of {what} should be {np.dtype(dtype)}, the input's precision, not "
          f"{array.dtype}.")
    return np.asarray(array)


def expect_sums_to_one(array: Any, what: str, axis: int = -1, allow_zero: bool = False,
                       atol: float = 1e-6) -> np.ndarray:
    """Every slice of ``array`` along ``axis`` sums to 1 (or to 0, with ``allow_zero``).

    On failure the message says along which axis the slices do sum to 1, if any, so that a
    result normalised along the wrong axis is told exactly that."""
    array = np.asarray(array, dtype=float)
    sums = array.sum(axis=axis)
    good = np.isclose(sums, 1.0, atol=atol) | (allow_zero & np.isclose(sums, 0.0, atol=atol))
    if np.all(good):
        return np.asarray(array)
    axis_name = _axis_name(axis, array.ndim)
    other = _axis_summing_to_one(array, exclude=axis)
    if other is not None:
        fail(f"The slices of {what} along {axis_name} should each sum to 1, but they sum to 1 "
             f"along {_axis_name(other, array.ndim)} instead.")
    where = tuple(int(i) for i in np.argwhere(~good)[0])
    fail(f"The slices of {what} along {axis_name} should each sum to 1, but the one at index "
         f"{where} sums to {_number(sums[where])}.")


def expect_close(actual: Any, expected: Any, what: str, rtol: float = 1e-6, atol: float = 1e-8,
                 mistakes: Any = None) -> np.ndarray:
    """``actual`` equals ``expected`` within tolerance.

    On failure the message locates the largest error and, when ``actual`` matches one of
    ``mistakes`` (a dict: description -> what that mistake returns), names the mistake: the
    description completes "This is what you get when you ...". When no mistake is named, it
    describes the property that is off, if it recognises one (see :func:`describe_difference`).
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    expect_shape(actual, expected.shape, what)
    check(actual.dtype.kind in "biufc",
          f"The entries of {what} should be numbers, but their dtype is {actual.dtype}.")
    if np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        return np.asarray(actual)
    hint = name_mistake(actual, mistakes, expected)
    if hint:
        named = f" This is what you get when you {hint}."
    else:
        prop = describe_difference(actual, expected)
        named = f" {prop}" if prop else ""
    if np.issubdtype(expected.dtype, np.number) and np.isfinite(expected).all():
        try:
            expect_finite(actual, what)
        except Feedback as error:
            raise Feedback(str(error) + named) from None
    diff = np.abs(actual.astype(np.complex128) - expected.astype(np.complex128))
    both_nan = np.isnan(actual) & np.isnan(expected) if actual.dtype.kind in "fc" else False
    diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.ndim else ()
    fail(f"Wrong value in {what}: at index {where} it is {_number(actual[where])}, expected "
         f"{_number(expected[where])}.{named}")


def _matches(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-7, equal_nan=True)


def name_mistake(actual: Any, mistakes: Any, expected: Any = None) -> str | None:
    """The description of the first mistake whose result matches ``actual``, else None.

    Mistakes that happen to give the right answer for this input (``expected``) are skipped. When
    ``mistakes`` can confirm a candidate on other inputs (it has a ``confirm`` method), a mistake
    is named only if it is confirmed; several confirmed mistakes (which no input tried could tell
    apart) are all named, joined by "or when you"."""
    actual = np.asarray(actual)
    candidates = []
    for description, result in (mistakes or {}).items():
        try:
            result = np.asarray(result)
            if expected is not None and _matches(result, expected):
                continue
            if _matches(actual, result):
                candidates.append((description, result))
        except (TypeError, ValueError):
            continue
    confirm = getattr(mistakes, "confirm", None)
    if confirm is None:
        return candidates[0][0] if candidates else None
    confirmed = [description for description, _ in candidates if confirm(description)]
    # Mistakes that agree on every input tried cannot be told apart: name each of them.
    return ", or when you ".join(confirmed) or None


def describe_difference(actual: Any, expected: Any) -> str | None:
    """A sentence saying which recognisable property of ``actual`` differs from ``expected``, or
    None: slices that sum to 1 along another axis, a constant factor, the opposite sign, the
    transpose of the last two axes."""
    try:
        actual = np.asarray(actual, dtype=float)
        expected = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return None
    if actual.shape != expected.shape or actual.size < 2 or not np.isfinite(actual).all() \
            or not np.isfinite(expected).all():
        return None
    if _is_distribution(expected, -1):
        sums, wanted = actual.sum(axis=-1), expected.sum(axis=-1)
        if not np.allclose(sums, wanted, atol=1e-6):
            other = _axis_summing_to_one(actual, exclude=-1) if actual.ndim >= 2 else None
            if other is not None:
                return (f"Your result's slices sum to 1 along {_axis_name(other, actual.ndim)}, "
                        f"not along the last axis (-1).")
            worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(sums - wanted))),
                                                            np.shape(sums)))
            return (f"Its slices along the last axis should sum to {_number(wanted[worst])}; the "
                    f"one at index {worst} sums to {_number(sums[worst])}.")
    if actual.ndim >= 2 and actual.shape[-1] == actual.shape[-2] and \
            not _matches(expected, np.swapaxes(expected, -1, -2)) and \
            _matches(actual, np.swapaxes(expected, -1, -2)):
        return "Your result is the expected one with its last two axes swapped (transposed)."
    scale = _constant_factor(actual, expected)
    if scale is not None:
        if np.isclose(scale, -1.0):
            return "Your result has the opposite sign of the expected one everywhere."
        return f"Your result is the expected one multiplied by {_factor(scale)} everywhere."
    return None


def _is_distribution(array: np.ndarray, axis: int) -> bool:
    sums = array.sum(axis=axis)
    return bool(np.all(array >= -1e-12) and np.all(np.isclose(sums, 1.0, atol=1e-6)
                                                  | np.isclose(sums, 0.0, atol=1e-12))
                and np.any(np.isclose(sums, 1.0, atol=1e-6)))


def _axis_summing_to_one(array: np.ndarray, exclude: int) -> int | None:
    """Another axis along which every slice of ``array`` sums to exactly 1, or None. Arrays of
    zeros and ones are not diagnosed: their slices can sum to 1 along an axis by coincidence."""
    exclude = exclude % array.ndim
    if not np.any((array > 0.01) & (array < 0.99)) or np.any(array < -1e-12):
        return None
    for axis in range(array.ndim):
        if axis != exclude and array.shape[axis] > 1 and np.allclose(array.sum(axis=axis), 1.0,
                                                                     atol=1e-6):
            return axis
    return None


def _axis_name(axis: int, ndim: int) -> str:
    axis = axis % ndim
    return "the last axis (-1)" if axis == ndim - 1 else f"axis {axis}"


def _constant_factor(actual: np.ndarray, expected: np.ndarray) -> float | None:
    """c when actual == c * expected for one constant c (not 0 or 1), else None."""
    big = np.abs(expected) > 1e-9 * max(1.0, float(np.abs(expected).max()))
    if big.sum() < 2:
        return None
    ratios = actual[big] / expected[big]
    c = float(np.median(ratios))
    if not np.isfinite(c) or abs(c) < 1e-12 or np.isclose(c, 1.0, rtol=1e-4):
        return None
    return c if np.allclose(actual, c * expected, rtol=1e-5, atol=1e-8) else None


def _factor(c: float) -> str:
    """Write a factor the way a learner would recognise it: √2, 1/√8, 3, 0.25..."""
    for k in range(2, 1025):
        root = np.sqrt(k)
        if root != int(root):
            if np.isclose(c, root, rtol=1e-6):
                return f"√{k} ≈ {c:.4g}"
            if np.isclose(c, 1 / root, rtol=1e-6):
                return f"1/√{k} ≈ {c:.4g}"
    return _number(c)


def _number(x: Any) -> str:
    x = complex(x)
    if x.imag:
        return str(x)
    x = x.real
    return np.format_float_positional(x, precision=6, trim="-") if np.isfinite(x) else str(x)


def passed(name: str) -> None:
    """Print the line a learner sees when every visible check of ``name`` holds."""
    print(f"\u2714 {name}: all visible checks pass. (The hidden tests check more cases.)")
