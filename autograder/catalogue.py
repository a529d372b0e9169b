"""Known wrong implementations (mutants) and correct alternatives of graded functions.

Each assignment's suite folder holds ``mutants.py`` and ``alternatives.py``: plain functions, each
decorated with the graded function it replaces and a description. A mutant's description completes
the sentence "This is what you get when you ...", so the same catalogue that proves a suite's
strength names the learner's likely mistake in feedback.

An entry's source (without its decorator) is executed in a namespace holding the reference
solution, exactly as a learner's cell would be, so an entry may call other graded functions.
"""
import ast
import copy
import dataclasses
import functools
import importlib.util
import inspect
import textwrap
import warnings
from pathlib import Path

import numpy as np

from . import reference

SUITES = Path(__file__).resolve().parent / "suites"


@dataclasses.dataclass(frozen=True)
class Entry:
    exercise: str       # the graded function this replaces
    description: str
    source: str         # a plain ``def <exercise>(...)`` as a learner would write it
    kind: str           # "mutant" or "alternative"
    assignment: str
    key: str            # unique id, e.g. "softmax/no_max_subtraction"

    def namespace(self):
        """The reference namespace with this entry in place of its graded function (the other
        reference functions call the entry, as they would call a learner's function)."""
        namespace = reference.namespace(self.assignment)
        exec(compile(self.source, f"<{self.key}>", "exec"), namespace)
        return namespace


_registry = []


def _register(kind, exercise, description):
    def decorate(function):
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
        definition = tree.body[0]
        definition.decorator_list = []
        definition.name = exercise
        _registry.append((kind, exercise, description, ast.unparse(definition), function.__name__))
        return function
    return decorate


def mutant(exercise, description):
    return _register("mutant", exercise, description)


def alternative(exercise, description):
    return _register("alternative", exercise, description)


def with_source(namespace, source):
    """Execute ``source`` (a learner-style definition) into ``namespace`` and return it; the
    functions already there then call the new definition."""
    exec(compile(source, "<catalogue>", "exec"), namespace)
    return namespace


@functools.lru_cache(maxsize=None)
def entries(assignment):
    """All catalogue entries of an assignment, in file order."""
    found = []
    for kind in ("mutants", "alternatives"):
        path = SUITES / assignment / f"{kind}.py"
        if not path.exists():
            continue
        del _registry[:]
        spec = importlib.util.spec_from_file_location(f"_catalogue_{assignment}_{kind}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for entry_kind, exercise, description, source, name in _registry:
            found.append(Entry(exercise, description, source, entry_kind, assignment,
                               f"{exercise}/{name}"))
        del _registry[:]
    return tuple(found)


def mutants(assignment, exercise=None):
    return [e for e in entries(assignment) if e.kind == "mutant"
            and (exercise is None or e.exercise == exercise)]


def alternatives(assignment, exercise=None):
    return [e for e in entries(assignment) if e.kind == "alternative"
            and (exercise is None or e.exercise == exercise)]


def mistakes(assignment, exercise, *args, pick=None, **kwargs):
    """What each catalogued mistake of ``exercise`` returns for these arguments.

    ``pick`` selects one part of a tuple result (e.g. ``pick=1`` for the weights of
    ``(output, weights)``). Mistakes that raise are left out. Runs trusted code only.
    """
    results = {}
    for entry in mutants(assignment, exercise):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                # every mistake gets its own copy of arrays and generators
                copies = copy.deepcopy(args)
                value = entry.namespace()[exercise](*copies, **copy.deepcopy(kwargs))
            results[entry.description] = value[pick] if pick is not None else value
        except Exception:
            continue
    return results


def filled_notebook(assignment, replacements=None):
    """The released learner notebook with every answer cell filled in from the solution, except
    those named in ``replacements`` (grade_id -> source): what a learner hands in."""
    import json
    solution = json.loads(reference.solution_notebook(assignment).read_text(encoding="utf-8"))
    answers = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in solution["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    answers.update(replacements or {})
    notebook = json.loads(reference.release_notebook(assignment).read_text(encoding="utf-8"))
    found = set()
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell["source"] = answers[meta["grade_id"]]
            found.add(meta["grade_id"])
    missing = set(replacements or {}) - found
    if missing:
        raise LookupError(f"{assignment}: no answer cell for {sorted(missing)}")
    return notebook


def notebook_with(entry):
    """The submission of a learner who made exactly this mistake (or this choice)."""
    return filled_notebook(entry.assignment, {entry.exercise: entry.source})
