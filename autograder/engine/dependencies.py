"""No double penalty: a mistake is charged once, to the graded function that makes it.

Graded functions use one another: ``align`` calls ``attend``, a backward pass's tests run the
learner's forward pass. When ``attend`` is wrong, a correct ``align`` fails too. After the suite
has run, every graded function that failed a test while a graded function it uses also failed is
tested again with the course's version of those functions in place of the learner's. A test that
passes then *keeps its points*, and its feedback says why: the function is right, and the
mistake is counted where it is made. A test that still fails says it was checked with the
course's functions in place, so that what is left is the function's own.

The rule: points come back only to a test of the learner's function that passes *given correct
functions to call*. How the course's functions are put in place is the caller's
(:data:`Rerun`): in a learner's kernel, stand-ins whose every call the grader computes on its
side, each second chance in a new kernel (:meth:`autograder.engine.grade.Execution.rerun`,
:mod:`autograder.engine.oracle`); for the catalogue's trusted namespaces, the reference's own
functions (:func:`local_rerun`).

"Uses" comes from the course, never from the learner: from the reference code of the function
(the names it looks up, through the reference's own helpers) and from the names the hidden tests
of the function called. What a learner writes in a cell (a name in a comment, a call) changes
nothing. No point is ever taken away by this step: a test keeps the better of its two outcomes.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import types
from typing import Any, Callable, Iterable

from . import notebook, reference
from .assignment import Assignment
from .result import TestResult

#: Failures that say nothing about the function's code (the kernel could not run the call), and
#: so are not tried again.
UNUSABLE = ("timeout", "crashed", "unavailable", "out-of-time", "missing", "bad-reply")

#: ``rerun(exercises, substitutes)``: the tests of ``exercises`` run again with the reference of
#: each function in ``substitutes`` in place of the learner's; None when that could not be done.
Rerun = Callable[[list[str], list[str]], "list[TestResult] | None"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


_reference_uses: dict[tuple[Assignment, tuple[Any, ...], frozenset[str]], dict[str, set[str]]] = {}


def reference_uses(assignment: Assignment, exercises: Iterable[str]) -> dict[str, set[str]]:
    """For each graded function, the other graded functions its reference code looks up, directly
    or through the reference's helpers (functions it defines that are not graded)."""
    exercises = set(exercises)
    key = (assignment, tuple(reference.compiled(assignment)), frozenset(exercises))
    if key not in _reference_uses:
        _reference_uses[key] = _uses_in(reference.namespace(assignment), exercises)
    return {name: set(used) for name, used in _reference_uses[key].items()}


def _uses_in(namespace: dict[str, Any], exercises: set[str]) -> dict[str, set[str]]:
    uses: dict[str, set[str]] = {}
    for exercise in exercises:
        found: set[str] = set()
        seen: set[str] = set()
        todo = [exercise]
        while todo:
            name = todo.pop()
            function = namespace.get(name)
            if name in seen or not isinstance(function, types.FunctionType):
                continue
            seen.add(name)
            for used in _code_names(function.__code__):
                if used in exercises:
                    found.add(used)
                elif isinstance(namespace.get(used), types.FunctionType):
                    todo.append(used)  # a helper of the reference's: what it uses, this uses
        found.discard(exercise)
        uses[exercise] = found
    return uses


def _closed(uses: dict[str, set[str]]) -> dict[str, set[str]]:
    """What each function uses, directly or through the graded functions it uses: ``align``
    uses ``attend``, which uses ``softmax``, so a wrong ``softmax`` is named to ``align`` too."""
    closed = {name: set(used) for name, used in uses.items()}
    changed = True
    while changed:
        changed = False
        for name, used in closed.items():
            more = set().union(*(closed.get(u, set()) for u in used)) - used - {name}
            if more:
                used |= more
                changed = True
    return closed


def _failed(tests: list[TestResult]) -> bool:
    return any(not t.passed for t in tests)


def _quoted(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _yours(names: list[str]) -> str:
    """'your `attend`, which fails its own tests' (or the plural)."""
    if len(names) == 1:
        return f"your {_quoted(names)}, which fails its own tests"
    return f"your {_quoted(names)}, which fail their own tests"


def restored_feedback(exercise: str, substitutes: list[str], all_pass: bool) -> str:
    """What a test that passes only with the reference in place tells the learner."""
    theirs = _yours(substitutes)
    if all_pass:
        return (f"`{exercise}` is right: it lost these points only because it uses {theirs}. "
                f"Checked with the course's {_quoted(substitutes)} in place of yours, it passes, "
                f"so it keeps its points; the mistake is counted once, where it is.")
    return (f"This passes with the course's {_quoted(substitutes)} in place of {theirs}, so it "
            f"keeps its points; the mistake is counted once, where it is.")


def still_failing_feedback(feedback: str, substitutes: list[str]) -> str:
    return (f"{feedback} (This was checked again with the course's {_quoted(substitutes)} in place "
            f"of yours, which {'fails its' if len(substitutes) == 1 else 'fail their'} own tests: "
            f"this mistake is in this function.)")


def retry(assignment: Assignment, results: list[TestResult], rerun: Rerun) -> list[TestResult]:
    """``results`` with each test of a function that failed because of another's mistake given
    back its points (see the module's description)."""
    order: list[str] = []
    for test in results:
        if test.exercise not in order:
            order.append(test.exercise)
    by_exercise = {e: [t for t in results if t.exercise == e] for e in order}
    failing = {e for e, tests in by_exercise.items() if _failed(tests)}
    if len(failing) < 2:
        return results
    uses = reference_uses(assignment, order)
    for test in results:
        uses[test.exercise] |= set(test.called) - {test.exercise}
    uses = _closed(uses)
    # Functions that need the same substitutes are tested again together, in one run.
    groups: dict[tuple[str, ...], list[str]] = {}
    for exercise in order:
        substitutes = tuple(e for e in order if e in uses[exercise] and e in failing)
        failed = [t for t in by_exercise[exercise] if not t.passed]
        if substitutes and failed and not all(t.kind in UNUSABLE for t in failed):
            groups.setdefault(substitutes, []).append(exercise)
    replaced: dict[str, list[TestResult]] = {}
    for substitutes, exercises in groups.items():
        again = rerun(exercises, list(substitutes))
        if again is None:
            continue
        for exercise in exercises:
            replaced[exercise] = _merge(exercise, by_exercise[exercise], list(substitutes),
                                        [t for t in again if t.exercise == exercise])
    return [t for e in order for t in replaced.get(e, by_exercise[e])]


def _merge(exercise: str, tests: list[TestResult], substitutes: list[str],
           again: list[TestResult]) -> list[TestResult]:
    """Each test keeps the better of its two outcomes, saying why when the second one counts."""
    second = {t.name: t for t in again}
    all_pass = all(t.passed for t in second.values()) and len(second) == len(tests)
    merged = []
    for test in tests:
        other = second.get(test.name)
        if test.passed or other is None:
            merged.append(test)
        elif other.passed:
            merged.append(dataclasses.replace(
                test, score=test.max_score, status="passed",
                feedback=restored_feedback(exercise, substitutes, all_pass)))
        elif other.kind not in UNUSABLE:  # its own message, which names its first mistake
            merged.append(dataclasses.replace(
                test, feedback=still_failing_feedback(test.feedback, substitutes)))
        else:
            merged.append(test)
    return merged


def local_rerun(assignment: Assignment, namespace: dict[str, Any], run: Callable[
        [dict[str, Any], list[str]], list[TestResult]]) -> Rerun:
    """A :data:`Rerun` for functions in a trusted namespace of this process (the catalogue's)."""
    references: dict[str, Any] = {}

    def rerun(exercises: list[str], substitutes: list[str]) -> list[TestResult]:
        if not references:
            references.update(reference.namespace(assignment))
        # Functions defined in ``namespace`` look their names up in it: swap there, then restore.
        saved = {name: namespace.get(name) for name in substitutes}
        namespace.update({name: references[name] for name in substitutes})
        try:
            return run(namespace, exercises)
        finally:
            for name, function in saved.items():
                if function is None:
                    namespace.pop(name, None)
                else:
                    namespace[name] = function
    return rerun
