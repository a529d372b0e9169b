"""notebooks/ is exactly what nbgrader generates from solutions/, both are clean, and every
notebook teaches the way the curriculum says: layered hints that never give a function away,
predictions written down before each experiment, short written questions graded by hand, and a
run time within budget."""
import json
import re

import numpy as np
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
    for exercise, scores in result.exercises.items():
        assert answers.count(exercise) == 1, f"{exercise}: needs exactly one answer cell"
        assert exercise in checks, f"{exercise}: no grade cell '{CHECK_PREFIX}{exercise}'"
        assert checks[exercise] == scores["max_score"], (
            f"{exercise}: the grade cell is worth {checks[exercise]} points, its hidden tests "
            f"{scores['max_score']}")
    assert set(checks) == set(result.exercises), "a grade cell has no hidden tests"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_has_goals_recap_and_references(assignment):
    text = "\n".join("".join(c["source"]) for c in cells(reference.solution_notebook(assignment))
                     if c["cell_type"] == "markdown")
    assert re.search(r"learning goals", text, re.I)
    assert re.search(r"^## Recap", text, re.M)
    assert re.search(r"^## Going further", text, re.M)
    assert re.search(r"\(\d{4}\)", text), "going further cites no dated reference"


# ---------------------------------------------------------------- how every notebook teaches
# Hints in layers, predictions written down and questions graded by hand: every notebook but 08
# and 09 (they follow in a later issue).
TEACHING = [a for a in ASSIGNMENTS if not a.startswith(("08-", "09-"))]
HINT = re.compile(r"<details><summary>(Hint \d[^<]*)</summary>(.*?)</details>", re.S)
FENCED = re.compile(r"```[a-z]*\n(.*?)```", re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PREDICTION = "> ✍ **Your prediction**"


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def graded_functions(assignment):
    """(name, the markdown between the previous code cell and its answer cell, definition line)."""
    notebook = cells(reference.solution_notebook(assignment))
    found = []
    for index, cell in enumerate(notebook):
        meta = nbgrader_meta(cell)
        if cell["cell_type"] == "code" and meta.get("solution"):
            before = []
            for previous in reversed(notebook[:index]):
                if previous["cell_type"] == "code":
                    break
                before.insert(0, source(previous))
            definition = next(line for line in source(cell).splitlines() if line.startswith("def "))
            found.append((meta["grade_id"], "\n".join(before), definition))
    return found


def hint_bodies(hints):
    """Every piece of code a hint shows, as the body of a function: each fenced block, all of them
    together, and each inline expression returned."""
    blocks = [block for _, text in hints for block in FENCED.findall(text)]
    bodies = blocks + (["\n".join(blocks)] if len(blocks) > 1 else [])
    bodies += [f"return {span}" for _, text in hints for span in INLINE.findall(FENCED.sub("", text))]
    return bodies


def given_code(assignment):
    """The namespace a visible check runs in: the notebook's given code (locked and setup cells)
    and the reference answers, without its experiments."""
    import matplotlib
    matplotlib.use("Agg")
    namespace = {"__name__": "notebook"}
    for cell in cells(reference.solution_notebook(assignment)):
        meta = nbgrader_meta(cell)
        given = meta.get("locked") or meta.get("solution") or "setup" in cell["metadata"].get(
            "tags", [])
        if cell["cell_type"] == "code" and given and not meta.get("grade"):
            exec(compile(source(cell), "<given>", "exec"), namespace)
    return namespace


def works(assignment, name, definition, body):
    """Whether ``body`` as the function's body passes its visible check and every hidden test."""
    import contextlib
    import io
    import textwrap
    from autograder import catalogue
    if "return" not in body and "\n" not in body.strip():
        body = "return " + body.strip()
    candidate = definition + "\n" + textwrap.indent(textwrap.dedent(body), "    ")
    try:
        compile(candidate, "<hint>", "exec")
    except SyntaxError:
        return False
    check_cell = next(source(c) for c in cells(reference.solution_notebook(assignment))
                      if nbgrader_meta(c).get("grade_id") == f"{CHECK_PREFIX}{name}")
    try:    # a quick first filter: the visible check
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            exec(compile(check_cell, "<visible check>", "exec"),
                 catalogue.with_source(given_code(assignment), candidate))
    except Exception:
        return False
    namespace = catalogue.with_source(reference.namespace(assignment), candidate)
    result = grade.grade_local(assignment, namespace).exercises[name]
    return result["score"] == result["max_score"]


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_graded_function_has_layered_hints_that_never_give_the_body(assignment):
    for name, markdown, definition in graded_functions(assignment):
        hints = HINT.findall(markdown)
        assert 2 <= len(hints) <= 3, f"{name}: {len(hints)} hints"
        last_title, last_text = hints[-1]
        assert "____" in last_text or "key line" in last_title, (
            f"{name}: the last hint should be a skeleton with blanks (____) or the key line")
        for body in hint_bodies(hints):
            assert not works(assignment, name, definition, body), (
                f"{name}: a hint is a working body of the function:\n{body}")


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_prediction_is_written_down_and_compared(assignment):
    notebook = cells(reference.solution_notebook(assignment))
    prompts = [i for i, c in enumerate(notebook)
               if c["cell_type"] == "markdown" and "**Predict, then run" in source(c)
               and not re.search("before most experiments", source(c), re.I)]
    assert prompts, "no 'Predict, then run' prompt"
    for index in prompts:
        rest = notebook[index + 1:]
        first_code = next(i for i, c in enumerate(rest) if c["cell_type"] == "code")
        written = [c for c in rest[:first_code] if source(c).startswith(PREDICTION)]
        assert len(written) == 1, f"the prompt in cell {index} has no cell for the prediction"
        after = next(c for c in rest[first_code:] if c["cell_type"] == "markdown")
        assert re.search(r"your prediction", source(after), re.I), (
            f"the text after the experiment of cell {index} does not compare with the prediction:"
            f" {source(after)[:120]!r}")


@pytest.mark.parametrize("assignment", TEACHING)
def test_written_questions_are_graded_by_hand(assignment):
    notebook = cells(reference.solution_notebook(assignment))
    answers = [(i, c) for i, c in enumerate(notebook) if nbgrader_meta(c).get("solution")
               and c["cell_type"] == "markdown"]
    assert 1 <= len(answers) <= 3, f"{len(answers)} written questions"
    for index, cell in answers:
        meta = nbgrader_meta(cell)
        assert meta["grade"] and meta["points"] > 0 and meta["grade_id"].startswith("q_")
        text = source(cell)
        assert text.startswith("### BEGIN SOLUTION") and text.endswith("### END SOLUTION")
        assert "Model answer" in text and "Rubric" in text, f"{meta['grade_id']}: no model answer/rubric"
        question = source(notebook[index - 1])
        points = f"{meta['points']:g} point{'s' if meta['points'] != 1 else ''}"
        assert "✍ Question" in question and f"({points}, graded by hand)" in question, (
            f"{meta['grade_id']}: the question above the answer should say it is worth {points}")
