"""Where a course is and where it keeps its working state (submissions, gradebook, the grading
cache), as nbgrader's configuration says.

The course root is nbgrader's: the site's or the user's ``CourseDirectory.root`` where they set
one, else the folder nbgrader is started in. The course's layout (its source, release and suites
folders) is the engine's :class:`~autograder.engine.assignment.Course`, read from that root.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..engine.assignment import Course

PREFIX, OLD_PREFIX = "AUTOGRADER_", "ATTENTION_COURSE_"  # the engine's variables, then their old names
STATE_VARIABLE = PREFIX + "STATE"  # relocates the course's working state (.course/)
_warned: set[str] = set()


def environment(name: str) -> str | None:
    """The engine's environment variable ``AUTOGRADER_<name>`` (``STATE``, ``SANDBOX``,
    ``STOCK_AUTOGRADE``), else its old name ``ATTENTION_COURSE_<name>``, which still works and
    says once, on stderr, that it is deprecated."""
    value = os.environ.get(PREFIX + name)
    if value:
        return value
    value = os.environ.get(OLD_PREFIX + name)
    if value and name not in _warned:
        _warned.add(name)
        print(f"note: ${OLD_PREFIX}{name} is deprecated and will stop working; set "
              f"${PREFIX}{name} instead", file=sys.stderr)
    return value or None


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
    """Where the course's working state lives: ``$AUTOGRADER_STATE``, else ``.course/`` in the
    course root."""
    relocated = environment("STATE")
    if relocated:
        return Path(relocated)
    return Path(root or course_root()) / ".course"


def cache_dir(state: str | Path | None = None) -> Path:
    return Path(state or state_dir()) / "grading-cache"


def gradebook_path(state: str | Path | None = None) -> Path:
    return Path(state or state_dir()) / "gradebook.db"
