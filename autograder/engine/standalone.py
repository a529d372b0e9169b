"""Run a course's hidden suite on its own, against the reference solution or one catalogue entry:
the engine's pytest plugin, for every course.

    pytest suites/02-scoring                          # the reference: everything passes
    pytest suites/02-scoring --mutant no_max -x       # which tests this mutant fails
    pytest suites/02-scoring --alternative softmax/logsumexp

A course turns it on with one line in its suites folder's ``conftest.py``::

    from autograder.engine.standalone import pytest_addoption, pytest_configure  # noqa: F401

The course is the one whose ``pyproject.toml`` (``[tool.autograder]``) names the suites folder a
collected test file sits in (:func:`course_of`), whatever the folder's depth. The ``submission``
fixture is then the reference namespace (or the entry's namespace, see
:meth:`autograder.engine.catalogue.Entry.namespace`) called in this process through the same wire
encoding and data-only reader the grader uses (:func:`autograder.engine.suite.local_caller`), so a
test sees what it sees when grading.

When the grader runs a suite (:func:`autograder.engine.suite.run`), its own plugin provides
``submission``; this one then adds nothing: no fixture, no hook that acts. Run by hand, the
course's suites folder goes on the import path before a suite file is imported, so that a suite
imports what the course's suites share by name, as it does when graded.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from . import catalogue, reference, suite
from .assignment import LAYOUT_FILE, Assignment, Course

PLUGIN_NAME = "hidden-suite-standalone"


@functools.lru_cache(maxsize=None)
def course_of(folder: Path) -> Course:
    """The course whose suites folder holds ``folder`` (a suite's folder): the nearest folder
    above whose layout (its ``pyproject.toml``'s ``[tool.autograder]``, or the defaults) puts
    its suites around ``folder``."""
    folder = folder.resolve()
    for root in folder.parents:
        course = Course.from_root(root)
        if folder == course.suites_folder or course.suites_folder in folder.parents:
            return course
    raise pytest.UsageError(f"{folder} is not in the suites folder of any course (no folder "
                            f"above it lays its suites out there, by {LAYOUT_FILE} or by default)")


def assignment_of(path: Path) -> Assignment:
    """The assignment a suite file belongs to: its folder's name, in its course."""
    return course_of(path.parent).assignment(path.parent.name)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hidden suite", "running a hidden suite on its own")
    group.addoption("--mutant", metavar="NAME", default=None,
                    help="grade this catalogued mutant of the suite's assignment (its name in "
                         "mutants.py, or function/name) instead of the reference solution")
    group.addoption("--alternative", metavar="NAME", default=None,
                    help="grade this catalogued correct alternative instead of the reference")


def pytest_configure(config: pytest.Config) -> None:
    if suite.grading(config):
        return  # the grader is running this suite: it binds `submission` itself
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    config.addinivalue_line("markers", "grade(points, exercise): points of a hidden-suite test")
    config.pluginmanager.register(Standalone(config), PLUGIN_NAME)


class Standalone:
    """The ``submission`` fixture of a suite run by hand."""

    def __init__(self, config: pytest.Config) -> None:
        mutant, alternative = config.getoption("--mutant"), config.getoption("--alternative")
        if mutant and alternative:
            raise pytest.UsageError("give --mutant or --alternative, not both")
        self.kind = "mutant" if mutant else "alternative" if alternative else None
        self.name: str | None = mutant or alternative
        self.namespaces: dict[Assignment, dict[str, Any]] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> None:
        """Before a suite file is imported: its course's suites folder on the import path, for
        what the course's suites share (as :func:`suite.importable` does when grading)."""
        if file_path.suffix != ".py":
            return
        with contextlib.suppress(pytest.UsageError):
            folder = str(course_of(file_path.parent).suites_folder)
            if folder not in sys.path:
                sys.path.insert(0, folder)

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if self.kind is None:
            return
        assignments = sorted({assignment_of(item.path) for item in items}, key=lambda a: a.name)
        if len(assignments) != 1:
            raise pytest.UsageError(
                f"--{self.kind} picks an entry of one suite, but these suites were collected: "
                f"{', '.join(a.name for a in assignments) or 'none'}")
        self.entry(assignments[0])  # an unknown name stops the run first

    def entry(self, assignment: Assignment) -> catalogue.Entry | None:
        """The catalogue entry named on the command line (None for the reference)."""
        if self.kind is None:
            return None
        found = [e for e in catalogue.entries(assignment) if e.kind == self.kind]
        chosen = [e for e in found if self.name in (e.key, e.key.split("/", 1)[1])]
        if len(chosen) == 1:
            return chosen[0]
        why = "is ambiguous" if chosen else "is not"
        raise pytest.UsageError(
            f"{self.name!r} {why} a {self.kind} of {assignment.name}. Valid --{self.kind} names "
            f"(name or function/name):\n  " + "\n  ".join(e.key for e in found))

    def namespace(self, assignment: Assignment) -> dict[str, Any]:
        if assignment not in self.namespaces:
            entry = self.entry(assignment)
            self.namespaces[assignment] = (entry.namespace() if entry is not None
                                           else reference.namespace(assignment))
        return self.namespaces[assignment]

    @pytest.fixture(autouse=True)
    def running(self, request: pytest.FixtureRequest) -> Iterator[Assignment]:
        """The suite's assignment, for the names the suite gives it (``mistakes(ASSIGNMENT,
        ...)``)."""
        with catalogue.running(assignment_of(request.path)) as assignment:
            yield assignment

    @pytest.fixture
    def submission(self, request: pytest.FixtureRequest) -> suite.Submission:
        """The reference, or the chosen entry, behind the grader's own proxy."""
        return suite.Submission(suite.local_caller(self.namespace(assignment_of(request.path))))
