"""The wire format between the trusted grader and the learner's kernel.

Only plain data crosses: JSON for numbers, strings, lists, tuples and dicts, and ``.npy`` bytes
(``allow_pickle=False``) for arrays. Nothing is ever unpickled on either side.

This one module is used twice. The grader imports it to encode arguments and decode results; its
source text is also executed inside the learner's kernel (it needs only the standard library and
numpy), where :func:`handle` looks a function up in the learner's namespace, calls it and encodes
what came back. Whatever the kernel sends is checked again on the trusted side, so a learner who
tampers with the kernel-side copy can only spoil their own results.
"""
import base64
import contextlib
import functools
import io
import json
import math
import time
import traceback
import warnings

import numpy as np

MIME = "application/vnd.attention-course.reply+json"
MAX_TEXT = 4000  # characters of a learner's printed output or traceback kept per call


# ---------------------------------------------------------------- markers for arguments

class Function:
    """Pass one of the learner's own functions, by name, as an argument."""

    def __init__(self, name):
        self.name = name


class Lambda:
    """Pass a small function written by the suite (source text, evaluated with ``np`` in scope)."""

    def __init__(self, source):
        self.source = source


class Partial:
    """Pass ``functools.partial(function, **kwargs)``; ``function`` is a Function or Lambda."""

    def __init__(self, function, **kwargs):
        self.function = function
        self.kwargs = kwargs


class RNG:
    """Pass ``numpy.random.default_rng(seed)``."""

    def __init__(self, seed):
        self.seed = int(seed)


class Unsupported:
    """A result that cannot cross the boundary (an arbitrary object, a pickled array...)."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<an object of type {self.type_name}>"


# ---------------------------------------------------------------- encoding

def _array_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _array_from(text):
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def encode(value):
    """Turn a value into JSON-able data. Unknown objects become an ``__unsupported__`` marker."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray:
        if value.dtype.hasobject:
            return {"__unsupported__": "numpy array of Python objects"}
        return {"__ndarray__": _array_bytes(value)}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return {"__npscalar__": _array_bytes(np.asarray(value))}
    if type(value) is tuple:
        return {"__tuple__": [encode(v) for v in value]}
    if type(value) is list:
        return [encode(v) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {"__dict__": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, Function):
        return {"__function__": value.name}
    if isinstance(value, Lambda):
        return {"__lambda__": value.source}
    if isinstance(value, Partial):
        return {"__partial__": encode(value.function), "kwargs": encode(dict(value.kwargs))}
    if isinstance(value, RNG):
        return {"__rng__": value.seed}
    return {"__unsupported__": type(value).__name__}


def decode(data, namespace=None):
    """Inverse of :func:`encode`. ``namespace`` resolves Function markers (kernel side only)."""
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
    if "__unsupported__" in data:
        return Unsupported(str(data["__unsupported__"]))
    if "__rng__" in data:
        return np.random.default_rng(int(data["__rng__"]))
    if "__function__" in data:
        if namespace is None:
            raise ValueError("functions can only be resolved inside the kernel")
        name = data["__function__"]
        if not callable(namespace.get(name)):
            raise NameError(f"{name} is not defined")
        return namespace[name]
    if "__lambda__" in data:
        return eval(data["__lambda__"], {"np": np, "__builtins__": __builtins__})
    if "__partial__" in data:
        return functools.partial(decode(data["__partial__"], namespace),
                                 **decode(data["kwargs"], namespace))
    raise ValueError(f"unknown wire object with keys {sorted(data)}")


def request(name, args, kwargs):
    return json.dumps({"name": name, "args": encode(list(args)), "kwargs": encode(dict(kwargs))})


# ---------------------------------------------------------------- the kernel side

def _snapshot(values):
    return [np.array(v, copy=True) if isinstance(v, np.ndarray) else None for v in values]


def handle(request_text, namespace):
    """Call ``namespace[name](*args, **kwargs)`` and return the JSON reply text."""
    started = time.perf_counter()
    printed = io.StringIO()
    reply = {"ok": False}
    try:
        call = json.loads(request_text)
        name = call["name"]
        function = namespace.get(name)
        if function is None:
            reply["error"] = {"kind": "missing", "message": f"{name} is not defined"}
            return json.dumps(reply)
        if not callable(function):
            reply["error"] = {"kind": "missing", "message": f"{name} is not a function"}
            return json.dumps(reply)
        args = decode(call["args"], namespace)
        kwargs = decode(call["kwargs"], namespace)
        before = _snapshot(list(args) + list(kwargs.values()))
        with warnings.catch_warnings(record=True) as caught, \
                contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            warnings.simplefilter("always")
            with np.errstate(all="warn", under="ignore"):  # underflow to 0 is harmless
                value = function(*args, **kwargs)
        after = list(args) + list(kwargs.values())
        mutated = [i for i, (b, a) in enumerate(zip(before, after))
                   if b is not None and not (a.shape == b.shape and
                                             np.array_equal(a, b, equal_nan=True))]
        reply = {"ok": True, "value": encode(value), "mutated": mutated,
                 "warnings": [f"{w.category.__name__}: {w.message}" for w in caught][:20]}
    except NotImplementedError:
        reply["error"] = {"kind": "not_implemented", "message": "raises NotImplementedError"}
    except BaseException as error:  # a learner's SystemExit or KeyboardInterrupt is a result too
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        # Drop the frames of this module: the learner only needs their own code's frames.
        kept = [line for line in lines if "attention-course-wire" not in line]
        reply["error"] = {"kind": "exception",
                          "message": f"{type(error).__name__}: {error}"[:MAX_TEXT],
                          "traceback": "".join(kept)[-MAX_TEXT:]}
    reply["stdout"] = printed.getvalue()[:MAX_TEXT]
    reply["seconds"] = time.perf_counter() - started
    return json.dumps(reply)


KERNEL_ENTRY = """
def __attention_course_call__(request_text):
    from IPython.display import display
    display({%r: __attention_course_wire__.handle(request_text, get_ipython().user_ns)}, raw=True)
""" % MIME


def kernel_bootstrap():
    """Source that installs this module inside a kernel as ``__attention_course_wire__``."""
    source = open(__file__.replace(".pyc", ".py"), encoding="utf-8").read()
    return (
        "import types as __t\n"
        "__attention_course_wire__ = __t.ModuleType('attention_course_wire')\n"
        f"exec(compile({source!r}, 'attention-course-wire', 'exec'), __attention_course_wire__.__dict__)\n"
        "del __t\n" + KERNEL_ENTRY
    )


def local_namespace_call(namespace, name, args, kwargs):
    """Run a call in this process through the same encode/handle/decode path (trusted code only)."""
    return json.loads(handle(request(name, args, kwargs), namespace))

