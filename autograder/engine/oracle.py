"""The course's own functions, computed on the grader's side for a learner's kernel.

A graded function that fails only because a function it uses fails gets a second chance
(:mod:`~autograder.engine.dependencies`): its tests run again with the course's version of the
used function in place of the learner's. In a kernel, the course's version is a stand-in
(:func:`~autograder.engine.agent.course_function`): each call sends its arguments, as data, on the
kernel's stdin channel, and :class:`Oracle` answers with the course's result, as data. No code
of the course's enters the kernel; what the kernel learns is input and output pairs of functions
it is being tested with.

Only what the course's own code of the function under test uses gets a stand-in in the kernel
(``kernel_names``). What the hidden tests call besides (a forward pass whose cache a backward
pass's tests need: ``test_names``) is computed here for the tests (:meth:`Oracle.call`) and
never put where learner code could call it.

The course's functions run in a child process of their own (:func:`_serve_in_child`), limited
to :data:`MEMORY` of memory and :data:`CPU_SECONDS` of CPU time, started on the first request of
a second chance and stopped at its end. A request is read as data only (:func:`wire.loads`,
:func:`wire.decode`). The only functions it may pass are the ones the hidden suite passed in the
call being answered (its own lambdas and partials): every function marker of the request, at
any depth the reader accepts (deeper is refused), must equal one of those, and is replaced by the
number of the suite's own marker in a table the child rebuilds functions from; nothing the kernel
sent is ever rebuilt. Any other function, object, or name is refused with a sentence the
stand-in raises in the kernel.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import wire
from .assignment import Assignment

MEMORY = 1 << 30              # the child's address space
CPU_SECONDS = 120             # the child's CPU time, for one second chance
MAX_ANSWER_CHARS = wire.MAX_REPLY_CHARS  # one answer sent back to the kernel
SIZE = 12                     # the length of a message, in decimal digits, before the message

SERVER = """import importlib, sys
sys.path.insert(0, sys.argv[1])
importlib.import_module(sys.argv[2])._serve_in_child(int(sys.argv[3]), sys.argv[4], sys.argv[5])
"""


def refusal(message: str) -> str:
    return json.dumps({"ok": False, "message": message})


class Refused(Exception):
    """A request the grader does not compute, with the sentence that says why."""


def with_suite_functions(data: Any, allowed: Mapping[str, Any], table: list[Any],
                         depth: int = 0) -> Any:
    """``data`` (a request's encoded arguments) with every function marker replaced by
    ``{SUITE_FUNCTION: n}``, ``table[n]`` being the suite's own marker of the same text
    (``allowed``: canonical text -> the suite's marker). Walks ``data`` as :func:`wire.decode`
    reads it; a marker the suite did not pass, or anything deeper than the reader goes, is
    :class:`Refused`."""
    if depth > wire.MAX_DEPTH:
        raise Refused(f"its arguments are nested more than {wire.MAX_DEPTH} levels deep")
    if isinstance(data, list):
        return [with_suite_functions(v, allowed, table, depth + 1) for v in data]
    if not isinstance(data, dict) or not data:
        return data
    key, value = next(iter(data.items()))
    if key in wire.FUNCTION_KEYS or key == wire.SUITE_FUNCTION:
        suite_marker = allowed.get(wire.canonical(data))
        if key == "__function__" or suite_marker is None:
            raise Refused("it can be given only the functions the grader's tests passed in, as "
                          "they were passed")
        table.append(suite_marker)
        return {wire.SUITE_FUNCTION: len(table) - 1}
    if key == "__tuple__" and len(data) == 1 and isinstance(value, list):
        return {key: [with_suite_functions(v, allowed, table, depth + 1) for v in value]}
    if key == "__dict__" and len(data) == 1 and isinstance(value, dict):
        return {key: {k: with_suite_functions(v, allowed, table, depth + 1)
                      for k, v in value.items()}}
    return data  # a leaf: an array, a number, or something the reader refuses


class Oracle:
    """The course's functions of ``assignment`` during one second chance: stand-ins in the kernel
    for ``kernel_names``, calls of the hidden tests for ``test_names``."""

    def __init__(self, assignment: Assignment, kernel_names: Sequence[str],
                 test_names: Sequence[str] = ()) -> None:
        self.assignment = assignment
        self.kernel_names = set(kernel_names)
        self.test_names = set(test_names)
        self.process: subprocess.Popen[bytes] | None = None
        self.broken = ""   # why the child can no longer answer
        self.requests = 0

    def answer(self, prompt: str, allowed: Mapping[str, Any], deadline: float) -> str:
        """The JSON text a stand-in receives for its request ``prompt`` (sent by the kernel, so
        read as data), within ``deadline`` (a ``time.monotonic()`` value). ``allowed`` maps the
        canonical text of each function marker the suite passed in the call being answered to
        that marker, as the suite sent it."""
        self.requests += 1
        if len(prompt) > wire.MAX_REPLY_CHARS:
            return refusal(f"its arguments are larger than {wire.MAX_REPLY_CHARS >> 20} MiB")
        try:
            request = wire.loads(prompt)
        except (ValueError, RecursionError):
            return refusal("its request could not be read")
        if not isinstance(request, dict) or not isinstance(request.get("args"), list) or \
                not isinstance(request.get("kwargs"), dict):
            return refusal("its request could not be read")
        name = request.get("oracle")
        if not isinstance(name, str) or name not in self.kernel_names:
            return refusal("only the functions put in place for this test are computed")
        table: list[Any] = []
        try:
            args = with_suite_functions(request["args"], allowed, table)
            kwargs = with_suite_functions({"__dict__": request["kwargs"]}, allowed, table)
        except Refused as why:
            return refusal(str(why))
        if self.broken:
            return refusal(self.broken)
        return self._ask(json.dumps({"name": name, "args": args, "kwargs": kwargs["__dict__"],
                                     "functions": table}), deadline)

    def call(self, name: str, args: Any, kwargs: Any, deadline: float) -> wire.Reply:
        """A hidden test's call of the course's ``name`` (one of ``test_names``), computed here
        instead of in the kernel: the reply the kernel's would have been, read as data."""
        given = json.loads(wire.request(name, args, kwargs, ""))  # the suite's own arguments
        allowed = {wire.canonical(m): m for m in wire.function_markers([given["args"],
                                                                        given["kwargs"]])}
        table: list[Any] = []
        try:
            text = json.dumps({"name": name, "functions": table,
                               "args": with_suite_functions(given["args"], allowed, table),
                               "kwargs": with_suite_functions(given["kwargs"], allowed,
                                                              table)["__dict__"]})
        except Refused as why:
            text = refusal(str(why))
        answer = json.loads(self._ask(text, deadline) if name in self.test_names else
                            refusal(f"{name} is not computed for these tests"))
        if answer.get("ok") is not True:
            return {"ok": False, "error": {"kind": "exception", "traceback": "", "message":
                                           f"the course's {name}: {answer.get('message')}"}}
        return {"ok": True, "value": wire.decode(answer.get("value")), "mutated": [],
                "warnings": [], "stdout": "", "seconds": 0.0}

    def _ask(self, text: str, deadline: float) -> str:
        try:
            if self.process is None:
                self._start()
            assert self.process is not None and self.process.stdin is not None
            data = text.encode("utf-8", "surrogatepass")
            self.process.stdin.write(str(len(data)).zfill(SIZE).encode() + data)
            self.process.stdin.flush()
            return self._read(deadline).decode("utf-8", "replace")
        except (OSError, ValueError, TimeoutError) as error:
            self.close()
            self.broken = f"the grader could not compute it ({error})"
            return refusal(self.broken)

    def _start(self) -> None:
        package = str(Path(__file__).resolve().parents[len(__name__.split(".")) - 1])
        environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                       "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", SERVER, package, __name__, str(os.getpid()),
             _course_text(self.assignment), self.assignment.name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=environment, close_fds=True)

    def _read(self, deadline: float) -> bytes:
        assert self.process is not None and self.process.stdout is not None
        size = int(self._exactly(SIZE, deadline) or b"-1")
        if not 0 <= size <= MAX_ANSWER_CHARS:
            raise ValueError("its answer is too large")
        return self._exactly(size, deadline)

    def _exactly(self, size: int, deadline: float) -> bytes:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        chunks, left = [], size
        while left:
            wait = deadline - time.monotonic()  # the first request's includes the child's start
            if wait <= 0 or not select.select([stream], [], [], wait)[0]:
                raise TimeoutError("it did not finish in time")
            chunk = os.read(stream.fileno(), min(left, 1 << 20))
            if not chunk:
                raise OSError("the computation stopped: it needs more memory or time than "
                              "the grader gives it")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None


def _course_text(assignment: Assignment) -> str:
    course = dataclasses.asdict(assignment.course)
    course["root"] = str(course["root"])
    return json.dumps(course)


# ---------------------------------------------------------------- the child

def _suite_function(marker: dict[str, Any]) -> Any:
    """The trusted callable for one of the suite's own function markers (the parent's table,
    made from the suite's request)."""
    import numpy as np
    if "__lambda__" in marker and isinstance(marker["__lambda__"], str):
        return eval(marker["__lambda__"], {"np": np})  # trusted: the suite's own text, checked by the parent
    if "__partial__" in marker and isinstance(marker.get("kwargs"), dict):
        kwargs = wire.decode(marker["kwargs"])
        if isinstance(kwargs, dict):
            return functools.partial(_suite_function(marker["__partial__"]), **kwargs)
    raise ValueError("a function the grader does not take")


def _plain(value: Any) -> bool:
    """Whether a decoded value holds nothing the data-only reader refused."""
    if isinstance(value, wire.Unsupported):
        return False
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    return True


def _compute(namespace: dict[str, Any], text: bytes) -> str:
    import warnings

    import numpy as np
    from . import agent
    try:
        request = json.loads(text)
        table = request["functions"]

        def rebuilt(index: Any) -> Any:
            return _suite_function(table[index]) if type(index) is int and \
                0 <= index < len(table) else wire.Unsupported("function")
        args = wire.decode(request["args"], functions=rebuilt)
        kwargs = {str(k): wire.decode(v, functions=rebuilt)
                  for k, v in request["kwargs"].items()}
        if not _plain(args) or not _plain(kwargs):
            return refusal("an argument is not plain data (numbers, strings, numeric arrays)")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = namespace[request["name"]](*args, **kwargs)
        return json.dumps({"ok": True, "value": agent.encode(value)})
    except MemoryError:
        return refusal("it needs more memory than the grader gives it")
    except RecursionError:
        return refusal("it nests too deeply")
    except Exception as error:  # the course's function refused these arguments
        return refusal(f"{type(error).__name__}: {error}"[:300])


def _serve_in_child(parent: int, course_text: str, name: str) -> None:
    """Load the course's functions, then answer requests from stdin until it closes."""
    import resource
    from ..sandbox.lifetime import die_with_parent
    from . import reference
    from .assignment import Course
    die_with_parent(parent)
    for limit, value in ((resource.RLIMIT_AS, (MEMORY, MEMORY)),
                         (resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))):
        try:
            resource.setrlimit(limit, value)
        except (ValueError, OSError):  # macOS refuses an address-space limit
            pass
    course = json.loads(course_text)
    course["root"] = Path(course["root"])
    course["learner_packages"] = tuple(course["learner_packages"])
    namespace = reference.namespace(Course(**course).assignment(name))
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = source.read(SIZE)
        if len(head) < SIZE:
            return
        answer = _compute(namespace, source.read(int(head))).encode("utf-8", "surrogatepass")
        if len(answer) > MAX_ANSWER_CHARS:
            answer = refusal("its result is larger than the grader sends back").encode()
        sink.write(str(len(answer)).zfill(SIZE).encode() + answer)
        sink.flush()
