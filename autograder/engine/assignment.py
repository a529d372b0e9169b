"""An assignment: where its release, solution and hidden suite are, and the version of its grading.

The version is what a kept result is keyed by: it changes when anything grading depends on
changes (the suite and its catalogue, the solution the reference is read from, the release notebook
whose locked cells are restored, the modules that run a notebook and score it), and only then, so
editing the demo, the report or the command line keeps every cached result.
"""
import dataclasses
import functools
import hashlib
from pathlib import Path

from . import reference

PACKAGE = Path(__file__).resolve().parents[1]
SUITES = PACKAGE / "suites"
# The modules a score depends on. Others (demo, report, bench, course, the command line, the
# output formats) only move results around.
GRADING_MODULES = ("engine/agent.py", "engine/catalogue.py", "engine/flags.py", "engine/grade.py",
                   "engine/kernel.py", "sandbox/launcher.py", "engine/notebook.py", "engine/relay.py",
                   "sandbox/confinement.py", "engine/suite.py", "engine/testing.py", "engine/wire.py")


@dataclasses.dataclass(frozen=True)
class Assignment:
    name: str

    @property
    def release(self):
        """The learner's notebook as nbgrader released it."""
        return reference.release_notebook(self.name)

    @property
    def solution(self):
        return reference.solution_notebook(self.name)

    @property
    def suite(self):
        """The folder of the hidden suite, its mutants and its alternatives."""
        return SUITES / self.name

    @property
    def version(self):
        return version(self.name)

    @classmethod
    def detect(cls, path):
        """The assignment a notebook belongs to: the folder it sits in (nbgrader's layout), else
        its file name. Raises LookupError with a sentence when neither tells."""
        known = reference.assignments()
        path = Path(path)
        if path.parent.name in known:
            return cls(path.parent.name)
        for name in known:
            if reference.solution_notebook(name).name == path.name:
                return cls(name)
        raise LookupError(f"cannot tell which assignment {path} belongs to; pass --assignment "
                          f"(one of {', '.join(known)})")

    @classmethod
    def all(cls):
        return [cls(name) for name in reference.assignments()]


@functools.lru_cache(maxsize=None)
def version(name):
    """A digest of everything a score of assignment ``name`` depends on."""
    digest = hashlib.sha256()
    files = sorted((SUITES / name).rglob("*.py"))
    files += [reference.solution_notebook(name), reference.release_notebook(name)]
    files += [PACKAGE / module for module in GRADING_MODULES]
    files += sorted((reference.REPO / "src" / "helpers").glob("*.py"))  # checks run in suites
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
