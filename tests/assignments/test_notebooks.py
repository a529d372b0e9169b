"""notebooks/ is exactly what nbgrader generates from solutions/, both are clean, and every
notebook teaches the way the curriculum says: layered hints that never give a function away, whose
last is a skeleton cut from the solution with blanks where the idea is; predictions written down
before each experiment; short written questions graded by hand. (Run times are measured by
`make bench`; what the prose claims, by tests/assignments/test_claims.py.)"""
import ast
import functools
import json
import re

import numpy as np
import pytest

from autograder.course import instructor
from autograder.engine import grade, reference
from autograder.engine.notebook import CHECK_PREFIX
from support import ASSIGNMENTS, COURSE, REPO, cell_source as source

MARKERS = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS")


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    target = tmp_path_factory.mktemp("release")
    state = tmp_path_factory.mktemp("state")
    instructor.nbgrader("generate_assignment", "*", "--force",
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


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_notebooks_record_the_language_the_course_kernel_reports(folder):
    """JupyterLab writes the kernel's language_info into a notebook as it opens it: the same
    dict leaves the notebook unmodified (tests/end_to_end/test_browser.py opens each release to
    see)."""
    from autograder.tools.authoring import KERNELSPEC
    from helpers.kernel import LANGUAGE_INFO
    kernelspec = json.loads((REPO / "learner" / "jupyter" / "kernels" / "python3" /
                             "kernel.json").read_text())
    assert {key: kernelspec[key] for key in ("display_name", "language")} == {
        key: KERNELSPEC[key] for key in ("display_name", "language")}
    for path in sorted((REPO / folder).rglob("*.ipynb")):
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert metadata["language_info"] == LANGUAGE_INFO, path.relative_to(REPO)
        assert metadata["kernelspec"] == KERNELSPEC, path.relative_to(REPO)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_learner_notebook_has_no_solution_or_hidden_tests(assignment):
    path = COURSE.assignment(assignment).release
    text = path.read_text(encoding="utf-8")
    assert not MARKERS.search(text)
    hidden = set()
    for cell in cells(COURSE.assignment(assignment).solution):
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
    found = COURSE.assignment(assignment)
    result = grade.grade_local(found, reference.namespace(found))
    notebook = cells(COURSE.assignment(assignment).solution)
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
    text = "\n".join("".join(c["source"]) for c in cells(COURSE.assignment(assignment).solution)
                     if c["cell_type"] == "markdown")
    assert re.search(r"learning goals", text, re.I)
    assert re.search(r"^## Recap", text, re.M)
    assert re.search(r"^## Going further", text, re.M)
    assert re.search(r"\(\d{4}\)", text), "going further cites no dated reference"


# ---------------------------------------------------------------- how every notebook teaches
# Hints in layers, predictions written down and questions graded by hand: every notebook.
TEACHING = ASSIGNMENTS
HINT = re.compile(r"<details><summary>(Hint \d[^<]*)</summary>(.*?)</details>", re.S)
FENCED = re.compile(r"```[a-z]*\n(.*?)```", re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PREDICTION = "> ✍ **Your prediction**"
BLANK = "____"


def graded_functions(assignment):
    """(name, the markdown between the previous code cell and its answer cell, definition line)."""
    notebook = cells(COURSE.assignment(assignment).solution)
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


def defined_names(code):
    """Names a cell binds at its top level (assignments, definitions, imports)."""
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


@functools.lru_cache(maxsize=None)
def given_sources(assignment):
    """The code a visible check runs after: the notebook's given code (locked and setup cells, but
    demonstrations), the reference answers, the imports of the checks, and the few experiment cells that define a name a
    check reads (the toy model of notebook 07)."""
    notebook = cells(COURSE.assignment(assignment).solution)
    checks = [source(c) for c in notebook if nbgrader_meta(c).get("grade")
              and not nbgrader_meta(c).get("solution") and c["cell_type"] == "code"]
    read = {n.id for text in checks for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    read -= {name for text in checks for name in defined_names(text)}
    found = []
    for cell in notebook:
        meta, text = nbgrader_meta(cell), source(cell)
        if cell["cell_type"] != "code":
            continue
        if "demonstration" in cell["metadata"].get("tags", []):
            continue                            # an experiment no check depends on
        if meta.get("grade") and not meta.get("solution"):
            imports = [n for n in ast.parse(text).body if isinstance(n, (ast.Import, ast.ImportFrom))]
            found += [(ast.unparse(n), False) for n in imports]
        elif meta.get("locked") or meta.get("solution") or "setup" in cell["metadata"].get("tags", []):
            found.append((text, False))
        elif defined_names(text) & read:
            found.append((text, True))          # an experiment: best effort
    return tuple(found)


def given_code(assignment):
    """The namespace a visible check runs in (see ``given_sources``)."""
    import contextlib
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    namespace = {"__name__": "notebook"}
    for text, experiment in given_sources(assignment):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(text, "<given>", "exec"), namespace)
        except Exception:
            if not experiment:
                raise
        plt.close("all")
    return namespace


def works(assignment, name, definition, body):
    """Whether ``body`` as the function's body passes its visible check and every hidden test."""
    import contextlib
    import io
    import textwrap
    from autograder.engine import catalogue
    if "return" not in body and "\n" not in body.strip():
        body = "return " + body.strip()
    candidate = definition + "\n" + textwrap.indent(textwrap.dedent(body), "    ")
    try:
        compile(candidate, "<hint>", "exec")
    except SyntaxError:
        return False
    check_cell = next(source(c) for c in cells(COURSE.assignment(assignment).solution)
                      if nbgrader_meta(c).get("grade_id") == f"{CHECK_PREFIX}{name}")
    try:    # a quick first filter: the visible check
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            exec(compile(check_cell, "<visible check>", "exec"),
                 catalogue.with_source(given_code(assignment), candidate))
    except NameError as error:
        read = {n.id for n in ast.walk(ast.parse(check_cell)) if isinstance(n, ast.Name)}
        if error.name not in read:      # the body's own name (a blank, a variable of a snippet)
            return False
        # the check reads a name the notebook defines in an experiment: the hidden suite decides
    except Exception:
        return False
    found = COURSE.assignment(assignment)
    namespace = catalogue.with_source(reference.namespace(found), candidate)
    result = grade.grade_local(found, namespace).exercises[name]
    return result["score"] == result["max_score"]


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_graded_function_has_layered_hints_that_never_give_the_body(assignment):
    for name, markdown, definition in graded_functions(assignment):
        hints = HINT.findall(markdown)
        assert 2 <= len(hints) <= 3, f"{name}: {len(hints)} hints"
        skeleton(name, hints)
        for body in hint_bodies(hints):
            assert not works(assignment, name, definition, body), (
                f"{name}: a hint is a working body of the function:\n{body}")


# ---------------------------------------------------------------- skeletons
# The last hint is a skeleton: one fenced block whose lines are lines of the solution with blanks.
# Filled with the solution's own text at each blank it must earn full marks (so it has the
# solution's shape and leaves nothing out); at least one blank hides an operation (a call, a
# product, a comparison: the idea, not only a name or an index), and the given code shows at
# least one operation (a skeleton of blanks alone does not help).

def skeleton(name, hints):
    """The code of the last hint, which must be a skeleton with blanks."""
    blocks = FENCED.findall(hints[-1][1])
    assert len(blocks) == 1 and BLANK in blocks[0], (
        f"{name}: the last hint should be a skeleton, one fenced code block with blanks ({BLANK})")
    return blocks[0]


def code_lines(text):
    """(indent, code) of every line of ``text`` that holds code, comments removed."""
    import io
    import textwrap
    import tokenize
    found = []
    for line in textwrap.dedent(text).splitlines():
        code = line.strip()
        try:
            for token in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
                if token.type == tokenize.COMMENT:
                    code = code[:token.start[1]].rstrip()
                    break
        except (tokenize.TokenError, SyntaxError):
            pass
        if code:
            found.append((len(line) - len(line.lstrip()), code))
    return found


def solution_lines(assignment, name):
    cell = next(c for c in cells(COURSE.assignment(assignment).solution)
                if nbgrader_meta(c).get("grade_id") == name and nbgrader_meta(c).get("solution"))
    text = source(cell).split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
    return [code for _, code in code_lines(text)]


def filled_skeleton(text, solution):
    """The skeleton with each blank filled by the solution's text at that place, and those texts.

    Skeleton lines are matched in order to solution lines (a blank matches any non-empty text,
    spaces are free); solution lines the skeleton leaves out are skipped. Fails when a skeleton
    line matches no later solution line."""
    filled, blanks, at = [], [], 0
    for indent, code in code_lines(text):
        parts = [re.sub(r"(?:\\ )+", r"\\s*", re.escape(part)) for part in code.split(BLANK)]
        pattern = re.compile("(.+?)".join(parts))
        while at < len(solution) and not pattern.fullmatch(solution[at]):
            at += 1
        assert at < len(solution), f"the skeleton line {code!r} is no line of the solution (in order)"
        match = pattern.fullmatch(solution[at])
        filled.append(" " * indent + solution[at])
        blanks += list(match.groups())
        at += 1
    return "\n".join(filled), blanks


IDEAS = (ast.Call, ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.comprehension, ast.Lambda)


def operations(code, kinds=IDEAS):
    """The operation nodes of a piece of code (a unary minus on a number is a number)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = ast.parse(f"_[{code}]")          # an index such as `..., None`
    return [node for node in ast.walk(tree) if isinstance(node, kinds)
            or (isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant))]


def skeletons(assignment):
    for name, markdown, definition in graded_functions(assignment):
        yield name, definition, skeleton(name, HINT.findall(markdown))


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_skeleton_filled_from_the_solution_earns_full_marks(assignment):
    for name, definition, text in skeletons(assignment):
        try:
            body, _ = filled_skeleton(text, solution_lines(assignment, name))
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None
        assert works(assignment, name, definition, body), (
            f"{name}: the skeleton, filled with the solution's own text, does not earn full marks; "
            f"it leaves out a line the function needs:\n{body}")


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_skeleton_hides_an_operation_and_shows_one(assignment):
    for name, _, text in skeletons(assignment):
        _, blanks = filled_skeleton(text, solution_lines(assignment, name))
        assert any(operations(blank) for blank in blanks), (
            f"{name}: every blank of the skeleton hides only a name, a number or an index "
            f"({blanks}): at least one should hide the idea (the call, the product, the comparison)")
        given = "def given():\n" + "\n".join(" " * (4 + indent) + code.replace(BLANK, "_")
                                               for indent, code in code_lines(text))
        shown = operations(given, IDEAS + (ast.Subscript, ast.Attribute))
        assert shown, f"{name}: the skeleton is blanks only; give the learner its shape"


def test_filling_a_skeleton_takes_the_solutions_text():
    body, blanks = filled_skeleton("q = ____   # (..., d)\nreturn ____[..., 0]",
                                   ["s = np.asarray(s)", "q = s @ W", "return (H @ q[..., None])[..., 0]"])
    assert body == "q = s @ W\nreturn (H @ q[..., None])[..., 0]"
    assert blanks == ["s @ W", "(H @ q[..., None])"]
    with pytest.raises(AssertionError, match="no line of the solution"):
        filled_skeleton("scores = ____", ["weights = softmax(score_fn(s, H))"])
    assert operations("s @ W") and not operations(":, None") and not operations("-1")


@pytest.mark.parametrize("assignment", TEACHING)
def test_every_prediction_is_written_down_and_compared(assignment):
    notebook = cells(COURSE.assignment(assignment).solution)
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
    notebook = cells(COURSE.assignment(assignment).solution)
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


# docs/authoring.md keeps, per exercise, one line saying what the skeleton's blanks leave to the
# learner, so that a reviewer can disagree line by line.
LEFT_TO_LEARNER = re.compile(r"^\| (\d\d-[\w-]+) \| `(\w+)` \| (.+?) \|\s*$", re.M)


@pytest.mark.parametrize("assignment", TEACHING)
def test_authoring_says_what_each_skeleton_leaves_to_the_learner(assignment):
    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    listed = {name: what for a, name, what in LEFT_TO_LEARNER.findall(text) if a == assignment}
    functions = [name for name, _, _ in graded_functions(assignment)]
    missing = [name for name in functions if len(listed.get(name, "").split()) < 3]
    assert not missing, (f"docs/authoring.md does not say what the skeletons of {assignment} leave "
                         f"to the learner: {missing}")
    assert set(listed) <= set(functions), f"docs/authoring.md lists {sorted(set(listed) - set(functions))}"
