"""The suite kit (autograder.kit; its code in autograder/engine/testing.py): what a hidden suite
imports to call the learner's functions and explain what is wrong. Every suite uses the kit's one
``call``, ``expect_close``, ``expect_clean_call`` and ``softmax`` rather than its own, and none reads
the English of an error (tests/assignments/test_suites.py holds every suite to it).
"""
import warnings

import numpy as np
import pytest

from autograder.engine import suite, testing
from autograder.engine.testing import SubmissionError


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


# ------------------------------------------------------------------ computed once per process

def test_a_trusted_value_is_computed_once_per_process_across_fresh_imports_of_its_suite(tmp_path):
    """A suite is imported afresh for every submission, so an lru_cache in it starts empty each
    time; ``computed_once`` keeps the value for the process, under the suite file's content: the
    same file imported again computes nothing, a changed file computes again, and no caller can
    change what the next one gets."""
    import importlib.util
    import sys

    source = tmp_path / "test_once.py"

    def imported(text):
        source.write_text(text)
        spec = importlib.util.spec_from_file_location(f"test_once_{len(counts)}", source)
        module = importlib.util.module_from_spec(spec)
        module.counts = counts
        spec.loader.exec_module(module)
        return module

    counts = []
    suite_text = ("from autograder.kit import computed_once\n"
                  "@computed_once\n"
                  "def expected(n, scale=1):\n"
                  "    counts.append(n)\n"
                  "    return {'values': [scale * i for i in range(n)]}\n")
    first = imported(suite_text)
    value = first.expected(3)
    assert value == {"values": [0, 1, 2]} and counts == [3]
    value["values"].append("changed by a test")
    again = imported(suite_text)  # the next submission's import of the same suite
    assert again.expected(3) == {"values": [0, 1, 2]} and counts == [3]
    assert again.expected(3, scale=2) == {"values": [0, 2, 4]} and counts == [3, 3]
    changed = imported(suite_text.replace("scale * i", "scale * i + 1"))  # the suite was edited
    assert changed.expected(3) == {"values": [1, 2, 3]} and counts == [3, 3, 3]
    assert "test_once_0" not in sys.modules


def test_no_more_than_a_bounded_number_of_values_is_kept(monkeypatch):
    monkeypatch.setattr(testing, "_computed", {})
    monkeypatch.setattr(testing, "MAX_COMPUTED", 4)
    calls = []

    @testing.computed_once
    def square(x):
        calls.append(x)
        return x * x

    assert [square(x) for x in range(6)] == [0, 1, 4, 9, 16, 25]
    assert len(testing._computed) == 4
    assert [square(x) for x in range(6)] == [0, 1, 4, 9, 16, 25]
    assert calls == [0, 1, 2, 3, 4, 5, 4, 5]  # the first four kept, the rest computed each time


def test_arrays_and_containers_of_them_are_keys_by_their_values(monkeypatch):
    monkeypatch.setattr(testing, "_computed", {})
    calls = []

    @testing.computed_once
    def total(X, params, names=()):
        calls.append(1)
        return float(X.sum() + sum(params[n].sum() for n in names))

    X, params = np.arange(6.0).reshape(2, 3), {"W": np.ones((2, 2)), "b": np.zeros(2)}
    assert total(X, params, ("W",)) == 19.0 and len(calls) == 1
    assert total(X.copy(), {k: v.copy() for k, v in params.items()}, ("W",)) == 19.0
    assert len(calls) == 1  # equal values, other objects: computed once
    for other in [(X + 1, params, ("W",)), (X.astype(np.float32), params, ("W",)),
                  (X.reshape(3, 2), params, ("W",)), (X, {**params, "W": 2 * params["W"]}, ("W",)),
                  (X, params, ["W"]), (X, params, ("W", "b"))]:
        total(*other)
    assert len(calls) == 7  # each differs in a value, a dtype, a shape or a container's kind
    with pytest.raises(TypeError):
        total(X, params, {"W"})  # a set is not a key: as unhashable as for lru_cache
