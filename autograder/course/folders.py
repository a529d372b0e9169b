"""Where a course is and where it keeps its working state (submissions, gradebook, the grading
cache), as nbgrader's configuration says.

The course root is nbgrader's: the site's or the user's ``CourseDirectory.root`` where they set
one, else the folder nbgrader is started in. The course's layout (its source, release and suites
folders) is the engine's :class:`~autograder.engine.assignment.Course`, read from that root.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..engine.assignment import Course

STATE_VARIABLE = "ATTENTION_COURSE_STATE"  # relocates the course's working state (.course/)


def site_config(exclude: str | Path | None = None) -> Any:
    """What the site's and the user's nbgrader configuration files set (``/etc/jupyter``,
    ``~/.jupyter``, ``$JUPYTER_CONFIG_PATH``...); ``exclude`` is the course's own
    ``nbgrader_config.py``, which calls this."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import (ConfigFileNotFound, JSONFileConfigLoader,
                                         PyFileConfigLoader)
    own = Path(exclude).resolve() if exclude else None
    merged = Config()
    for folder in reversed(jupyter_config_path()):  # lowest priority first
        for loader, name in ((JSONFileConfigLoader, "nbgrader_config.json"),
                             (PyFileConfigLoader, "nbgrader_config.py")):
            path = Path(folder) / name
            if not path.is_file() or path.resolve() == own:
                continue
            try:
                merged.merge(loader(name, path=folder).load_config())
            except (ConfigFileNotFound, OSError):
                continue
    return merged


def course_root(site: Any = None) -> Path:
    """The nbgrader course root: the site's or user's ``CourseDirectory.root``, else the current
    folder (as nbgrader itself takes it)."""
    site = site_config() if site is None else site
    return Path(site.CourseDirectory.root) if "root" in site.CourseDirectory else Path.cwd()


def current_course() -> Course:
    """The course in nbgrader's course root (:func:`course_root`)."""
    return Course.from_root(course_root())


def state_dir(root: str | Path | None = None) -> Path:
    """Where the course's working state lives: ``$ATTENTION_COURSE_STATE``, else ``.course/`` in
    the course root."""
    if os.environ.get(STATE_VARIABLE):
        return Path(os.environ[STATE_VARIABLE])
    return Path(root or course_root()) / ".course"


def cache_dir(state: str | Path | None = None) -> Path:
    return Path(state or state_dir()) / "grading-cache"


def gradebook_path(state: str | Path | None = None) -> Path:
    return Path(state or state_dir()) / "gradebook.db"
