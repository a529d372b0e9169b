"""The learner-facing helpers: checks, plots and the self-check command."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder import catalogue, reference
from helpers import checks, plots
from support import write_notebook


def test_expect_close_names_a_matching_mistake():
    with pytest.raises(checks.CheckFailed, match="This is what you get when you sum columns"):
        checks.expect_close([1.0, 2.0], [1.0, 3.0], "x", mistakes={"sum columns": [1.0, 2.0]})


def test_expect_close_reports_shape_nan_and_location():
    with pytest.raises(checks.CheckFailed, match=r"shape \(2,\)"):
        checks.expect_close(np.zeros(3), np.zeros(2), "x")
    with pytest.raises(checks.CheckFailed, match="contains nan at index"):
        checks.expect_close([np.nan, 1.0], [0.0, 1.0], "x")
    with pytest.raises(checks.CheckFailed, match=r"at index \(1,\) it is 5, expected 2"):
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "x")
    assert checks.expect_close([1.0, 2.0 + 1e-12], [1.0, 2.0], "x") is not None


def test_attention_heatmap_draws_labels_and_annotations():
    import matplotlib
    matplotlib.use("Agg")
    ax = plots.attention_heatmap(np.full((2, 3), 1 / 3), keys=["a", "b", "c"], queries=["x", "y"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert len(ax.texts) == 6
    with pytest.raises(ValueError, match="one 2-D map"):
        plots.attention_heatmap(np.zeros((2, 2, 2)))


def self_check(path):
    return subprocess.run([sys.executable, "-m", "helpers.check", str(path)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_self_check_passes_a_solution_and_fails_a_mistake(tmp_path):
    assignment = "00-getting-started"
    good = write_notebook(tmp_path / "good" / "getting-started.ipynb", catalogue.filled_notebook(assignment))
    run = self_check(good)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "row_normalize" in run.stdout and "PASS" in run.stdout
    mutant = catalogue.mutants(assignment, "row_normalize")[0]
    bad = write_notebook(tmp_path / "bad" / "getting-started.ipynb", catalogue.notebook_with(mutant))
    run = self_check(bad)
    assert run.returncode == 1
    assert "FAIL" in run.stdout and "This is what you get when you" in run.stdout
    blank = self_check(reference.release_notebook(assignment))
    assert blank.returncode == 1 and "NotImplementedError" in blank.stdout


@pytest.mark.slow
def test_self_check_and_nbgrader_validate_give_the_same_verdict(tmp_path):
    assignment = "00-getting-started"
    validate = str(Path(sys.executable).parent / "nbgrader")
    cases = {"good": catalogue.filled_notebook(assignment),
             "bad": catalogue.notebook_with(catalogue.mutants(assignment, "row_normalize")[0])}
    for name, notebook in cases.items():
        path = write_notebook(tmp_path / name / "getting-started.ipynb", notebook)
        ours = self_check(path).returncode == 0
        theirs = subprocess.run([validate, "validate", str(path)], capture_output=True, text=True,
                                timeout=300, cwd=tmp_path)
        passed = "Success! Your notebook passes all the tests." in theirs.stdout
        assert ours == passed == (name == "good"), (name, theirs.stdout[-1000:])


def test_self_check_says_what_to_do_with_a_broken_file(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    run = self_check(broken)
    assert run.returncode == 2 and "could not be run" in run.stderr
    assert self_check(tmp_path / "missing.ipynb").returncode == 2
