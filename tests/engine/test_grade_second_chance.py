"""Attacks on the second chance, in real sandboxed kernels (docs/guarantees.md, "The second chance").

A function that fails only because a function it uses fails is tested again with the course's
version of that function in place. The course's version is a stand-in whose every call the grader
computes on its side: no code of the course's enters a learner's kernel, each second chance runs
in a new kernel, and points come back only to a test the learner's own function passes given
correct functions to call. These tests try to get more than that.
"""
import json

import pytest

from autograder.engine import catalogue, grade, kernel, notebook, reference
from autograder.engine.options import Options
from support import COURSE, sandbox_mode, with_answers, write_notebook

pytestmark = pytest.mark.slow

SCORING = COURSE.assignment("02-scoring")
GRADED = ["softmax", "dot_score", "general_score", "additive_score", "attend", "align"]


def options():
    return Options(sandbox=sandbox_mode(), figures="off")


# A blank notebook that plays every trick known on the second chance: each function names every
# graded function (so that a grader reading the learner's text would think each uses all the
# others); harvests whatever functions of those names are not its own (the course's, when put in
# place) into a dict of its own and a file of its scratch folder; calls a harvested version of
# itself when it has one; records every input it is given and, with whatever it harvested,
# computes and stores answers for inputs recorded earlier; and replays a stored answer when it
# meets the same input again. It computes nothing itself.
PLAYER = '''
import hashlib, os, tempfile
# softmax dot_score general_score additive_score attend align
_GRADED = ["softmax", "dot_score", "general_score", "additive_score", "attend", "align"]
_STORE = os.path.join(tempfile.gettempdir(), "kept-by-the-learner.npz")
_mine, _kept, _inputs, _answers = {}, {}, {}, {}


def _key(name, args):
    parts = [np.asarray(a).tobytes() + str(np.shape(a)).encode() if not callable(a)
             else b"function" for a in args]
    return name + hashlib.sha256(b"|".join(parts)).hexdigest()


def _play(name, args):
    for other in _GRADED:
        found = globals().get(other)
        if callable(found) and found is not _mine.get(other):
            _kept[other] = found
    if name in _kept:
        return _kept[name](*args)
    key = _key(name, args)
    if key in _answers:
        return _answers[key]
    if os.path.exists(_STORE):
        stored = dict(np.load(_STORE, allow_pickle=True))
        if key in stored:
            return stored[key]
    _inputs.setdefault(name, []).append(args)
    for other, function in list(_kept.items()):
        for recorded in _inputs.get(other, []):
            try:
                _answers[_key(other, recorded)] = function(*recorded)
            except Exception:
                pass
    try:
        np.savez(_STORE, **{k: np.asarray(v, dtype=object) for k, v in _answers.items()})
    except Exception:
        pass
    raise NotImplementedError()
'''


def player(name, signature):
    head = PLAYER if name == "softmax" else ""
    return (f"{head}\ndef {name}({signature}):\n"
            f"    return _play({name!r}, ({signature.replace('=-1', '')},))\n"
            f"_mine[{name!r}] = {name}\n")


SIGNATURES = {"softmax": "z, axis=-1", "dot_score": "s, H", "general_score": "s, H, W",
              "additive_score": "s, H, W1, W2, v", "attend": "s, H, score_fn",
              "align": "S, H, score_fn"}


def playing_notebook():
    return with_answers(SCORING, {name: player(name, sig) for name, sig in SIGNATURES.items()})


def test_a_blank_notebook_that_plays_the_second_chance_scores_zero(tmp_path):
    path = write_notebook(tmp_path / "02-scoring" / SCORING.solution.name, playing_notebook())
    result, _ = grade.grade_notebook(path, SCORING, options())
    assert result.score == 0, [(t.name, t.feedback) for t in result.tests if t.passed]
    assert not any("is right" in t.feedback for t in result.tests)


def test_nothing_kept_in_one_second_chance_reaches_another(tmp_path):
    """The second chances run in the order that would help the player most (``align``'s first,
    where the course's ``attend`` is in place, then ``attend``'s own): each in a new kernel, so
    what ``align``'s run computed with the course's ``attend`` is gone when ``attend`` is tested."""
    executed, _ = notebook.restore_locked(playing_notebook(), notebook.load(SCORING.release))
    execution = grade.Execution(executed, SCORING, options(), deadline=float("inf"))
    try:
        execution.run_all()
        rerun = execution.rerun(SCORING)
        first = rerun(["align"], ["softmax", "attend"], [])
        second = rerun(["attend"], ["softmax"], [])
    finally:
        execution.close()
    assert first is not None and second is not None
    assert not any(t.passed for t in first + second), [t.name for t in first + second if t.passed]


# A learner's own softmax, wrong, and attend and align that are right but written unlike the course's
LEARNER = {
    "softmax": "def softmax(z, axis=-1):\n    return np.asarray(z) / 1.0\n",
    "attend": ("def attend(s, H, score_fn):\n    w = softmax(score_fn(s, H))\n"
               "    return np.einsum('...t,...td->...d', w, H), w\n"),
    "align": ("def align(S, H, score_fn):\n    rows = [attend(S[i], H, score_fn) for i in "
              "range(len(S))]\n    return (np.array([r[0] for r in rows]), "
              "np.array([r[1] for r in rows]))\n"),
}


def reference_lines(names):
    """Lines of the course's code of ``names`` that no learner code shares: the solution's
    bodies, but for blank lines, comments, docstrings and the marks."""
    solution = notebook.load(SCORING.solution)
    lines = set()
    for cell in reference.definition_cells(solution):
        if notebook.grade_id(cell) in names:
            for line in notebook.source(cell).splitlines():
                line = line.strip()
                if len(line) > 12 and not line.startswith(("#", '"', "def ", "return")) and \
                        '"""' not in line:
                    lines.add(line)
    return lines


def test_the_course_code_never_enters_the_kernel_and_a_right_caller_keeps_its_points(
        tmp_path, monkeypatch):
    sent = []
    run, answered = kernel.KernelSession._run, kernel.KernelSession._answered

    def recording_run(self, code, timeout, on_output, metadata=None, answer=None):
        sent.append(code + json.dumps(metadata or {}))
        return run(self, code, timeout, on_output, metadata, answer)

    def recording_answered(self, msg_id, answer, deadline, *rest):
        def answer_and_record(prompt, deadline):
            reply = answer(prompt, deadline)
            sent.append(reply)
            return reply
        return answered(self, msg_id, answer_and_record, deadline, *rest)

    monkeypatch.setattr(kernel.KernelSession, "_run", recording_run)
    monkeypatch.setattr(kernel.KernelSession, "_answered", recording_answered)
    path = write_notebook(tmp_path / "02-scoring" / SCORING.solution.name,
                          with_answers(SCORING, LEARNER))
    result, _ = grade.grade_notebook(path, SCORING, options())
    assert result.exercises["softmax"]["score"] < result.exercises["softmax"]["max_score"]
    for name in ("attend", "align"):  # right, but for the softmax they use: kept, saying so
        assert result.exercises[name]["score"] == result.exercises[name]["max_score"], name
    assert any("Checked with the course's `softmax`" in t.feedback for t in result.tests)
    assert any('"ok": true' in text for text in sent), "no course function was computed"
    text = "\n".join(sent)
    leaked = [line for line in reference_lines(GRADED) if line in text]
    assert reference_lines(["softmax", "attend"]) and not leaked, leaked
    assert "course_reference" not in text and "BEGIN SOLUTION" not in text


def test_a_stand_in_computes_nothing_outside_its_test_nor_with_functions_of_the_learners(
        tmp_path):
    """In the kernel of a second chance, learner code calls the stand-in of ``softmax`` from a
    cell (no test running: no answer), and ``align``'s stand-in of ``attend`` with a score
    function of its own (refused, so ``align`` gets nothing for it)."""
    own_scores = dict(LEARNER, align=(
        "def align(S, H, score_fn):\n    mine = lambda s, H: score_fn(s, H)\n"
        "    rows = [attend(S[i], H, mine) for i in range(len(S))]\n"
        "    return (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]))\n"))
    executed, _ = notebook.restore_locked(with_answers(SCORING, own_scores),
                                          notebook.load(SCORING.release))
    execution = grade.Execution(executed, SCORING, options(), deadline=float("inf"))
    try:
        execution.run_all()
        rerun = execution.rerun(SCORING)
        tests = rerun(["align"], ["softmax", "attend"], [])
        outside = execution.session.execute("softmax(np.ones(3))", 10)
    finally:
        execution.close()
    assert tests and not any(t.passed for t in tests)
    assert any("functions the grader's tests passed in" in t.feedback for t in tests)
    assert outside.error  # a stand-in asked outside a test gets no answer: stdin is closed


@pytest.mark.parametrize("entry", [e for e in catalogue.mutants(SCORING)
                                   if e.exercise in ("softmax", "attend")][:3],
                         ids=lambda e: e.key)
def test_a_mutant_callee_is_charged_once_in_a_kernel(entry, tmp_path):
    path = write_notebook(tmp_path / "02-scoring" / SCORING.solution.name,
                          catalogue.notebook_with(entry))
    result, _ = grade.grade_notebook(path, SCORING, options())
    alone = grade.grade_local(SCORING, entry.namespace())
    assert {n: e["score"] for n, e in result.exercises.items()} == \
        {n: e["score"] for n, e in alone.exercises.items()}
    others = [e for n, e in result.exercises.items() if n != entry.exercise]
    assert all(e["score"] == e["max_score"] for e in others)
