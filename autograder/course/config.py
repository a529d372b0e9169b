"""Where the course is, and where it keeps its working state (submissions, gradebook, cache)."""
import os
from pathlib import Path

from .reference import REPO


def site_config():
    """What the site's and the user's nbgrader configuration files set (``/etc/jupyter``,
    ``~/.jupyter``, ``$JUPYTER_CONFIG_PATH``...), without the course's own ``nbgrader_config.py``."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import (ConfigFileNotFound, JSONFileConfigLoader,
                                         PyFileConfigLoader)
    own = (REPO / "nbgrader_config.py").resolve()
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


def course_root(site=None):
    """The nbgrader course root: the site's or user's ``CourseDirectory.root``, else this checkout."""
    site = site_config() if site is None else site
    return Path(site.CourseDirectory.root) if "root" in site.CourseDirectory else REPO


def state_dir(root=None):
    """Where the course's working state lives: ``$ATTENTION_COURSE_STATE``, else ``.course/`` in
    the course root (nbgrader_config.py computes the same)."""
    if os.environ.get("ATTENTION_COURSE_STATE"):
        return Path(os.environ["ATTENTION_COURSE_STATE"])
    return Path(root or course_root()) / ".course"


def cache_dir(state=None):
    return Path(state or state_dir()) / "grading-cache"
