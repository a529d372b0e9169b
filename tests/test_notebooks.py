"""notebooks/ is exactly what nbgrader generates from solutions/, and both are clean."""
import json
import re

import pytest

from autograder import course, grade, reference
from autograder.nbgrader_plugin import CHECK_PREFIX
from support import ASSIGNMENTS, REPO

MARKERS = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS")


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    target = tmp_path_factory.mktemp("release")
    state = tmp_path_factory.mktemp("state")
    course.nbgrader("generate_assignment", "*", "--force",
                    f"--CourseDirectory.release_directory={target}", state=state)
    return target


@pytest.mark.xdist_group("release")
def test_notebooks_folder_is_exactly_what_nbgrader_generates(regenerated):
    committed = sorted(p.relative_to(REPO / "notebooks") for p in (REPO / "notebooks").rglob("*")
                       if p.is_file() and ".ipynb_checkpoints" not in p.parts)
    generated = sorted(p.relative_to(regenerated) for p in regenerated.rglob("*") if p.is_file())
    assert committed == generated, "notebooks/ and the generated release list different files"
    for relative in generated:
        assert (REPO / "notebooks" / relative).read_text() == (regenerated / relative).read_text(), (
            f"notebooks/{relative} differs from what nbgrader generates: run `make release`")


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_notebooks_are_committed_without_outputs(folder):
    for path in sorted((REPO / folder).rglob("*.ipynb")):
        for index, cell in enumerate(cells(path)):
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, (
                    f"{path.relative_to(REPO)} cell {index} has outputs")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_learner_notebook_has_no_solution_or_hidden_tests(assignment):
    path = reference.release_notebook(assignment)
    text = path.read_text(encoding="utf-8")
    assert not MARKERS.search(text)
    hidden = set()
    for cell in cells(reference.solution_notebook(assignment)):
        inside = False
        for line in "".join(cell["source"]).splitlines():
            if "### END SOLUTION" in line:
                inside = False
            if inside and line.strip():
                hidden.add(line.strip())
            if "### BEGIN SOLUTION" in line:
                inside = True
    learner = [c for c in cells(path) if nbgrader_meta(c).get("solution")]
    assert learner, "the learner notebook has no answer cells"
    for cell in learner:
        lines = {line.strip() for line in "".join(cell["source"]).splitlines()}
        stub = "raise NotImplementedError()" if cell["cell_type"] == "code" else "YOUR ANSWER HERE"
        assert stub in lines, f"{nbgrader_meta(cell)['grade_id']}: no {stub!r}"
        assert not (lines & hidden), f"solution lines leaked: {sorted(lines & hidden)[:3]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_graded_function_has_one_answer_cell_and_one_check_worth_its_tests(assignment):
    result = grade.grade_local(assignment, reference.namespace(assignment))
    notebook = cells(reference.solution_notebook(assignment))
    answers = [nbgrader_meta(c)["grade_id"] for c in notebook
               if nbgrader_meta(c).get("solution") and c["cell_type"] == "code"]
    checks = {nbgrader_meta(c)["grade_id"][len(CHECK_PREFIX):]: nbgrader_meta(c)["points"]
              for c in notebook if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")}
    for exercise, scores in result["exercises"].items():
        assert answers.count(exercise) == 1, f"{exercise}: needs exactly one answer cell"
        assert exercise in checks, f"{exercise}: no grade cell '{CHECK_PREFIX}{exercise}'"
        assert checks[exercise] == scores["max_score"], (
            f"{exercise}: the grade cell is worth {checks[exercise]} points, its hidden tests "
            f"{scores['max_score']}")
    assert set(checks) == set(result["exercises"]), "a grade cell has no hidden tests"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_has_goals_recap_and_references(assignment):
    text = "\n".join("".join(c["source"]) for c in cells(reference.solution_notebook(assignment))
                     if c["cell_type"] == "markdown")
    assert re.search(r"learning goals", text, re.I)
    assert re.search(r"^## Recap", text, re.M)
    assert re.search(r"^## Going further", text, re.M)
    assert re.search(r"\(\d{4}\)", text), "going further cites no dated reference"

