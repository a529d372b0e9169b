"""The engine's CSV and grade table (autograder/course/formats.py) quote learner folder names."""
from autograder.course import formats
from autograder.engine import result as results
from support import read_csv_rows as read_rows
from support.attacks import ASSIGNMENT, FORGED, SOLUTION_FILE

NOTEBOOK = SOLUTION_FILE.name


def test_the_engines_csv_and_table_quote_learner_folder_names(tmp_path):
    graded = [results.Result(f"/class/{name}/{ASSIGNMENT}/{NOTEBOOK}", ASSIGNMENT,
                             [results.TestResult("t", "row_normalize", 1.0, 2.0, "failed", "x")],
                             errors=["a cell raised\nValueError: a,\"b\"\r\n"])
              for name in ("alice", FORGED, "\x1b[2Khidden", "z\nq")]
    formats.write_csv(graded, tmp_path / "grades.csv")
    rows = read_rows(tmp_path / "grades.csv")
    assert [r["notebook"] for r in rows] == [r.notebook for r in graded]
    assert all(r["errors"] == "a cell raised\nValueError: a,\"b\"\r\n" for r in rows)
    table = formats.table(graded)
    assert "\x1b" not in table and "\r" not in table
    assert len(table.splitlines()) == len(graded) + 1
