"""Run this course's hidden suite by hand (``pytest suites/centering --mutant NAME``): the engine's
plugin, as every course turns it on."""
from autograder.engine.standalone import pytest_addoption, pytest_configure  # noqa: F401
