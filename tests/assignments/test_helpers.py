"""The learner-facing helpers: checks, plots and the self-check command."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.engine import catalogue
from helpers import checks, plots
from support import COURSE, write_notebook


def test_expect_close_names_a_matching_mistake():
    with pytest.raises(checks.CheckFailed, match="This is what you get when you sum columns"):
        checks.expect_close([1.0, 2.0], [1.0, 3.0], "x", mistakes={"sum columns": [1.0, 2.0]})


def test_expect_close_reports_shape_nan_and_location():
    with pytest.raises(checks.CheckFailed, match=r"The shape of x should be \(2,\), not \(3,\)"):
        checks.expect_close(np.zeros(3), np.zeros(2), "x")
    with pytest.raises(checks.CheckFailed, match=r"The entry at index \(0,\) of x is nan"):
        checks.expect_close([np.nan, 1.0], [0.0, 1.0], "x")
    with pytest.raises(checks.CheckFailed, match=r"at index \(1,\) it is 5, expected 2"):
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "x")
    assert checks.expect_close([1.0, 2.0 + 1e-12], [1.0, 2.0], "x") is not None


def test_expect_close_describes_the_property_when_no_mistake_matches():
    weights = np.array([[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]])
    columns = weights / weights.sum(axis=0)              # normalised along axis 0 instead
    with pytest.raises(checks.CheckFailed, match=r"slices sum to 1 along axis 0, not along the last"):
        checks.expect_close(columns, weights, "w")
    with pytest.raises(checks.CheckFailed, match=r"multiplied by √2 ≈ 1.414"):
        checks.expect_close(np.sqrt(2) * np.array([1.0, -2.0, 3.0]), [1.0, -2.0, 3.0], "x")
    with pytest.raises(checks.CheckFailed, match=r"last two axes swapped"):
        checks.expect_close(np.array([[1.0, 2.0], [3.0, 4.0]]).T, [[1.0, 2.0], [3.0, 4.0]], "x")
    with pytest.raises(checks.CheckFailed) as caught:
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "x")
    assert "Your result" not in str(caught.value)      # nothing recognisable: no guess


def test_expect_sums_to_one_names_the_axis_that_does():
    rows = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert checks.expect_sums_to_one(rows, "w") is not None
    with pytest.raises(checks.CheckFailed, match=r"along the last axis \(-1\) should each sum to 1, "
                                                 r"but they sum to 1 along axis 0 instead"):
        checks.expect_sums_to_one(rows.T / rows.T.sum(axis=0), "w")
    with pytest.raises(checks.CheckFailed, match=r"the one at index \(1,\) sums to 0"):
        checks.expect_sums_to_one([[0.5, 0.5], [0.0, 0.0], [1.0, 0.0]], "w")
    checks.expect_sums_to_one([[0.5, 0.5], [0.0, 0.0]], "w", allow_zero=True)


class Confirming(dict):
    """A mistake table that confirms only the descriptions it is told to."""

    def __init__(self, results, confirmed):
        super().__init__(results)
        self.confirmed = confirmed

    def confirm(self, description):
        return description in self.confirmed


def test_a_mistake_is_named_only_when_it_is_confirmed():
    table = {"forget to renormalise": [0.0, 0.0], "read the mask backwards": [0.0, 0.0]}
    assert checks.name_mistake([0.0, 0.0], table) == "forget to renormalise"
    assert checks.name_mistake([0.0, 0.0], Confirming(table, set())) is None
    assert checks.name_mistake([0.0, 0.0], Confirming(table, {"read the mask backwards"})) == \
        "read the mask backwards"
    both = checks.name_mistake([0.0, 0.0], Confirming(table, set(table)))   # cannot be told apart
    assert both == "forget to renormalise, or when you read the mask backwards"
    with pytest.raises(checks.CheckFailed) as caught:
        checks.expect_close([0.0, 0.0], [0.5, 0.5], "w", mistakes=Confirming(table, set()))
    assert "This is what you get" not in str(caught.value)


def test_checks_name_the_case_whose_call_raised():
    with pytest.raises(checks.CheckFailed, match=r"^dot_score on a batch raised ValueError: "
                                                  r"operands .*\(2,2\)\. Add an axis\.$"):
        with checks.case("dot_score on a batch", "Add an axis."):
            np.ones((2, 3, 2)) * np.ones((2, 2))
    with pytest.raises(checks.CheckFailed, match="^as it was$"):
        with checks.case("anything"):
            checks.fail("as it was")


def test_attention_heatmap_says_when_its_labels_do_not_fit_the_map():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with pytest.raises(ValueError, match=r"8 labels for the keys \(columns\) of a map of shape "
                                         r"\(9, 16\)"):
        plots.attention_heatmap(np.zeros((9, 16)), keys=list("abcdefgh"))
    plt.close("all")


def test_attention_heatmap_draws_labels_and_annotations():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = plots.attention_heatmap(np.full((2, 3), 1 / 3), keys=["a", "b", "c"], queries=["x", "y"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert len(ax.texts) == 6
    assert len(plots.attention_heatmap(np.full((8, 8), 1 / 8)).texts) == 64     # 8 x 8: annotated
    assert len(plots.attention_heatmap(np.full((9, 4), 1 / 4)).texts) == 0      # 9 rows: not
    with pytest.raises(ValueError, match="one 2-D map"):
        plots.attention_heatmap(np.zeros((2, 2, 2)))
    plt.close("all")


def test_heatmap_grid_has_one_colour_scale_and_one_colour_bar():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    small, large = np.full((3, 3), 1 / 3), np.full((10, 10), 0.1)
    figure = plots.heatmap_grid([small, large, small], titles=["a", "b", "c"], ncols=2)
    images = [ax.images[0] for ax in figure.axes if ax.images]
    assert len(images) == 3 and {image.get_clim() for image in images} == {(0.0, 1.0)}
    colour_bars = [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert len(colour_bars) == 1
    panels = [ax for ax in figure.axes if ax.images]
    assert [len(ax.texts) for ax in panels] == [9, 0, 9]   # small maps annotated, large not
    # the old call of notebooks 08 and 09 still works: annotate given, no colour bar asked for
    figure = plots.heatmap_grid([small, small], annotate=False, colorbar=False)
    assert not [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert plots.heatmap_grid([2 * small], vmax=None).axes[0].images[0].get_clim() == (0.0, 2 / 3)
    plt.close("all")


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
