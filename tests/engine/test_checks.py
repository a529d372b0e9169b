"""The hidden suites' checks (autograder.engine.checks, the trusted side's, which imports nothing
of any course) and this course's visible checks (helpers.checks, run in the learner's kernel) say
the same thing in the same words on the same input: hidden and visible checks speak alike."""
import numpy as np
import pytest
from helpers import checks as visible

from autograder.engine import checks as hidden

ROWS = np.array([[0.2, 0.8], [0.5, 0.5]])
TRANSPOSABLE = np.array([[0.1, 0.9, 0.0], [0.3, 0.3, 0.4], [0.6, 0.1, 0.3]])

# (function name, positional arguments, keyword arguments): each fails, or returns, the same way
CASES = [
    ("expect_shape", (np.zeros(3), (2,), "x"), {}),
    ("expect_shape", (np.zeros((2, 2)), (2, 2), "x"), {}),
    ("expect_finite", (np.array([1.0, np.nan]), "x"), {}),
    ("expect_finite", (np.array([[1.0, 2.0], [np.inf, 0.0]]), "weights"), {}),
    ("expect_dtype", (np.zeros(2, np.float32), np.float64, "x"), {}),
    ("expect_sums_to_one", (ROWS.T, "weights"), {}),
    ("expect_sums_to_one", (ROWS * 2, "weights"), {}),
    ("expect_sums_to_one", (np.array([[0.5, 0.5], [0.0, 0.0]]), "w"), {"allow_zero": True}),
    ("expect_close", (np.array([1.0, 5.0]), np.array([1.0, 2.0]), "x"), {}),
    ("expect_close", (ROWS.T, ROWS, "weights"), {}),
    ("expect_close", (TRANSPOSABLE.T, TRANSPOSABLE, "weights"), {}),
    ("expect_close", (np.array([2.0, -4.0, 6.0]), np.array([1.0, -2.0, 3.0]), "y"), {}),
    ("expect_close", (np.array([1.0, 2.0]) / np.sqrt(8), np.array([1.0, 2.0]), "y"), {}),
    ("expect_close", (-np.array([1.0, 2.0]), np.array([1.0, 2.0]), "y"), {}),
    ("expect_close", (np.array([1.0, np.nan]), np.array([1.0, 2.0]), "y"), {}),
    ("expect_close", (np.array(["a", "b"]), np.array([1.0, 2.0]), "y"), {}),
    ("expect_close", (np.array([3.0, 3.0]), np.array([1.0, 2.0]), "y"),
     {"mistakes": {"forget to divide": np.array([3.0, 3.0])}}),
    ("expect_close", (np.array([1.0, 2.0 + 1e-9]), np.array([1.0, 2.0]), "y"), {}),
    ("check", (False, "the reason"), {}),
    ("check", (True, "the reason"), {}),
]


def outcome(module, name, args, kwargs):
    try:
        getattr(module, name)(*args, **kwargs)
    except AssertionError as error:
        return type(error).__name__.replace("CheckFailed", "Feedback"), str(error)
    return "returned", None


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                           enumerate(CASES)])
def test_hidden_and_visible_checks_say_the_same(name, args, kwargs):
    assert outcome(hidden, name, args, kwargs) == outcome(visible, name, args, kwargs)


def test_the_cases_fail_where_they_should():
    """The comparison above is not of two silences: most cases fail, with a sentence."""
    failed = [outcome(hidden, *case)[1] for case in CASES]
    assert sum(message is not None for message in failed) >= len(CASES) - 4


def test_both_name_a_mistake_confirmed_on_a_second_input_and_describe_the_rest():
    class Confirming(dict):
        def confirm(self, description):
            return description == "sum columns"

    mistakes = Confirming({"sum columns": np.array([3.0, 3.0]), "coincide": np.array([3.0, 3.0])})
    for module in (hidden, visible):
        assert module.name_mistake(np.array([3.0, 3.0]), mistakes, np.array([1.0, 2.0])) \
            == "sum columns"
        assert module.describe_difference(np.array([2.0, 4.0]), np.array([1.0, 2.0])) \
            == "Your result is the expected one multiplied by 2 everywhere."


def test_the_engine_checks_import_nothing_of_a_course():
    source = (hidden.__file__ and open(hidden.__file__).read())
    assert "import helpers" not in source and "from helpers" not in source
