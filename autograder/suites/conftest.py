"""Run a hidden suite on its own, against the reference solution or one catalogue entry.

    pytest autograder/suites/02-scoring                          # the reference: everything passes
    pytest autograder/suites/02-scoring --mutant no_max -x       # which tests this mutant fails
    pytest autograder/suites/02-scoring --alternative softmax/logsumexp

The ``submission`` fixture is then the reference namespace (or the entry's namespace, see
``catalogue.Entry.namespace``) called in this process through the same wire encoding and data-only
reader the grader uses (``suite.local_caller``), so a test sees what it sees when grading.

When the grader runs a suite (``suite.run``), its own plugin provides ``submission``; this file then
adds nothing: no fixture, no hook that acts.
"""
from pathlib import Path

import pytest

from autograder.engine import catalogue, reference, suite
from autograder.engine.assignment import Course

COURSE = Course.from_root(Path(__file__).resolve().parents[2])  # this file is <root>/autograder/suites/


def pytest_addoption(parser):
    group = parser.getgroup("hidden suite", "running a hidden suite on its own")
    group.addoption("--mutant", metavar="NAME", default=None,
                    help="grade this catalogued mutant of the suite's assignment (its name in "
                         "mutants.py, or function/name) instead of the reference solution")
    group.addoption("--alternative", metavar="NAME", default=None,
                    help="grade this catalogued correct alternative instead of the reference")


def pytest_configure(config):
    if any(isinstance(plugin, suite._Plugin) for plugin in config.pluginmanager.get_plugins()):
        return  # the grader is running this suite: it binds `submission` itself
    config.addinivalue_line("markers", "grade(points, exercise): points of a hidden-suite test")
    config.pluginmanager.register(Standalone(config), "hidden-suite-standalone")


def assignment_of(path):
    """The assignment a suite file belongs to: its folder's name."""
    return COURSE.assignment(path.parent.name)


class Standalone:
    """The ``submission`` fixture of a suite run by hand."""

    def __init__(self, config):
        self.kind = "mutant" if config.getoption("--mutant") else \
            "alternative" if config.getoption("--alternative") else None
        self.name = config.getoption("--mutant") or config.getoption("--alternative")
        if config.getoption("--mutant") and config.getoption("--alternative"):
            raise pytest.UsageError("give --mutant or --alternative, not both")
        self.namespaces = {}

    def pytest_collection_modifyitems(self, config, items):
        assignments = sorted({assignment_of(item.path).name for item in items})
        if self.kind is None:
            return
        if len(assignments) != 1:
            raise pytest.UsageError(f"--{self.kind} picks an entry of one suite, but these suites "
                                    f"were collected: {', '.join(assignments) or 'none'}")
        self.entry(COURSE.assignment(assignments[0]))  # an unknown name stops the run first

    def entry(self, assignment):
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

    def namespace(self, assignment):
        if assignment not in self.namespaces:
            entry = self.entry(assignment)
            self.namespaces[assignment] = (entry.namespace() if entry is not None
                                           else reference.namespace(assignment))
        return self.namespaces[assignment]

    @pytest.fixture(autouse=True)
    def running(self, request):
        """The suite's assignment, for the names the suite gives it (``mistakes(ASSIGNMENT, ...)``)."""
        with catalogue.running(assignment_of(request.path)) as assignment:
            yield assignment

    @pytest.fixture
    def submission(self, request):
        """The reference, or the chosen entry, behind the grader's own proxy."""
        return suite.Submission(suite.local_caller(self.namespace(assignment_of(request.path))))
