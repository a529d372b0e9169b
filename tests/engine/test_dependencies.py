"""What the second chance of a function that fails through another's mistake sends into a
learner's kernel: the least of the solution that defines the functions put in place, which runs
on its own (tests/engine/test_suites.py proves the grades; tests/engine/test_grading.py the
kernel's path)."""
import ast

import pytest

from autograder.engine import dependencies, grade, reference, suite
from support import ASSIGNMENTS, COURSE


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_only_the_functions_put_in_place_and_what_they_use_are_sent(assignment):
    found = COURSE.assignment(assignment)
    exercises = list(grade.grade_local(found, reference.namespace(found), retry=False).exercises)
    uses = dependencies._closed(dependencies.reference_uses(found, exercises))
    for exercise in exercises:
        text = dependencies.reference_source(found, [exercise])
        defined = {node.name for node in ast.parse(text).body
                   if isinstance(node, ast.FunctionDef)}
        assert exercise in defined
        assert defined & set(exercises) <= {exercise} | uses[exercise], (exercise, defined)
        namespace = {}
        exec(compile(text, "<sent>", "exec"), namespace)  # it runs on its own
        assert callable(namespace[exercise])


def test_a_second_chance_never_lowers_a_test_and_says_which_function_was_put_in_place():
    found = COURSE.assignment("02-scoring")
    namespace = reference.namespace(found)
    exec("def softmax(z, axis=-1):\n    return z\n", namespace)  # wrong: attend and align use it
    before = grade.grade_local(found, dict(namespace), retry=False)
    after = grade.grade_local(found, namespace)
    for old, new in zip(before.tests, after.tests):
        assert new.score >= old.score
    kept = [t for t in after.tests if t.exercise != "softmax"
            and t.feedback not in ("", suite.KERNEL_WORD)]
    assert kept and all("your `softmax`" in t.feedback for t in kept)
    assert after.exercises["softmax"] == before.exercises["softmax"]
