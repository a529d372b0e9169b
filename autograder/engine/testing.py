"""The suite kit: everything a hidden suite imports to call the learner's functions and explain
what is wrong.

A suite is plain pytest. Each test carries ``@points(n, "exercise")`` and a docstring whose first line
is the learner-facing name of the property it checks. Checks raise :class:`Feedback`, whose message
is all the learner sees of a failure (never the suite's code).

The kit, one of each, so that no suite writes its own:

- :func:`call`: ``call(submission, "softmax", z, hint=...)`` calls the learner's function and, when it
  raises, adds a hint to the feedback (a sentence, or a function of the :class:`SubmissionError`).
- :class:`SubmissionError` has a ``kind`` (:data:`KINDS`) and, for an exception the learner's code
  raised, a ``cause`` (:data:`CAUSES`): suites branch on those, never on the English of a message.
- :func:`expect_close`: values within tolerance; a wrong value, a wrong shape or a nan that a
  catalogued mistake explains names that mistake.
- :func:`expect_clean_call`: the last call raised no numpy warning (underflow aside), changed no
  input in place and printed nothing; ``hint`` and ``copy_hint`` say what usually causes each, for
  the function at hand (a course sets its own defaults in its suites' support module: see
  docs/authoring.md).
- :func:`central_differences`: the trusted numerical gradient expected gradients are computed
  with.
- :func:`expect_plain_cache`: the cache of a learner's forward pass can be handed back to their
  backward pass; :func:`forward_for_backward` runs the forward pass a backward pass is tested
  through, and says which of the two to fix when it fails.
- :func:`computed_once`: a trusted value the suite computes from its own constants alone (the
  expected statistics of a large simulation) is computed once per grading process, although the
  suite is imported afresh for every submission.

Naming a mistake: pass ``mistakes=mistakes(ASSIGNMENT, "softmax", z, learner=submission)`` (from
``autograder.kit``) to :func:`expect_close`. A catalogued mistake is then named only when the
learner's function matches it on the checked input *and* on a second input; otherwise the message
describes the property that is off (:func:`autograder.engine.checks.describe_difference`).

The kit knows no course: what one course's suites share beyond it (a trusted softmax, a hint about
its own functions) lives in a module at the top of that course's suites folder, which every suite
of the course imports by name (:func:`suite.run` puts the folder on the import path).
"""
from __future__ import annotations

import contextvars
import copy
import functools
import hashlib
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np
import pytest
from . import checks
from .checks import expect_finite, expect_shape, fail, name_mistake
from .wire import Lambda, Partial, Unsupported

#: The failure a hidden test raises (:class:`autograder.engine.checks.Feedback`).
Feedback = checks.Feedback

#: What went wrong with a call, as :attr:`SubmissionError.kind`.
KINDS = {
    "raised": "the learner's function raised an exception",
    "missing": "the function is not defined in the notebook (or is not a function)",
    "not-implemented": "the function still raises NotImplementedError",
    "timeout": "the call did not return in time",
    "crashed": "the call took the kernel down, or produced no reply the grader could read",
    "bad-reply": "the reply could not be read as data",
    "unavailable": "the kernel could not run the call at all (it died earlier, or grading stopped)",
    "out-of-time": "the notebook's grading time budget ran out before the test",
}

#: For ``kind == "raised"``: what the learner's exception says went wrong, as
#: :attr:`SubmissionError.cause` (None when it is none of these). Numpy's wording is read here, once.
CAUSES = {
    "matmul": (("matmul", "not aligned"), "the shapes of a matrix product do not fit"),
    "boolean-index": (("boolean index",), "a boolean index has the wrong shape"),
    "broadcast": (("broadcast",), "two shapes do not broadcast together"),
    "out-of-bounds": (("out of bounds",), "an axis or index that the array does not have"),
}


class SubmissionError(Exception):
    """The learner's function could not be called or raised; the message says which and why.

    ``kind`` is one of :data:`KINDS`; ``function`` the graded function called; for a raised
    exception, ``exception`` is its type name (``"ValueError"``), ``detail`` its own message and
    ``cause`` one of :data:`CAUSES` or None."""

    def __init__(self, message: str, kind: str = "raised", function: str | None = None,
                 exception: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        if kind not in KINDS:
            raise ValueError(f"unknown SubmissionError kind {kind!r}")
        self.kind, self.function = kind, function
        self.exception, self.detail = exception, detail
        self.cause = _cause(detail if detail is not None else message) if kind == "raised" else None

    def reworded(self, message: str) -> SubmissionError:
        """The same error (kind, function, exception, cause) with another message for the learner."""
        error = SubmissionError(message, self.kind, self.function, self.exception, self.detail)
        error.cause = self.cause
        return error

    def with_hint(self, extra: str) -> SubmissionError:
        """The same error, its message followed by ``extra``."""
        return self.reworded(f"{self} {extra}")


def _cause(text: object) -> str | None:
    text = str(text)
    for cause, (phrases, _) in CAUSES.items():
        if any(phrase in text for phrase in phrases):
            return cause
    return None


def points(value: float, exercise: str) -> pytest.MarkDecorator:
    """Mark a test as worth ``value`` points towards graded function ``exercise``."""
    return pytest.mark.grade(points=float(value), exercise=exercise)


# ------------------------------------------------------------------ values from the learner

# Whether the running test has read a value the learner's function returned (as_array, as_pair,
# expect_close): a test that only read the kernel's word on hygiene (no in-place change, no
# warning, no print) earns its points only beside a test of values that passes
# (suite.hygiene_counts_with_values).
_value_read: contextvars.ContextVar[bool] = contextvars.ContextVar("value_read", default=False)


def value_read() -> bool:
    return _value_read.get()


def forget_values() -> None:
    _value_read.set(False)


def as_array(value: Any, what: str, dtype_kind: str = "fc") -> np.ndarray:
    """``value`` as a numeric ndarray, or a Feedback naming what came back instead."""
    _value_read.set(True)
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


def as_float(value: Any, what: str) -> float:
    array = as_array(value, what)
    if array.size != 1:
        fail(f"{what} should be a single number, but an array of shape {array.shape} came back.")
    return float(array.reshape(()))


def as_pair(value: Any, what: str) -> Any:
    """A 2-tuple such as ``(output, weights)``."""
    _value_read.set(True)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} should return a pair (two values, as a tuple), but {_kind(value)} came back.")
    return value


def _kind(value: Any) -> str:
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


# ------------------------------------------------------------------ calling the learner

def call(submission: Any, name: str, *args: Any,
         hint: str | Callable[[SubmissionError], str | None] | None = None, **kwargs: Any) -> Any:
    """``submission.<name>(*args, **kwargs)``. When the learner's function raises, the feedback
    adds ``hint``: a sentence (added to an exception the learner's code raised, not to a missing or
    unimplemented function), or a function of the :class:`SubmissionError` returning a sentence or
    None."""
    try:
        return getattr(submission, name)(*args, **kwargs)
    except SubmissionError as error:
        if callable(hint):
            extra = hint(error)
        else:
            extra = hint if error.kind == "raised" else None
        if extra:
            raise error.with_hint(extra) from None
        raise


def forward_for_backward(submission: Any, forward: str, backward: str, run: Callable[[], Any],
                         d_output: Any) -> Any:
    """The learner's forward pass, run by ``run()``, to test their ``backward`` through its cache.

    When the forward pass cannot run, the feedback says so, unless ``backward`` itself is missing
    or not implemented yet, which is then the news that matters."""
    try:
        return run()
    except SubmissionError as forward_error:
        try:
            getattr(submission, backward)(d_output, ())
        except SubmissionError as backward_error:
            if backward_error.kind in ("missing", "not-implemented"):
                raise
        except Exception:
            pass
        raise forward_error.reworded(
            f"{backward} is tested through the cache of your {forward}, which could not run: "
            f"{forward_error}") from None


def suite_function(source: str, **params: Any) -> tuple[Lambda | Partial, Callable[..., Any]]:
    """A function the suite writes, twice: the wire marker the learner's function is given
    (``Lambda(source)``, or a ``Partial`` of it binding ``params``) and the same function as a
    callable on this, trusted, side (``source`` evaluated with ``np`` in scope)."""
    local = eval(source, {"np": np})  # trusted: a function the suite itself writes
    if params:
        return Partial(Lambda(source), **params), functools.partial(local, **params)
    return Lambda(source), local


# ------------------------------------------------------------------ trusted math

_Computed = TypeVar("_Computed")
_computed: dict[tuple[Any, ...], Any] = {}
MAX_COMPUTED = 512  # values kept in one grading process, over every suite and argument


def _frozen(value: Any) -> Any:
    """``value`` as a key of :func:`computed_once`'s store (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape,
                hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _frozen(v)) for k, v in value.items())))
    hash(value)  # anything else must be hashable, as for functools.lru_cache
    return (type(value).__name__, value)


def computed_once(function: Callable[..., _Computed]) -> Callable[..., _Computed]:
    """``function``'s value for the same arguments, computed once per grading process.

    For a trusted value a suite computes from its own constants alone, never from what a
    learner's function returned: the expected statistics of a large simulation, expected
    gradients by central differences, held-out data. A ``functools.lru_cache`` in a suite would
    not do: the suite is imported afresh for every submission, and its caches with it. The value
    is kept under the suite file's content (a changed suite computes again), the function's name
    and the arguments: hashable values, numpy arrays (by dtype, shape and bytes), and lists,
    tuples and dicts of them. Each caller gets its own deep copy, so that no test can change what
    another sees. At most :data:`MAX_COMPUTED` values are kept: past that, values are computed
    and not kept."""
    source = Path(function.__code__.co_filename)
    try:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
    except OSError:
        digest = ""

    @functools.wraps(function)
    def once(*args: Any, **kwargs: Any) -> _Computed:
        key = (str(source), digest, function.__qualname__, _frozen(args), _frozen(kwargs))
        if key not in _computed:
            value = function(*args, **kwargs)
            if len(_computed) >= MAX_COMPUTED or not digest:
                return value
            _computed[key] = value
        kept: _Computed = copy.deepcopy(_computed[key])
        return kept
    return once


def central_differences(f: Callable[[np.ndarray], float], x: Any,
                        eps: float = 1e-6) -> np.ndarray:
    """The trusted numerical gradient suites compute expected gradients with: central
    differences (f(x + eps e_i) - f(x - eps e_i)) / (2 eps) of a scalar function f, entry by entry,
    in float64, on a copy of x."""
    x = np.array(x, dtype=np.float64)
    grad: np.ndarray = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f(x)
        x[i] = old - eps
        down = f(x)
        x[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


# ------------------------------------------------------------------ checks

def expect_close(actual: Any, expected: Any, what: str, rtol: float = 1e-6, atol: float = 1e-8,
                 mistakes: Any = None) -> Any:
    """As :func:`autograder.engine.checks.expect_close`, after making sure ``actual`` is a numeric array.

    A result of the wrong shape, or with nan or inf where the right answer is finite, is first
    compared with the known ``mistakes``, so that a mistake that produces one is named too."""
    array = as_array(actual, what)
    if mistakes:
        _name_broken_result(array, np.asarray(expected), what, mistakes)
    return checks.expect_close(array, expected, what, rtol, atol, mistakes)


def _name_broken_result(array: np.ndarray, expected: np.ndarray, what: str,
                        mistakes: Any) -> None:
    """Fail with the usual message about a wrong shape or a non-finite entry, followed by the
    mistake that explains it, if one does; otherwise return and let the comparison speak."""
    check_broken: Callable[[], object]
    if array.shape != expected.shape:
        check_broken = lambda: expect_shape(array, expected.shape, what)  # noqa: E731
    elif array.dtype.kind in "fc" and expected.dtype.kind in "biufc" \
            and (~np.isfinite(array) & np.isfinite(expected)).any():
        check_broken = lambda: expect_finite(array, what)  # noqa: E731
    else:
        return
    hint = name_mistake(array, mistakes, expected)
    if hint:
        try:
            check_broken()
        except Feedback as error:
            fail(f"{error} This is what you get when you {hint}.")


def _unsupported_part(value: Any, path: str = "cache") -> tuple[str, str] | None:
    """Where in a value something that cannot cross the wire sits, and what it was (or None)."""
    if isinstance(value, Unsupported):
        return path, value.type_name
    parts = enumerate(value) if isinstance(value, (tuple, list)) else \
        ((repr(k), v) for k, v in value.items()) if isinstance(value, dict) else ()
    for key, item in parts:
        found = _unsupported_part(item, f"{path}[{key}]")
        if found:
            return found
    return None


def expect_plain_cache(cache: Any, forward: str, backward: str) -> None:
    """The cache a learner's ``forward`` returned is plain data that the grader can hand back,
    unchanged, to their ``backward``: tuples, lists and str-keyed dicts of arrays and numbers."""
    found = _unsupported_part(cache)
    if found:
        path, type_name = found
        extra = (" (a dict whose keys are not all strings?)" if type_name == "dict" else "")
        fail(f"the cache returned by {forward} contains an object of type {type_name}{extra} at "
             f"{path}. The grader passes your cache back to {backward}, so it must be plain "
             f"data: a tuple, list or dict (with string keys) of numpy arrays and numbers. "
             f"Functions, closures and objects of your own classes cannot make the trip.")


COPY_HINT = "for example `X = X / s` rather than `X /= s`"


def expect_clean_call(submission: Any, name: str,
                      hint: str | Callable[[str], str | None] | None = None,
                      copy_hint: str = COPY_HINT, value: Any = None, mistakes: Any = None) -> None:
    """The last call raised no numpy warning, changed none of its inputs in place and printed
    nothing.

    Underflow (a tiny number rounded to 0, as in exp(-1000)) is harmless, silent under numpy's
    defaults and not held against anyone. ``hint`` says what usually causes a warning in this
    function: a sentence, or a function of the warning's text returning one (or None, the
    default: the warning alone).
    ``copy_hint`` shows how to work on a copy. When the call warned and its result ``value``
    matches one of the known ``mistakes``, the mistake is named."""
    last = submission.last
    warned = [w for w in last.warnings if "underflow" not in w.lower()]
    if warned:
        why = hint(warned[0]) if callable(hint) else hint
        message = (f"{name} emitted a warning: {warned[0]}. Valid input must not produce warnings."
                   + (f" {why}" if why else ""))
        known = name_mistake(value, mistakes) if value is not None and mistakes else None
        fail(message + (f" This is what you get when you {known}." if known else ""))
    if last.mutated:
        fail(f"{name} changed its input argument number {last.mutated[0] + 1} in place; "
             f"work on a copy instead ({copy_hint}).")
    printed = last.stdout.strip()
    if printed:
        fail(f"{name} printed {printed[:60]!r}; graded functions must not print "
             f"(remove debugging prints before submitting).")
