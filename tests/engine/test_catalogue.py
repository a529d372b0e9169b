"""The catalogue names a mistake only when it is sure, and otherwise describes what is wrong.

A catalogued mistake is named in feedback only when the learner's function matches it on more than
one input. These tests grade implementations that are *not* in the catalogue: correct but fragile
ones that coincide with a catalogued mistake on one special input, and near-variants of catalogued
mistakes, which must get a property message instead of a wrong name.
"""
import shutil

import numpy as np
import pytest

from autograder.engine import catalogue, grade, reference
from autograder.engine.assignment import Course
from support import ASSIGNMENTS, COURSE, REPO

NAMED = "This is what you get when you "

# Masking after the softmax and renormalising is right on paper. It fails only where every allowed
# key's weight underflows to 0 (a masked key has a far larger score): there its rows are zero,
# exactly like the catalogued mistake of zeroing the masked weights without renormalising.
FRAGILE_SELF_ATTENTION = '''
def self_attention(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(np.shape(W_k)[-1]), axis=-1)
    if mask is not None:
        weights = weights * np.asarray(mask, dtype=bool)
        sums = weights.sum(axis=-1, keepdims=True)
        weights = weights / np.where(sums > 0, sums, 1.0)
    return weights @ V, weights
'''

FRAGILE_ATTENTION = FRAGILE_SELF_ATTENTION.replace(
    "def self_attention(X, W_q, W_k, W_v, mask=None):\n    X = np.asarray(X)\n"
    "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n",
    "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
    "    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)\n").replace(
    "np.shape(W_k)[-1]", "K.shape[-1]")

# A near-variant of the catalogued axis mistakes of softmax: always normalise along axis -2.
SOFTMAX_ALONG_AXIS_MINUS_TWO = '''
def softmax(z, axis=-1):
    z = np.asarray(z)
    e = np.exp(z - z.max(axis=-2, keepdims=True))
    return e / e.sum(axis=-2, keepdims=True)
'''


def graded(assignment, source):
    namespace = catalogue.with_source(reference.namespace(COURSE.assignment(assignment)), source)
    return grade.grade_local(COURSE.assignment(assignment), namespace)


def failed(result, exercise):
    return [t for t in result.tests_of(exercise) if not t.passed]


@pytest.mark.parametrize("assignment, exercise, source", [
    ("05-self-attention", "self_attention", FRAGILE_SELF_ATTENTION),
    ("03-qkv", "scaled_dot_product_attention", FRAGILE_ATTENTION),
], ids=["05-self-attention", "03-qkv"])
def test_fragile_masking_is_not_told_it_forgot_to_renormalise(assignment, exercise, source):
    result = graded(assignment, source)
    failures = failed(result, exercise)
    assert failures, "the suite no longer tests masked rows whose allowed weights underflow"
    assert all(t.name.startswith(exercise) for t in result.tests if not t.passed)
    for test in failures:
        assert "without renormalising" not in test.feedback, test.feedback
        # either the mistake it really makes (03 catalogues it) or the property that breaks
        assert ("mask the weights after the softmax and renormalise" in test.feedback
                or "should sum to 1" in test.feedback or "should each sum to 1" in
                test.feedback or "expected" in test.feedback), test.feedback


def test_the_mistake_of_not_renormalising_is_still_named():
    qkv = COURSE.assignment("03-qkv")
    entry = next(e for e in catalogue.mutants(qkv, "scaled_dot_product_attention")
                 if "without renormalising" in e.description)
    result = grade.grade_local(qkv, entry.namespace())
    feedback = " ".join(t.feedback for t in failed(result, entry.exercise))
    assert NAMED + entry.description in feedback
    assert "mask the weights after the softmax and renormalise" not in feedback


def test_a_near_variant_gets_a_property_message():
    result = graded("02-scoring", SOFTMAX_ALONG_AXIS_MINUS_TWO)
    feedback = [t.feedback for t in failed(result, "softmax")]
    on_matrices = [f for f in feedback if "for z of shape (4, 5)" in f]
    assert on_matrices and all("slices sum to 1 along axis 0, not along the last axis" in f
                               and NAMED not in f for f in on_matrices), feedback
    # on 3-D input, axis -2 is axis 1: there it is exactly the catalogued axis-1 mistake
    for f in feedback:
        if NAMED in f:
            assert "sum along axis 1" in f, f


class Learner:
    """The learner's side of a suite, as a stand-in: one function, and a record of its last call
    that confirming a mistake must leave alone."""

    def __init__(self, function):
        self.function = function
        self._last = "the suite's record"  # kept as suite.Submission keeps it
        self.calls = 0

    @property
    def last(self):
        return self._last

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls += 1
            self._last = "a probe"
            return self.function(*args, **kwargs)
        return call


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide")
def test_confirming_needs_a_second_input_that_tells_the_mistake_apart():
    X = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])        # a zero row: the guard matters
    first = COURSE.assignment("00-getting-started")
    no_guard = next(e for e in catalogue.mutants(first, "row_normalize")
                    if "without guarding" in e.description)
    unguarded = Learner(lambda Y: no_guard.namespace()["row_normalize"](Y))
    table = catalogue.mistakes(first, "row_normalize", X, learner=unguarded)
    assert table.confirm(no_guard.description)               # nan rows on the probes too
    assert unguarded.last == "the suite's record" and unguarded.calls >= 2
    # a function that is right everywhere except on this input is not confirmed
    guarded = catalogue.alternatives(first, "row_normalize")[0].namespace()
    right_elsewhere = Learner(lambda Y: table[no_guard.description] if np.array_equal(Y, X)
                              else guarded["row_normalize"](Y))
    table = catalogue.mistakes(first, "row_normalize", X, learner=right_elsewhere)
    assert not table.confirm(no_guard.description)
    # without a learner, one input is enough (the behaviour suites for 08 and 09 rely on)
    assert catalogue.mistakes(first, "row_normalize", X).confirm(no_guard.description)


def test_mistakes_accept_the_wire_markers_the_learner_was_called_with():
    from autograder.engine.wire import Lambda
    s, H = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0]])
    table = catalogue.mistakes(COURSE.assignment("02-scoring"), "attend", s, H,
                               Lambda("lambda s, H: H @ s"), pick=1)
    raw = next(d for d in table if "raw scores" in d)
    assert np.allclose(table[raw], [1.0, 0.0])


def test_every_mistake_description_completes_the_sentence():
    adverbs = {"always", "only", "never"}
    for assignment in ASSIGNMENTS:
        for entry in catalogue.mutants(COURSE.assignment(assignment)):
            text = entry.description
            first = text.split()[0]
            assert text[0].islower() and not text.endswith("."), (entry.key, text)
            assert first in adverbs or not (first.endswith(("ing", "ed")) or (
                first.endswith("s") and not first.endswith("ss"))), (entry.key, text)



def test_a_suite_names_its_assignment_only_while_it_runs():
    """Suites say ``mistakes(ASSIGNMENT, ...)``: the name is the assignment whose suite is running,
    of the course being graded; outside a run, a name alone says nothing."""
    first = COURSE.assignment("00-getting-started")
    with pytest.raises(LookupError, match="outside a run"):
        catalogue.mutants("00-getting-started")
    with catalogue.running(first):
        assert catalogue.mutants("00-getting-started") == catalogue.mutants(first)
        assert catalogue.resolve("02-scoring") == COURSE.assignment("02-scoring")
    with pytest.raises(LookupError):
        catalogue.resolve("00-getting-started")


def test_matching_mistakes_takes_a_predicate():
    z = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    scoring = COURSE.assignment("02-scoring")
    wrong_rows = catalogue.matching_mistakes(
        scoring, "softmax", [((z,), {"axis": 0}, lambda p: not np.allclose(p.sum(axis=0), 1))])
    assert wrong_rows and "ignore the axis argument" in wrong_rows
    assert catalogue.matching_mistakes(scoring, "softmax", [((z,), {}, lambda p: False)]) is None
    with catalogue.running(scoring):  # a suite names its assignment
        assert catalogue.matching_mistakes("02-scoring", "softmax", [
            ((z,), {"axis": 0}, lambda p: not np.allclose(p.sum(axis=0), 1))]) == wrong_rows
        assert catalogue.mistakes("02-scoring", "softmax", z, axis=0).keys() == \
            catalogue.mistakes(scoring, "softmax", z, axis=0).keys()


def test_what_a_mistake_returned_is_remembered_and_anything_it_depends_on_runs_it_again(
        tmp_path, monkeypatch):
    """The grading process keeps what each mutant returned on an input (a class's learners who
    make the same mistake get the same table): asked again, no mutant runs; another input, the
    same input passed by keyword, another part picked, an edited mutant or an edited solution
    notebook (the namespace mutants run in) runs them again. Each caller gets its own copy."""
    root = tmp_path / "course"
    shutil.copytree(REPO / "tests" / "end_to_end" / "second-course", root)
    assignment = Course.from_root(root).assignment("centering")
    real, ran = catalogue._run, []

    def counted(namespace, *args):
        ran.append(args)
        return real(namespace, *args)
    monkeypatch.setattr(catalogue, "_run", counted)
    monkeypatch.setattr(catalogue, "_memo", type(catalogue._memo)())
    [description] = [e.description for e in catalogue.mutants(assignment, "center")]
    X = np.array([[1.0, 2.0], [3.0, 5.0]])

    def table(*args, **kwargs):
        ran.clear()
        found = catalogue.mistakes(assignment, "center", *args, **kwargs)
        return found[description], len(ran)

    first, runs = table(X)
    assert runs == 1 and np.allclose(first, X - X.mean())
    first[:] = 0  # the caller's copy
    again, runs = table(X.copy())
    assert runs == 0 and np.allclose(again, X - X.mean())
    for changed in ({"args": (X + 1e-9,)}, {"args": (X.astype(np.float32),)},
                    {"kwargs": {"X": X}}, {"args": (X,), "kwargs": {"pick": 1}}):
        _, runs = table(*changed.get("args", ()), **changed.get("kwargs", {}))
        assert runs == 1, changed
    solution = assignment.solution
    solution.write_bytes(solution.read_bytes() + b" ")
    _, runs = table(X)
    assert runs == 1
    mutants = assignment.suite / "mutants.py"
    mutants.write_text(mutants.read_text().replace("X - X.mean()", "X - 2 * X.mean()"))
    value, runs = table(X)
    assert runs == 1 and np.allclose(value, X - 2 * X.mean())


def test_the_remembered_values_are_bounded(monkeypatch):
    """At most MEMO_ENTRIES values and MEMO_BYTES bytes; a value larger than MEMO_VALUE_BYTES is
    not kept."""
    first = COURSE.assignment("00-getting-started")
    monkeypatch.setattr(catalogue, "_memo", type(catalogue._memo)())
    monkeypatch.setattr(catalogue, "_memo_bytes", 0)
    monkeypatch.setattr(catalogue, "MEMO_ENTRIES", 5)
    monkeypatch.setattr(catalogue, "MEMO_BYTES", 20_000)
    for n in range(12):
        catalogue.mistakes(first, "row_normalize", np.full((30, 30), n + 1.0))
    assert 0 < len(catalogue._memo) <= 5 and catalogue._memo_bytes <= 20_000
    assert catalogue._memo_bytes == sum(len(v or b"") for v in catalogue._memo.values())
    monkeypatch.setattr(catalogue, "MEMO_VALUE_BYTES", 1_000)
    catalogue._memo.clear()
    monkeypatch.setattr(catalogue, "_memo_bytes", 0)
    catalogue.mistakes(first, "row_normalize", np.ones((30, 30)))
    assert len(catalogue._memo) == 0
