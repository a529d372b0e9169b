"""Fixtures shared by the project's tests."""
import os
import sys
from pathlib import Path

import pytest

from support import course_state  # noqa: F401

# nbgrader runs `alembic` by name; make the test environment's bin/ visible as `make` does.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")

# A course of its own for the end-to-end tests (tests/end_to_end/test_second_course.py): its hidden
# suite is graded by the engine, never collected as the project's tests.
collect_ignore = ["end_to_end/second-course"]


@pytest.fixture(scope="session")
def offline_demo():
    """`make demo` from a fresh clone with no package index (tests/support/demo_output.py), made
    once per test process for the tests that read it (the xdist group ``wheelhouse``)."""
    from support.demo_output import offline_demo, remove_offline_demo
    made = offline_demo()
    yield made
    remove_offline_demo(made)


@pytest.fixture(scope="session")
def feedback(tmp_path_factory):
    """The feedback pages of a class of two, graded once per test process for every test that
    reads them (tests/support/pages.py; those tests share a worker: ``pages.ON_THE_CLASS``)."""
    from support.pages import graded_feedback
    return graded_feedback(tmp_path_factory)


def pytest_collection_modifyitems(config, items):
    """The seed sweep of the notebooks' claims (``@pytest.mark.claim_sweep``) belongs to
    ``make claims`` (``CLAIM_SWEEP=1``): everywhere else it is deselected, so that ``make test``
    reports what it ran and nothing as skipped."""
    if os.environ.get("CLAIM_SWEEP") == "1":
        return
    kept, sweep = [], []
    for item in items:
        (sweep if item.get_closest_marker("claim_sweep") else kept).append(item)
    if sweep:
        config.hook.pytest_deselected(items=sweep)
        items[:] = kept
