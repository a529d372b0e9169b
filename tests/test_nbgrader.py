"""`nbgrader autograde`, `generate_feedback` and `export` give the hidden-suite scores."""
import csv
import json

import pytest

from autograder import catalogue, course, grade, reference
from support import write_notebook

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"


def test_two_learner_class_through_nbgrader(course_state, tmp_path):
    course.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                    f"--CourseDirectory.release_directory={tmp_path / 'release'}", state=course_state)
    scored = [(grade.grade_local(ASSIGNMENT, m.namespace())["score"], m)
              for m in catalogue.mutants(ASSIGNMENT, "row_normalize")]
    expected_bob, mutant = next((s, m) for s, m in scored if 0 < s < 8)  # partial credit
    name = reference.solution_notebook(ASSIGNMENT).name
    submitted = course_state / "submitted"
    write_notebook(submitted / "alice" / ASSIGNMENT / name, catalogue.filled_notebook(ASSIGNMENT))
    bob = catalogue.notebook_with(mutant)
    bob["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                         "source": "import warnings\nwarnings.warn('a learner warning on stderr')"})
    write_notebook(submitted / "bob" / ASSIGNMENT / name, bob)
    assert mutant.key == "row_normalize/no_zero_guard"

    course.nbgrader("autograde", ASSIGNMENT, state=course_state)
    course.nbgrader("generate_feedback", ASSIGNMENT, state=course_state)
    out = tmp_path / "grades.csv"
    course.nbgrader("export", f"--to={out}", state=course_state)

    rows = {r["student_id"]: r for r in csv.DictReader(out.open())}
    assert float(rows["alice"]["score"]) == 8.0
    assert float(rows["bob"]["score"]) == expected_bob  # partial credit, not all-or-nothing
    assert float(rows["alice"]["max_score"]) == 8.0

    feedback = (course_state / "feedback" / "bob" / ASSIGNMENT / name.replace(".ipynb", ".html"))
    html = feedback.read_text()
    assert "Hidden tests of" in html and "of row_normalize with zero rows is nan" in html
    autograded = json.loads((course_state / "autograded" / "alice" / ASSIGNMENT / name).read_text())
    assert "def test_" not in json.dumps(autograded)
