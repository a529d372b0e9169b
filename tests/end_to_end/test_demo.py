"""`make demo`: the instructor's loop on a sample class whose every grade is known."""
import csv
import json

import pytest

from autograder.tools import demo
from support import COURSE




@pytest.mark.slow
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
    names = {(r["first_name"], r["last_name"]) for r in rows}
    assert len(names) == len(learners) and ("None", "None") not in names and ("", "") not in names
    for learner in learners:
        gradescope = json.loads((output / "gradescope" / f"{learner}.json").read_text())
        assert gradescope["score"] == pytest.approx(sum(summary["expected"][learner].values()))
        feedback = list((output / "course" / "feedback" / learner).rglob("*.html"))
        assert len(feedback) == len(demo.assignments())
    report = (output / "report" / "report.md").read_text()
    assert "Typical mistake" in report
    for figure in ("grade-histogram.png", "pass-rates.png"):
        assert (output / "report" / figure).read_bytes()[:4] == b"\x89PNG"


def test_report_labels_are_whole_test_names():
    from autograder.engine import grade, reference
    from autograder.tools.report import pass_rate_labels
    keys = [(a.name, t.name) for a in COURSE.assignments()
            for t in grade.grade_local(a, reference.namespace(a)).tests]
    labels = pass_rate_labels(keys)
    assert len(set(labels)) == len(set(keys))
    assert all(label.replace("\n", " ").endswith(name) for label, (_, name) in zip(labels, keys))
