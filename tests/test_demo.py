"""`make demo`: the instructor's loop on a sample class whose every grade is known."""
import csv
import json

import pytest

from autograder import demo

pytestmark = pytest.mark.slow


def test_demo_grades_equal_the_expected_ones_and_writes_every_artefact(tmp_path):
    output = tmp_path / "demo"
    summary = demo.run(output=output, quiet=True)
    learners = demo.sample_class()
    assert len(learners) >= 30
    kinds = {plan.kind for plans in learners.values() for plan in plans.values()}
    assert kinds == {"reference", "alternative", "mutant", "blank", "cheat"}
    assert summary["grades"] == summary["expected"]
    rows = list(csv.DictReader((output / "grades.csv").open()))
    assert len(rows) == len(learners) * len(demo.assignments())
    for learner in learners:
        gradescope = json.loads((output / "gradescope" / f"{learner}.json").read_text())
        assert gradescope["score"] == pytest.approx(sum(summary["expected"][learner].values()))
        feedback = list((output / "course" / "feedback" / learner).rglob("*.html"))
        assert len(feedback) == len(demo.assignments())
    report = (output / "report" / "report.md").read_text()
    assert "Typical mistake" in report
    for figure in ("grade-histogram.png", "pass-rates.png"):
        assert (output / "report" / figure).read_bytes()[:4] == b"\x89PNG"
