"""The nbgrader course around the notebooks: releasing and running nbgrader commands."""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from . import lifetime, reference
from .reference import REPO, solution_notebook
from .state import cache_dir, course_root, site_config, state_dir  # noqa: F401  (this module's interface)


def configure(c, root=None):
    """Every nbgrader setting of the course, on the config object ``c``.

    Used by the course's own ``nbgrader_config.py`` and, on a shared machine, by the instructor's
    ``~/.jupyter/nbgrader_config.py`` (``configure(get_config(), "/path/to/course")``), so that
    nbgrader finds the course, its state and its grading steps wherever it is started (the
    formgrader reads the user's configuration, not the course's file)."""
    root = Path(root or course_root())
    state = state_dir(root)
    state.mkdir(parents=True, exist_ok=True)
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.source_directory = "solutions"
    c.CourseDirectory.release_directory = "notebooks"
    for step in ("submitted", "autograded", "feedback"):
        setattr(c.CourseDirectory, f"{step}_directory", os.path.relpath(state / step, root))
    c.CourseDirectory.db_url = f"sqlite:///{state / 'gradebook.db'}"
    # Only notebooks are released: nothing else from solutions/<assignment>/ reaches learners.
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]
    # `make bench` measures stock nbgrader against this grader; only it sets this variable.
    if not os.environ.get("ATTENTION_COURSE_STOCK_AUTOGRADE"):
        from . import nbgrader_plugin
        nbgrader_plugin.configure(c)
    return c


def single_machine_defaults(c, site):
    """A course id and a private exchange (made on first use) for one person on one machine,
    where neither the site nor the user configured them."""
    state = state_dir(c.CourseDirectory.root)
    if "course_id" not in site.CourseDirectory:
        c.CourseDirectory.course_id = "attention-course"
    if "root" not in site.Exchange:
        c.Exchange.root = str(state / "exchange")
        (state / "exchange").mkdir(parents=True, exist_ok=True)
    if "cache" not in site.Exchange:
        c.Exchange.cache = str(state / "exchange-cache")
    return c


def nbgrader(*args, state=None, check=True, cwd=REPO, env_extra=None, quiet=True, stock=False):
    """Run one nbgrader command in the course folder; ``state`` relocates .course/. With
    ``stock``, nbgrader exactly as installed (``make bench`` measures it so)."""
    env = dict(os.environ)
    if state is not None:
        env["ATTENTION_COURSE_STATE"] = str(state)
    # nbgrader runs `alembic` as a command: the virtual environment's bin/ must be on PATH.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(env_extra or {})
    # nbgrader's own command line, without the costs autograder.nbgrader_launch explains.
    launcher = "nbgrader" if stock else "autograder.nbgrader_launch"
    completed = subprocess.run([sys.executable, "-m", launcher, *args], cwd=cwd, env=env,
                               text=True, capture_output=quiet,
                               preexec_fn=lifetime.die_with_parent)
    if check and completed.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({completed.returncode}):\n"
                           + (completed.stdout or "")[-2000:] + (completed.stderr or "")[-4000:])
    return completed


def release(assignments, release_directory=None, state=None):
    """Regenerate learner notebooks from solutions/ (into ``release_directory`` if given)."""
    for assignment in assignments:
        solution_notebook(assignment)  # fails clearly on an unknown assignment
        args = ["generate_assignment", assignment, "--force"]
        if release_directory is not None:
            args.append(f"--CourseDirectory.release_directory={release_directory}")
        nbgrader(*args, state=state)
        print(f"released {assignment}")
    return 0


def submissions(assignment, state=None, students=None):
    """``(notebooks, notes)``: the release's notebook of ``assignment`` for every student folder
    under ``submitted/``, and a line for each student folder that is a link, each extra notebook
    (reported, not graded) and each missing notebook."""
    root = Path(state or state_dir()) / "submitted"
    name = reference.release_notebook(assignment).name
    found, notes = [], []
    for student in sorted(root.iterdir()) if root.is_dir() else []:
        if students and student.name not in students:
            continue
        folder = student / assignment
        if student.is_symlink() or folder.is_symlink():
            notes.append(f"{student.name}: the submission folder is a link; refused")
            found.append(folder / name)  # graded as refused: read_regular says why
            continue
        if not folder.is_dir():
            continue
        extras = sorted(p.name for p in folder.iterdir() if p.suffix == ".ipynb" and p.name != name)
        for extra in extras:
            notes.append(f"{student.name}: {extra} is not part of {assignment}; only {name} "
                         f"is graded")
        if (folder / name).exists() or (folder / name).is_symlink():
            found.append(folder / name)
        else:
            notes.append(f"{student.name}: no {name} was submitted")
    return found, notes


LOCK_WAIT = 120.0  # seconds recording waits for a gradebook another program is writing


def autograde(assignment, jobs=None, state=None, sandbox="auto", progress=True, students=None,
              options=None, lock_wait=LOCK_WAIT):
    """Grade every submission of ``assignment`` in parallel, then record the grades with
    ``nbgrader autograde`` (which finds each result in the cache and only writes the gradebook,
    one notebook at a time). Returns the results of the parallel pass.

    Crash-only: killed at any moment, the same command resumes. Grading resumes from the cache;
    recording redoes every submission not marked as recorded (see :func:`record`)."""
    from . import batch, grade
    options = options or grade.Options(sandbox=sandbox)
    state = Path(state or state_dir())
    submitted, notes = submissions(assignment, state, students)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    results = batch.grade_many(submitted, assignment, options, jobs=jobs,
                               state=cache_dir(state), progress=progress,
                               root=state / "submitted")
    record(assignment, [p.parent.parent.name for p in submitted], options, state, lock_wait)
    return results


# ------------------------------------------------------------------ recording in the gradebook

class GradebookBusy(RuntimeError):
    """The gradebook stayed locked by another program for longer than the wait allowed."""


def record(assignment, students, options, state, lock_wait=LOCK_WAIT):
    """Record ``students``' cached results of ``assignment`` in the gradebook.

    nbgrader skips a student whose autograded folder exists, and a run killed half-way through a
    student leaves that folder behind, incomplete. So a student counts as recorded only once
    ``nbgrader autograde`` has *returned* with the student's notebook in place: a mark in
    ``state/recorded/`` then names the exact submission recorded. Every other student's autograded
    folder is removed first and recorded again (recording the same result twice writes the same
    rows). A locked gradebook is waited for, up to ``lock_wait`` seconds, then named."""
    state = Path(state)
    name = reference.release_notebook(assignment).stem
    marks = state / "recorded" / assignment
    pending = []
    for student in sorted(set(students)):
        mark = marks / f"{student}.json"
        folder = autograded_folder(state, student, assignment)
        if _read_mark(mark) == submission_stamp(state, student, assignment) and \
                (folder / f"{name}.ipynb").is_file():
            continue
        mark.unlink(missing_ok=True)
        if folder.exists():
            shutil.rmtree(folder)
        pending.append(student)
    if not pending:
        return
    deadline = time.monotonic() + lock_wait
    wait_for_gradebook(state, deadline)
    timeouts = [f"--HiddenSuiteGrading.{name}={getattr(options, name)}" for name in
                ("cell_timeout", "notebook_timeout", "call_timeout", "budget")]
    env = {"ATTENTION_COURSE_SANDBOX": options.sandbox}
    # One nbgrader command for every pending student: the others are excluded by name.
    others = sorted({p.name for p in (state / "submitted").iterdir()} - set(pending))
    selector = [f"--CourseDirectory.student_id_exclude={','.join(others)}"] if others else []
    pause = 0.5
    while True:
        done = nbgrader("autograde", assignment, *selector, *timeouts, state=state,
                        env_extra=env, check=False)
        if done.returncode == 0:
            break
        output = (done.stdout or "") + (done.stderr or "")
        if "database is locked" not in output:
            raise RuntimeError(f"nbgrader autograde {assignment} failed "
                               f"({done.returncode}):\n" + output[-4000:])
        if time.monotonic() + pause > deadline:
            raise GradebookBusy(busy_message(state, lock_wait))
        time.sleep(pause)
        pause = min(pause * 2, 5.0)
        wait_for_gradebook(state, deadline)
    marks.mkdir(parents=True, exist_ok=True)
    for student in pending:
        if (autograded_folder(state, student, assignment) / f"{name}.ipynb").is_file():
            from .grade import keep
            keep(marks / f"{student}.json", json.dumps(submission_stamp(state, student,
                                                                        assignment)))


def autograded_folder(state, student, assignment):
    return Path(state) / "autograded" / student / assignment


def submission_stamp(state, student, assignment):
    """What identifies a submission: the digest of its files' names and bytes."""
    folder = Path(state) / "submitted" / student / assignment
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _read_mark(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def gradebook_path(state):
    return Path(state) / "gradebook.db"


def wait_for_gradebook(state, deadline):
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


def busy_message(state, waited):
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


def gradebook_holders(path):
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
