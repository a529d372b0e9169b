"""`make demo`: the instructor's loop on a sample class whose every grade is known."""
import csv
import json

import pytest

from autograder.tools import demo
from support import COURSE




SIZE = 16


@pytest.mark.slow
def test_demo_grades_equal_the_expected_ones_and_writes_every_artefact(tmp_path):
    output = tmp_path / "demo"
    # half of `make demo`'s class: every kind of learner (two of each mistake slot) and both cheats
    summary = demo.run(output=output, size=SIZE, quiet=True)
    learners = demo.sample_class(SIZE)
    assert len(learners) == SIZE and {p.cheat for per in learners.values() for p in per.values()
                                      if p.kind == "cheat"} == set(demo.CHEATS)
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
    # the sample learners hand in answers, not the solution's markers, model-answer labels or rubrics
    for handed_in in (output / "course" / "submitted").rglob("*.ipynb"):
        text = handed_in.read_text()
        for word in ("BEGIN SOLUTION", "END SOLUTION", "Model answer", "Rubric"):
            assert word not in text, f"{word!r} in {handed_in}"
    # flags, wherever the instructor looks: the demo's table (summary), the report, the
    # autograded notebook's metadata and the gradebook (which the formgrader shows)
    patching = "patches numpy so every comparison passes"  # the one cheat the flagger names
    cheats = {learner: sorted(a for a, plan in plans.items() if plan.cheat == patching)
              for learner, plans in learners.items()}
    cheats = {learner: found for learner, found in cheats.items() if found}
    assert cheats and {k: sorted(v) for k, v in summary["flagged"].items()} == cheats
    section = report.split("## Flagged for review", 1)[1]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{output / 'course' / 'gradebook.db'}") as book:
        for learner, plans in learners.items():
            for assignment in plans:
                [autograded] = (output / "course" / "autograded" / learner / assignment).glob(
                    "*.ipynb")
                metadata = json.loads(autograded.read_text())["metadata"]
                flagged = assignment in cheats.get(learner, [])
                assert bool(metadata.get("autograder_flags")) == flagged, (learner, assignment)
                notebook = autograded.stem
                assert book.find_submission_notebook(notebook, assignment, learner).flagged == flagged
                assert (f"**{learner}**, {assignment}:" in section) == flagged
    for figure in ("grade-histogram.png", "pass-rates.png"):
        assert (output / "report" / figure).read_bytes()[:4] == b"\x89PNG"
    # one score story: the CSV's grade, the feedback page's heading, Gradescope's summary, the
    # report and the table say the same thing (the written answers are pending in the demo)
    from autograder.engine.result import score_story
    written = {a: COURSE.assignment(a).written_points for a in demo.assignments()}
    maxima = {r["assignment"]: float(r["autograded_max_score"]) for r in rows}
    for row in rows:
        learner, assignment = row["student_id"], row["assignment"]
        # pending (empty), or 0 where nbgrader scored an untouched answer itself (blank learners)
        graded = None if row["written_score"] == "" else float(row["written_score"])
        assert graded is None or (graded == 0 and learners[learner][assignment].kind == "blank")
        story = score_story(float(row["autograded_score"]), maxima[assignment],
                            written[assignment], graded)
        assert row["grade"] == story and float(row["written_max_score"]) == written[assignment]
        [page] = (output / "course" / "feedback" / learner / assignment).glob("*.html")
        assert f": {story}</h1>" in page.read_text(), (learner, assignment, story)
    for learner in learners:
        gradescope = json.loads((output / "gradescope" / f"{learner}.json").read_text())
        total = sum(summary["grades"][learner].values())
        assert score_story(total, sum(maxima.values()), sum(written.values())) in \
            gradescope["output"]
    assert "Median grade: autograded " in report
    assert f"of {sum(maxima.values()):g}" in summary["table"]


def test_report_labels_are_whole_test_names():
    from autograder.engine import grade, reference
    from autograder.tools.report import pass_rate_labels
    keys = [(a.name, t.name) for a in COURSE.assignments()
            for t in grade.grade_local(a, reference.namespace(a)).tests]
    labels = pass_rate_labels(keys)
    assert len(set(labels)) == len(set(keys))
    assert all(label.replace("\n", " ").endswith(name) for label, (_, name) in zip(labels, keys))
