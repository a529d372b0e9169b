"""The course's nbgrader configuration: where the course is, where it keeps its working state
(submissions, gradebook, cache), and every nbgrader setting of the course."""
import os
from pathlib import Path

from ..engine.reference import REPO


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
    """A course id and a private exchange (made on first use, only its owner may enter it) for
    one person on one machine, where neither the site nor the user configured them."""
    state = state_dir(c.CourseDirectory.root)
    if "course_id" not in site.CourseDirectory:
        c.CourseDirectory.course_id = "attention-course"
    if "root" not in site.Exchange:
        c.Exchange.root = str(state / "exchange")
        (state / "exchange").mkdir(mode=0o700, parents=True, exist_ok=True)
    if "cache" not in site.Exchange:
        c.Exchange.cache = str(state / "exchange-cache")
    return c
