"""Can other users read the instructor's copy of the course? ``python -m autograder privacy``

On a shared machine (JupyterHub with real users) learners must not be able to read the hidden
suites (with their catalogue of mistakes), the solutions or the gradebook and submissions. This
checks, for each of them, whether a user other than its owner could reach it: every folder above
it must let others through (``o+x``) and it must let others read (``o+r``). It prints one line per
path that others can read and exits with status 1 if there is any.
"""
from __future__ import annotations

import stat
from pathlib import Path

from . import folders
from ..engine.assignment import Course


def private_paths(root: str | Path) -> list[Path]:
    """What only the instructor (and the grader) may read, in the course at ``root``."""
    course = Course.from_root(root)
    state = folders.state_dir(course.root)
    paths = [course.solutions_folder, course.suites_folder, state, folders.gradebook_path(state),
             state / "submitted", state / "autograded", state / "feedback",
             folders.cache_dir(state)]
    return [p for p in paths if p.exists()]


def readable_by_others(path: str | Path) -> str | None:
    """None if others cannot read ``path``; else a sentence saying how they can."""
    path = Path(path).resolve()
    for folder in reversed(path.parents):
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            return None  # others cannot pass through this folder
    mode = path.stat().st_mode
    wanted = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
    if mode & wanted != wanted:
        return None
    return (f"{path} can be read by every user on this machine ({stat.filemode(mode)}, and every "
            f"folder above it lets others through)")


def main(argv: list[str] | None = None) -> int:
    root = Path(argv[0]) if argv else folders.course_root()
    problems = [line for line in (readable_by_others(p) for p in private_paths(root)) if line]
    for line in problems:
        print(f"warning: {line}")
    if problems:
        print(f"Learners with an account on this machine could read the hidden suites, the "
              f"solutions or the gradebook. Make the course private, for example "
              f"`chmod 700 {root}` (see docs/jupyterhub.md).")
        return 1
    print("ok: only their owner can read the suites, the solutions and the course's state.")
    return 0
