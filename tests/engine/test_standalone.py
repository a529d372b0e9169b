"""Suites that run on their own (autograder/engine/standalone.py, the engine's pytest plugin).

A hidden suite runs by hand with ``pytest suites/NN-name``, against the reference, or
against one catalogue entry with ``--mutant NAME`` / ``--alternative NAME``; the grader's run of the
same suite is not affected.
"""
import os
import re
import subprocess
import sys

import pytest

from autograder.engine import catalogue, grade, reference, suite
from support import COURSE, REPO, SUITE_FILES


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
