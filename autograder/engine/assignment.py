"""A course and its assignments: everything the engine knows about a course.

A :class:`Course` is read from a course root, the folder nbgrader knows as
``CourseDirectory.root``. Its layout is nbgrader's, with the hidden suites beside it:

- ``<solutions>/<assignment>/<name>.ipynb``: the instructor notebook (nbgrader's source folder),
  whose solution and ``setup`` cells are the reference the suites compare against;
- ``<release>/<assignment>/<name>.ipynb``: the notebook learners got (nbgrader's release folder),
  whose locked cells are put back into every submission;
- ``<suites>/<assignment>/``: the hidden suite (``test_*.py``), ``mutants.py`` and
  ``alternatives.py``.

The folders' names, the packages the course's notebooks import (shown to learners' kernels) and
the course's nbgrader id come from the table ``[tool.autograder]`` of the root's
``pyproject.toml``, when there is one; otherwise they are nbgrader's defaults (``source``,
``release``) and ``suites``. An :class:`Assignment` is one folder of the course; every entry point
of the engine takes one (or the course, which yields them), and nothing in the engine finds a
file any other way.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import tomllib
from pathlib import Path
from typing import Any, Sequence

from . import notebook

LAYOUT_FILE = "pyproject.toml"
LAYOUT_TABLE = "autograder"  # [tool.autograder]


@dataclasses.dataclass(frozen=True)
class Course:
    """A course root and its layout (folder names relative to ``root``)."""
    root: Path
    solutions: str = "source"          # nbgrader's default source_directory
    release: str = "release"           # nbgrader's default release_directory
    suites: str = "suites"
    learner_packages: tuple[str, ...] = ()  # packages the notebooks import: shown to kernels
    course_id: str = ""                # nbgrader's course id where nothing else sets one
    requirements: str = "requirements.lock"  # the pinned environment a Gradescope image installs

    @classmethod
    def from_root(cls, root: str | Path, **overrides: Any) -> Course:
        """The course in ``root``, its layout read from ``[tool.autograder]`` in the root's
        ``pyproject.toml`` (``overrides`` win: nbgrader's own folder settings, say)."""
        root = Path(root).resolve()
        settings: dict[str, Any] = {}
        layout = root / LAYOUT_FILE
        if layout.is_file():
            with open(layout, "rb") as handle:
                settings = dict(tomllib.load(handle).get("tool", {}).get(LAYOUT_TABLE, {}))
        settings.update(overrides)
        known = {field.name for field in dataclasses.fields(cls)} - {"root"}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"{layout}: [tool.{LAYOUT_TABLE}] has no setting "
                             f"{', '.join(unknown)} (known: {', '.join(sorted(known))})")
        if "learner_packages" in settings:
            settings["learner_packages"] = tuple(settings["learner_packages"])
        settings.setdefault("course_id", root.name)
        return cls(root, **settings)

    @property
    def solutions_folder(self) -> Path:
        return self.root / self.solutions

    @property
    def release_folder(self) -> Path:
        return self.root / self.release

    @property
    def suites_folder(self) -> Path:
        return self.root / self.suites

    def suite_support(self) -> list[Path]:
        """The modules at the top of the suites folder (``conftest.py`` aside): what the course's
        suites share beyond the engine's kit, importable by name from every suite while it runs
        (:func:`autograder.engine.suite.importable`)."""
        folder = self.suites_folder
        return sorted(p for p in folder.glob("*.py") if p.is_file() and p.name != "conftest.py") \
            if folder.is_dir() else []

    def assignments(self) -> list[Assignment]:
        """Every assignment: each folder of the solutions holding a notebook, by name."""
        folder = self.solutions_folder
        names = sorted(p.name for p in folder.iterdir()
                       if p.is_dir() and any(p.glob("*.ipynb"))) if folder.is_dir() else []
        return [Assignment(self, name) for name in names]

    def assignment(self, name: str) -> Assignment:
        """The assignment called ``name``; LookupError, naming the known ones, if there is none."""
        found = Assignment(self, name)
        if not (self.solutions_folder / name).is_dir():
            known = ", ".join(a.name for a in self.assignments()) or "none"
            raise LookupError(f"the course in {self.root} has no assignment {name!r} (no folder "
                              f"{self.solutions}/{name}; assignments: {known})")
        return found

    def detect(self, path: str | Path) -> Assignment:
        """The assignment a notebook belongs to: the folder it sits in (nbgrader's layout), else
        its file name. Raises LookupError with a sentence when neither tells."""
        known = self.assignments()
        path = Path(path)
        for assignment in known:
            if path.parent.name == assignment.name:
                return assignment
        for assignment in known:
            if assignment.solution.name == path.name:
                return assignment
        raise LookupError(f"cannot tell which assignment {path} belongs to; pass --assignment "
                          f"(one of {', '.join(a.name for a in known) or 'none'}, in the course "
                          f"{self.root})")

    def private_folders(self) -> tuple[str, ...]:
        """The course's folders learners must never see: covered in the sandbox should an
        install ever put them in view."""
        return (str(self.solutions_folder), str(self.suites_folder))


@dataclasses.dataclass(frozen=True)
class Assignment:
    """One assignment of a course: its instructor notebook, its release and its hidden suite."""
    course: Course
    name: str

    @property
    def solution(self) -> Path:
        """The instructor notebook (the only notebook of the assignment's solutions folder)."""
        folder = self.course.solutions_folder / self.name
        found = _notebooks(folder)
        if len(found) != 1:
            raise LookupError(f"expected one notebook in {folder}, found {len(found)}")
        return found[0]

    @property
    def release(self) -> Path:
        """The learner's notebook as nbgrader released it."""
        return self.course.release_folder / self.name / self.solution.name

    @property
    def suite(self) -> Path:
        """The folder of the hidden suite, its mutants and its alternatives."""
        return self.course.suites_folder / self.name

    @property
    def written_points(self) -> float:
        """Points of the answers graded by hand (nbgrader's markdown answer cells and tasks): the
        part of the grade that no autograder gives, always stated beside the autograded part."""
        cells = json.loads(self.solution.read_text(encoding="utf-8"))["cells"]
        return round(sum(float(cell["metadata"]["nbgrader"].get("points") or 0)
                         for cell in cells if notebook.is_written_answer(cell)), 6)

    def __str__(self) -> str:
        return self.name


# What a file's or folder's status vouches for is kept only once it has been still for STILL_NS
# (:func:`_settled`): a change within the clock's tick of the one before would keep its times.
STILL_NS = 2_000_000_000

# The notebooks of a folder, by the folder's status when they were listed: a suite asks for its
# assignment's solution on every call of a catalogued mistake, and a folder's times change
# whenever a file in it is added, removed or renamed.
_listings: dict[Path, tuple[tuple[Any, ...], list[Path]]] = {}


def _notebooks(folder: Path) -> list[Path]:
    """The ``*.ipynb`` files of ``folder``, sorted, listed again only when the folder changed."""
    now = _status(folder)
    known = _listings.get(folder)
    if known is not None and known[0] == now:
        return list(known[1])
    found = sorted(folder.glob("*.ipynb"))
    if _settled(now):
        _listings[folder] = (now, found)
    return list(found)


# The digest of files whose status (size, times, inode) has not changed since it was computed.
_digests: dict[tuple[Path, ...], tuple[tuple[Any, ...], str]] = {}


def contents_digest(paths: Sequence[Path]) -> str:
    """The SHA-256 of the contents of ``paths`` (a missing file counts as empty), read again only
    when a file's status changed: a suite asks for it on every call of a catalogued mistake, and
    every grading for its assignment's version."""
    key = tuple(paths)
    now = tuple(_status(path) for path in key)
    known = _digests.get(key)
    if known is not None and known[0] == now:
        return known[1]
    found = hashlib.sha256(b"".join(p.read_bytes() + b"\0" if p.exists() else b"\0"
                                    for p in key)).hexdigest()
    if all(_settled(status) for status in now):
        _digests[key] = (now, found)
    return found


def _settled(status: tuple[Any, ...]) -> bool:
    """Whether a :func:`_status` can stand for what it was read with: the path is missing (its
    creation changes the status), or it last changed more than STILL_NS ago. The change time
    counts too: it is the kernel's, and a modification time set back (``os.utime``, a copy that
    keeps times) does not make a file older."""
    return not status or time.time_ns() - max(status[2], status[3]) > STILL_NS


def _status(path: Path) -> tuple[Any, ...]:
    """What changes when a file is written, replaced or removed: its inode, size and times
    (empty for a missing file)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return ()
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns
