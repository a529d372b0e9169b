"""The course's nbgrader configuration: every nbgrader setting of a course, and the defaults for
one person on one machine."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .folders import course_root, environment, gradebook_path, state_dir
from ..engine.assignment import Course


def configure(c: Any, root: str | Path | None = None) -> Any:
    """Every nbgrader setting of the course in ``root``, on the config object ``c``.

    Used by a course's own ``nbgrader_config.py`` and, on a shared machine, by the instructor's
    ``~/.jupyter/nbgrader_config.py`` (``configure(get_config(), "/path/to/course")``), so that
    nbgrader finds the course, its state and its grading steps wherever it is started (the
    formgrader reads the user's configuration, not the course's file)."""
    course = Course.from_root(root or course_root())
    state = state_dir(course.root)
    state.mkdir(parents=True, exist_ok=True)
    c.CourseDirectory.root = str(course.root)
    c.CourseDirectory.source_directory = course.solutions
    c.CourseDirectory.release_directory = course.release
    for step in ("submitted", "autograded", "feedback"):
        setattr(c.CourseDirectory, f"{step}_directory", os.path.relpath(state / step, course.root))
    c.CourseDirectory.db_url = f"sqlite:///{gradebook_path(state)}"
    # Only notebooks are released: nothing else from the source folder reaches learners.
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]
    # `make bench` measures stock nbgrader against this grader; only it sets this variable.
    if not environment("STOCK_AUTOGRADE"):
        from . import nbgrader_plugin
        nbgrader_plugin.configure(c)
    return c


def single_machine_defaults(c: Any, site: Any) -> Any:
    """A course id and a private exchange (made on first use, only its owner may enter it) for
    one person on one machine, where neither the site nor the user configured them."""
    state = state_dir(c.CourseDirectory.root)
    if "course_id" not in site.CourseDirectory:
        c.CourseDirectory.course_id = Course.from_root(c.CourseDirectory.root).course_id
    if "root" not in site.Exchange:
        c.Exchange.root = str(state / "exchange")
        (state / "exchange").mkdir(mode=0o700, parents=True, exist_ok=True)
    if "cache" not in site.Exchange:
        c.Exchange.cache = str(state / "exchange-cache")
    return c
