"""The self-check command (src/helpers/selfcheck.py): the same verdict as nbgrader's validate, in
words a learner reads."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.engine import catalogue
from support import COURSE, write_notebook


def self_check(path):
    return subprocess.run([sys.executable, "-m", "helpers.selfcheck", str(path)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_self_check_passes_a_solution_and_fails_a_mistake(tmp_path):
    assignment = "00-getting-started"
    good = write_notebook(tmp_path / "good" / "getting-started.ipynb",
                          catalogue.filled_notebook(COURSE.assignment(assignment)))
    run = self_check(good)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "row_normalize" in run.stdout and "PASS" in run.stdout
    mutant = catalogue.mutants(COURSE.assignment(assignment), "row_normalize")[0]
    bad = write_notebook(tmp_path / "bad" / "getting-started.ipynb", catalogue.notebook_with(mutant))
    run = self_check(bad)
    assert run.returncode == 1
    assert "FAIL" in run.stdout and "This is what you get when you" in run.stdout
    blank = self_check(COURSE.assignment(assignment).release)
    assert blank.returncode == 1 and "not implemented yet" in blank.stdout
    assert "NotImplementedError:" not in blank.stdout and not re.search(r"cell \d", blank.stdout)


@pytest.mark.slow
def test_self_check_and_nbgrader_validate_give_the_same_verdict(tmp_path):
    assignment = "00-getting-started"
    validate = str(Path(sys.executable).parent / "nbgrader")
    unanswered = catalogue.filled_notebook(COURSE.assignment(assignment))  # written answer empty
    released = json.loads(COURSE.assignment(assignment).release.read_text())
    for cell, blank in zip(unanswered["cells"], released["cells"]):
        if cell["cell_type"] == "markdown" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cell["source"] = blank["source"]
    mistake = catalogue.mutants(COURSE.assignment(assignment), "row_normalize")[0]
    cases = {"good": catalogue.filled_notebook(COURSE.assignment(assignment)),
             "bad": catalogue.notebook_with(mistake),
             "unanswered": unanswered}
    for name, notebook in cases.items():
        path = write_notebook(tmp_path / name / "getting-started.ipynb", notebook)
        ours = self_check(path).returncode == 0
        theirs = subprocess.run([validate, "validate", str(path)], capture_output=True, text=True,
                                timeout=300, cwd=tmp_path)
        passed = "Success! Your notebook passes all the tests." in theirs.stdout
        assert ours == passed == (name == "good"), (name, theirs.stdout[-1000:])


def test_self_check_names_sections_and_explains_errors_in_words():
    import nbformat
    from helpers import selfcheck as self_checker

    def error(ename, evalue):
        return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])

    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Step 2 · Three ways to score"),
        nbformat.v4.new_code_cell("x = undefined_name", outputs=[
            error("NameError", "name 'undefined_name' is not defined")]),
        nbformat.v4.new_code_cell("check", metadata={"nbgrader": {
            "grade": True, "solution": False, "grade_id": "check_dot_score", "points": 6}},
            outputs=[error("AssertionError", "")]),
        nbformat.v4.new_code_cell("check", metadata={"nbgrader": {
            "grade": True, "solution": False, "grade_id": "check_softmax", "points": 8}},
            outputs=[error("CheckFailed", "softmax(z) is not what it should be")]),
        nbformat.v4.new_markdown_cell("### Question 1"),
        nbformat.v4.new_markdown_cell("YOUR ANSWER HERE", metadata={"nbgrader": {
            "grade": True, "solution": True, "grade_id": "q_scores", "points": 2}}),
    ])
    rows, notes = self_checker.verdicts(notebook)
    assert rows == [("dot_score", False, "an assertion failed"),
                    ("softmax", False, "softmax(z) is not what it should be")]
    assert notes[0] == ("a cell in 'Step 2 · Three ways to score' failed: a name is not defined "
                        "(run the cell that defines it, or check its spelling): name "
                        "'undefined_name' is not defined")
    assert notes[1].startswith("the written answer under 'Question 1' is still empty")
    assert not any(word in " ".join(notes) for word in ("cell 2", "NameError", "AssertionError"))


def test_self_check_counts_failures_that_follow_a_failing_check_in_one_note():
    import nbformat
    from helpers import selfcheck as self_checker
    figure_error = nbformat.v4.new_output(
        "error", ename="ValueError", traceback=[],
        evalue="The number of FixedLocator locations (16), usually from a call to set_ticks, does "
               "not match the number of labels (8).")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Step 4 · Every step at once"),
        nbformat.v4.new_code_cell("check", metadata={"nbgrader": {
            "grade": True, "solution": False, "grade_id": "check_align", "points": 8}},
            outputs=[nbformat.v4.new_output("error", ename="CheckFailed", traceback=[],
                                            evalue="The shape of the weights should be (2, 3)")]),
        nbformat.v4.new_code_cell("heatmap", outputs=[figure_error]),
        nbformat.v4.new_code_cell("links", outputs=[figure_error]),
    ])
    rows, notes = self_checker.verdicts(notebook)
    assert rows == [("align", False, "The shape of the weights should be (2, 3)")]
    assert notes == ["2 later cells (experiments, figures) failed too, most likely because of a "
                     "function whose visible check fails above: fix that first"]


def test_self_check_says_what_to_do_with_a_broken_file(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    run = self_check(broken)
    assert run.returncode == 2 and "could not be run" in run.stderr
    assert self_check(tmp_path / "missing.ipynb").returncode == 2
