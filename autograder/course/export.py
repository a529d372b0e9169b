"""``nbgrader export`` writing quoted CSV.

nbgrader's own CSV export joins each row's fields with commas and writes them as they are: a
student id or a name holding a carriage return, a newline or a comma adds rows or columns of its
own (an id ``x\\r<row>`` once added a forged row giving full marks to an account that submitted
nothing). :class:`QuotedCsvExport` (``ExportApp.plugin_class``, set by the course's configuration)
writes the same columns and the same values, every field quoted (:func:`autograder.course.formats.csv_writer`),
so that ``grades.csv`` parses into exactly the rows the gradebook holds.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbgrader.api import Gradebook, MissingEntry, SubmittedAssignment
from nbgrader.plugins import CsvExportPlugin

from ..engine.result import score_story
from .formats import csv_writer

COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score",
           "autograded_score", "autograded_max_score", "written_score", "written_max_score",
           "grade")


def written_pending(submission: SubmittedAssignment) -> bool:
    """Whether a written answer of ``submission`` (nbgrader's SubmittedAssignment) still waits
    for its hand grading."""
    return any(grade.needs_manual_grade for notebook in submission.notebooks
               for grade in notebook.grades if grade.cell_type == "markdown")


class QuotedCsvExport(CsvExportPlugin):  # type: ignore[misc]  # nbgrader is untyped
    """nbgrader's CSV export (its columns, values and options), every field quoted; then the
    course's own columns: the autograded and the written part, and the grade as the course
    states it everywhere (:func:`autograder.engine.result.score_story`)."""

    def rows(self, gradebook: Gradebook) -> Iterator[dict[str, str]]:
        """One dict per assignment and student, as nbgrader's CSV export computes it."""
        students = [str(s) for s in self.student]
        assignments = [str(a) for a in self.assignment]
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                row: dict[str, Any] = {"assignment": assignment.name, "duedate": assignment.duedate,
                       "student_id": student.id, "last_name": student.last_name,
                       "first_name": student.first_name, "email": student.email,
                       "max_score": assignment.max_score}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:  # nothing submitted: zero
                    row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                               score=0.0, autograded_score=0.0,
                               autograded_max_score=assignment.max_code_score, written_score=0.0,
                               written_max_score=assignment.max_written_score,
                               grade="nothing submitted")
                else:
                    penalty = submission.late_submission_penalty
                    pending = written_pending(submission)
                    written = None if pending else submission.written_score
                    row.update(timestamp=submission.timestamp, raw_score=submission.score,
                               late_submission_penalty=penalty,
                               score=max(0.0, submission.score - penalty),
                               autograded_score=submission.code_score,
                               autograded_max_score=submission.max_code_score,
                               written_score="" if pending else submission.written_score,
                               written_max_score=submission.max_written_score,
                               grade=score_story(submission.code_score, submission.max_code_score,
                                                 submission.max_written_score, written)
                               + (f"; late penalty {penalty:g}" if penalty else ""))
                yield {key: "" if value is None else str(value) for key, value in row.items()}

    def export(self, gradebook: Gradebook) -> None:
        destination = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", destination)
        with open(destination, "w", newline="", encoding="utf-8") as handle:
            writer = csv_writer(handle)
            writer.writerow(COLUMNS)
            for row in self.rows(gradebook):
                writer.writerow([row[column] for column in COLUMNS])
