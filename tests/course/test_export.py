"""The course's CSV export (autograder/course/export.py): exactly the gradebook's rows, whatever
the ids and names hold."""
import pytest

from autograder.course import instructor
from support import course_state, read_csv_rows as read_rows  # noqa: F401
from support.attacks import FORGED

COURSE_ID = "attention-course"

def hostile_gradebook(state):
    """A gradebook as nbgrader's own autograde can leave it from a folder named by hand: ids and
    names with carriage returns, newlines, commas and quotes (the course refuses such ids, but
    the export must not trust that)."""
    from nbgrader.api import Gradebook
    students = {"alice": ("Ann, \"the\" first", "O'Neil"), FORGED: ("Eve", "E"),
                "z\nq": ("line\nbreak", "x"), "plain": ("P", "Q")}
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}", course_id=COURSE_ID) as book:
        book.add_assignment("02-scoring", duedate="2026-01-31 23:59:00")
        for student, (first, last) in students.items():
            book.add_student(student, first_name=first, last_name=last)
        for student in ("alice", FORGED):
            book.add_submission("02-scoring", student)
    return students


@pytest.mark.filterwarnings("ignore:Object of type <SubmittedAssignment> not in session")
def test_grades_csv_parses_into_exactly_the_rows_the_gradebook_holds(course_state, tmp_path):
    """Attack 8 and variants: a student id holding ``\\r`` and the text of a whole row, names
    with commas, quotes and newlines. nbgrader's own export (shown for contrast) gains a forged
    row for ``mallory``; the course's export has one row per student, every field exact."""
    students = hostile_gradebook(course_state)
    ours, stock = tmp_path / "grades.csv", tmp_path / "stock.csv"
    instructor.nbgrader("export", f"--to={ours}", state=course_state)
    instructor.nbgrader("export", f"--to={stock}",
                    "--ExportApp.plugin_class=nbgrader.plugins.CsvExportPlugin", state=course_state)
    assert "mallory" in {r["student_id"] for r in read_rows(stock)}, "the attack no longer bites"
    rows = read_rows(ours)
    assert sorted(r["student_id"] for r in rows) == sorted(students)
    for row in rows:
        first, last = students[row["student_id"]]
        assert (row["first_name"], row["last_name"]) == (first, last)
        assert row["assignment"] == "02-scoring" and float(row["score"]) == 0.0
    assert ours.read_text().startswith('"assignment","duedate",')  # every field quoted
