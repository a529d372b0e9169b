"""The instructor's commands around nbgrader: releasing, running nbgrader, and autograding a class
in parallel while each grade is recorded in the gradebook."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from . import identity
from .folders import STATE_VARIABLE, cache_dir, gradebook_path, state_dir
from .recorder import Recorder, RecorderStopped, Submission
from ..engine import batch
from ..engine.assignment import Assignment, Course
from ..engine.atomic import write_atomically
from ..engine.options import Options, config_arguments
from ..engine.result import Result
from ..sandbox import lifetime


def nbgrader(*args: str, state: str | Path | None = None, check: bool = True,
             cwd: str | Path | None = None, env_extra: dict[str, str] | None = None,
             quiet: bool = True, stock: bool = False) -> subprocess.CompletedProcess[str]:
    """Run one nbgrader command in ``cwd`` (the course root; by default the current folder, as
    nbgrader itself); ``state`` relocates .course/. With ``stock``, nbgrader exactly as
    installed (``make bench`` measures it so)."""
    env = nbgrader_env(state, env_extra)
    # nbgrader's own command line, without the costs autograder.course.nbgrader_launch explains.
    launcher = "nbgrader" if stock else "autograder.course.nbgrader_launch"
    completed = subprocess.run([sys.executable, "-m", launcher, *args], cwd=cwd, env=env,
                               text=True, capture_output=quiet,
                               preexec_fn=lifetime.die_with_parent)
    if check and completed.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({completed.returncode}):\n"
                           + (completed.stdout or "")[-2000:] + (completed.stderr or "")[-4000:])
    return completed


def nbgrader_env(state: str | Path | None = None,
                 env_extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an nbgrader command of the course (``state`` relocates .course/)."""
    env = dict(os.environ)
    if state is not None:
        env[STATE_VARIABLE] = str(state)
    # nbgrader runs `alembic` as a command: the virtual environment's bin/ must be on PATH.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(env_extra or {})
    return env


def release(assignments: list[Assignment], release_directory: str | Path | None = None,
            state: str | Path | None = None) -> int:
    """Regenerate learner notebooks from the instructor notebooks (into ``release_directory`` if
    given), with nbgrader, in each assignment's course root."""
    for assignment in assignments:
        assignment.solution  # fails clearly on an assignment without its notebook
        args = ["generate_assignment", assignment.name, "--force"]
        if release_directory is not None:
            args.append(f"--CourseDirectory.release_directory={release_directory}")
        nbgrader(*args, state=state, cwd=assignment.course.root)
        print(f"released {assignment.name}")
    return 0


def submissions(assignment: Assignment, state: str | Path | None = None,
                students: list[str] | None = None) -> tuple[list[Path], list[str], list[str]]:
    """``(notebooks, notes, refused)``: the release's notebook of ``assignment`` for every
    student folder under ``submitted/``; a line for each student folder that is a link, each
    extra notebook (reported, not graded) and each missing notebook; and a line for each folder
    whose name is not a valid student id (:func:`autograder.course.identity.id_problem`: not
    graded)."""
    root = Path(state or state_dir(assignment.course.root)) / "submitted"
    name = assignment.release.name
    found: list[Path] = []
    notes: list[str] = []
    refused: list[str] = []
    for student in sorted(root.iterdir()) if root.is_dir() else []:
        if students and student.name not in students:
            continue
        folder = student / assignment.name
        linked = student.is_symlink() or folder.is_symlink()
        if not (linked or folder.is_dir()):
            continue
        problem = identity.id_problem(student.name)
        if problem:
            refused.append(f"{identity.shown(student.name)} (in {root}): {problem}; rename or "
                           f"remove the folder")
            continue
        if linked:
            notes.append(f"{student.name}: the submission folder is a link; refused")
            found.append(folder / name)  # graded as refused: read_regular says why
            continue
        extras = sorted(p.name for p in folder.iterdir() if p.suffix == ".ipynb" and p.name != name)
        for extra in extras:
            notes.append(f"{student.name}: {identity.shown(extra)} is not part of "
                         f"{assignment.name}; only {name} is graded")
        if (folder / name).exists() or (folder / name).is_symlink():
            found.append(folder / name)
        else:
            notes.append(f"{student.name}: no {name} was submitted")
    return found, notes, refused


def refusals(assignment: Assignment, state: str | Path | None = None,
             students: list[str] | None = None) -> list[str]:
    """Lines naming the submissions of ``assignment`` that collect refused (kept by
    :class:`autograder.course.exchange.SafeCollect`) and the folders of ``submitted/`` whose names
    are not valid student ids: none of them is graded."""
    submitted = Path(state or state_dir(assignment.course.root)) / "submitted"
    lines = [identity.refusal_line(entry)
             for entry in identity.read_refusals(submitted, assignment.name)
             if not students or entry["student"] in students]
    return lines + submissions(assignment, state, students)[2]


LOCK_WAIT = 120.0  # seconds recording waits for a gradebook another program is writing


def _submission(path: str | Path) -> Submission:
    """The assignment and learner of a submitted notebook:
    submitted/<learner>/<assignment>/<notebook>."""
    return Path(path).parent.name, Path(path).parent.parent.name


def autograde(assignments: Assignment | Sequence[Assignment], jobs: int | None = None,
              state: str | Path | None = None, progress: bool = True,
              students: list[str] | None = None, options: Options | None = None,
              lock_wait: float = LOCK_WAIT,
              recorded: Callable[[Recording], None] | None = None) -> list[Result]:
    """Grade every submission of ``assignments`` (one, or several of one course) in parallel
    and record each grade in the gradebook as soon as it is known (:class:`Recording`: nbgrader's
    own autograde converter, in one process started before grading, which finds each result in
    the cache). However many assignments, the command starts one pool of grading workers and one
    recording process: their start is paid once. Returns the results of the grading, assignment
    by assignment. ``recorded(recording)`` is called once the recording has ended (its process's
    CPU time and what it added after grading: ``make bench`` reads them).

    A learner whose kernel could not be started here gets no grade: once the others are recorded,
    :class:`~autograder.engine.batch.HostFaults` is raised, naming them.

    Crash-only: killed at any moment, the same command resumes. Grading resumes from the cache;
    recording redoes every submission not marked as recorded."""
    chosen = [assignments] if isinstance(assignments, Assignment) else list(assignments)
    if not chosen:
        return []
    options = options or Options()
    state = Path(state or state_dir(chosen[0].course.root))
    submitted: list[Path] = []
    of: list[Assignment] = []
    for assignment in chosen:
        found, notes, _ = submissions(assignment, state, students)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        submitted += found
        of += [assignment] * len(found)
    with Recording([(a.name, _submission(p)[1]) for a, p in zip(of, submitted)],
                   chosen[0].course, options, state, lock_wait, builders=jobs) as recording:
        faulted: batch.HostFaults | None = None
        try:
            results = batch.grade_many(submitted, of, options, jobs=jobs,
                                       state=cache_dir(state), progress=progress,
                                       root=state / "submitted",
                                       on_result=lambda path, _: recording.add(*_submission(path)))
        except batch.HostFaults as error:  # those not graded are not recorded; the rest are
            faulted, results = error, error.results
            for path, _ in error.faults:
                recording.drop(*_submission(path))
        recording.finish()
    if recorded is not None:
        recorded(recording)
    if faulted is not None:
        raise faulted
    return results


# ------------------------------------------------------------------ recording in the gradebook

class GradebookBusy(RuntimeError):
    """The gradebook stayed locked by another program for longer than the wait allowed."""


class RecordingFailed(RuntimeError):
    """Some learners could not be recorded (nbgrader failed on them, or the recording process
    stopped); everything graded is kept in the cache."""


def record(assignment: Assignment, students: list[str], options: Options, state: str | Path,
           lock_wait: float = LOCK_WAIT,
           recorded: Callable[[Recording], None] | None = None,
           jobs: int | None = None) -> None:
    """Record ``students``' cached results of ``assignment`` in the gradebook, now (``recorded``:
    as for :func:`autograde`; ``jobs`` building workers, one per core by default)."""
    with Recording([(assignment.name, student) for student in students], assignment.course,
                   options,
                   state, lock_wait, builders=jobs) as recording:
        recording.finish()
    if recorded is not None:
        recorded(recording)


def _named(submission: Submission) -> str:
    """A submission as the instructor reads it in a message: ``learner (assignment)``."""
    assignment, student = submission
    return f"{student} ({assignment})"


class Recording:
    """Recording learners' grades, of one assignment or several, while (or after) they are graded.

    nbgrader skips a learner whose autograded folder exists, and a run killed half-way through a
    learner leaves that folder behind, incomplete. So a submission counts as recorded only once
    nbgrader's converter has *returned* with its notebook in place: a mark in
    ``state/recorded/<assignment>/`` then names the exact submission recorded. On entry, every
    other submission's autograded folder is removed, to be recorded again (recording the same
    result twice writes the same rows). :meth:`add` hands a submission to the recording process
    as soon as its result is in the cache; :meth:`finish` waits for the rest. A locked gradebook
    puts recording aside until grading is done, then is waited for, up to ``lock_wait`` seconds,
    then named.

    One recording process records every assignment given (``(assignment id, learner id)``
    pairs, of ``course``'s course). It grades with ``options``, all of them (the cache key holds
    every setting that can change a result), so it finds every result the grading kept. It builds
    autograded folders with ``builders`` workers (one per core by default) and writes rows in one
    writer; ``built`` and ``written`` add up the workers' CPU seconds and the writer's seconds;
    ``peaks`` holds, for each submission recorded (``assignment/learner``), the peak memory (MiB)
    of the writer and of the worker that built its folder so far, whichever is larger."""

    def __init__(self, submissions: Sequence[Submission], course: Course, options: Options,
                 state: str | Path, lock_wait: float = LOCK_WAIT,
                 builders: int | None = None) -> None:
        self.state, self.lock_wait = Path(state), lock_wait
        self.names: dict[str, str] = {}  # assignment id -> its notebook's name, without .ipynb
        for assignment in sorted({a for a, _ in submissions}):
            problem = identity.id_problem(assignment, "assignment id")
            if problem:
                raise ValueError(problem)
            self.names[assignment] = course.assignment(assignment).release.stem
        # a name that is not a valid id is never recorded: it is named at the end, the rest
        # of the class is recorded
        problems = {submission: identity.id_problem(submission[1])
                    for submission in set(submissions)}
        self.refused = sorted({problem for problem in problems.values() if problem})
        self.pending = self._unrecorded(sorted(s for s, problem in problems.items()
                                               if not problem))
        self.sent: set[Submission] = set()
        self.deferred: list[Submission] = []
        self.failures: list[tuple[Submission, str]] = []
        self.stopped: str | None = None  # why the recording process is gone, if it is
        self.recorder: Recorder | None = None
        self.waited = 0.0  # seconds finish() took: what recording added after grading
        self.built = self.written = 0.0
        self.peaks: dict[str, float] = {}
        if self.pending:
            self.recorder = Recorder(config_arguments(options, "HiddenSuiteGrading"),
                                     cwd=course.root, env=nbgrader_env(self.state),
                                     builders=(os.cpu_count() or 1) if builders is None
                                     else builders)

    def _mark(self, submission: Submission) -> Path:
        assignment, student = submission
        return self.state / "recorded" / assignment / f"{student}.json"

    def _unrecorded(self, submissions: list[Submission]) -> list[Submission]:
        pending = []
        for submission in submissions:
            assignment, student = submission
            mark = self._mark(submission)
            if _read_mark(mark) == submission_stamp(self.state, student, assignment) and \
                    self._in_place(submission):
                continue
            mark.unlink(missing_ok=True)
            folder = autograded_folder(self.state, student, assignment)
            if folder.exists():
                shutil.rmtree(folder)
            pending.append(submission)
        return pending

    def _in_place(self, submission: Submission) -> bool:
        """Whether the submission's autograded notebook is where nbgrader writes it."""
        assignment, student = submission
        return (autograded_folder(self.state, student, assignment)
                / f"{self.names[assignment]}.ipynb").is_file()

    def add(self, assignment: str, student: str) -> None:
        """Record ``student``'s submission of ``assignment`` (whose result is in the cache) as
        soon as the gradebook allows. Never raises for the recording's sake: grading goes on,
        :meth:`finish` reports."""
        submission = (assignment, student)
        if submission not in self.pending or submission in self.sent or self.stopped:
            return
        self.sent.add(submission)
        if self.deferred:  # the gradebook was found locked: the rest waits for the end
            self.deferred.append(submission)
            return
        try:
            recorder = self._running()
            recorder.send(*submission)
            while not recorder.replies.empty() and recorder.outstanding:
                self._take(recorder.reply())
        except RecorderStopped as stopped:
            self.stopped = str(stopped)

    def _take(self, reply: dict[str, Any]) -> None:
        submission = (reply["assignment"], reply["student"])
        self.built += reply.get("build", 0.0)
        self.written += reply.get("rows", 0.0)
        self.peaks["/".join(submission)] = reply.get("peak", 0.0)
        if reply["status"] == "recorded":
            if self._in_place(submission):
                assignment, student = submission
                write_atomically(self._mark(submission),
                                 json.dumps(submission_stamp(self.state, student, assignment)))
        elif reply["locked"]:
            self.deferred.append(submission)
        else:
            self.failures.append((submission, reply["log"]))

    def drop(self, assignment: str, student: str) -> None:
        """Leave out ``student``'s submission of ``assignment``: it was not graded (the kernel
        could not be started), so nothing is recorded for it, nor graded by the recording
        process in grading's place."""
        if (assignment, student) not in self.sent:
            self.pending = [s for s in self.pending if s != (assignment, student)]

    def finish(self) -> None:
        """Return once every submission given is recorded; raise GradebookBusy if the gradebook
        stays locked past the wait, RecordingFailed naming the learners nbgrader failed on or
        whose names are not valid ids (or the recording process's end)."""
        if self.recorder is None:
            if self.refused:
                raise RecordingFailed("\n".join(f"not recorded: {r}" for r in self.refused))
            return
        started = time.monotonic()
        try:
            self._finish()
        finally:
            self.waited = time.monotonic() - started

    def _finish(self) -> None:
        for submission in self.pending:
            self.add(*submission)  # those grading did not report (none, normally)
        try:
            self._drain()
        except RecorderStopped as stopped:
            self.stopped = str(stopped)
        if self.stopped:
            raise RecordingFailed(f"{self.stopped}\nEvery grade is kept in the cache: run the "
                                  f"same command again to record the rest.")
        deadline, pause = time.monotonic() + self.lock_wait, 0.5
        while self.deferred:
            wait_for_gradebook(self.state, deadline)
            retry, self.deferred = self.deferred, []
            for submission in retry:
                self._running().send(*submission)
            self._drain()
            if self.deferred:
                if time.monotonic() + pause > deadline:
                    raise GradebookBusy(busy_message(self.state, self.lock_wait))
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
        problems = []
        for assignment in sorted({a for (a, _), _ in self.failures}):
            failed = [(s, log) for (a, s), log in self.failures if a == assignment]
            problems.append(f"nbgrader autograde {assignment} failed for "
                            + ", ".join(s for s, _ in failed) + ":\n"
                            + "\n".join(log for _, log in failed)[-4000:])
        if problems or self.refused:
            raise RecordingFailed("\n".join(problems + [f"not recorded: {r}" for r in self.refused]))

    def _running(self) -> Recorder:
        """The recording process, which exists whenever a submission is pending."""
        if self.recorder is None:
            raise RecorderStopped("no recording process: nothing was pending")
        return self.recorder

    def _drain(self) -> None:
        recorder = self._running()
        while recorder.outstanding:
            self._take(recorder.reply())

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.recorder is not None:
            self.recorder.__exit__(*exc)


def autograded_folder(state: str | Path, student: str, assignment: str) -> Path:
    return Path(state) / "autograded" / student / assignment


def submission_stamp(state: str | Path, student: str, assignment: str) -> str:
    """What identifies a submission: the digest of its files' names and bytes."""
    folder = Path(state) / "submitted" / student / assignment
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _read_mark(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def wait_for_gradebook(state: str | Path, deadline: float) -> None:
    """Return once the gradebook can be written (or does not exist yet); raise GradebookBusy,
    naming what holds it open, if that does not happen before ``deadline``."""
    path = gradebook_path(state)
    if not path.exists():
        return
    try:
        connection = sqlite3.connect(path, timeout=max(0.0, deadline - time.monotonic()))
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.rollback()
        finally:
            connection.close()
    except sqlite3.OperationalError as error:
        if "locked" not in str(error) and "busy" not in str(error):
            raise
        raise GradebookBusy(busy_message(state, None)) from None


def busy_message(state: str | Path, waited: float | None) -> str:
    path = gradebook_path(state)
    holders = gradebook_holders(path)
    lines = [f"the gradebook {path} is locked by another program"
             + (f" (waited {waited:g} s)" if waited else "") + "."]
    if holders:
        lines.append("Programs that have it open:")
        lines += [f"  pid {pid}: {command}" for pid, command in holders]
    else:
        lines.append("No program this user can see has it open (another user's program may).")
    lines.append("Close the formgrader or wait for the other command to finish, then run the "
                 "same command again: every grade is kept in the cache, nothing is graded twice.")
    return "\n".join(lines)


def gradebook_holders(path: str | Path) -> list[tuple[int, str]]:
    """``(pid, command line)`` of every process with ``path`` (or its journal) open."""
    targets = {str(Path(path).resolve()) + suffix for suffix in ("", "-journal", "-wal", "-shm")}
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            links = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
        except OSError:
            continue
        if links & targets:
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                command = "?"
            found.append((int(proc.name), command[:200]))
    return sorted(found)
