"""Running a hidden suite and scoring it test by test (autograder/engine/suite.py)."""
import pytest

from autograder.engine import grade, reference, suite
from support import COURSE
from support.attacks import ASSIGNMENT, FULL


@pytest.mark.slow
def test_what_rests_on_the_kernels_word_is_labelled():
    found = COURSE.assignment(ASSIGNMENT)
    result = grade.grade_local(found, reference.namespace(found))
    labelled = [t for t in result.tests if t.feedback == suite.KERNEL_WORD]
    assert result.score == FULL and labelled
    assert all(t.passed for t in labelled)
    names = {t.name for t in labelled}
    assert any("unchanged" in n or "warning" in n for n in names), names
    assert any(t.feedback == "" for t in result.tests), "a test that reads only values is unlabelled"
