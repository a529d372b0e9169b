"""``nbgrader export`` writing quoted CSV.

nbgrader's own CSV export joins each row's fields with commas and writes them as they are: a
student id or a name holding a carriage return, a newline or a comma adds rows or columns of its
own (an id ``x\\r<row>`` once added a forged row giving full marks to an account that submitted
nothing). :class:`QuotedCsvExport` (``ExportApp.plugin_class``, set by the course's configuration)
writes the same columns and the same values, every field quoted (:func:`autograder.formats.csv_writer`),
so that ``grades.csv`` parses into exactly the rows the gradebook holds.
"""
from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from .formats import csv_writer

COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score")


class QuotedCsvExport(CsvExportPlugin):
    """nbgrader's CSV export (same columns, same values, same options), every field quoted."""

    def rows(self, gradebook):
        """One dict per assignment and student, as nbgrader's CSV export computes it."""
        students = [str(s) for s in self.student]
        assignments = [str(a) for a in self.assignment]
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                row = {"assignment": assignment.name, "duedate": assignment.duedate,
                       "student_id": student.id, "last_name": student.last_name,
                       "first_name": student.first_name, "email": student.email,
                       "max_score": assignment.max_score}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:  # nothing submitted: zero
                    row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                               score=0.0)
                else:
                    penalty = submission.late_submission_penalty
                    row.update(timestamp=submission.timestamp, raw_score=submission.score,
                               late_submission_penalty=penalty,
                               score=max(0.0, submission.score - penalty))
                yield {key: "" if value is None else str(value) for key, value in row.items()}

    def export(self, gradebook):
        destination = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", destination)
        with open(destination, "w", newline="", encoding="utf-8") as handle:
            writer = csv_writer(handle)
            writer.writerow(COLUMNS)
            for row in self.rows(gradebook):
                writer.writerow([row[column] for column in COLUMNS])
