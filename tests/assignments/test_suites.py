"""Each hidden suite proves its strength: the reference keeps full marks, every catalogued mutant
loses points on its function, every correct alternative keeps full marks.

These run the suites in this process through the same wire encoding the sandbox uses, so they are
fast; tests/engine/test_grade.py grades real notebooks in real kernels. Every suite uses the kit
(autograder/engine/testing.py) rather than its own helpers and reads no error's words, and what the
course's suites share (suites/attention_kit.py) keeps its promises.
"""
import ast
import functools
import re
import warnings

import numpy as np
import pytest

from autograder.engine import catalogue, grade, reference, suite
from support import ASSIGNMENTS, COURSE, SUITE_FILES


ENTRIES = [entry for a in ASSIGNMENTS for entry in catalogue.entries(COURSE.assignment(a))]


@functools.lru_cache(maxsize=None)
def graded_reference(assignment):
    """The reference's score sheet (graded once per test process)."""
    found = COURSE.assignment(assignment)
    return grade.grade_local(found, reference.namespace(found))


def failures(result):
    return "\n".join(f"  {t.name}: {t.feedback}" for t in result.tests
                     if not t.passed)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_solution_gets_full_marks(assignment):
    result = graded_reference(assignment)
    assert result.max_score > 0
    assert result.score == result.max_score, failures(result)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.kind == "mutant"],
                         ids=lambda e: f"{e.assignment}:{e.key}")
def test_mutant_loses_points_on_its_function_and_nowhere_else(entry):
    """The mutant's function loses points; every other graded function keeps all of its points
    (the reference code, which may call the mutant: the mistake is charged once), and a test that
    kept them only thanks to the course's function in place of the mutant says so."""
    result = grade.grade_local(entry.assignment, entry.namespace())
    exercise = result.exercises[entry.exercise]
    assert exercise["score"] < exercise["max_score"], (
        f"the suite gives full marks to a mutant that would {entry.description}")
    charged_twice = [f"{t.name}: {t.feedback}" for t in result.tests
                     if t.exercise != entry.exercise and not t.passed]
    assert not charged_twice, (f"the mistake of {entry.key} is charged again, to functions that "
                               f"are right:\n  " + "\n  ".join(charged_twice))
    for test in result.tests:
        if test.exercise != entry.exercise and test.feedback not in ("", suite.KERNEL_WORD):
            named = test.feedback.split(", which fail", 1)[0]
            assert f"`{entry.exercise}`" in named and "your `" in named, (test.name,
                                                                          test.feedback)


@pytest.mark.parametrize("assignment", ["02-scoring"])
def test_a_function_right_but_for_its_callee_says_so_and_keeps_its_points(assignment):
    """02's `align` calls `attend`: with a wrong `attend`, the reference `align` loses its points
    without the second chance, and keeps them with it, saying why in every test it kept."""
    found = COURSE.assignment(assignment)
    [entry] = [e for e in catalogue.mutants(found, "attend")][:1]
    without = grade.grade_local(found, entry.namespace(), retry=False)
    assert without.exercises["align"]["score"] < without.exercises["align"]["max_score"]
    result = grade.grade_local(found, entry.namespace())
    assert result.exercises["align"]["score"] == result.exercises["align"]["max_score"]
    assert result.exercises["attend"] == without.exercises["attend"]  # charged where it is
    kept = [t for t in result.tests_of("align")
            if not next(w for w in without.tests if w.name == t.name).passed]
    assert kept and all(t.feedback.startswith("`align` is right: it lost these points only "
                                              "because it uses your `attend`") for t in kept)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.kind == "alternative"],
                         ids=lambda e: f"{e.assignment}:{e.key}")
def test_alternative_keeps_full_marks(entry):
    result = grade.grade_local(entry.assignment, entry.namespace())
    assert result.score == result.max_score, (
        f"the suite takes points from a correct alternative ({entry.description}):\n"
        + failures(result))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_graded_function_has_three_mutants_and_an_alternative(assignment):
    exercises = graded_reference(assignment).exercises
    found = COURSE.assignment(assignment)
    for exercise in exercises:
        assert len(catalogue.mutants(found, exercise)) >= 3, f"{exercise}: fewer than 3 mutants"
        assert len(catalogue.alternatives(found, exercise)) >= 1, f"{exercise}: no alternative"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_catalogue_entries_name_graded_functions(assignment):
    exercises = set(graded_reference(assignment).exercises)
    for entry in catalogue.entries(COURSE.assignment(assignment)):
        assert entry.exercise in exercises, f"{entry.key} replaces an ungraded function"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_names_its_property(assignment):
    """Learners see test names: each must say which function and which property."""
    result = graded_reference(assignment)
    names = [t.name for t in result.tests]
    assert len(names) == len(set(names)), "two tests share a name"
    for test in result.tests:
        assert test.name.startswith(test.exercise + ": ")
        assert len(test.name) > len(test.exercise) + 8, f"{test.name!r} says too little"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_failing_test_never_shows_suite_code(assignment):
    """An unimplemented submission fails every test with a sentence, not a traceback of the suite."""
    result = grade.grade_local(COURSE.assignment(assignment), {})
    assert result.score == 0
    for test in result.tests:
        assert not test.passed
        assert "is not defined in your notebook" in test.feedback
        assert "def test_" not in test.feedback and "assert " not in test.feedback


STUBS = {  # what a learner who writes nothing real might hand in, for any signature
    "returns None": lambda *args, **kwargs: None,
    "returns its first argument": lambda *args, **kwargs: args[0] if args else None,
    "returns zeros like its first argument": lambda *args, **kwargs: __import__("numpy").zeros_like(
        __import__("numpy").asarray(args[0], dtype=float)) if args else 0.0,
    "returns 0": lambda *args, **kwargs: 0.0,
}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_stub_earns_nothing(assignment):
    """A graded function replaced by a stub (None, its first argument, zeros, 0) earns 0 points:
    no hygiene test (nothing changed in place, nothing printed) counts beside failing values
    (suite.hygiene_counts_with_values), and every test whose answer is 0 or the input itself has
    a control the stub fails. Only the stubbed function's tests are run: they are the ones asked
    about (test_mutant_loses_points_on_its_function_and_nowhere_else holds the others)."""
    found = COURSE.assignment(assignment)
    namespace = reference.namespace(found)
    earned = []
    for function in sorted({t.exercise for t in graded_reference(assignment).tests}):
        for label, stub in STUBS.items():
            tests = suite.run(found, suite.local_caller({**namespace, function: stub}), 120,
                              exercises=[function])
            assert tests and all(t.exercise == function for t in tests)
            got = [t.name for t in tests if t.score > 0]
            if got:
                earned.append(f"{function} {label}: {got}")
    assert earned == []


# ------------------------------------------------------------------ every suite uses the kit

KIT_NAMES = {"call", "expect_close", "expect_clean_call", "expect_clean", "expect_quiet",
             "expect_value", "score_function", "model", "lam"}


def definitions(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return tree, [node for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.parent.name)
def test_no_suite_defines_its_own_kit(path):
    _, functions = definitions(path)
    own = [f.name for f in functions if f.name in KIT_NAMES
           or (re.fullmatch(r"(\w+_)?softmax", f.name) and not f.name.startswith("test_"))]
    assert not own, f"{path.parent.name} defines {own}: use the kit's (autograder.kit) instead"


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.parent.name)
def test_no_suite_reads_the_text_of_an_error(path):
    """Suites branch on SubmissionError.kind and .cause, never on the words of its message."""
    tree, _ = definitions(path)
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"\bstr\((error|err|e|exc|forward_error|backward_error)\)", source)
    for handler in ast.walk(tree):
        if not isinstance(handler, ast.ExceptHandler):
            continue
        for node in ast.walk(handler):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
                    and isinstance(node.left.value, str) \
                    and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                raise AssertionError(f"{path.parent.name} line {node.lineno}: looks for words in "
                                     f"an error (compare error.kind / error.cause instead)")


def test_the_course_softmax_masks_and_gives_zeros_to_empty_rows_quietly():
    """This course's trusted softmax, in what its suites share (suites/attention_kit.py),
    imported as a suite imports it while it runs."""
    with suite.importable(COURSE.suites_folder):
        from attention_kit import softmax
    z = np.array([[1.0, 2.0, 3.0], [1e4, -1e4, 0.0], [-np.inf, -np.inf, -np.inf]])
    mask = np.array([True, True, False])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax(z)
        masked = softmax(z, mask=mask)
    assert np.allclose(p[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())
    assert np.allclose(p[1], [1, 0, 0]) and np.array_equal(p[2], np.zeros(3))
    assert masked[0, 2] == 0 and np.isclose(masked[0].sum(), 1)
    assert np.allclose(softmax(z[:2], axis=0).sum(axis=0), 1)
