"""Run a hidden suite of this course on its own, against the reference solution or one catalogue
entry (the engine's plugin, :mod:`autograder.engine.standalone`):

    pytest suites/02-scoring                          # the reference: everything passes
    pytest suites/02-scoring --mutant no_max -x       # which tests this mutant fails
    pytest suites/02-scoring --alternative softmax/logsumexp

When the grader runs a suite, its own plugin provides ``submission``; this file then adds nothing.
"""
from autograder.engine.standalone import pytest_addoption, pytest_configure  # noqa: F401
