"""The second chance of a function that fails through another's mistake
(autograder/engine/dependencies.py): which functions use which, the course's word only, and a
second chance that never lowers a test. The course's functions computed on the grader's side are
tested in tests/engine/test_oracle.py; the kernel's side of it is attacked in
tests/engine/test_grade_second_chance.py; tests/assignments/test_suites.py proves the grades it
gives."""
import pytest

from autograder.engine import dependencies, grade, reference
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
