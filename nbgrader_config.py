"""nbgrader configuration for attention-course.

Instructor sources live in ``solutions/``; ``nbgrader generate_assignment`` writes the learner
notebooks into ``notebooks/``. Everything nbgrader produces while a course runs (submissions,
autograded copies, feedback, the gradebook and a local exchange) lives under ``.course/``, which git
ignores. ``nbgrader autograde`` grades with the course's hidden suites through
``autograder.nbgrader_plugin.HiddenSuiteGrading`` instead of stock execution.
"""
import os
import sys

from autograder import nbgrader_plugin

# nbgrader runs `alembic` by name when it creates a gradebook: make the environment's own bin/
# visible even when nbgrader is called as .venv/bin/nbgrader without activating the environment.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

here = os.path.dirname(os.path.abspath(__file__))
state = os.environ.get("ATTENTION_COURSE_STATE", os.path.join(here, ".course"))
os.makedirs(state, exist_ok=True)

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.root = here
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = os.path.relpath(os.path.join(state, "submitted"), here)
c.CourseDirectory.autograded_directory = os.path.relpath(os.path.join(state, "autograded"), here)
c.CourseDirectory.feedback_directory = os.path.relpath(os.path.join(state, "feedback"), here)
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(state, "gradebook.db")
c.Exchange.root = os.path.join(state, "exchange")
c.Exchange.cache = os.path.join(state, "exchange-cache")

# Only notebooks are released: nothing else from solutions/<assignment>/ reaches learners.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]

# `make bench` measures stock nbgrader against this grader; only it sets this variable.
if not os.environ.get("ATTENTION_COURSE_STOCK_AUTOGRADE"):
    nbgrader_plugin.configure(c)
