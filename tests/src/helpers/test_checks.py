"""The learners' checks (src/helpers/checks.py): a mistake named only when it is confirmed, and
what is wrong described in words otherwise."""
import numpy as np
import pytest

from helpers import checks


def test_expect_close_names_a_matching_mistake():
    with pytest.raises(checks.CheckFailed, match="This is what you get when you sum columns"):
        checks.expect_close([1.0, 2.0], [1.0, 3.0], "x", mistakes={"sum columns": [1.0, 2.0]})


def test_expect_close_reports_shape_nan_and_location():
    with pytest.raises(checks.CheckFailed, match=r"The shape of x should be \(2,\), not \(3,\)"):
        checks.expect_close(np.zeros(3), np.zeros(2), "x")
    with pytest.raises(checks.CheckFailed, match=r"The entry at index \(0,\) of x is nan"):
        checks.expect_close([np.nan, 1.0], [0.0, 1.0], "x")
    with pytest.raises(checks.CheckFailed, match=r"at index \(1,\) it is 5, expected 2"):
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "x")
    assert checks.expect_close([1.0, 2.0 + 1e-12], [1.0, 2.0], "x") is not None


def test_expect_close_describes_the_property_when_no_mistake_matches():
    weights = np.array([[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]])
    columns = weights / weights.sum(axis=0)              # normalised along axis 0 instead
    with pytest.raises(checks.CheckFailed, match=r"slices sum to 1 along axis 0, not along the last"):
        checks.expect_close(columns, weights, "w")
    with pytest.raises(checks.CheckFailed, match=r"multiplied by √2 ≈ 1.414"):
        checks.expect_close(np.sqrt(2) * np.array([1.0, -2.0, 3.0]), [1.0, -2.0, 3.0], "x")
    with pytest.raises(checks.CheckFailed, match=r"last two axes swapped"):
        checks.expect_close(np.array([[1.0, 2.0], [3.0, 4.0]]).T, [[1.0, 2.0], [3.0, 4.0]], "x")
    with pytest.raises(checks.CheckFailed) as caught:
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "x")
    assert "Your result" not in str(caught.value)      # nothing recognisable: no guess


def test_expect_sums_to_one_names_the_axis_that_does():
    rows = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert checks.expect_sums_to_one(rows, "w") is not None
    with pytest.raises(checks.CheckFailed, match=r"along the last axis \(-1\) should each sum to 1, "
                                                 r"but they sum to 1 along axis 0 instead"):
        checks.expect_sums_to_one(rows.T / rows.T.sum(axis=0), "w")
    with pytest.raises(checks.CheckFailed, match=r"the one at index \(1,\) sums to 0"):
        checks.expect_sums_to_one([[0.5, 0.5], [0.0, 0.0], [1.0, 0.0]], "w")
    checks.expect_sums_to_one([[0.5, 0.5], [0.0, 0.0]], "w", allow_zero=True)


class Confirming(dict):
    """A mistake table that confirms only the descriptions it is told to."""

    def __init__(self, results, confirmed):
        super().__init__(results)
        self.confirmed = confirmed

    def confirm(self, description):
        return description in self.confirmed


def test_a_mistake_is_named_only_when_it_is_confirmed():
    table = {"forget to renormalise": [0.0, 0.0], "read the mask backwards": [0.0, 0.0]}
    assert checks.name_mistake([0.0, 0.0], table) == "forget to renormalise"
    assert checks.name_mistake([0.0, 0.0], Confirming(table, set())) is None
    assert checks.name_mistake([0.0, 0.0], Confirming(table, {"read the mask backwards"})) == \
        "read the mask backwards"
    both = checks.name_mistake([0.0, 0.0], Confirming(table, set(table)))   # cannot be told apart
    assert both == "forget to renormalise, or when you read the mask backwards"
    with pytest.raises(checks.CheckFailed) as caught:
        checks.expect_close([0.0, 0.0], [0.5, 0.5], "w", mistakes=Confirming(table, set()))
    assert "This is what you get" not in str(caught.value)


def test_checks_name_the_case_whose_call_raised():
    with pytest.raises(checks.CheckFailed, match=r"^dot_score on a batch raised ValueError: "
                                                  r"operands .*\(2,2\)\. Add an axis\.$"):
        with checks.case("dot_score on a batch", "Add an axis."):
            np.ones((2, 3, 2)) * np.ones((2, 2))
    with pytest.raises(checks.CheckFailed, match="^as it was$"):
        with checks.case("anything"):
            checks.fail("as it was")
