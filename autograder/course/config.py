"""The course's nbgrader configuration: every nbgrader setting of a course, and the defaults for
one person on one machine."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .folders import course_root, environment, gradebook_path, state_dir
from ..engine.assignment import Course

FLAGS, ERRORS = "autograder_flags", "autograder_errors"  # in an autograded notebook's metadata
# nbgrader's autograding steps with the hidden suites in place of Execute, by name: nbconvert
# imports them when `nbgrader autograde` starts, so that nbgrader's other commands do not import
# the grader (numpy and pytest, about 0.3 s of CPU per command). The classes:
# autograder.course.nbgrader_plugin.AUTOGRADE_STEPS.
AUTOGRADE_STEP_NAMES = ("autograder.course.nbgrader_plugin.HiddenSuiteGrading",
                   "nbgrader.preprocessors.IgnorePattern",
                   "nbconvert.preprocessors.ClearMetadataPreprocessor",
                   "nbgrader.preprocessors.LimitOutput", "nbgrader.preprocessors.SaveAutoGrades",
                   "autograder.course.nbgrader_plugin.RecordFlags",
                   "nbgrader.preprocessors.AssignLatePenalties",
                   "nbgrader.preprocessors.CheckCellMetadata")


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
        plugin_settings(c)
    return c


def plugin_settings(c: Any) -> None:
    """Make ``nbgrader autograde`` use the hidden suites, ``nbgrader collect`` check what it
    takes (:mod:`autograder.course.exchange`), ``nbgrader export`` quote its CSV and every HTML page
    nbgrader renders sanitise learner content (called from nbgrader_config.py)."""
    from . import feedback_page, sanitize
    c.ExchangeFactory.collect = "autograder.course.exchange.SafeCollect"
    c.ExchangeFactory.release_assignment = "autograder.course.exchange.SafeReleaseAssignment"
    c.ExportApp.plugin_class = "autograder.course.export.QuotedCsvExport"
    sanitize.configure(c)
    feedback_page.configure(c)
    c.Autograde.autograde_preprocessors = list(AUTOGRADE_STEP_NAMES)
    # a learner's file is read by a bounded child; nbgrader parses the copy it gives
    c.Autograde.exporter_class = "autograder.course.nbgrader_plugin.SubmissionExporter"
    # nbconvert's ClearMetadataPreprocessor empties the notebook's metadata but for the kernel's
    # language: the grading's errors and flags are kept for the instructor (the README says so)
    c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {
        ("language_info", "name"), (FLAGS,), (ERRORS,)}
    c.OverwriteCells.add_missing_cells = True
    # nbconvert's own setting: validate a notebook once after all the steps of a pass, not after
    # each of them (twelve whole-notebook validations per notebook when autograding); a notebook
    # left invalid still fails the same way
    c.Exporter.optimistic_validation = True


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
