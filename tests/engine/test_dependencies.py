"""The second chance of a function that fails through another's mistake: which functions use
which (the course's word only), and the course's functions computed on the grader's side for a
learner's kernel (autograder/engine/oracle.py). The kernel's side of it is attacked in
tests/engine/test_grade_second_chance.py; tests/engine/test_suites.py proves the grades it gives."""
import json
import resource
import time

import numpy as np
import pytest

from autograder.engine import agent, dependencies, grade, reference, wire
from autograder.engine.oracle import Oracle
from autograder.engine.result import TestResult as Outcome
from support import ASSIGNMENTS, COURSE


def fail(exercise, name="a property"):
    return Outcome(f"{exercise}: {name}", exercise, 0.0, 1.0, "failed", "wrong", name)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_what_uses_what_is_read_from_the_reference_alone(assignment):
    """Every assignment's graph, from the reference code: a function "uses" only graded
    functions its reference looks up (through the reference's helpers)."""
    found = COURSE.assignment(assignment)
    exercises = list(grade.grade_local(found, reference.namespace(found), retry=False).exercises)
    namespace = reference.namespace(found)
    for exercise, used in dependencies.reference_uses(found, exercises).items():
        assert exercise not in used
        assert used <= set(exercises)
        names = dependencies._code_names(namespace[exercise].__code__)
        helpers = [n for n in names if callable(namespace.get(n)) and n not in exercises]
        assert used & names or helpers or not used, (exercise, used)


def test_names_a_learner_writes_make_no_function_use_another():
    """03's graded functions use none of each other in the course's code: however a learner's
    cells name them, two failing functions are never tried again with the other in place."""
    found = COURSE.assignment("03-qkv")
    tried = []

    def rerun(exercises, in_code, for_tests):
        tried.append((exercises, in_code, for_tests))
        return []
    results = [fail("padding_mask"), fail("soft_lookup"), fail("scaled_dot_product_attention")]
    assert dependencies.retry(found, results, rerun) == results
    assert tried == []


def test_a_function_is_tried_again_only_with_what_the_course_or_its_tests_say_it_uses():
    found = COURSE.assignment("02-scoring")
    tried = []

    def rerun(exercises, in_code, for_tests):
        tried.append((exercises, in_code, for_tests))
        return None
    results = [fail("softmax"), fail("dot_score"), fail("attend"), fail("align")]
    dependencies.retry(found, results, rerun)
    assert tried == [(["attend"], ["softmax"], []), (["align"], ["softmax", "attend"], [])]
    # what a hidden test called (the suite's own record) counts too, for its tests only: the
    # course's code of dot_score does not call softmax, so the learner's never gets it
    tried.clear()
    called = Outcome("dot_score: x", "dot_score", 0.0, 1.0, "failed", "", "x",
                     called=("dot_score", "softmax"))
    dependencies.retry(found, [fail("softmax"), called], rerun)
    assert tried == [(["dot_score"], [], ["softmax"])]


def test_a_second_chance_never_lowers_a_test_and_says_which_function_was_put_in_place():
    found = COURSE.assignment("02-scoring")
    namespace = reference.namespace(found)
    exec("def softmax(z, axis=-1):\n    return z\n", namespace)  # wrong: attend and align use it
    before = grade.grade_local(found, dict(namespace), retry=False)
    after = grade.grade_local(found, namespace)
    for old, new in zip(before.tests, after.tests):
        assert new.score >= old.score
    kept = [t for t in after.tests if t.exercise != "softmax"
            and t.feedback not in ("", "passed as reported by your kernel: in-place changes, "
                                   "warnings and prints are measured inside it, where the grader "
                                   "cannot check them")]
    assert kept and all("your `softmax`" in t.feedback for t in kept)
    assert after.exercises["softmax"] == before.exercises["softmax"]


# ---------------------------------------------------------------- the course's functions, computed here

@pytest.fixture
def oracle():
    found = Oracle(COURSE.assignment("04-scaling"), ["softmax_entropy", "softmax_jacobian"])
    yield found
    found.close()


def ask(oracle, name, *args, allowed={}, seconds=30, **kwargs):
    """A stand-in's request as the kernel's agent writes it, and the answer, decoded."""
    prompt = json.dumps({"oracle": name, "args": [agent.encode(a) for a in args],
                         "kwargs": {k: agent.encode(v) for k, v in kwargs.items()}})
    answer = json.loads(oracle.answer(prompt, allowed, time.monotonic() + seconds))
    if answer["ok"]:
        answer["value"] = wire.decode(answer["value"])
    return answer


def test_the_course_function_put_in_place_is_computed_on_the_graders_side(oracle):
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    answer = ask(oracle, "softmax_entropy", p)
    assert answer["ok"], answer
    assert np.allclose(answer["value"], [np.log(2), 0.0])
    jacobian = ask(oracle, "softmax_jacobian", p[0])["value"]
    assert np.allclose(jacobian, np.diag(p[0]) - np.outer(p[0], p[0]))


def test_only_functions_put_in_place_are_computed(oracle):
    for name in ("saturation_sweep", "dot_product_stats", "__import__", "open"):
        answer = ask(oracle, name, np.ones(3))
        assert not answer["ok"] and "only the functions put in place" in answer["message"]


@pytest.mark.parametrize("prompt", [
    "not json", "[1, 2]", '{"oracle": "softmax_entropy"}', '{"oracle": "softmax_entropy", '
    '"args": {"__ndarray__": "AAAA"}, "kwargs": {}}', "[" * 100_000, "[" + "[]," * 300_000 + "[]]"])
def test_a_request_that_is_not_plain_data_is_refused_with_a_sentence(oracle, prompt):
    answer = json.loads(oracle.answer(prompt, {}, time.monotonic() + 30))
    assert answer["ok"] is False and answer["message"]


def test_a_function_the_suite_did_not_pass_is_never_run_here(oracle, tmp_path):
    """The kernel may send function markers: only those of the call being answered, as the suite
    sent them, are rebuilt (from that text); a learner's function by name, or code of the
    kernel's, never is."""
    planted = tmp_path / "planted"
    evil = {"__lambda__": f"__import__('pathlib').Path({str(planted)!r}).write_text('x')"}
    suite_lambda = {"__lambda__": "lambda z: z * 2"}
    by_name = {"__function__": "softmax_entropy"}
    allowed = {wire.canonical(suite_lambda): suite_lambda, wire.canonical(by_name): by_name}
    for marker in (evil, {"__partial__": evil, "kwargs": {"__dict__": {}}}, by_name,
                   {"__suite_function__": 0}):
        prompt = json.dumps({"oracle": "softmax_entropy", "args": [marker], "kwargs": {}})
        answer = json.loads(oracle.answer(prompt, allowed, time.monotonic() + 30))
        assert answer["ok"] is False and "the functions the grader's tests passed" in \
            answer["message"]
    assert not planted.exists()


def test_an_allowed_suite_function_is_rebuilt_from_the_suites_own_text():
    found = Oracle(COURSE.assignment("02-scoring"), ["attend"])
    try:
        marker = {"__partial__": {"__lambda__": "lambda s, H, M: H @ M @ s"},
                  "kwargs": wire.encode_argument({"M": np.eye(2)})}
        s, H = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        prompt = json.dumps({"oracle": "attend", "args": [agent.encode(s), agent.encode(H), marker],
                             "kwargs": {}})
        allowed = {wire.canonical(m): m for m in wire.function_markers([marker])}
        answer = json.loads(found.answer(prompt, allowed, time.monotonic() + 30))
        context, weights = wire.decode(answer["value"])
        expected = np.exp(H @ s) / np.exp(H @ s).sum()
        assert np.allclose(weights, expected) and np.allclose(context, expected @ H)
    finally:
        found.close()


def test_a_computation_too_large_or_too_long_is_refused_and_the_grader_stays_small(oracle):
    """softmax_jacobian of 60,000 weights would need 29 GB: the child's memory limit refuses it;
    a deadline passed refuses the next one; the grader holds none of it."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    answer = ask(oracle, "softmax_jacobian", np.full(60_000, 1 / 60_000))
    assert answer["ok"] is False and "memory" in answer["message"]
    assert ask(oracle, "softmax_entropy", np.full((2, 3), 1 / 3))["ok"]  # it still answers
    slow = ask(oracle, "softmax_jacobian", np.full((40, 1500), 1 / 1500), seconds=0.05)
    assert slow["ok"] is False
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB
