"""The agent: the code the grader installs inside a learner's kernel to answer calls.

Its source text is executed in the kernel (it needs only the standard library and numpy), where
:func:`handle` looks a function up in the learner's namespace, calls it with the decoded arguments
and encodes what came back as JSON and ``.npy`` bytes. The reply echoes the call's nonce.

Everything here runs where the learner's code runs, so nothing it reports is trusted: the grader
reads replies with its own data-only reader (:mod:`autograder.engine.wire`). What the agent measures
about a call (whether an argument was changed in place, whether numpy warned, what was printed)
rests on the kernel's word: code that patches numpy or this module can forge it. The grader never
imports this module to read replies; the project's own tests use :func:`handle` directly to run
trusted reference code through the same encoding.
"""
from __future__ import annotations

import base64
import contextlib
import functools
import importlib
import io
import json
import math
import time
import traceback
import warnings
from typing import Any

import numpy as np

MIME = "application/vnd.autograder.reply+json"
MAX_TEXT = 4000  # characters of a learner's printed output or traceback kept per call
FILENAME = "grader-agent"

# Private references, taken when the agent is installed, before any learner cell runs.
_dumps, _loads, _array_equal, _copy = json.dumps, json.loads, np.array_equal, np.array
_errstate, _catch_warnings, _simplefilter = np.errstate, warnings.catch_warnings, warnings.simplefilter
_redirect_stdout, _redirect_stderr = contextlib.redirect_stdout, contextlib.redirect_stderr


def _array_text(array: Any) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _array_from(text: str) -> Any:
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def encode(value: Any, function: Any = None) -> Any:
    """A returned value as JSON-able data; unknown objects become an ``__unsupported__`` marker
    (with ``function``, a callable becomes what ``function(value)`` gives)."""
    if function is not None and callable(value) and not isinstance(value, (type, np.ndarray)):
        return function(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) is np.ndarray:
        if value.dtype.kind not in "biufc" or value.dtype.fields is not None:
            return {"__unsupported__": f"numpy array of dtype {value.dtype}"}
        return {"__ndarray__": _array_text(value)}
    if isinstance(value, np.generic) and np.asarray(value).dtype.kind in "biufc":
        return {"__npscalar__": _array_text(np.asarray(value))}
    if type(value) is tuple:
        return {"__tuple__": [encode(v, function) for v in value]}
    if type(value) is list:
        return [encode(v, function) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {"__dict__": {k: encode(v, function) for k, v in value.items()}}
    return {"__unsupported__": type(value).__name__}


# The functions the suite passed in calls (its lambdas and partials), as it sent them: the course's
# own functions are computed by the grader, which can be given such a function back by its marker.
_suite_functions: dict[int, tuple[Any, Any]] = {}


def _suite_function(function: Any, data: Any) -> Any:
    _suite_functions[id(function)] = (function, data)
    return function


def decode(data: Any, namespace: dict[str, Any]) -> Any:
    """The arguments of a call, as the grader encoded them (functions resolved in ``namespace``)."""
    if isinstance(data, list):
        return [decode(v, namespace) for v in data]
    if not isinstance(data, dict):
        return data
    if "__ndarray__" in data:
        return _array_from(data["__ndarray__"])
    if "__npscalar__" in data:
        return _array_from(data["__npscalar__"])[()]
    if "__float__" in data:
        return float(data["__float__"])
    if "__tuple__" in data:
        return tuple(decode(v, namespace) for v in data["__tuple__"])
    if "__dict__" in data:
        return {k: decode(v, namespace) for k, v in data["__dict__"].items()}
    if "__rng__" in data:
        return np.random.default_rng(int(data["__rng__"]))
    if "__function__" in data:
        name = data["__function__"]
        if not callable(namespace.get(name)):
            raise NameError(f"{name} is not defined")
        return namespace[name]
    if "__lambda__" in data:  # suite-written source, evaluated here, in the learner's kernel
        return _suite_function(eval(data["__lambda__"], {"np": np, "__builtins__": __builtins__}), data)  # trusted: runs only inside the learner's kernel
    if "__partial__" in data:
        return _suite_function(functools.partial(decode(data["__partial__"], namespace),
                                                 **decode(data["kwargs"], namespace)), data)
    raise ValueError(f"unknown wire object with keys {sorted(data)}")


def _snapshot(values: list[Any]) -> list[Any]:
    return [_copy(v, copy=True) if isinstance(v, np.ndarray) else None for v in values]


def handle(request_text: str, namespace: dict[str, Any]) -> str:
    """Call ``namespace[name](*args, **kwargs)``; return the JSON reply text."""
    started = time.perf_counter()
    printed = io.StringIO()
    reply: dict[str, Any] = {"ok": False, "nonce": None}
    try:
        call = _loads(request_text)
        reply["nonce"] = call["nonce"]
        name = call["name"]
        function = namespace.get(name)
        if function is None or not callable(function):
            reply["error"] = {"kind": "missing", "message": f"{name} is not defined"
                              if function is None else f"{name} is not a function"}
            return _dumps(reply)
        args = decode(call["args"], namespace)
        kwargs = decode(call["kwargs"], namespace)
        before = _snapshot(list(args) + list(kwargs.values()))
        with _catch_warnings(record=True) as caught, \
                _redirect_stdout(printed), _redirect_stderr(printed):
            _simplefilter("always")
            with _errstate(all="warn", under="ignore"):  # underflow to 0 is harmless
                value = function(*args, **kwargs)
        after = list(args) + list(kwargs.values())
        mutated = [i for i, (b, a) in enumerate(zip(before, after))
                   if b is not None and not (isinstance(a, np.ndarray) and a.shape == b.shape
                                             and _array_equal(a, b, equal_nan=True))]
        reply.update({"ok": True, "value": encode(value), "mutated": mutated,
                      "warnings": [f"{w.category.__name__}: {w.message}" for w in caught][:20]})
    except NotImplementedError:
        reply["error"] = {"kind": "not_implemented", "message": "raises NotImplementedError"}
    except BaseException as error:  # a learner's SystemExit or KeyboardInterrupt is a result too
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        # Drop the agent's own frames: the learner only needs their own code's frames.
        kept = [line for line in lines if FILENAME not in line]
        reply.pop("value", None)
        reply["ok"] = False
        reply["error"] = {"kind": "exception",
                          "message": f"{type(error).__name__}: {error}"[:MAX_TEXT],
                          "traceback": "".join(kept)[-MAX_TEXT:]}
    reply["stdout"] = printed.getvalue()[:MAX_TEXT]
    reply["seconds"] = time.perf_counter() - started
    try:
        return _dumps(reply)
    except (TypeError, ValueError) as error:  # e.g. a message that is not text
        return _dumps({"ok": False, "nonce": reply["nonce"],
                       "error": {"kind": "exception", "message": f"unreadable result ({error})"}})


class CourseFunctionError(Exception):
    """The grader would not, or could not, compute the course's function for this call."""


def _as_marker(function: Any) -> Any:
    kept = _suite_functions.get(id(function))
    if kept is None or kept[0] is not function:
        raise CourseFunctionError("it can be given only the functions the grader's tests passed "
                                  "in, as they were passed")
    return kept[1]


def course_function(name: str) -> Any:
    """A stand-in for the course's ``name`` while the grader tests another function with the
    course's version of this one in place: each call sends its arguments to the grader (on the
    kernel's stdin channel, which only such tests open), and the grader computes the course's
    function on its side and sends back the result as data. No code of the course's is here."""
    def stand_in(*args: Any, **kwargs: Any) -> Any:
        try:
            request = _dumps({"oracle": name, "args": [encode(a, _as_marker) for a in args],
                              "kwargs": {str(k): encode(v, _as_marker)
                                         for k, v in kwargs.items()}})
        except CourseFunctionError as error:
            raise CourseFunctionError(f"the course's `{name}`, put in place of yours for this "
                                      f"test, {error}") from None
        from IPython import get_ipython
        answer = _loads(get_ipython().kernel.raw_input(request))
        if not isinstance(answer, dict) or answer.get("ok") is not True:
            message = answer.get("message") if isinstance(answer, dict) else None
            raise CourseFunctionError(f"the course's `{name}`, put in place of yours for this "
                                      f"test, failed: {message or 'no answer'}")
        return decode(answer.get("value"), {})
    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def put_in_place(names: list[str], namespace: dict[str, Any]) -> None:
    """Stand-ins for the course's ``names`` in the learner's namespace (:func:`course_function`)."""
    for name in names:
        namespace[name] = course_function(name)


def flush_only_what_is_written() -> None:
    """Make the kernel's stdout and stderr skip a flush that has nothing to send.

    ipykernel's flush hands its output thread two tasks and waits for both, even when nothing was
    printed, and it flushes both streams before and after every cell and before every display:
    six waits on another thread for each call, none of which sends anything when the call printed
    nothing (the agent catches what the learner's function prints). A stream with text waiting is
    flushed as before, so no output moves; with an ipykernel whose streams this does not know,
    every flush is the full one."""
    try:
        stream = importlib.import_module("ipykernel.iostream").OutStream
    except (ImportError, AttributeError):
        return
    full = stream.flush
    if getattr(full, "skips_empty", False):  # installed already
        return

    def flush(self: Any) -> None:
        try:
            with self._buffer_lock:
                waiting = self.echo is not None or any(
                    buffer.tell() for buffer in self._buffers.values())
        except Exception:  # not the ipykernel this knows: flush as it would
            waiting = True
        if waiting:
            full(self)

    flush.skips_empty = True  # type: ignore[attr-defined]
    stream.flush = flush


REQUEST_KEY = "autograder_request"  # where an execute request's metadata carries a call
ENTRY = """
__autograder_agent__.flush_only_what_is_written()
def __autograder_call__():
    from IPython.display import display
    # the call is sent beside the cell, in its request's metadata
    request_text = get_ipython().kernel.get_parent()["metadata"][%r]
    display({%r: __autograder_agent__.handle(request_text, get_ipython().user_ns)}, raw=True)
""" % (REQUEST_KEY, MIME)


def bootstrap() -> str:
    """Source that installs this module in a kernel as ``__autograder_agent__``."""
    with open(__file__.replace(".pyc", ".py"), encoding="utf-8") as handle:
        source = handle.read()
    return (
        "import types as __t\n"
        "__autograder_agent__ = __t.ModuleType('autograder_agent')\n"
        f"exec(compile({source!r}, {FILENAME!r}, 'exec'), __autograder_agent__.__dict__)\n"  # trusted: runs only inside the kernel
        "del __t\n" + ENTRY
    )
