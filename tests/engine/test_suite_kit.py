"""The suite kit (autograder.kit; its code in autograder/engine/testing.py) and suites that run on
their own.

A hidden suite runs by hand with ``pytest suites/NN-name``, against the reference, or
against one catalogue entry with ``--mutant NAME`` / ``--alternative NAME``; the grader's run of the
same suite is not affected. Every suite uses the kit's one ``call``, ``expect_close``,
``expect_clean_call`` and ``softmax`` rather than its own, and none reads the English of an error.
"""
import ast
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from autograder.engine import catalogue, grade, reference, suite, testing
from autograder.engine.testing import SubmissionError
from support import COURSE, REPO

SUITE_FILES = sorted(COURSE.suites_folder.glob("*/test_*.py"))


def run_suite(*args):
    """``pytest suites/<...>`` in a subprocess, as someone fixing a suite types it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "src")]
                                        + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-rf",
                           "-p", "no:cacheprovider", "-p", "no:randomly"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def failed_tests(output):
    return {re.sub(r"\[.*$", "", m) for m in re.findall(r"^FAILED \S+::(\S+)", output, re.M)}


# ------------------------------------------------------------------ suites that run alone

def test_a_suite_runs_alone_against_the_reference():
    result = run_suite("suites/02-scoring")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"\b42 passed\b", result.stdout), result.stdout[-500:]


@pytest.mark.parametrize("folder", [p.parent.name for p in SUITE_FILES])
def test_every_suite_runs_alone_and_passes_against_its_reference(folder):
    result = run_suite(f"suites/{folder}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = COURSE.assignment(folder)
    count = len(grade.grade_local(found, reference.namespace(found)).tests)
    assert re.search(rf"\b{count} passed\b", result.stdout), result.stdout[-500:]


def test_a_suite_runs_alone_against_a_mutant_and_fails_its_function():
    result = run_suite("suites/02-scoring", "--mutant", "dot_score/scaled")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    failed = failed_tests(result.stdout)
    assert failed and all(name.startswith("test_dot_") for name in failed), failed


def test_a_mutant_fails_the_same_tests_alone_as_when_graded():
    """The standalone fixture binds the entry exactly as the grader's proxy does."""
    scoring = COURSE.assignment("02-scoring")
    entry = next(e for e in catalogue.entries(scoring) if e.key == "softmax/no_max")
    graded = grade.grade_local(scoring, entry.namespace(), retry=False)  # the suite alone
    graded_failures = {t.name for t in graded.tests if not t.passed}
    result = run_suite("suites/02-scoring", "--mutant", "no_max")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert any(name.startswith("test_softmax_") for name in failed_tests(result.stdout))
    assert len(re.findall(r"^FAILED ", result.stdout, re.M)) == len(graded_failures), (
        result.stdout[-3000:], graded_failures)


def test_a_suite_runs_alone_against_an_alternative():
    result = run_suite("suites/02-scoring", "--alternative", "softmax/log_sum_exp")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.parametrize("option", ["--mutant", "--alternative"])
def test_an_unknown_entry_is_a_usage_error_listing_the_valid_names(option):
    result = run_suite("suites/02-scoring", option, "no_such_entry")
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    kind = option.lstrip("-")
    assert f"'no_such_entry' is not a {kind} of 02-scoring" in result.stderr
    for entry in catalogue.entries(COURSE.assignment("02-scoring")):
        assert (entry.key in result.stderr) == (entry.kind == kind), entry.key


def test_the_grader_is_not_affected_by_the_standalone_fixture():
    """When the grader runs a suite its own `submission` is used: an empty notebook gets 0."""
    results = suite.run(COURSE.assignment("02-scoring"), suite.local_caller({}))
    assert results and all(r.status == "failed" for r in results)
    assert all("is not defined in your notebook" in r.feedback for r in results)


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


# ------------------------------------------------------------------ the kit itself

def proxy(namespace):
    return suite.Submission(suite.local_caller(namespace))


def test_submission_errors_have_a_kind_and_a_cause():
    def not_yet(x):
        raise NotImplementedError()

    submission = proxy({"product": lambda A, B: A @ B, "add": lambda a, b: a + b,
                        "pick": lambda a: a.sum(axis=3), "not_yet": not_yet})
    cases = [(lambda: submission.missing(1), "missing", None),
             (lambda: submission.not_yet(1), "not-implemented", None),
             (lambda: submission.product(np.ones((2, 3)), np.ones((2, 3))), "raised", "matmul"),
             (lambda: submission.add(np.ones(3), np.ones(4)), "raised", "broadcast"),
             (lambda: submission.pick(np.ones(3)), "raised", "out-of-bounds")]
    for make_call, kind, cause in cases:
        with pytest.raises(SubmissionError) as caught:
            make_call()
        assert (caught.value.kind, caught.value.cause) == (kind, cause), str(caught.value)
    with pytest.raises(SubmissionError) as caught:
        submission.add(np.ones(3), np.ones(4))
    assert caught.value.exception == "ValueError" and caught.value.function == "add"


def test_call_adds_a_hint_to_a_raised_error_only():
    submission = proxy({"add": lambda a, b: a + b})
    with pytest.raises(SubmissionError, match=r"raised ValueError.* Mind the shapes\.$"):
        testing.call(submission, "add", np.ones(3), np.ones(4), hint="Mind the shapes.")
    with pytest.raises(SubmissionError) as caught:
        testing.call(submission, "missing", 1, hint="Mind the shapes.")
    assert "Mind the shapes" not in str(caught.value) and caught.value.kind == "missing"
    with pytest.raises(SubmissionError, match=r"broadcast$"):
        testing.call(submission, "add", np.ones(3), np.ones(4), hint=lambda error: error.cause)
    assert testing.call(submission, "add", 1.0, 2.0, hint="unused") == 3.0


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


def test_what_a_course_suites_share_is_importable_only_while_a_suite_runs():
    """suite.importable puts the suites folder on the path and forgets its modules afterwards,
    so that an edited module is read again and another course's module of that name is its own."""
    assert [p.name for p in COURSE.suite_support()] == ["attention_kit.py"]
    with suite.importable(COURSE.suites_folder):
        import attention_kit
        assert attention_kit.__file__ == str(COURSE.suites_folder / "attention_kit.py")
    assert "attention_kit" not in sys.modules
    assert str(COURSE.suites_folder) not in sys.path
    with pytest.raises(ImportError):
        import attention_kit  # noqa: F401, F811


def test_expect_clean_call_ignores_underflow_and_uses_the_function_hint():
    class Last:
        warnings, mutated, stdout = [], [], ""

    class Fake:
        last = Last()

    Fake.last.warnings = ["RuntimeWarning: underflow encountered in exp"]
    testing.expect_clean_call(Fake, "f")
    Fake.last.warnings = ["RuntimeWarning: divide by zero encountered in log"]
    with pytest.raises(testing.Feedback, match=r"must not produce warnings\.$"):
        testing.expect_clean_call(Fake, "f")  # the kit knows no course: no hint of its own
    with pytest.raises(testing.Feedback, match=r"must not produce warnings\. Avoid log\(0\)\.$"):
        testing.expect_clean_call(Fake, "f", hint=lambda w: "Avoid log(0)." if "log" in w else None)
    Fake.last.warnings, Fake.last.mutated = [], [1]
    with pytest.raises(testing.Feedback, match=r"argument number 2 in place.*\(use a copy\)"):
        testing.expect_clean_call(Fake, "f", copy_hint="use a copy")


def test_expect_close_names_a_mistake_behind_a_wrong_shape():
    with pytest.raises(testing.Feedback, match="This is what you get when you transpose it"):
        testing.expect_close(np.ones((3, 2)), np.ones((2, 3)), "f(x)",
                             mistakes={"transpose it": np.ones((3, 2))})


def test_matching_mistakes_takes_a_predicate():
    z = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    scoring = COURSE.assignment("02-scoring")
    wrong_rows = catalogue.matching_mistakes(
        scoring, "softmax", [((z,), {"axis": 0}, lambda p: not np.allclose(p.sum(axis=0), 1))])
    assert wrong_rows and "ignore the axis argument" in wrong_rows
    assert catalogue.matching_mistakes(scoring, "softmax", [((z,), {}, lambda p: False)]) is None
