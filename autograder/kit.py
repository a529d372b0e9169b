"""The suite kit: the one module a hidden suite, its mutants and its alternatives import from the
grading engine (``from autograder.kit import ...``).

Everything here is defined in the engine (:mod:`autograder.engine.testing` for calling the
learner's functions and checking what comes back, :mod:`autograder.engine.checks` for the checks
and their messages, :mod:`autograder.engine.catalogue` for the catalogue of known mistakes and
correct alternatives, :mod:`autograder.engine.wire` for the markers of functions passed as
arguments); this path stays the same wherever those modules move. Nothing here belongs to one
course: what a course's suites share beyond the kit lives in a module at the top of its suites
folder (this course's: ``suites/attention_kit.py``). docs/authoring.md, "The suite kit", says
which to use for what.
"""
from .engine.catalogue import alternative, matching_mistakes, mistakes, mutant, mutants
from .engine.checks import (check, describe_difference, expect_dtype, expect_finite, expect_shape,
                            expect_sums_to_one, fail, name_mistake)
from .engine.testing import (CAUSES, COPY_HINT, KINDS, Feedback, SubmissionError, as_array,
                             as_float, as_pair, call, central_differences, computed_once,
                             expect_clean_call, expect_close, expect_plain_cache,
                             forward_for_backward, points, suite_function)
from .engine.wire import RNG, Function, Lambda, Partial, Unsupported

__all__ = [
    "CAUSES", "COPY_HINT", "KINDS", "Feedback", "Function", "Lambda", "Partial", "RNG",
    "SubmissionError", "Unsupported", "alternative", "as_array", "as_float", "as_pair", "call",
    "central_differences", "check", "computed_once", "describe_difference", "expect_clean_call",
    "expect_close", "expect_dtype", "expect_finite", "expect_plain_cache", "expect_shape",
    "expect_sums_to_one", "fail", "forward_for_backward", "matching_mistakes", "mistakes",
    "mutant", "mutants", "name_mistake", "points", "suite_function"]
