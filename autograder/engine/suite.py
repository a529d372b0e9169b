"""Run an assignment's hidden pytest suite against a submission and score it test by test.

The suite gets a ``submission`` fixture. ``submission.softmax(z)`` encodes the arguments, calls
the learner's ``softmax`` wherever it lives (a sandboxed kernel when grading; this process when
the project tests its own catalogue) and reads the reply as data only (:func:`wire.read_reply`):
plain numbers, strings and numeric arrays. The suite compares them on this, trusted, side.

What the kernel *reports* about a call (``submission.last``: whether it changed an argument in
place, warned or printed) is measured inside the learner's kernel, where learner code can forge
it. A test that passed after reading it says so in its feedback (:data:`KERNEL_WORD`), so that no
point rests on the kernel's word without a label.

The suite runs under pytest with the engine's own settings (no configuration file of the
course's, nor of any folder above it, is read), its ``conftest.py`` files from the course's
suites folder down; while it runs, the catalogue knows which assignment the suite grades
(:func:`~autograder.engine.catalogue.running`) and the suites folder is on the import path
(:func:`importable`), so that a suite imports what its course's suites share
(:meth:`~autograder.engine.assignment.Course.suite_support`) by name.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Collection, Generator, Iterator

import pytest

from . import agent, catalogue, testing, wire
from .assignment import Assignment
from .kernel import CallFailed
from .result import TestResult
from .testing import Feedback, SubmissionError

Caller = Callable[[str, Any, Any], wire.Reply]
MARKER = "grade(points, exercise): points a test is worth and the graded function it checks"
KERNEL_WORD = ("passed as reported by your kernel: in-place changes, warnings and prints are "
               "measured inside it, where the grader cannot check them")


@dataclasses.dataclass
class CallRecord:
    name: str
    warnings: list[str]
    mutated: list[int]
    stdout: str
    seconds: float


class Submission:
    """Attribute access gives a callable proxy for the learner's function of that name."""

    def __init__(self, caller: Caller) -> None:
        self._caller = caller
        self._last: CallRecord | None = None
        self.read_kernel_word = False  # whether the running test read self.last
        self.called: list[str] = []    # the learner's functions the running test called

    @property
    def last(self) -> CallRecord | None:
        """What the kernel reported about the last call (a :class:`CallRecord`): reading it
        marks the running test as resting on the kernel's word."""
        self.read_kernel_word = True
        return self._last

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if name not in self.called:
            self.called.append(name)
        try:
            reply = self._caller(name, args, kwargs)
        except CallFailed as error:
            kind = "timeout" if error.kind == "timeout" else "crashed"
            raise SubmissionError(f"Calling `{name}` failed: it {error}.", kind, name) from None
        except wire.BadReply as error:
            raise SubmissionError(f"Calling `{name}` gave no readable reply ({error}).",
                                  "bad-reply", name) from None
        if not isinstance(reply, dict) or "ok" not in reply:
            raise SubmissionError(f"Calling `{name}` gave no readable reply.", "bad-reply", name)
        if not reply["ok"]:
            failure = reply.get("error") or {}
            reason = failure.get("kind")
            if reason == "unavailable":
                raise SubmissionError(str(failure.get("message")), "unavailable", name)
            if reason == "missing":
                raise SubmissionError(
                    f"`{name}` is not defined in your notebook. Run the cell that defines it "
                    f"and check that the function is spelled exactly `{name}`.", "missing", name)
            if reason == "not_implemented":
                raise SubmissionError(
                    f"`{name}` is not implemented yet: it still raises NotImplementedError. "
                    f"Replace `raise NotImplementedError()` with your code.", "not-implemented",
                    name)
            message = str(failure.get("message", "an error"))
            trace = str(failure.get("traceback", "")).strip().splitlines()
            where = next((line.strip() for line in reversed(trace)
                          if line.strip().startswith("File ")), "")
            exception, _, detail = message.partition(": ")
            raise SubmissionError(f"`{name}` raised {message}" + (f" ({where})" if where else ""),
                                  "raised", name, exception, detail)
        self._last = CallRecord(name, list(reply.get("warnings", [])),
                               list(reply.get("mutated", [])), str(reply.get("stdout", "")),
                               float(reply.get("seconds", 0.0)))
        return reply.get("value")


def local_caller(namespace: dict[str, Any]) -> Caller:
    """Call functions of a trusted namespace in this process, through the same encoding and the
    same data-only reader as a kernel's replies (used to test the suites and the catalogue)."""
    def call(name: str, args: Any, kwargs: Any) -> wire.Reply:
        nonce = "local"
        return wire.read_reply(agent.handle(wire.request(name, args, kwargs, nonce), namespace),
                               nonce)
    return call


class _Plugin:
    def __init__(self, submission: Submission, deadline: float,
                 exercises: Collection[str] | None = None) -> None:
        self._submission = submission
        self.deadline = deadline
        self.exercises = exercises
        self.results: list[TestResult] = []
        self._meta: dict[str, tuple[str, str, float]] = {}

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", MARKER)

    @pytest.fixture
    def submission(self) -> Submission:
        if time.monotonic() > self.deadline:
            raise SubmissionError("The grading time budget for this notebook ran out before "
                                  "this test (some function is very slow or never returns).",
                                  "out-of-time")
        return self._submission

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]
                                      ) -> None:
        for item in items:
            marker = item.get_closest_marker("grade")
            if marker is None:
                raise RuntimeError(f"{item.nodeid} has no @points(...) marker")
            exercise = marker.kwargs["exercise"]
            doc = (getattr(getattr(item, "function", None), "__doc__", None)
                   or "").strip().splitlines()
            title = doc[0].strip() if doc else item.name.replace("test_", "").replace("_", " ")
            callspec = getattr(item, "callspec", None)
            param = f" [{callspec.id}]" if callspec is not None else ""
            self._meta[item.nodeid] = (f"{exercise}: {title}{param}", exercise,
                                       float(marker.kwargs["points"]))
        if self.exercises is not None:
            left_out = [i for i in items if self._meta[i.nodeid][1] not in self.exercises]
            if left_out:
                config.hook.pytest_deselected(items=left_out)
                items[:] = [i for i in items if self._meta[i.nodeid][1] in self.exercises]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.excinfo is not None:
            setattr(report, "_grading_exception", call.excinfo.value)
        return report

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._submission.read_kernel_word = False
        self._submission.called = []
        testing.forget_values()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            name, exercise, worth = self._meta[report.nodeid]
            called = tuple(self._submission.called)
            if report.passed:
                word = self._submission.read_kernel_word
                label = KERNEL_WORD if word else ""
                self.results.append(TestResult(name, exercise, worth, worth, "passed", label,
                                               report.nodeid, called=called,
                                               hygiene=word and not testing.value_read()))
            else:
                error = getattr(report, "_grading_exception", None)
                kind = error.kind if isinstance(error, SubmissionError) else ""
                self.results.append(TestResult(name, exercise, 0.0, worth, "failed",
                                               _feedback(report), report.nodeid, kind, called))


def hygiene_counts_with_values(results: list[TestResult]) -> list[TestResult]:
    """A test that passed only on the kernel's word (no in-place change, no warning, no print:
    :data:`KERNEL_WORD`) earns its points only when its function also returns right values
    somewhere: when every other test of the function fails, it fails too, saying why. A stub
    that returns nothing changes nothing in place and prints nothing; that is not a function."""
    values: dict[str, bool] = {}  # exercise -> whether a test of its values passed
    for test in results:
        if not test.hygiene:
            values[test.exercise] = values.get(test.exercise, False) or test.passed
    kept = []
    for test in results:
        if test.hygiene and values.get(test.exercise) is False:
            test = dataclasses.replace(
                test, score=0.0, status="failed", feedback=(
                    f"Nothing changed in place and nothing printed, but every other test of "
                    f"{test.exercise} fails: this counts once {test.exercise} returns right "
                    f"values."))
        kept.append(test)
    return kept


def _feedback(report: pytest.TestReport) -> str:
    error = getattr(report, "_grading_exception", None)
    if isinstance(error, (Feedback, SubmissionError)):
        return str(error).split("\nassert ")[0].strip()
    if error is not None:
        return (f"This check could not be completed ({type(error).__name__}); the values your "
                f"function returned may not have the expected types.")
    return "This check failed."


def grading(config: pytest.Config) -> bool:
    """Whether this pytest session is the grader running a suite (:func:`run`), which provides
    the ``submission`` fixture itself: a suite run by hand
    (:mod:`autograder.engine.standalone`) then adds nothing."""
    return any(isinstance(plugin, _Plugin) for plugin in config.pluginmanager.get_plugins())


@contextlib.contextmanager
def importable(folder: Path) -> Iterator[None]:
    """``folder`` first on the import path for the block, and the modules imported from it
    forgotten afterwards: the next suite, of this course or another, reads them afresh."""
    where = str(folder)
    before = set(sys.modules)
    sys.path.insert(0, where)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(where)
        for name in set(sys.modules) - before:
            origin = getattr(sys.modules[name], "__file__", None) or ""
            if origin.startswith(where + os.sep):
                del sys.modules[name]


@contextlib.contextmanager
def plain_imports() -> Iterator[None]:
    """No import hook of an enclosing pytest session rewrites the suite's asserts for the block:
    the suite is imported as the grader imports it (``--assert=plain``) even where the grading
    runs inside pytest, as the project's own tests run it, and its bytecode is read, not made
    again from its source at every run."""
    saved = list(sys.meta_path)
    sys.meta_path[:] = [hook for hook in saved
                        if type(hook).__module__ != "_pytest.assertion.rewrite"]
    try:
        yield
    finally:
        sys.meta_path[:] = saved + [hook for hook in sys.meta_path if hook not in saved]


def run(assignment: Assignment, caller: Caller, budget_seconds: float = 300,
        select: str | None = None, exercises: Collection[str] | None = None
        ) -> list[TestResult]:
    """Run the suite of ``assignment``; return a list of TestResult, one per test (with
    ``exercises``, only the tests of those graded functions)."""
    submission = Submission(caller)
    plugin = _Plugin(submission, time.monotonic() + budget_seconds, exercises)
    path = assignment.suite
    if not path.is_dir():
        raise LookupError(f"no hidden suite for assignment {assignment.name!r} (no folder {path})")
    # -c os.devnull: pytest reads no configuration file of the course's (a pyproject.toml could
    # add options or paths), and --confcutdir loads conftest.py files from the suites folder down.
    # Scores are read from the exceptions themselves (_Plugin), so pytest formats failures the
    # cheap way (--tb=native: a long traceback parses the source of every frame, 60 ms for each
    # failing test) and does not collect garbage after every session to look for unraisable
    # exceptions, which no score reads either. Nor is any assert rewritten (--assert=plain): a
    # score reads the kit's exceptions, never an assertion's words, and rewriting parsed the
    # suite's source again on every run. No plugin another package installed is loaded
    # (--disable-plugin-autoload): none of them takes part in grading (a plugin such as
    # pytest-randomly or pytest-timeout would reorder or stop the hidden tests), and finding them
    # through the installed packages' metadata costs every run a few milliseconds.
    args = [str(path), "-q", "--disable-plugin-autoload", "-p", "no:cacheprovider",
            "-p", "no:randomly",
            "-p", "no:unraisableexception", "-p", "no:threadexception", "--tb=native",
            "--assert=plain", "--import-mode=importlib", "-c", os.devnull, "--rootdir", str(path),
            "--confcutdir", str(assignment.course.suites_folder)]
    if select:
        args += ["-k", select]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
            catalogue.running(assignment), importable(assignment.course.suites_folder), \
            plain_imports():
        code = pytest.main(args, plugins=[plugin])
    if code not in (0, 1) or not plugin.results:
        raise RuntimeError(f"the hidden suite of {assignment} did not run (pytest exit {code}):\n"
                           + out.getvalue()[-3000:])
    return hygiene_counts_with_values(plugin.results)
