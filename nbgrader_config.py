"""nbgrader configuration for attention-course.

Instructor sources live in ``solutions/``; ``nbgrader generate_assignment`` writes the learner
notebooks into ``notebooks/`` (the course's layout is ``[tool.autograder]`` in pyproject.toml). Everything nbgrader produces while a course runs (submissions,
autograded copies, feedback, the gradebook, the grader's cache) lives under ``.course/`` in the
course root (or ``$AUTOGRADER_STATE``), which git ignores. ``nbgrader autograde`` grades with
the course's hidden suites (``autograder.course.nbgrader_plugin.HiddenSuiteGrading``) and ``nbgrader
collect`` refuses links and special files (``autograder.course.exchange.SafeCollect``): see
``autograder.course.config.configure``.

The course id, the exchange and the course root here are only defaults for one person on one
machine: where the site (``/etc/jupyter/nbgrader_config.py``, a JupyterHub's shared exchange) or
the user (``~/.jupyter/nbgrader_config.py``) sets them, their values are kept. nbgrader reads this
file last, so it reads theirs first.
"""
import os
import sys

from autograder.course.config import configure, single_machine_defaults
from autograder.course.folders import site_config

# nbgrader runs `alembic` by name when it creates a gradebook: make the environment's own bin/
# visible even when nbgrader is called as .venv/bin/nbgrader without activating the environment.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)
site = site_config(exclude=__file__)
here = os.path.dirname(os.path.abspath(__file__))
configure(c, site.CourseDirectory.root if "root" in site.CourseDirectory else here)
single_machine_defaults(c, site)
