"""Recording grades in nbgrader's gradebook while the class is still being graded.

``python -m autograder autograde`` grades every submission in parallel (the content cache keeps
each result), and each result must then reach the gradebook the way ``nbgrader autograde`` puts
it there: the autograded notebook with its outputs and feedback tables, the grades and comments,
the submission's timestamp and late penalty, everything the formgrader, ``generate_feedback`` and
``export`` read. That is nbgrader's own ``Autograde`` converter, with this course's grading step
(:class:`autograder.course.nbgrader_plugin.HiddenSuiteGrading`), which finds every result in the cache.

A :class:`Recorder` is one such nbgrader process for a whole command, however many assignments
it grades, started before grading: its imports and start overlap the grading, are paid once, and
it records each learner's submission of each assignment as soon as their result is known. The
process runs nbgrader's command line once (configuration, course folder, the launcher's savings of
:mod:`autograder.course.nbgrader_launch`), then forks its building workers, which share those
imports. A worker builds a learner's autograded folder (nbgrader's converter without
its gradebook writes, :mod:`autograder.course.autograded`); the process itself, the gradebook's
only writer, moves the folder into place and writes the learner's rows, one learner at a time.
The writer's share is what cannot be spread over cores, and it is the smaller one. Without
workers (or for a learner a worker failed on), the writer runs the whole converter, exactly as
``nbgrader autograde ASSIGNMENT --student ID`` would.

Crash-only, like the rest: a learner is marked as recorded (by the caller) only after the
writer has returned for them. The process and its workers die with the command that started it.

Protocol (trusted: both ends are the grader): an assignment id and a learner id, a tab between
them, one submission per line, on the process's stdin; one JSON reply per submission,
``{"assignment", "student", "status": "recorded"|"failed", "locked", "log",
"build", "rows", "peak"}`` (a worker's CPU seconds building, the writer's seconds, the peak memory
in MiB so far of the writer and of the worker that built the learner's folder, whichever is
larger), on a pipe of its own (nbgrader's logging owns stdout and stderr).

Nothing here parses a learner's file: nbgrader's converter reads each through a reader child
bounded in memory and time, and parses the normalised copy it gives
(:class:`autograder.course.nbgrader_plugin.SubmissionExporter`).
"""
from __future__ import annotations

import concurrent.futures
import glob
import json
import logging
import multiprocessing
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from . import identity, nbgrader_launch
from ..sandbox import lifetime

if TYPE_CHECKING:
    from nbgrader.apps.autogradeapp import AutogradeApp

LOG_TAIL = 4000  # characters of nbgrader's log kept in a failed learner's reply
NICENESS = 10    # grading (whose kernels have time limits) goes first; recording has none


def peak_mib() -> float:
    """This process's peak resident memory so far, in MiB (its own, not its children's)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _start() -> None:
    """In the recording process before it runs: die with the command, yield to grading."""
    lifetime.die_with_parent()
    os.nice(NICENESS)


class RecorderStopped(RuntimeError):
    """The recording process is gone (killed, or it failed outside any learner)."""


Submission = tuple[str, str]  # (assignment id, learner id)


class Recorder:
    """One nbgrader process recording the submissions it is given, of any assignment."""

    def __init__(self, arguments: Iterable[str] = (),
                 env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
                 builders: int = 0) -> None:
        self.log = tempfile.TemporaryFile(mode="w+", prefix="attention-recorder-")
        replies_r, replies_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.course.recorder", str(replies_w), str(builders),
             *arguments],
            stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT, text=True,
            pass_fds=(replies_w,), env=env, cwd=cwd, preexec_fn=_start)
        os.close(replies_w)
        # the replies, then None once the process has closed its end
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.outstanding = 0
        # the process's CPU time (user + system), once it has ended
        self.cpu_seconds: float | None = None
        self._reader = threading.Thread(target=self._read, args=(replies_r,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        try:
            with os.fdopen(fd, encoding="utf-8") as replies:
                for line in replies:
                    self.replies.put(json.loads(line))
        except ValueError:
            self.process.kill()  # not a reply of ours: stop it, and say so below
        self.replies.put(None)  # the process has closed its end: it exited

    def send(self, assignment: str, student: str) -> None:
        """Ask for ``student``'s submission of ``assignment`` to be recorded (returns at once).
        A name that is not a valid id (:func:`autograder.course.identity.id_problem`) raises
        ValueError: the protocol is two ids a line, and nbgrader makes gradebook keys of them."""
        problem = (identity.id_problem(assignment, "assignment id")
                   or identity.id_problem(student))
        if problem:
            raise ValueError(problem)
        stdin = self.process.stdin
        assert stdin is not None  # the process is started with stdin=PIPE
        try:
            stdin.write(f"{assignment}\t{student}\n")
            stdin.flush()
        except (BrokenPipeError, ValueError):
            raise self._stopped() from None
        self.outstanding += 1

    def _stopped(self) -> RecorderStopped:
        return RecorderStopped(f"the recording process stopped (exit "
                               f"{self.process.wait()}); its last words:\n{self.output()}")

    def reply(self) -> dict[str, Any]:
        """The next reply, waiting for it; a process that died says so."""
        if self.outstanding == 0:
            raise RuntimeError("no learner is waiting to be recorded")
        reply = self.replies.get()
        if reply is None:
            self.replies.put(None)
            raise self._stopped()
        self.outstanding -= 1
        return reply

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-LOG_TAIL:]

    def close(self) -> None:
        """End the process (after the replies still due, if it is alive)."""
        try:
            if self.process.stdin and not self.process.stdin.closed:
                self.process.stdin.close()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + 60
        while self.process.returncode is None:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                self.process.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds = usage.ru_utime + usage.ru_stime
            elif time.monotonic() > deadline:
                self.process.kill()
                deadline = float("inf")
            else:
                time.sleep(0.02)
        self.log.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None and self.process.poll() is None:
            self.process.kill()
        self.close()


# ------------------------------------------------------------------ the recording process

class _Tail(logging.Handler):
    """The log lines of the learner being recorded."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class Built(TypedDict):
    """A building worker's word on one learner's autograded folder."""
    student: str
    built: bool
    build: float  # CPU seconds
    peak: float   # MiB


def _build_here(submission: Submission) -> Built:
    """Build a learner's autograded folder of an assignment (in a building worker, or in this
    process for the first submission): ``{"student", "built", "build"}``, the CPU seconds it
    took."""
    from . import autograded
    assignment, student = submission
    app = _WORKER["app"]
    app.coursedir.assignment_id = assignment
    try:
        cpu = autograded.build(app, student)
    except Exception:  # nbgrader's own failure, or ours: the writer runs the whole converter
        return {"student": student, "built": False, "build": 0.0, "peak": peak_mib()}
    return {"student": student, "built": True, "build": cpu, "peak": peak_mib()}


# the nbgrader app that builds (set before the workers are forked)
_WORKER: dict[str, AutogradeApp] = {}


def _builder_start(parent: int) -> None:
    lifetime.die_with_parent(parent)
    nbgrader_launch.forget_connections()


def _record(app: AutogradeApp, tail: _Tail, submission: Submission,
            built: Built | None) -> dict[str, Any]:
    """Record a submission: rows only if its folder is built, else the whole converter."""
    from nbgrader.converters.autograde import Autograde
    from nbgrader.converters.base import NbGraderException

    from . import autograded
    tail.lines = []
    assignment, student = submission
    app.coursedir.assignment_id = assignment
    reply: dict[str, Any] = {"assignment": assignment, "student": student, "status": "recorded",
                             "locked": False, "log": "",
                             "build": built.get("build", 0.0) if built else 0.0, "rows": 0.0}
    try:
        if built and built["built"]:
            try:
                reply["rows"] = autograded.write_rows(app, student)
            except Exception as error:
                app.log.error("recording %s failed: %s: %s", student, type(error).__name__, error)
                raise NbGraderException(str(error)) from None
        else:
            started = time.perf_counter()
            # the converter matches learners' folders with a glob: the id is one name, not a pattern
            app.coursedir.student_id = glob.escape(student)
            Autograde(coursedir=app.coursedir, parent=app).start()
            reply["rows"] = time.perf_counter() - started
    except NbGraderException:
        log = "\n".join(tail.lines)
        reply.update(status="failed", log=log[-LOG_TAIL:], locked="database is locked" in log)
    reply["peak"] = max(peak_mib(), built.get("peak", 0.0) if built else 0.0)
    return reply


def _submission(line: str) -> Submission:
    assignment, _, student = line.rstrip("\n").partition("\t")
    return assignment, student


def serve(replies_fd: int, argv: list[str]) -> None:
    """Run nbgrader's autograde command line once, then record each submission read from stdin
    (``assignment<TAB>learner``), replying on ``replies_fd``: ``argv[0]`` building workers build
    their autograded folders (:mod:`autograder.course.autograded`) and this process writes their
    rows, one at a time."""
    nbgrader_launch.prepare()
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters.autograde import Autograde

    from . import autograded
    builders, argv = int(argv[0]), argv[1:]
    app = AutogradeApp()
    app.initialize(argv)
    if app.extra_args:
        raise SystemExit("usage: python -m autograder.course.recorder FD BUILDERS "
                         "[nbgrader options]; the submissions come on stdin")
    tail = _Tail()
    tail.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    app.log.addHandler(tail)
    if builders and not autograded.splittable(Autograde(coursedir=app.coursedir, parent=app)):
        builders = 0
    submissions = (_submission(line) for line in sys.stdin)
    # learners' rows are written in the order they came, as the whole converter would write
    # them (nbgrader's export lists learners in that order): a submission built early waits
    # (submission, its build) in the order read; then (None, how many were read)
    done: queue.Queue[tuple[Submission, concurrent.futures.Future[Built] | None]
                      | tuple[None, int]] = queue.Queue()
    pool: concurrent.futures.ProcessPoolExecutor | None = None
    with os.fdopen(replies_fd, "w", encoding="utf-8") as replies:
        def reply(submission: Submission, built: Built | None) -> None:
            replies.write(json.dumps(_record(app, tail, submission, built)) + "\n")
            replies.flush()

        if builders:
            _WORKER.update(app=app)
            first = next(submissions, None)
            if first is None:
                return
            # The first submission is built here: what every build computes once (the assignment's
            # version, nbformat's validator, the gradebook's compiled queries) is computed before
            # the workers are forked, and they share it. They are forked by the only thread (the
            # first submission starts them all), and die with it, which lives as long as the
            # process; each leaves this process's database connections to it.
            reply(first, _build_here(first))
            pool = concurrent.futures.ProcessPoolExecutor(
                builders, mp_context=multiprocessing.get_context("fork"),
                initializer=_builder_start, initargs=(os.getpid(),))
            pool.submit(int)

        def read() -> None:
            count = 0
            for submission in submissions:
                count += 1
                try:
                    if pool is None:
                        raise RuntimeError("no building workers")
                    done.put((submission, pool.submit(_build_here, submission)))
                except RuntimeError:  # no workers (any more): the writer builds
                    done.put((submission, None))
            done.put((None, count))

        threading.Thread(target=read, daemon=True).start()
        expected, seen = None, 0
        while expected is None or seen < expected:
            item = done.get()
            if item[0] is None:
                expected = item[1]
                continue
            submission, future = item
            seen += 1
            try:
                built = future.result() if future is not None else None
            except Exception:  # the worker died: this learner goes through the whole converter
                built = None
            reply(submission, built)
    if pool is not None:
        pool.shutdown(cancel_futures=True)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2:])
