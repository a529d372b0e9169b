"""The wire between the trusted grader and the learner's kernel: the grader's side.

A call goes out as JSON text (:func:`request`) and comes back as one JSON reply, displayed by the
kernel under :data:`MIME` (see :mod:`autograder.engine.agent`, the code that answers inside the
kernel).
Everything in a reply was written by code the learner controls, so this module reads it as data
and nothing else (:func:`read_reply`, :func:`decode`):

- numbers, booleans, strings, None, and lists, tuples and string-keyed dicts of those;
- numeric and boolean arrays in ``.npy`` format, parsed here by a strict reader (no object,
  structured, string, datetime or void dtypes; the header is matched, never evaluated);
- within limits of size, depth and element count.

Anything else becomes an :class:`Unsupported` value ("an object of type X"). Nothing the kernel
sends is evaluated, unpickled or imported, and a reply must carry the nonce of its call.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Callable

import numpy as np

# A reply to one call, checked field by field (:func:`read_reply`).
Reply = dict[str, Any]

MIME = "application/vnd.autograder.reply+json"
MAX_REPLY_CHARS = 8 << 20    # one reply; the suites' largest is 1.4 MB (06-multi-head)
MAX_DEPTH = 24               # nesting of lists, tuples and dicts in a value
MAX_ITEMS = 100_000          # values (arrays count as one) in one reply
MAX_STRUCTURE = 2 * MAX_ITEMS  # brackets, braces and commas in any JSON text read from a kernel
MAX_TEXT = 4000              # characters of printed output or traceback kept per call


# ---------------------------------------------------------------- markers for arguments

class Function:
    """Pass one of the learner's own functions, by name, as an argument."""

    def __init__(self, name: str) -> None:
        self.name = str(name)


class Lambda:
    """Pass a small function written by the suite (source text, evaluated in the learner's kernel
    with ``np`` in scope; never on this side)."""

    def __init__(self, source: str) -> None:
        self.source = str(source)


class Partial:
    """Pass ``functools.partial(function, **kwargs)``; ``function`` is a Function or Lambda."""

    def __init__(self, function: Function | Lambda, **kwargs: Any) -> None:
        self.function = function
        self.kwargs = kwargs


class RNG:
    """Pass ``numpy.random.default_rng(seed)``."""

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)


class Unsupported:
    """A value that cannot cross the boundary (an arbitrary object, an object array...)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = str(type_name)[:100]

    def __repr__(self) -> str:
        return f"<an object of type {self.type_name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsupported) and other.type_name == self.type_name

    def __hash__(self) -> int:
        return hash(self.type_name)


class BadReply(Exception):
    """The kernel's answer is not a reply to this call (wrong nonce, malformed, too large)."""


# ---------------------------------------------------------------- requests (grader -> kernel)

def _array_text(array: Any) -> str:
    import io
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def encode_argument(value: Any) -> Any:
    """Arguments the suites pass: plain data, arrays, and the markers above."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if isinstance(value, float):
        value = float(value)
        return value if np.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in ARRAY_KINDS:
            raise TypeError(f"cannot send an array of dtype {value.dtype} to a kernel")
        return {"__ndarray__": _array_text(value)}
    if isinstance(value, np.generic):
        return {"__npscalar__": _array_text(np.asarray(value))}
    if isinstance(value, tuple):
        return {"__tuple__": [encode_argument(v) for v in value]}
    if isinstance(value, list):
        return [encode_argument(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): encode_argument(v) for k, v in value.items()}}
    if isinstance(value, Function):
        return {"__function__": value.name}
    if isinstance(value, Lambda):
        return {"__lambda__": value.source}
    if isinstance(value, Partial):
        return {"__partial__": encode_argument(value.function),
                "kwargs": encode_argument(dict(value.kwargs))}
    if isinstance(value, RNG):
        return {"__rng__": value.seed}
    raise TypeError(f"cannot send a {type(value).__name__} to a kernel")


def request(name: str, args: Any, kwargs: Any, nonce: str) -> str:
    """The JSON text of one call."""
    return json.dumps({"name": str(name), "nonce": str(nonce),
                       "args": encode_argument(list(args)),
                       "kwargs": encode_argument(dict(kwargs))})


# ---------------------------------------------------------------- replies (kernel -> grader)

ARRAY_KINDS = "biufc"
_DTYPES = {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"}
_HEADER = re.compile(r"\{'descr': '([<>|=])([a-z]\d+)', 'fortran_order': (True|False), "
                     r"'shape': \(((?:\d+, )*\d+,?|)\), \}\s*")


def read_array(text: str) -> np.ndarray | Unsupported:
    """A numeric or boolean ndarray from base64 ``.npy`` text, or Unsupported. Strict: the header
    must be the one numpy writes for a plain array, the data must have exactly the right size."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return Unsupported("damaged array")
    if raw[:6] != b"\x93NUMPY" or len(raw) < 10:
        return Unsupported("damaged array")
    major = raw[6]
    if major == 1:
        length, start = int.from_bytes(raw[8:10], "little"), 10
    elif major in (2, 3) and len(raw) >= 12:
        length, start = int.from_bytes(raw[8:12], "little"), 12
    else:
        return Unsupported("damaged array")
    if length > 4096:
        return Unsupported("damaged array")
    try:
        header = raw[start:start + length].decode("latin-1")
    except UnicodeDecodeError:
        return Unsupported("damaged array")
    match = _HEADER.fullmatch(header)
    if match is None:
        kind = re.search(r"'descr': '([^']*)'", header)
        return Unsupported(f"numpy array of dtype {kind.group(1)}" if kind else
                           "structured numpy array")
    order, code, fortran, shape_text = match.groups()
    if code not in _DTYPES:
        return Unsupported(f"numpy array of dtype {code}")
    shape = tuple(int(n) for n in shape_text.replace(",", " ").split())
    try:
        dtype = np.dtype(order + code)
    except TypeError:
        return Unsupported(f"numpy array of dtype {code}")
    size = 1
    for n in shape:
        size *= n
    data = raw[start + length:]
    if len(data) != size * dtype.itemsize:
        return Unsupported("damaged array")
    array = np.frombuffer(data, dtype=dtype)
    array = array.reshape(shape, order="F" if fortran == "True" else "C")
    return np.array(array, dtype=dtype.newbyteorder("="), copy=True)


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads`` of JSON text (str or bytes) a kernel sent, refused first when its parse could
    hold far more memory than the text itself: ``[{},{},...]`` makes 64-byte objects of 3 bytes.
    Counting brackets, braces and commas (an upper bound on the values) takes linear time; over
    :data:`MAX_STRUCTURE`, ValueError."""
    if isinstance(text, str):
        values = text.count("[") + text.count("{") + text.count(",")
    else:
        values = text.count(b"[") + text.count(b"{") + text.count(b",")
    if values > MAX_STRUCTURE:
        raise ValueError(f"more than {MAX_STRUCTURE} values")
    return json.loads(text)


class _Budget:
    def __init__(self) -> None:
        self.items = 0

    def take(self) -> None:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise BadReply(f"the value has more than {MAX_ITEMS} parts")


#: ``functions(marker)``: the trusted callable for a function marker of the suite's (a dict whose
#: first key is ``__lambda__`` or ``__partial__``), as :func:`decode` meets it
FunctionHook = Callable[[dict[str, Any]], Any]
FUNCTION_KEYS = ("__lambda__", "__partial__", "__function__")


def decode(data: Any, _depth: int = 0, _budget: _Budget | None = None,
           functions: FunctionHook | None = None) -> Any:
    """Data-only decoding of a reply's value (the inverse of the agent's encoding).

    A function marker (:data:`FUNCTION_KEYS`) is Unsupported, unless ``functions`` is given: then
    that hook decides what it becomes (the course's computations use it for the suite's own
    functions, checked against what the suite sent: :mod:`autograder.engine.oracle`)."""
    budget = _budget or _Budget()
    budget.take()
    if _depth > MAX_DEPTH:
        raise BadReply(f"the value is nested more than {MAX_DEPTH} levels deep")
    if data is None or isinstance(data, (bool, str)):
        return data
    if isinstance(data, int):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return [decode(v, _depth + 1, budget, functions) for v in data]
    if not isinstance(data, dict) or len(data) == 0:
        return Unsupported(type(data).__name__)
    (key, value), extra = next(iter(data.items())), len(data) > 1
    if key in FUNCTION_KEYS and functions is not None:
        return functions(data)
    if key == "__ndarray__" and not extra and isinstance(value, str):
        return read_array(value)
    if key == "__npscalar__" and not extra and isinstance(value, str):
        array = read_array(value)
        return array if isinstance(array, Unsupported) or array.ndim else array[()]
    if key == "__float__" and not extra and value in ("nan", "inf", "-inf"):
        return float(value)
    if key == "__tuple__" and not extra and isinstance(value, list):
        return tuple(decode(v, _depth + 1, budget, functions) for v in value)
    if key == "__dict__" and not extra and isinstance(value, dict):
        return {str(k): decode(v, _depth + 1, budget, functions) for k, v in value.items()}
    if key == "__unsupported__" and not extra and isinstance(value, str):
        return Unsupported(value)
    return Unsupported("unknown wire object")


def function_markers(data: Any, _depth: int = 0) -> list[dict[str, Any]]:
    """Every function marker in encoded data (a request's arguments), those inside another (a
    partial's function) included."""
    if _depth > MAX_DEPTH:
        return []
    if isinstance(data, list):
        return [m for v in data for m in function_markers(v, _depth + 1)]
    if not isinstance(data, dict):
        return []
    inner = [m for v in data.values() for m in function_markers(v, _depth + 1)]
    return [data] + inner if data and next(iter(data)) in FUNCTION_KEYS else inner


def canonical(data: Any) -> str:
    """One text for equal JSON data, whatever order its keys came in."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def read_reply(text: Any, nonce: str) -> dict[str, Any]:
    """The reply to the call with ``nonce``, checked field by field; raises BadReply otherwise.

    Returns a dict: ``ok`` (bool); when ok, ``value`` (decoded), ``mutated`` (argument indices),
    ``warnings`` (strings), ``stdout`` (string), ``seconds`` (float); when not ok, ``error``
    (``kind``, ``message``, ``traceback`` strings).
    """
    if not isinstance(text, str):
        raise BadReply("the reply is not text")
    if len(text) > MAX_REPLY_CHARS:
        raise BadReply(f"the reply is larger than {MAX_REPLY_CHARS >> 20} MiB")
    try:
        data = loads(text)
    except (ValueError, RecursionError) as error:
        raise BadReply(f"the reply is not valid JSON ({type(error).__name__})") from None
    if not isinstance(data, dict) or data.get("nonce") != nonce:
        raise BadReply("the reply does not answer this call")
    reply = {"ok": data.get("ok") is True,
             "stdout": _text(data.get("stdout")),
             "seconds": _number(data.get("seconds")),
             "warnings": [_text(w) for w in _list(data.get("warnings"))[:20]],
             "mutated": [m for m in _list(data.get("mutated"))[:100]
                         if type(m) is int and 0 <= m < 1000]}
    if reply["ok"]:
        reply["value"] = decode(data.get("value"))
    else:
        given = data.get("error")
        raised: dict[str, Any] = given if isinstance(given, dict) else {}
        reply["error"] = {"kind": _text(raised.get("kind")) or "exception",
                          "message": _text(raised.get("message")) or "an error",
                          "traceback": _text(raised.get("traceback"))}
    return reply


def _text(value: Any) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
