"""Grade real notebooks in real (sandboxed) kernels, as an instructor would."""
import csv
import json

import pytest

from autograder.engine import batch, catalogue, grade
from autograder.engine.options import Options
from autograder.engine.result import score_story
from support import ASSIGNMENTS, COURSE, sandbox_mode, write_notebook

pytestmark = pytest.mark.slow


def options():
    return Options(sandbox=sandbox_mode())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_notebook_runs_cleanly_and_gets_full_marks(assignment):
    found = COURSE.assignment(assignment)
    result, executed = grade.grade_notebook(found.solution, found, options())
    assert result.errors == [], "the solution notebook raised errors"
    assert result.score == result.max_score > 0
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert all(not any(o["output_type"] == "error" for o in c["outputs"]) for c in code)
    stderr = [o["text"] for c in code for o in c["outputs"]
              if o["output_type"] == "stream" and o["name"] == "stderr"]
    assert not stderr, f"the solution notebook printed to stderr: {stderr[0][:300]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_learner_notebook_gets_zero_and_says_what_is_missing(assignment):
    found = COURSE.assignment(assignment)
    result, _ = grade.grade_notebook(found.release, found, options())
    assert result.score == 0
    for exercise in result.exercises:
        messages = [t.feedback for t in result.tests if t.exercise == exercise]
        assert any(f"`{exercise}` is not implemented yet" in m for m in messages), messages


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_mutant_notebook_loses_points_and_names_the_mistake(assignment, tmp_path):
    found = COURSE.assignment(assignment)
    entry = catalogue.mutants(found)[0]
    path = write_notebook(tmp_path / assignment / found.solution.name,
                          catalogue.notebook_with(entry))
    result, _ = grade.grade_notebook(path, found, options())
    exercise = result.exercises[entry.exercise]
    assert exercise["score"] < exercise["max_score"]
    # in a kernel too, the other functions (the reference's, which may call the mutant) keep
    # every point: the mistake is charged once
    others = {name: e for name, e in result.exercises.items() if name != entry.exercise}
    assert all(e["score"] == e["max_score"] for e in others.values()), others


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_alternative_notebook_keeps_full_marks(assignment, tmp_path):
    found = COURSE.assignment(assignment)
    entry = catalogue.alternatives(found)[0]
    path = write_notebook(tmp_path / assignment / found.solution.name,
                          catalogue.notebook_with(entry))
    result, _ = grade.grade_notebook(path, found, options())
    assert result.score == result.max_score, [t for t in result.tests if not t.passed]


def test_command_line_writes_json_csv_and_gradescope(tmp_path):
    from autograder.__main__ import main
    assignment = "00-getting-started"
    good = COURSE.assignment(assignment).solution
    blank = COURSE.assignment(assignment).release
    out = tmp_path / "results.json"
    code = main(["grade", str(good), str(blank), "--json", str(out), "--csv",
                 str(tmp_path / "grades.csv"), "--gradescope", str(tmp_path / "gs.json"),
                 "--jobs", "2"])
    assert code == 0
    results = json.loads(out.read_text())
    assert [r["score"] for r in results] == [results[0]["max_score"], 0]
    for r in results:
        assert set(r) >= {"notebook", "assignment", "score", "max_score", "tests", "errors"}
        for t in r["tests"]:
            assert set(t) >= {"name", "exercise", "score", "max_score", "status", "feedback"}
    with open(tmp_path / "grades.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["notebook", "assignment", "score", "max_score", "written_max_score",
                       "grade", "errors"] and len(rows) == 3
    written = COURSE.assignment(assignment).written_points
    assert rows[1][5] == score_story(float(rows[1][2]), float(rows[1][3]), written)
    assert ("written answers pending" in rows[1][5]) == (written > 0)
    assert (tmp_path / "grades.csv").read_text().startswith('"notebook","assignment",')  # quoted
    gs = json.loads((tmp_path / "gs.json").read_text())
    assert gs["score"] == results[0]["max_score"]
    assert all(set(t) >= {"name", "status", "output", "visibility"} for t in gs["tests"])
    scored = [t for t in gs["tests"] if "max_score" in t]
    assert sum(t["max_score"] for t in scored) == sum(r["max_score"] for r in results)
    assert all("score" in t and "number" in t for t in scored)
    assert all(t["visibility"] == "visible" for t in gs["tests"] if "max_score" not in t)


def test_rerun_with_state_does_not_regrade(tmp_path):
    found = COURSE.assignment("00-getting-started")
    paths = [found.solution]
    first = batch.grade_many(paths, found, options(), jobs=1, state=tmp_path, progress=False)
    cached = list(tmp_path.glob("*.json"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    again = batch.grade_many(paths, found, options(), jobs=1, state=tmp_path, progress=False)
    assert again == first and cached[0].stat().st_mtime_ns == stamp


def test_a_grader_failure_still_gives_a_complete_zero_sheet(monkeypatch):
    """A bug in the grader costs that notebook a clear zero, not the rest of the class."""
    def broken(*args, **kwargs):
        raise KeyError("boom")
    monkeypatch.setattr(grade, "grade_notebook", broken)
    found = COURSE.assignment("00-getting-started")
    result = grade.grade_safely(found.solution, found, options())
    assert result.score == 0 and result.max_score == 8
    assert "the grader failed on this notebook (KeyError" in result.errors[0]
    assert all("Tell your instructor" in t.feedback for t in result.tests)
