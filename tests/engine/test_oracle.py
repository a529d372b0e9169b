"""The course's functions computed on the grader's side for a learner's kernel
(autograder/engine/oracle.py): only those put in place, only on plain data, only with the functions
the suite passed, and within the child's memory and time."""
import json
import resource
import time

import numpy as np
import pytest

from autograder.engine import agent, wire
from autograder.engine.oracle import Oracle
from support import COURSE


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
    '"args": {"__ndarray__": "AAAA"}, "kwargs": {}}', "[" * 100_000, "[" + "[]," * 300_000 + "[]]"],
    ids=["not json", "a list", "no args", "an array marker", "100,000 brackets",
         "300,000 empty lists"])  # a test's id is its prompt otherwise, up to 900 kB of it
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
