"""Grade one submitted notebook: read it, restore it, run it confined, run the hidden suite.

The steps, each with one job: :func:`notebook.read_submission` (read untrusted JSON, in a bounded
child process), :func:`notebook.restore_locked` (put back locked cells), :class:`Execution` (run
every cell in a sandboxed kernel, keep it alive for calls, replay after a crash),
:func:`suite.run` (score each hidden test). Whatever fails, the result is a complete score sheet:
every test listed, 0 where it could not pass, and a line why.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from . import cache, demonstrations, dependencies, figures, notebook, suite
from .oracle import Oracle
from .assignment import Assignment
from .kernel import CallFailed, KernelSession
from .wire import Reply
from .options import Options
from .result import Result

AGENT_CHECK = ("if '__autograder_call__' not in globals(): "
               "raise RuntimeError('the grader agent is missing')")
# The course's stand-ins (agent.course_function), put in the learner's namespace for a second chance
PUT_IN_PLACE = "__autograder_agent__.put_in_place(%r, get_ipython().user_ns)"


def _stage(options: Options, stage: str, started: float, assignment: str | None = None) -> None:
    """Report a stage's seconds to ``options.timings`` (``make bench``), never to a result.
    Stages: start (sandbox, kernel, agent), execute (the notebook's cells), suite (the hidden
    suite), close (kernel shutdown), total (the whole of grade_notebook, for a notebook not found
    in the cache; its line also names the assignment). One JSON line per stage, appended, so that
    worker processes report too."""
    if options.timings:
        record: dict[str, object] = {"stage": stage, "seconds": time.monotonic() - started,
                                     "pid": os.getpid()}
        if assignment is not None:
            record["assignment"] = assignment
        with open(options.timings, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


class HostFault(Exception):
    """Grading failed before any of the learner's code ran (their kernel could not be started,
    or the grader's agent not installed in it): a fault of this machine or of its settings, never
    the learner's. No result is made or kept for the notebook; the command that grades it says so
    with the cause and exits non-zero, and grading the notebook again, once the fault is fixed,
    grades it normally."""


class Execution:
    """The learner's notebook running in a kernel, kept callable for the hidden suite.

    One deadline (``Options.budget`` from the start) covers everything this kernel does: starting,
    running the cells, replaying them after a crash, and every call of the hidden suite. One
    budget of outputs (``outputs``, what the demonstration cells not run already took of the
    notebook's) holds every cell's outputs it keeps, across restarts.
    """

    def __init__(self, executed: notebook.Notebook, assignment: Assignment, options: Options,
                 deadline: float, skip: bool = False,
                 outputs: figures.Budget | None = None) -> None:
        self.notebook = executed
        self.skip = skip  # demonstration cells are not run (their outputs are already in place)
        self.outputs = outputs or figures.Budget()
        self.options = options
        self.deadline = deadline
        self.session = KernelSession(mode=options.confinement(), limits=options.limits,
                                     private=assignment.course.private_folders(),
                                     visible=assignment.course.learner_packages,
                                     received_bytes=options.received_bytes,
                                     figures=options.figures == "draw")
        self.good_cells: list[str] = []   # sources that ran cleanly, replayed after a crash
        self.errors: list[str] = []
        self.gave_up = ""
        self.oracle: Oracle | None = None  # the course's functions, during a second chance

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def run_all(self) -> None:
        started = time.monotonic()
        try:
            self.session.start_with_retry(timeout=max(1.0, min(60.0, self.remaining())))
            # The agent goes in first, so it holds references taken before any learner code ran.
            self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        except CallFailed as failure:  # no learner code has run: the machine's fault, not theirs
            raise HostFault(f"the learner's kernel could not be started: {failure}") from None
        except Exception as error:
            raise HostFault(f"the learner's kernel could not be started: "
                            f"{type(error).__name__}: {error}") from None
        _stage(self.options, "start", started)
        started = time.monotonic()
        cells_end = min(self.deadline, time.monotonic() + self.options.notebook_timeout)
        for number, cell in enumerate(self.notebook["cells"], start=1):
            if cell["cell_type"] != "code" or not cell["source"].strip() or \
                    (self.skip and demonstrations.is_demonstration(cell)):
                continue
            remaining = cells_end - time.monotonic()
            if remaining <= 0:
                self.errors.append(f"the notebook ran longer than {self.options.notebook_timeout:g} s"
                                   f" in all; from {notebook.cell_label(self.notebook, number)} on, "
                                   f"cells were not run")
                break
            result = self.session.execute(cell["source"], min(self.options.cell_timeout, remaining))
            cell["outputs"] = self._kept(cell, result)
            if result.error:
                self.errors.append(f"{notebook.cell_label(self.notebook, number)}: {result.error}")
            else:
                self.good_cells.append(cell["source"])
            if result.died and not self._revive():
                break
        if self.session.alive() and self.session.execute(
                AGENT_CHECK, max(0.1, min(10.0, self.remaining()))).error:
            self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        _stage(self.options, "execute", started)

    def _kept(self, cell: notebook.Cell, result: Any) -> list[figures.Output]:
        """What ``cell`` keeps of ``result``'s outputs: what fits the notebook's budget. A visible
        check (the release's, so few) keeps how it fared even past the budget: its error, or a
        note that it ran (:func:`visible_checks` reads them)."""
        kept = self.outputs.fit(result.outputs)
        if notebook.check_exercise(cell) is None or not result.outputs:
            return kept
        if result.error and not any(o.get("output_type") == "error" for o in kept):
            ename, _, evalue = result.error.partition(": ")
            kept.append({"output_type": "error", "ename": ename, "evalue": evalue,
                         "traceback": []})
        elif not kept:
            kept.append(figures.note("this check ran; its outputs were left out by the grader: "
                                     "the notebook's outputs had reached their limit"))
        return kept

    def _revive(self, crashed: bool = True) -> bool:
        """A new kernel, with the learner's cells that ran cleanly run again (and the course's
        stand-ins in place during a second chance); ``crashed``: the old one died."""
        if self.session.exhausted():
            return self._give_up(self.session.exhausted())
        if crashed and self.session.restarts >= self.options.max_restarts:
            return self._give_up(f"the kernel crashed {self.session.restarts + 1} times; "
                                 f"grading stopped calling your functions")
        if self.remaining() <= 1:
            return self._give_up("the time budget for this notebook ran out")
        try:
            self.session.restart(timeout=max(1.0, min(60.0, self.remaining())), crashed=crashed)
            self.session.install_agent(timeout=max(1.0, min(30.0, self.remaining())))
        except CallFailed as error:
            return self._give_up(str(error))
        for source in self.good_cells:
            if self.remaining() <= 0:
                return self._give_up("the time budget for this notebook ran out while its "
                                     "cells were run again after a crash")
            self.session.execute(source, min(self.options.cell_timeout, self.remaining()))
        if self.oracle is not None and self.session.alive():
            self.session.execute(PUT_IN_PLACE % sorted(self.oracle.kernel_names),
                                 max(0.1, min(10.0, self.remaining())))
        return self.session.alive() or self._give_up("the kernel did not survive a restart")

    def _give_up(self, reason: str) -> bool:
        self.gave_up = reason
        self.errors.append(reason)
        return False

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Reply:
        if self.gave_up:
            return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
        if self.remaining() <= 0:
            return unavailable("The time budget for grading this notebook ran out before this "
                               "test (some function is very slow or never returns).")
        if self.oracle is not None and name in self.oracle.test_names:  # not the learner's
            return self.oracle.call(name, args, kwargs, time.monotonic() + max(
                0.1, min(self.options.call_timeout, self.remaining())))
        if not self.session.alive() and not self._revive():
            return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
        try:
            return self.session.call(name, args, kwargs,
                                     max(0.1, min(self.options.call_timeout, self.remaining())),
                                     self.oracle.answer if self.oracle is not None else None)
        finally:
            if not self.session.alive() and self.remaining() > 1:
                self._revive()  # this call killed it: revive for the next test

    def rerun(self, assignment: Assignment) -> dependencies.Rerun:
        """Run some graded functions' tests again with the course's version of other functions
        in place of the learner's (:mod:`~autograder.engine.dependencies`); None when the kernel
        cannot do it within the budget.

        Each time in a new kernel, in a new sandbox, where the learner's cells that ran cleanly
        run again. The functions the course's code of the tested functions uses are stand-ins
        there, whose calls the grader computes on its side; the ones only the hidden tests call
        (a forward pass, for a backward pass's tests) are computed for the tests and never put
        in the kernel (:mod:`~autograder.engine.oracle`). No code of the course's enters the
        kernel, and nothing learner code kept in one run (in memory or in its scratch folder)
        reaches another. What goes wrong while the cells run again is not the learner's error
        a second time: it is kept out of the result's errors."""
        def run(exercises: list[str], in_kernel: list[str],
                for_tests: list[str]) -> list[Any] | None:
            if self.gave_up or self.remaining() <= 2:
                return None
            errors = list(self.errors)
            self.oracle = Oracle(assignment, in_kernel, for_tests)
            try:
                if not self._revive(crashed=False):
                    return None
                return suite.run(assignment, self.call, max(0.0, self.remaining()),
                                 exercises=exercises)
            finally:
                self.oracle.close()
                self.oracle = None
                self.errors, self.gave_up = errors, ""
        return run

    def close(self) -> None:
        self.session.shutdown()


def unavailable(reason: str) -> Reply:
    return {"ok": False, "error": {"kind": "unavailable", "message": reason}}


def _refusing(reason: str) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Reply]:
    """A caller that answers every call of the suite with ``reason``."""
    return lambda name, args, kwargs: unavailable(reason)


def zero_sheet(path: str | Path, assignment: Assignment, reason: str) -> Result:
    """Every test of the assignment at 0, each saying why: the result when a notebook could not be
    graded at all (refused, or the grader itself failed)."""
    results = suite.run(assignment, _refusing(f"Your notebook could not be graded: {reason}."), 60)
    return Result(str(path), assignment.name, results, [reason],
                  written_max_score=assignment.written_points)


def failure_sheet(path: str | Path, assignment: Assignment, reason: str) -> Result:
    """Every test at 0: the result when grading itself failed (the learner is told to ask)."""
    return zero_sheet(path, assignment, f"{reason}. Tell your instructor")


def grade_safely(path: str | Path, assignment: Assignment, options: Options,
                 cache_folder: str | Path | None = None, root: str | Path | None = None) -> Result:
    """:func:`grade_notebook`'s result, but a failure of the grader itself still yields a
    complete score sheet at zero, saying so. A full state disk is not a result: it stops; nor is a
    :class:`HostFault`, which is raised."""
    try:
        result, _ = grade_notebook(path, assignment, options, cache_folder, root)
        return result
    except (cache.StateFull, HostFault):
        raise
    except Exception as error:  # a bug of ours must not cost the rest of the class
        return failure_sheet(path, assignment,
                             f"the grader failed on this notebook ({type(error).__name__}: {error})")


class _Submission:
    """The learner's notebook, read in two steps so that the cache is consulted between them
    (:class:`cache.Lookup`): the file's bytes (:meth:`file`), then, for a file not graded before,
    the content to grade (:meth:`content`). What reading found is kept: the notebook restored
    (``executed``), or why it could not be read (``problem``)."""

    def __init__(self, path: Path, assignment: Assignment, options: Options, started: float,
                 root: str | Path | None, figures_from: bytes | None) -> None:
        self.path, self.assignment, self.options, self.started = path, assignment, options, started
        self.root, self.figures_from = root, figures_from
        self.raw: bytes | None = None
        self.problem: notebook.NotebookProblem | None = None
        self.submitted: notebook.Notebook | None = None
        self.executed: notebook.Notebook | None = None
        self.flags: list[str] = []
        self.errors: list[str] = []
        self.outputs = figures.Budget()  # the notebook's one budget of outputs

    def file(self) -> bytes | None:
        """The bytes the learner's file is known by (``figures_from``, the learner's own file,
        when ``path`` is a copy), or None when ``path`` could not be read."""
        try:
            self.raw = notebook.read_regular(self.path, root=self.root, limit=notebook.MAX_BYTES
                                             if self.figures_from is None else notebook.COPY_BYTES)
        except notebook.NotebookProblem as error:
            self.problem = error
            return None
        return self.raw if self.figures_from is None else self.figures_from

    def content(self) -> notebook.Notebook | bytes:
        """The notebook to grade, its locked cells restored; or, for a notebook that could not
        be read, bytes that say why."""
        if self.problem is None:
            try:
                return self._restore()
            except notebook.NotebookProblem as error:
                self.problem = error
        return f"unreadable: {self.problem}".encode()

    def _restore(self) -> notebook.Notebook:
        options, raw, self.raw = self.options, self.raw, None
        assert raw is not None  # (read by file)
        released = notebook.load(self.assignment.release)
        # the demonstration cells show the figures of the learner's copy, in the notebook's one
        # budget of outputs; the kernel's outputs get what they leave
        shows = [gid for cell in released["cells"] if demonstrations.is_demonstration(cell)
                 and (gid := notebook.grade_id(cell)) is not None] \
            if options.demonstrations == "skip" else []
        # Parsed and flagged in a child process bounded in memory and time (never here).
        self.submitted, self.flags = notebook.read_submission(raw, max(1.0, min(
            3 * notebook.READ_CPU_SECONDS, options.budget - (time.monotonic() - self.started))),
            self.figures_from, shows)
        del raw
        self.executed, notes = notebook.restore_locked(self.submitted, released)
        self.errors += notes
        if shows:
            demonstrations.keep_submitted_figures(self.executed, self.submitted, self.outputs)
        return self.executed


def grade_notebook(path: str | Path, assignment: Assignment, options: Options | None = None,
                   cache_folder: str | Path | None = None, root: str | Path | None = None,
                   figures_from: bytes | None = None
                   ) -> tuple[Result, notebook.Notebook | None]:
    """Grade ``path`` as a submission of ``assignment``; return ``(result, executed notebook)``.
    Never raises for a bad submission; raises :class:`HostFault` when the kernel cannot be
    started, before any learner code ran (nothing is kept for the notebook then).

    The notebook is read without following links (with ``root``, no folder between ``root`` and
    it may be a link either). With ``cache_folder``, a notebook whose graded content (cells after
    restoring the locked ones), settings and assignment version were graded before is not graded
    again (:mod:`autograder.engine.cache`); results are written there atomically as soon as they
    are known, so an interrupted class resumes where it stopped. ``figures_from`` is the
    learner's own file when ``path`` is a copy without outputs (nbgrader's): it must be readable
    as a submission, and a demonstration cell not re-run shows the figures of that file
    (:func:`notebook.read_submission`). Those figures and the kernel's outputs are kept within one
    budget for the notebook (:class:`figures.Budget`).
    """
    options = options or Options()
    started = time.monotonic()
    path = Path(path)
    submission = _Submission(path, assignment, options, started, root, figures_from)
    kept = cache.Lookup(cache_folder, assignment, options)
    found = kept.find(submission.file(), submission.content)
    if found is not None:
        found[0].notebook = str(path)
        return found
    executed, problem, errors = submission.executed, submission.problem, submission.errors
    outputs = submission.outputs
    deadline = started + options.budget
    if problem is not None or executed is None:
        errors.append(f"{problem}")
        results = suite.run(assignment, _refusing(f"Your notebook could not be graded: {problem}."),
                            max(0.0, deadline - time.monotonic()))
    else:
        skip = options.demonstrations == "skip" and any(
            demonstrations.is_demonstration(cell) for cell in executed["cells"])
        results, more, ran = _run_and_test(executed, assignment, options, deadline, skip,
                                           outputs)
        if skip and demonstrations.needs_full_run(more + [t.feedback for t in results]):
            # a name a skipped cell binds may be why: the notebook is graded again, every cell run
            assert submission.submitted is not None  # (restored once already)
            executed, _ = notebook.restore_locked(submission.submitted,
                                                  notebook.load(assignment.release))
            results, more, ran = _run_and_test(executed, assignment, options, deadline, False,
                                               figures.Budget())
        errors += more
    result = Result(str(path), assignment.name, results, errors, list(submission.flags),
                    written_max_score=assignment.written_points)
    if problem is None and executed is not None and ran:  # the kernel started: checks ran
        result.checks = visible_checks(executed)
    kept.store(result, executed)
    _stage(options, "total", started, assignment.name)
    return result, executed


def _run_and_test(executed: notebook.Notebook, assignment: Assignment, options: Options,
                  deadline: float, skip: bool, outputs: figures.Budget
                  ) -> tuple[list[Any], list[str], bool]:
    """Run the notebook's cells in a kernel (demonstration cells too, unless ``skip``) and the
    hidden suite on it; returns ``(test results, errors, whether the kernel started)``. The
    cells' outputs are kept within ``outputs``, the notebook's budget."""
    errors: list[str] = []
    execution = None
    caller: Callable[[str, tuple[Any, ...], dict[str, Any]], Reply]
    try:
        try:
            try:
                execution = Execution(executed, assignment, options, deadline, skip, outputs)
            except Exception as error:  # before any learner code: the machine's fault
                raise HostFault(f"the learner's kernel could not be prepared: "
                                f"{type(error).__name__}: {error}") from None
            execution.run_all()
            caller = execution.call
        except CallFailed as failure:
            errors.append(f"{failure}")
            caller = _refusing(f"Your notebook could not be run: {failure}.")
        suite_started = time.monotonic()
        results = suite.run(assignment, caller, max(0.0, deadline - time.monotonic()))
        if execution is not None:
            results = dependencies.retry(assignment, results, execution.rerun(assignment))
        _stage(options, "suite", suite_started)
        if execution is not None:
            errors += execution.errors
        if time.monotonic() > deadline and not any("budget" in e for e in errors):
            errors.append(f"the time budget of {options.budget:g} s for this notebook ran out; "
                          f"what was not checked by then got no points")
    finally:
        if execution is not None:
            close_started = time.monotonic()
            execution.close()
            _stage(options, "close", close_started)
    return results, errors, execution is not None


def visible_checks(executed: notebook.Notebook) -> dict[str, dict[str, str]]:
    """exercise -> {"status", "message"}: how each visible check cell (``check_<function>``) fared
    when the learner's notebook ran, which the learner could see for themselves."""
    checks = {}
    for cell in executed["cells"]:
        exercise = notebook.check_exercise(cell)
        if exercise is None:
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            message = f"{errors[0].get('ename')}: {errors[0].get('evalue')}"[:1000]
            checks[exercise] = {"status": "failed", "message": message}
        elif not cell.get("outputs"):
            checks[exercise] = {"status": "failed", "message": "this check did not run: the "
                                "notebook stopped before it"}
        else:
            checks[exercise] = {"status": "passed", "message": "the visible checks pass"}
    return checks


def grade_local(assignment: Assignment, namespace: dict[str, Any],
                budget_seconds: float = 120, retry: bool = True) -> Result:
    """Score a trusted namespace of functions in this process (used to test the suites), with the
    same second chance for a function that fails only through another's mistake as a kernel's
    (``retry=False``: without it)."""
    def run(names: dict[str, Any], exercises: list[str] | None = None) -> list[Any]:
        return suite.run(assignment, suite.local_caller(names), budget_seconds,
                         exercises=exercises)
    results = run(namespace)
    if retry:
        results = dependencies.retry(assignment, results, dependencies.local_rerun(
            assignment, namespace, run))
    return Result("<local>", assignment.name, results,
                  written_max_score=assignment.written_points)
