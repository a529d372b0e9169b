"""nbgrader's ``Autograde`` converter in two parts: the autograded notebook, and the gradebook's rows.

For one learner, ``nbgrader autograde`` does two kinds of work. Most of it builds the autograded
folder: it reads the submission (the bounded reader's normalised copy of it,
:class:`~autograder.course.nbgrader_plugin.SubmissionExporter`), overwrites the locked cells from
the gradebook's source cells, grades (this course's
:class:`~autograder.course.nbgrader_plugin.HiddenSuiteGrading`, which finds the result the grading
workers kept), limits outputs, clears metadata and writes the notebook.
All of that only *reads* the gradebook. The rest writes the gradebook's rows: the learner, the
submission and its timestamp, every grade and comment (``SaveAutoGrades``), the flag
(``RecordFlags``) and the late penalty (``AssignLatePenalties``).

The recording process (:mod:`autograder.course.recorder`) builds learners' folders in parallel
workers (:func:`build`, into a folder of its own) and leaves its one gradebook writer only the rows
(:func:`write_rows`, after moving the built folder into place). Both run nbgrader's own code:
the same preprocessors, on the same notebook, in the same order, with the gradebook writes of
``Autograde.init_assignment`` done by the writer alone. The result is stock's, byte for byte
(``tests/end_to_end/test_crash_only.py`` compares).

This split holds for the steps it knows: when a course configures other steps, hooks or sanitizing
steps (:func:`splittable`), each learner goes through the whole converter, in the writer.
"""
from __future__ import annotations

import os
import resource
import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters.autograde import Autograde
from nbgrader.converters.base import BaseConverter
from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades
from traitlets.utils.importstring import import_item

from . import nbgrader_plugin

ROWS = (SaveAutoGrades, nbgrader_plugin.RecordFlags, AssignLatePenalties)  # steps that write rows
BUILDING = ".building"  # beside the autograded folder: <autograded>.building/<student>/<assignment>


def splittable(converter: Autograde) -> bool:
    """Whether ``converter``'s steps are the course's own (``config.plugin_settings``, by name or
    as classes) and nbgrader's sanitizing ones, with no hooks: the steps known to write only
    through ``ROWS``."""
    steps = [import_item(s) if isinstance(s, str) else s for s in converter.autograde_preprocessors]
    return (steps == nbgrader_plugin.AUTOGRADE_STEPS
            and list(converter.sanitize_preprocessors)
            == list(Autograde.class_traits()["sanitize_preprocessors"].default())
            and converter.pre_convert_hook is None and converter.post_convert_hook is None
            and not converter.exclude_overwriting)


def building_directory(coursedir: Any) -> str:
    """The folder learners' autograded folders are built in, on the same file system as the
    autograded folder (a built folder is renamed into place)."""
    folder: str = os.path.normpath(coursedir.autograded_directory)
    return folder + BUILDING


class Build(Autograde):  # type: ignore[misc]
    """``Autograde`` without its gradebook writes: every step but ``ROWS``, into the building
    folder (the caller sets ``coursedir.autograded_directory`` to :func:`building_directory`)."""

    def _init_preprocessors(self) -> None:
        super()._init_preprocessors()
        if not self._sanitizing:
            self.exporter._preprocessors = [step for step in self.exporter._preprocessors
                                            if not isinstance(step, ROWS)]

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        """``Autograde.init_assignment`` less its writes: the learner's other files and the
        assignment's own are copied, notebooks the gradebook does not know are skipped."""
        BaseConverter.init_assignment(self, assignment_id, student_id)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            gb.find_assignment(assignment_id)  # MissingEntry fails the learner, as nbgrader does
        dest_path = self._format_dest(assignment_id, student_id)
        source_path = self.coursedir.format_path(self.coursedir.source_directory, ".",
                                                 assignment_id)
        for filename in utils.find_all_files(source_path, self.coursedir.ignore + ["*.ipynb"]):
            dest = os.path.join(dest_path, os.path.relpath(filename, source_path))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if os.path.exists(dest):
                os.remove(dest)
            shutil.copy(filename, dest)
        notebooks: list[str] = []
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            for notebook in self.notebooks:  # type: ignore[has-type]
                try:
                    gb.find_notebook(os.path.splitext(os.path.basename(notebook))[0],
                                     assignment_id)
                except MissingEntry:
                    self.log.warning("Skipping unknown notebook: %s", notebook)
                else:
                    notebooks.append(notebook)
        self.notebooks = notebooks
        if not notebooks:
            raise MissingEntry("No notebooks found, did you forget to run "
                               "'nbgrader generate_assignment'?")


def build(app: Any, student: str) -> float:
    """Build ``student``'s autograded folder in the building folder (nbgrader raises for a
    learner it fails); returns this process's CPU seconds it took."""
    import glob
    started = resource.getrusage(resource.RUSAGE_SELF)
    coursedir = app.coursedir
    dest = Path(coursedir.format_path(building_directory(coursedir), student,
                                      coursedir.assignment_id))
    if dest.exists():  # left by a run killed half-way through this learner
        shutil.rmtree(dest)
    autograded, coursedir.autograded_directory = (coursedir.autograded_directory,
                                                  building_directory(coursedir))
    coursedir.student_id = glob.escape(student)
    try:
        Build(coursedir=coursedir, parent=app).start()
    finally:
        coursedir.autograded_directory = autograded
    if not dest.is_dir():
        raise RuntimeError(f"nothing was built for {student}")
    ended = resource.getrusage(resource.RUSAGE_SELF)
    return (ended.ru_utime - started.ru_utime) + (ended.ru_stime - started.ru_stime)


def write_rows(app: Any, student: str) -> float:
    """Move ``student``'s built folder into the autograded folder and write their rows, as
    ``Autograde`` writes them; returns the seconds it took. On any failure the autograded folder
    is removed again (nbgrader's own rule), so that the learner is recorded again."""
    started = time.perf_counter()
    coursedir = app.coursedir
    assignment = coursedir.assignment_id
    built = Path(coursedir.format_path(building_directory(coursedir), student, assignment))
    dest = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(built, dest)
    try:
        built.parent.rmdir()  # the learner's building folder, empty unless another is building
    except OSError:
        pass
    try:
        _rows(app, student, assignment, dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return time.perf_counter() - started


def _rows(app: Any, student: str, assignment: str, dest: Path) -> None:
    coursedir = app.coursedir
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:  # Autograde.init_assignment's
        app.log.info("Creating/updating student with ID '%s': %s", student, {})
        gb.update_or_create_student(student)
        gb.find_assignment(assignment)
        timestamp = coursedir.get_existing_timestamp(str(submitted))
        if timestamp:
            gb.update_or_create_submission(assignment, student, timestamp=timestamp)
        else:
            gb.update_or_create_submission(assignment, student)
        for notebook in gb.find_assignment(assignment).notebooks:
            if not (submitted / f"{notebook.name}.ipynb").exists():
                app.log.warning("No submitted file: %s", submitted / f"{notebook.name}.ipynb")
                for grade in gb.find_submission_notebook(notebook.name, assignment,
                                                         student).grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
                gb.db.commit()
    steps = [step(parent=app) for step in nbgrader_plugin.AUTOGRADE_STEPS if step in ROWS]
    for path in sorted(dest.glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        resources = {"nbgrader": {"student": student, "assignment": assignment,
                                  "notebook": path.stem, "db_url": coursedir.db_url}}
        with utils.setenv(NBGRADER_EXECUTION="autograde"):
            for step in steps:
                nb, resources = step(nb, resources)
