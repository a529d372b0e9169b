"""Grade one submitted notebook: read it, restore it, run it confined, run the hidden suite.

The steps, each with one job: :func:`notebook.load` (read untrusted JSON), :func:`notebook.restore_locked`
(put back locked cells), :class:`Execution` (run every cell in a sandboxed kernel, keep it alive
for calls, replay after a crash), :func:`suite.run` (score each hidden test). Whatever fails, the
result is a complete score sheet: every test listed, 0 where it could not pass, and a line why.
"""
import dataclasses
import errno
import hashlib
import json
import os
import time
from pathlib import Path

from .assignment import Assignment
from .result import Result
from . import notebook as nbio
from . import reference, suite
from . import sandbox as confinement
from . import relay
from .kernel import CallFailed, KernelSession

# Stage timings for `make bench` (autograder/bench.py), never part of a result: a callable
# ``(stage, seconds)``, and/or the file named by $ATTENTION_COURSE_STAGE_LOG (one JSON line per
# stage, appended, so that worker processes report too). Stages: start (sandbox, kernel, agent),
# execute (the notebook's cells), suite (the hidden suite), close (kernel shutdown), total (the
# whole of grade_notebook, for a notebook not found in the cache).
stage_timer = None


def _stage(stage, started):
    seconds = time.monotonic() - started
    if stage_timer is not None:
        stage_timer(stage, seconds)
    log = os.environ.get("ATTENTION_COURSE_STAGE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"stage": stage, "seconds": seconds, "pid": os.getpid()}) + "\n")


AGENT_CHECK = ("if '__attention_course_call__' not in globals(): "
               "raise RuntimeError('the grader agent is missing')")


@dataclasses.dataclass
class Options:
    sandbox: str = "auto"            # "auto", "require" or "off"
    cell_timeout: float = 60.0       # one cell of the learner's notebook
    notebook_timeout: float = 300.0  # all cells together, on the first run
    call_timeout: float = 20.0       # one call from the hidden suite
    budget: float = 600.0            # everything: start, cells, replays after crashes, suite
    max_restarts: int = 3            # kernel crashes survived before giving up
    received_bytes: int = relay.MAX_TOTAL_BYTES  # all a notebook's kernels may send the grader
    limits: confinement.Limits = dataclasses.field(default_factory=confinement.Limits)
    private: tuple = ()              # course folders to cover should they ever be visible

    def confinement(self):
        """How learner code will be confined here (see :func:`sandbox.resolve_mode`)."""
        return confinement.resolve_mode(self.sandbox)


class Execution:
    """The learner's notebook running in a kernel, kept callable for the hidden suite.

    One deadline (``Options.budget`` from the start) covers everything this kernel does: starting,
    running the cells, replaying them after a crash, and every call of the hidden suite.
    """

    def __init__(self, notebook, options, deadline):
        self.notebook = notebook
        self.options = options
        self.deadline = deadline
        self.session = KernelSession(mode=options.confinement(), limits=options.limits,
                                     private=(*options.private, *_course_folders()),
                                     received_bytes=options.received_bytes)
        self.good_cells = []   # sources that ran cleanly, replayed after a crash
        self.errors = []
        self.gave_up = ""

    def remaining(self):
        return self.deadline - time.monotonic()

    def run_all(self):
        started = time.monotonic()
        self.session.start_with_retry(timeout=max(1.0, min(60.0, self.remaining())))
        # The agent goes in first, so it holds references taken before any learner code ran.
        self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        _stage("start", started)
        started = time.monotonic()
        cells_end = min(self.deadline, time.monotonic() + self.options.notebook_timeout)
        for number, cell in enumerate(self.notebook["cells"], start=1):
            if cell["cell_type"] != "code" or not cell["source"].strip():
                continue
            remaining = cells_end - time.monotonic()
            if remaining <= 0:
                self.errors.append(f"the notebook ran longer than {self.options.notebook_timeout:g} s"
                                   f" in all; from {nbio.cell_label(self.notebook, number)} on, "
                                   f"cells were not run")
                break
            result = self.session.execute(cell["source"], min(self.options.cell_timeout, remaining))
            cell["outputs"] = result.outputs
            if result.error:
                self.errors.append(f"{nbio.cell_label(self.notebook, number)}: {result.error}")
            else:
                self.good_cells.append(cell["source"])
            if result.died and not self._revive():
                break
        if self.session.alive() and self.session.execute(
                AGENT_CHECK, max(0.1, min(10.0, self.remaining()))).error:
            self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        _stage("execute", started)

    def _revive(self):
        if self.session.exhausted():
            return self._give_up(self.session.exhausted())
        if self.session.restarts >= self.options.max_restarts:
            return self._give_up(f"the kernel crashed {self.session.restarts + 1} times; "
                                 f"grading stopped calling your functions")
        if self.remaining() <= 1:
            return self._give_up("the time budget for this notebook ran out")
        try:
            self.session.restart(timeout=max(1.0, min(60.0, self.remaining())))
            self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        except CallFailed as error:
            return self._give_up(str(error))
        for source in self.good_cells:
            if self.remaining() <= 0:
                return self._give_up("the time budget for this notebook ran out while its "
                                     "cells were run again after a crash")
            self.session.execute(source, min(self.options.cell_timeout, self.remaining()))
        return self.session.alive() or self._give_up("the kernel did not survive a restart")

    def _give_up(self, reason):
        self.gave_up = reason
        self.errors.append(reason)
        return False

    def call(self, name, args, kwargs):
        if self.gave_up:
            return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
        if self.remaining() <= 0:
            return unavailable("The time budget for grading this notebook ran out before this "
                               "test (some function is very slow or never returns).")
        if not self.session.alive() and not self._revive():
            return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
        try:
            return self.session.call(name, args, kwargs,
                                     max(0.1, min(self.options.call_timeout, self.remaining())))
        finally:
            if not self.session.alive() and self.remaining() > 1:
                self._revive()  # this call killed it: revive for the next test

    def close(self):
        self.session.shutdown()


def _course_folders():
    """The course's own folders; covered in the sandbox should an install ever put them in view."""
    return (str(reference.SOLUTIONS), str(suite.SUITES))


def unavailable(reason):
    return {"ok": False, "error": {"kind": "unavailable", "message": reason}}


def zero_sheet(path: str | Path, assignment: str, reason: str) -> Result:
    """Every test of the assignment at 0, each saying why: the result when a notebook could not be
    graded at all (refused, or the grader itself failed)."""
    results = suite.run(assignment, lambda *a: unavailable(
        f"Your notebook could not be graded: {reason}."), 60)
    return Result(str(path), assignment, results, [reason])


def failure_sheet(path: str | Path, assignment: str, reason: str) -> Result:
    """Every test at 0: the result when grading itself failed (the learner is told to ask)."""
    return zero_sheet(path, assignment, f"{reason}. Tell your instructor")


def grade_safely(path: str | Path, assignment: str, options: Options,
                 cache: str | Path | None = None, root: str | Path | None = None) -> Result:
    """:func:`grade_notebook`'s result, but a failure of the grader itself still yields a
    complete score sheet at zero, saying so. A full state disk is not a result: it stops."""
    try:
        result, _ = grade_notebook(path, assignment, options, cache, root)
        return result
    except StateFull:
        raise
    except Exception as error:  # a bug of ours must not cost the rest of the class
        return failure_sheet(path, assignment,
                             f"the grader failed on this notebook ({type(error).__name__}: {error})")


def detect_assignment(path: str | Path) -> str:
    """The name of the assignment ``path`` belongs to (see :meth:`Assignment.detect`)."""
    return Assignment.detect(path).name


def grade_notebook(path: str | Path, assignment: str | None = None, options: Options | None = None,
                   cache: str | Path | None = None,
                   root: str | Path | None = None) -> tuple[Result, dict | None]:
    """Grade ``path``; return ``(result, executed_notebook)``. Never raises for a bad submission.

    The notebook is read without following links (with ``root``, no folder between ``root`` and
    it may be a link either). With ``cache`` (a folder), a notebook whose graded content (cells
    after restoring the locked ones) and suite version were graded before is not graded again;
    results are written there atomically as soon as they are known, so an interrupted class
    resumes where it stopped.
    """
    options = options or Options()
    started = time.monotonic()
    path = Path(path)
    assignment = assignment or detect_assignment(path)
    errors, executed, problem, flags = [], None, None, []
    try:
        raw = nbio.read_regular(path, root=root)
        # Parsed and flagged in a child process bounded in memory and time (never here).
        submitted, flags = nbio.read_submission(raw, max(1.0, min(
            3 * nbio.READ_CPU_SECONDS, options.budget - (time.monotonic() - started))))
        del raw
        released = nbio.load(reference.release_notebook(assignment))
        executed, notes = nbio.restore_locked(submitted, released)
        errors += notes
        key = content_key(assignment, executed)
    except nbio.NotebookProblem as error:
        problem = error
        key = content_key(assignment, f"unreadable: {error}".encode())
    entry = Path(cache) / f"{key}.json" if cache else None
    if entry is not None and entry.exists():
        try:
            stored = json.loads(entry.read_text())
            result = Result.from_json(stored["result"])
            result.notebook = str(path)
            return result, stored["executed"]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged entry is graded again
    execution = None
    deadline = started + options.budget
    try:
        if problem is not None:
            errors.append(f"{problem}")
            reason = f"Your notebook could not be graded: {problem}."
            caller = lambda *a: unavailable(reason)
        else:
            try:
                execution = Execution(executed, options, deadline)
                execution.run_all()
                caller = execution.call
            except CallFailed as failure:
                errors.append(f"{failure}")
                reason = f"Your notebook could not be run: {failure}."
                caller = lambda *a: unavailable(reason)
        suite_started = time.monotonic()
        results = suite.run(assignment, caller, max(0.0, deadline - time.monotonic()))
        _stage("suite", suite_started)
        if execution is not None:
            errors += execution.errors
        if time.monotonic() > deadline and not any("budget" in e for e in errors):
            errors.append(f"the time budget of {options.budget:g} s for this notebook ran out; "
                          f"what was not checked by then got no points")
    finally:
        if execution is not None:
            close_started = time.monotonic()
            execution.close()
            _stage("close", close_started)
    result = Result(str(path), assignment, results, errors, list(flags))
    if execution is not None:
        result.checks = visible_checks(executed)
    if entry is not None:
        keep(entry, json.dumps({"result": result.to_json(), "executed": executed}))
    _stage("total", started)
    return result, executed


class StateFull(OSError):
    """The state folder's disk is full: grading must stop, keeping what it recorded."""


def keep(entry: str | Path, text: str) -> None:
    """Write ``text`` to ``entry`` so that a reader only ever sees the whole of it: a temporary
    file named after this process (cleared by a later run if this one is killed), flushed to
    disk, then renamed into place. A full disk raises :class:`StateFull` and leaves nothing."""
    entry = Path(entry)
    temporary = entry.with_name(f".{entry.name}.{os.getpid()}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, entry)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StateFull(error.errno, f"the state folder {entry.parent} is full "
                            f"({error.strerror})") from None
        raise


def visible_checks(executed):
    """exercise -> {"status", "message"}: how each visible check cell (``check_<function>``) fared
    when the learner's notebook ran, which the learner could see for themselves."""
    checks = {}
    for cell in executed["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id") or ""
        if cell["cell_type"] != "code" or not meta.get("grade") or meta.get("solution") \
                or not gid.startswith("check_"):
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            message = f"{errors[0].get('ename')}: {errors[0].get('evalue')}"[:1000]
            checks[gid[len("check_"):]] = {"status": "failed", "message": message}
        elif not cell.get("outputs"):
            checks[gid[len("check_"):]] = {"status": "failed", "message": "this check did not "
                                           "run: the notebook stopped before it"}
        else:
            checks[gid[len("check_"):]] = {"status": "passed",
                                           "message": "the visible checks pass"}
    return checks


def content_key(assignment, content):
    """Identifies what grading depends on: the graded cells (or raw bytes) and the suite version."""
    digest = hashlib.sha256(assignment.encode() + Assignment(assignment).version.encode())
    if isinstance(content, bytes):
        digest.update(b"raw:" + content)
    else:
        digest.update(json.dumps([[c["cell_type"], c["source"]] for c in content["cells"]]).encode())
    return digest.hexdigest()[:32]


def grade_local(assignment: str, namespace: dict, budget_seconds: float = 120) -> Result:
    """Score a trusted namespace of functions in this process (used to test the suites)."""
    results = suite.run(assignment, suite.local_caller(namespace), budget_seconds)
    return Result("<local>", assignment, results)
