"""Demonstration cells not re-run (autograder/engine/demonstrations.py): the authoring check, the
proof that skipping them changes no grade of the reference or of any catalogue entry, the learner's
own figures in their place, and the full run a submission gets when skipping could matter."""
import base64
import concurrent.futures
import json
import time

import numpy as np
import pytest

from autograder.engine import catalogue, demonstrations, figures, grade, notebook, reference, suite
from autograder.engine.options import Options
from support import ASSIGNMENTS, COURSE, figure_flood, sandbox_mode

PNG = base64.b64encode(figures.PNG_SIGNATURE + b"\0" * 40).decode()
NOT_PNG = base64.b64encode(b"GIF89a" + b"\0" * 40).decode()


def code(source, demonstration=False, locked=None, gid=None):
    cell = {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
    if demonstration:
        cell["metadata"]["tags"] = [demonstrations.TAG]
    if locked is None:
        locked = demonstration
    if locked or gid:
        cell["metadata"]["nbgrader"] = {"grade_id": gid or f"cell{id(cell)}", "locked": locked,
                                        "solution": False, "grade": False}
    return cell


def answer(source):
    return {"cell_type": "code", "source": source, "outputs": [],
            "metadata": {"nbgrader": {"grade_id": "f", "solution": True, "locked": False}}}


def problems(*cells, graded=()):
    return demonstrations.problems({"cells": list(cells)}, list(graded))


# ------------------------------------------------------------------ the authoring check

def test_names_read_and_bound_follow_python_scoping():
    assert demonstrations.bound("import numpy as np\nfrom a.b import c\nx, (y, z) = 1, (2, 3)\n"
                                "def f(q):\n    w = q\n    global g\n    g = w\n"
                                "for i in range(3):\n    pass\n[k for k in range(2)]\n") == \
        {"np", "c", "x", "y", "z", "f", "g", "i"}
    # read before bound, free in a function, but not a function's own locals or a loop's variable
    assert demonstrations.reads("a = b + 1\nc = a\ndef f(p):\n    local = p\n    return local + G\n"
                                "for i in items:\n    total = i\n[x * y for x in xs]\n") == \
        {"b", "G", "items", "xs", "y"}


def test_a_demonstration_that_binds_what_later_code_reads_is_refused():
    found = problems(code("T = 32\nrng = 1", demonstration=True), code("print(T)"))
    assert found and "binds 'T'" in found[0] and not any("'rng'" in f for f in found)
    # read by a graded function (the solution's answer cell or a catalogue entry), at call time
    assert problems(code("W = 1", demonstration=True), answer("def f(x):\n    return x @ W\n"))
    assert problems(code("W = 1", demonstration=True),
                    graded=["def f(x):\n    return W * x\n"])
    # read only by later demonstrations, or rebound before it is read: nothing to refuse
    assert problems(code("T = 32", demonstration=True), code("print(T)", demonstration=True),
                    code("T = 6\nprint(T)")) == []


def test_a_demonstration_must_be_locked_and_must_not_change_objects_it_did_not_create():
    found = problems(code("x = 1", demonstration=True, locked=False, gid="try"))
    assert found == ["try: tagged 'demonstration' but not a locked cell that is not graded; "
                     "the learner could change it, or it is a check, so it must be run"]
    check = code("check(f)", demonstration=True, gid="check_f")
    check["metadata"]["nbgrader"]["grade"] = True  # a visible check is always run
    assert not demonstrations.is_demonstration(check) and problems(check)
    shared = code("params = {}\nrng = make()")
    assert any("stores into params['W']" in f for f in problems(
        shared, code("params['W'] = 0", demonstration=True)))
    # a method call on an object that later code reads may change it (a generator's state)
    assert any("rng.normal" in f for f in problems(
        shared, code("noise = rng.normal()", demonstration=True), code("print(rng)")))
    # a module's function changes nothing of the module; an object only demonstrations bind is
    # theirs to change
    assert problems(code("import numpy as np"), code("m = np.zeros(3)", demonstration=True),
                    code("print(np)")) == []
    assert problems(code("results = {}", demonstration=True),
                    code("results['x'] = 1", demonstration=True)) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_demonstration_of_the_course_passes_the_authoring_check(assignment):
    found = COURSE.assignment(assignment)
    solution = notebook.load(found.solution)
    assert demonstrations.problems(solution, [e.source for e in catalogue.entries(found)]) == []
    marked = [c for c in solution["cells"] if demonstrations.tagged(c)]
    released = notebook.load(found.release)
    # the release carries the mark on a locked cell, where the grader reads it
    assert len([c for c in released["cells"] if demonstrations.is_demonstration(c)]) == len(marked)


# ------------------------------------------------------------------ what the learner sees

def test_only_a_submitted_png_image_is_kept_for_a_cell_not_run_again():
    image = {"output_type": "display_data", "metadata": {"x": 1},
             "data": {"image/png": PNG, "text/plain": "<Figure>"}}
    html = {"output_type": "display_data", "metadata": {},
            "data": {"text/html": f'<img src="data:image/png;base64,{PNG}" alt="a map">'}}
    fake = {"output_type": "display_data", "metadata": {}, "data": {"image/png": NOT_PNG}}
    script = {"output_type": "display_data", "metadata": {},
              "data": {"text/html": "<script>alert(1)</script>"}}
    text = {"output_type": "stream", "name": "stdout", "text": "accuracy 100%"}
    huge = {"output_type": "display_data", "metadata": {},
            "data": {"image/png": PNG + "A" * 1_000_000}}
    # a saved notebook keeps multi-line text as a list of lines
    lines = {"output_type": "display_data", "metadata": {},
             "data": {"text/html": ['<img src="data:image/png;base64,',
                                    f'{PNG}" alt="a map">']}}
    submitted = {"cells": [code("plot()", demonstration=True, gid="demo")]}
    submitted["cells"][0]["outputs"] = [text, image, fake, script, html, huge, "junk", lines]
    kept = figures.submitted(submitted["cells"][0]["outputs"], figures.Budget())
    assert [k["data"] for k in kept] == [image["data"], html["data"], html["data"]]
    assert all(k["metadata"] == {} for k in kept)
    label = demonstrations.not_rerun_outputs(kept)[0]
    assert "3 figure(s) from your submitted notebook" in label["text"]
    assert "not re-run" in demonstrations.not_rerun_outputs([])[0]["text"]


def test_a_copy_without_outputs_is_read_with_the_learners_own_figures_in_one_child():
    """nbgrader hands the grader a copy of the submission without outputs; the learner's own file
    gives the figures, read by the same bounded child: the images of the cells asked for (the
    demonstrations) only, matched by grade id. The learner's own file must be readable like any
    submission: one that cannot be read is refused, whatever the copy holds."""
    image = {"output_type": "display_data", "metadata": {},
             "data": {"image/png": PNG, "text/plain": "<Figure>"}}
    text = {"output_type": "stream", "name": "stdout", "text": "accuracy 100%"}

    def document(with_outputs):
        cells = [code("plot()", demonstration=True, gid="demo"),
                 code("x = 1", gid="free", locked=False)]
        if with_outputs:
            cells[0]["outputs"] = [text, image]
            cells[1]["outputs"] = [image]  # not locked: its outputs are never kept
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5}).encode()

    copy, own = document(False), document(True)
    read, _ = notebook.read_submission(copy, figures_from=own, figures_of=["demo", "free"])
    demo, free = read["cells"]
    assert [o["data"]["image/png"] for o in demo["outputs"]] == [PNG]
    assert free["outputs"] == [{"output_type": "display_data", "metadata": {},
                                "data": image["data"]}]  # asked for: a demonstration's
    read, _ = notebook.read_submission(copy, figures_from=own, figures_of=["demo"])
    assert read["cells"][1]["outputs"] == []  # not asked for: nothing
    assert notebook.read_submission(copy, figures_of=["demo"])[0]["cells"][0]["outputs"] == []
    assert notebook.read_submission(own)[0]["cells"][0]["outputs"] == []  # nothing asked for
    assert notebook.read_submission(own, figures_of=["demo"])[0]["cells"][0]["outputs"]
    for unreadable in (b"not a notebook", b"[" * 100_000, own[:-5], b'{"cells": 1}'):
        with pytest.raises(notebook.NotebookProblem):
            notebook.read_submission(copy, figures_from=unreadable, figures_of=["demo"])
        with pytest.raises(notebook.NotebookProblem):
            notebook.read_submission(copy, figures_from=unreadable)
    with pytest.raises(notebook.NotebookProblem):
        notebook.read_submission(b"{", figures_from=own)


def shown_ids(assignment):
    return [notebook.grade_id(c) for c in notebook.load(COURSE.assignment(assignment).release)[
        "cells"] if demonstrations.is_demonstration(c)]


def test_300000_figures_in_the_demonstrations_read_into_a_bounded_notebook():
    """The attack: a 20 MB submission whose own demonstration cells hold 300,000 tiny "PNG"
    outputs. The reader child keeps at most a cell's count of them per cell, within one budget
    for the notebook, and says how many it left out; read alone, or as nbgrader's copy with
    the learner's file beside it, the grader receives a notebook of a few kilobytes."""
    raw = figure_flood("00-getting-started")
    assert 19_000_000 < len(raw) <= notebook.MAX_BYTES
    ids = shown_ids("00-getting-started")
    copy = json.dumps(notebook.normalised(notebook.parse(raw))).encode()
    for read_as in ({"raw": raw}, {"raw": copy, "figures_from": raw}):
        started = time.monotonic()
        read, _ = notebook.read_submission(read_as["raw"], figures_from=read_as.get("figures_from"),
                                           figures_of=ids)
        seconds = time.monotonic() - started
        outputs = [o for c in read["cells"] for o in c.get("outputs", [])]
        kept = [o for o in outputs if figures.is_figure(o)]
        notes = [o["text"] for o in outputs if o["output_type"] == "stream"]
        print(f"\n[bounded] 300,000 figures read in {seconds:.1f} s: {len(kept)} kept, "
              f"{len(json.dumps(read)):,} characters")
        assert len(kept) == len(ids) * figures.MAX_CELL_OUTPUTS
        assert len(notes) == len(ids) and all("149,900 more output(s)" in n for n in notes)
        assert len(json.dumps(read)) < 100_000 and seconds < 3 * notebook.READ_CPU_SECONDS
        assert [c for c in read["cells"] if c.get("outputs")] == \
            [c for c in read["cells"] if notebook.grade_id(c) in ids]


def test_one_budget_holds_the_demonstrations_figures_and_the_kernels_outputs():
    """What the demonstration cells show of the submitted copy is taken from the notebook's one
    budget (8 MB, 1,000 outputs); the kernel's outputs get what is left, and whatever does not fit
    is left out with a note, once the budget is spent, one last note for the cells below."""
    big = {"output_type": "display_data", "metadata": {},
           "data": {"image/png": PNG + "A" * (figures.MAX_FIGURE_CHARS - 200)}}
    demo = code("plot()", demonstration=True, gid="demo")
    submitted = {"cells": [dict(demo, outputs=figures.submitted([big] * 5, figures.Budget()))]}
    assert len(submitted["cells"][0]["outputs"]) == 3 + 1  # a cell's 3,000,000, and a note
    executed = {"cells": [dict(demo, outputs=[]), code("x = 1"), code("y = 2"), code("z = 3")]}
    budget = figures.Budget()
    demonstrations.keep_submitted_figures(executed, submitted, budget)
    shown = executed["cells"][0]["outputs"]
    assert "3 figure(s) from your submitted notebook" in shown[0]["text"]
    assert sum(figures.size(o) for o in shown) == figures.MAX_NOTEBOOK_OUTPUT_CHARS - budget.chars
    # the kernel's cells, of three figures of 1 MB each: five more fit the notebook, not six
    kept = [budget.fit([big, big, big]) for _ in range(3)]
    assert [sum(figures.is_figure(o) for o in cell) for cell in kept] == [3, 2, 0]
    assert "1 output(s) of this cell left out by the grader" in kept[1][-1]["text"]
    assert "the cells below keep no outputs" in kept[1][-1]["text"] and kept[2] == []
    total = sum(figures.size(o) for cell in [shown, *kept] for o in cell)
    assert total <= figures.MAX_NOTEBOOK_OUTPUT_CHARS + 500
    # the count: a thousand outputs in all, then one last note and nothing more
    budget = figures.Budget()
    tiny = {"output_type": "stream", "name": "stdout", "text": "x"}
    cells = [budget.fit([tiny] * figures.MAX_CELL_OUTPUTS) for _ in range(30)]
    assert sum(len(c) for c in cells) == figures.MAX_NOTEBOOK_OUTPUTS + 1
    assert len(cells[10]) == 1 and "the cells below keep no outputs" in cells[10][0]["text"]
    assert all(c == [] for c in cells[11:])


def test_a_visible_check_keeps_how_it_fared_past_the_notebooks_budget():
    """Once the notebook's budget is spent, later cells keep no outputs; a visible check still
    keeps its error, or a note that it ran, so that its state is not misreported."""
    from autograder.engine.kernel import CellResult
    found = COURSE.assignment("00-getting-started")
    check = next(c for c in notebook.load(found.release)["cells"] if notebook.check_exercise(c))
    execution = grade.Execution({"cells": []}, found, Options(sandbox=sandbox_mode()),
                                time.monotonic() + 60, outputs=figures.Budget(outputs=0))
    printed = [{"output_type": "stream", "name": "stdout", "text": "checking"}]
    failed = execution._kept(check, CellResult(printed + [{
        "output_type": "error", "ename": "AssertionError", "evalue": "rows do not sum to one",
        "traceback": ["..."]}], "AssertionError: rows do not sum to one"))
    passed = execution._kept(check, CellResult(printed))
    other = execution._kept(code("print(1)"), CellResult(printed))
    exercise = notebook.check_exercise(check)
    checks = grade.visible_checks({"cells": [dict(check, outputs=failed)]})
    assert checks[exercise] == {"status": "failed",
                                "message": "AssertionError: rows do not sum to one"}
    checks = grade.visible_checks({"cells": [dict(check, outputs=passed)]})
    assert checks[exercise]["status"] == "passed" and other == []


def test_a_submission_is_run_in_full_when_skipping_could_change_its_grade():
    assert demonstrations.needs_full_run(["a cell: NameError: name 'trained' is not defined"])
    assert demonstrations.needs_full_run(["`f` raised NameError: name 'z' is not defined"])
    assert not demonstrations.needs_full_run(["`f` returned the wrong shape", ""])


# ------------------------------------------------------------------ the proof, in kernels

def _kernel(assignment, skip):
    """The reference submission running in a kernel, demonstration cells skipped or not."""
    executed, _ = notebook.restore_locked(notebook.canonical(notebook.parse(
        json.dumps(catalogue.filled_notebook(assignment)).encode())),
                                          notebook.load(assignment.release))
    execution = grade.Execution(executed, assignment, Options(sandbox=sandbox_mode(),
                                                              figures="off"),
                                time.monotonic() + 900, skip=skip)
    execution.run_all()
    assert execution.errors == [], execution.errors
    execution.execute = lambda source: execution.session.execute(source, 30)
    return execution


def _same(a, b):
    if isinstance(a, dict) and isinstance(b, dict):  # a reply's time is the machine's, not state
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a if k != "seconds")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype \
            and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def solution_cell(assignment, exercise):
    """The source of the solution's cell that defines ``exercise`` (this test's kernels hold the
    reference submission; a catalogue entry replaced one function, and this puts it back)."""
    [cell] = [c for c in reference.definition_cells(notebook.load(assignment.solution))
              if notebook.grade_id(c) == exercise]
    return notebook.source(cell)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_skipping_the_demonstrations_changes_no_grade_of_the_reference_or_the_catalogue(
        assignment):
    """Two kernels hold the reference submission: one ran every cell, one skipped the
    demonstrations. Every catalogue entry is put in both in turn, and the entry's tests are run
    with every call sent to both kernels. Where every reply is the same, every test grades the
    same. Where one differs (a measurement such as 09's peak memory, or a mutant that draws from
    numpy's global generator, whose state the experiments advance), the tests are run again on the
    replies of the kernel that ran every cell, and each must score the same."""
    found = COURSE.assignment(assignment)
    skipped = [c for c in notebook.load(found.release)["cells"]
               if demonstrations.is_demonstration(c)]
    assert skipped, f"{assignment} marks its experiments as demonstrations"
    full, lean = _kernel(found, skip=False), _kernel(found, skip=True)
    try:
        differences = []

        pool = concurrent.futures.ThreadPoolExecutor(2)  # one thread per kernel, both at once

        def in_both(method, *args):
            return list(pool.map(lambda kernel: getattr(kernel, method)(*args), (lean, full)))

        def both(name, args, kwargs):
            reply, other = in_both("call", name, args, kwargs)
            if not _same(reply, other):
                differences.append((name, reply, other))
            return reply

        entries = [None, *catalogue.entries(found)]
        for entry in entries:
            if entry is not None:
                assert not any(done.error for done in in_both("execute", entry.source))
            exercises = None if entry is None else [entry.exercise]
            results = suite.run(found, both, 300, exercises=exercises)
            if differences:  # a measurement, or a global random generator's state: the grade
                again = suite.run(found, full.call, 300, exercises=exercises)  # must not differ
                assert [(t.name, t.score, t.passed) for t in results] == \
                    [(t.name, t.score, t.passed) for t in again], (entry and entry.key,
                                                                   differences[:1])
                differences.clear()
            assert results
            if entry is None:
                assert all(t.passed for t in results), [(t.name, t.feedback) for t in results
                                                        if not t.passed]
            else:
                restore = solution_cell(found, entry.exercise)  # the reference, back in place
                assert not any(done.error for done in in_both("execute", restore))
    finally:
        full.close()
        lean.close()


# ------------------------------------------------------------------ grading, end to end

def test_grading_skips_the_demonstrations_shows_the_learners_figures_and_gives_the_same_score(
        tmp_path):
    found = COURSE.assignment("08-learning-to-attend")
    submission = catalogue.filled_notebook(found)
    first = next(c for c in submission["cells"] if demonstrations.is_demonstration(c))
    first["outputs"] = [{"output_type": "display_data", "metadata": {},
                         "data": {"image/png": PNG, "text/plain": "<Figure>"}}]
    path = tmp_path / "learning-to-attend.ipynb"
    path.write_text(json.dumps(submission))
    options = Options(sandbox=sandbox_mode(), figures="off")
    lean, executed = grade.grade_notebook(path, found, options)
    full, _ = grade.grade_notebook(path, found, Options(sandbox=sandbox_mode(), figures="off",
                                                       demonstrations="run"))
    assert lean.score == full.score == lean.max_score
    assert lean.checks == full.checks
    shown = next(c for c in executed["cells"] if demonstrations.is_demonstration(c))
    assert shown["outputs"][1]["data"]["image/png"] == PNG
    assert "not re-run by the grader" in shown["outputs"][0]["text"]


def test_a_function_that_reads_what_a_demonstration_binds_is_graded_in_full(tmp_path):
    """A learner's answer that (wrongly) reads a global a skipped cell binds fails with a
    NameError when the demonstrations are skipped; the grader then runs every cell, as the learner
    did, and the score is the full run's."""
    found = COURSE.assignment("02-scoring")
    names = set().union(*(demonstrations.bound(notebook.source(c))
                          for c in notebook.load(found.release)["cells"]
                          if demonstrations.is_demonstration(c)))
    assert "naive_softmax" in names  # the notebook's demonstration of overflow
    reads_a_demo = ("def softmax(z, axis=-1):\n"
                    "    shifted = z - np.max(z, axis=axis, keepdims=True)\n"
                    "    if shifted.ndim == 1:\n"
                    "        return naive_softmax(shifted)   # defined by a demonstration cell\n"
                    "    e = np.exp(shifted)\n"
                    "    return e / e.sum(axis=axis, keepdims=True)\n")
    path = tmp_path / "scoring.ipynb"
    path.write_text(json.dumps(catalogue.filled_notebook(found, {"softmax": reads_a_demo})))
    timings = tmp_path / "timings.jsonl"
    options = Options(sandbox=sandbox_mode(), figures="off", timings=str(timings))
    result, _ = grade.grade_notebook(path, found, options)
    full, _ = grade.grade_notebook(path, found, Options(sandbox=sandbox_mode(), figures="off",
                                                        demonstrations="run"))
    assert [t.score for t in result.tests] == [t.score for t in full.tests]
    assert result.exercises["softmax"] == full.exercises["softmax"]
    assert full.exercises["softmax"]["score"] > 0
    stages = [json.loads(line)["stage"] for line in timings.read_text().splitlines()]
    assert stages.count("execute") == 2  # graded twice: skipping, then in full
