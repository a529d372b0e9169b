"""The nbgrader course around the notebooks: releasing and running nbgrader commands."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .reference import REPO, solution_notebook


def state_dir():
    """Where the course's working state lives (nbgrader_config.py reads the same variable)."""
    return Path(os.environ.get("ATTENTION_COURSE_STATE", REPO / ".course"))


def cache_dir(state=None):
    return Path(state or state_dir()) / "grading-cache"


def nbgrader_executable():
    here = Path(sys.executable).parent / "nbgrader"
    return str(here) if here.exists() else (shutil.which("nbgrader") or "nbgrader")


def nbgrader(*args, state=None, check=True, cwd=REPO, env_extra=None, quiet=True):
    """Run one nbgrader command in the course folder; ``state`` relocates .course/."""
    env = dict(os.environ)
    if state is not None:
        env["ATTENTION_COURSE_STATE"] = str(state)
    # nbgrader runs `alembic` as a command: the virtual environment's bin/ must be on PATH.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(env_extra or {})
    completed = subprocess.run([nbgrader_executable(), *args], cwd=cwd, env=env, text=True,
                               capture_output=quiet)
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


def autograde(assignment, jobs=None, state=None, sandbox="auto", progress=True, students=None):
    """Grade every submission of ``assignment`` in parallel, then record the grades with
    ``nbgrader autograde`` (which finds each result in the cache and only writes the gradebook,
    one notebook at a time)."""
    from . import batch, grade
    state = Path(state or state_dir())
    submitted = sorted((state / "submitted").glob(f"*/{assignment}/*.ipynb"))
    if students:
        submitted = [p for p in submitted if p.parent.parent.name in students]
    batch.grade_many(submitted, assignment, grade.Options(sandbox=sandbox), jobs=jobs,
                     state=cache_dir(state), progress=progress)
    args = ["autograde", assignment]
    for student in students or []:
        args.append(f"--student={student}")
    nbgrader(*args, state=state, env_extra={"ATTENTION_COURSE_SANDBOX": sandbox})
    return len(submitted)
