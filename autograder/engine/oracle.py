"""The course's own functions, computed on the grader's side for a learner's kernel.

A graded function that fails only because a function it uses fails gets a second chance
(:mod:`~autograder.engine.dependencies`): its tests run again with the course's version of the
used function in place of the learner's. In a kernel, the course's version is a stand-in
(:func:`~autograder.engine.agent.course_function`): each call sends its arguments, as data, on the
kernel's stdin channel, and :class:`Oracle` answers with the course's result, as data. No code
of the course's enters the kernel; what the kernel learns is input and output pairs of functions
it is being tested with.

The course's functions run in a child process of their own (:func:`_serve_in_child`), limited
to :data:`MEMORY` of memory and :data:`CPU_SECONDS` of CPU time, started on the first request of
a second chance and stopped at its end. A request is read as data only (:func:`wire.loads`,
:func:`wire.decode`); the only functions it may pass are the ones the hidden suite passed in the
call being answered (its own lambdas and partials), compared by their text and rebuilt from the
suite's own text, never from the kernel's; any other function, object, or a name that is not put
in place for this test, is refused with a sentence that the stand-in raises in the kernel.
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
from typing import Any

from . import wire
from .assignment import Assignment

MEMORY = 1 << 30              # the child's address space
CPU_SECONDS = 120             # the child's CPU time, for one second chance
MAX_ANSWER_CHARS = 4 * wire.MAX_REPLY_CHARS  # one answer sent back to the kernel
SIZE = 12                     # the length of a message, in decimal digits, before the message

SERVER = """import importlib, sys
sys.path.insert(0, sys.argv[1])
importlib.import_module(sys.argv[2])._serve_in_child(int(sys.argv[3]), sys.argv[4], sys.argv[5])
"""


def refusal(message: str) -> str:
    return json.dumps({"ok": False, "message": message})


class Oracle:
    """Answers the stand-ins of ``names`` (functions of ``assignment``) during one second chance."""

    def __init__(self, assignment: Assignment, names: list[str]) -> None:
        self.assignment = assignment
        self.names = set(names)
        self.process: subprocess.Popen[bytes] | None = None
        self.broken = ""   # why the child can no longer answer
        self.requests = 0

    def answer(self, prompt: str, allowed: frozenset[str], deadline: float) -> str:
        """The JSON text a stand-in receives for its request ``prompt`` (sent by the kernel, so
        read as data), within ``deadline`` (a ``time.monotonic()`` value). ``allowed`` are the
        canonical texts of the function markers the suite passed in the call being answered."""
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
        if not isinstance(name, str) or name not in self.names:
            return refusal("only the functions put in place for this test are computed")
        for marker in wire.function_markers([request["args"], request["kwargs"]]):
            if "__function__" in marker or wire.canonical(marker) not in allowed:
                return refusal("it can be given only the functions the grader's tests passed "
                               "in, as they were passed")
        if self.broken:
            return refusal(self.broken)
        return self._ask(json.dumps({"name": name, "args": request["args"],
                                     "kwargs": request["kwargs"]}), deadline)

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
    """The trusted callable for a function marker the parent checked against what the suite sent
    (so its text is the suite's own)."""
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
        args = wire.decode(request["args"], functions=_suite_function)
        kwargs = {str(k): wire.decode(v, functions=_suite_function)
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
