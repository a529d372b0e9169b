"""Known wrong implementations (mutants) and correct alternatives of graded functions.

Each assignment's suite folder holds ``mutants.py`` and ``alternatives.py``: plain functions, each
decorated with the graded function it replaces and a description. A mutant's description completes
the sentence "This is what you get when you ...", so the same catalogue that proves a suite's
strength names the learner's likely mistake in feedback.

An entry's source (without its decorator) is executed in a namespace holding the reference
solution, exactly as a learner's cell would be, so an entry may call other graded functions.

:func:`mistakes` is how a suite names a mistake: it runs every mutant of a function on the input
the learner's function was given. With ``learner=submission`` the result can also confirm a
candidate on a second input (a mistake is named only when the learner's function matches it on
more than one input), so that a correct but fragile implementation that happens to coincide with
a mistake on one special input is not told it made that mistake.
"""
import ast
import copy
import dataclasses
import functools
import importlib.util
import inspect
import re
import textwrap
import warnings
from pathlib import Path

import numpy as np

from . import agent, reference, wire

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
        exec(compile(self.source, f"<{self.key}>", "exec"), namespace)  # trusted: the catalogue's own code
        return namespace


_registry: list = []


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
    exec(compile(source, "<catalogue>", "exec"), namespace)  # trusted: the catalogue's own code
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


def mistakes(assignment, exercise, *args, pick=None, learner=None, **kwargs):
    """What each catalogued mistake of ``exercise`` returns for these arguments.

    Returns a :class:`MistakeTable`, a dict description -> value. ``pick`` selects one part of a
    tuple result (e.g. ``pick=1`` for the weights of ``(output, weights)``). Mistakes that raise
    are left out. Runs trusted code only. Arguments may be plain values or the wire markers the
    learner's function was called with (``Function``, ``Lambda``, ``Partial``, ``RNG``): each
    mistake then gets its own decoded copy, so the suite can pass both the same arguments.

    ``learner`` is the learner's side (the suite's ``submission``, or a callable). With it, a
    mistake that matches the learner's result is named only if it is confirmed on a second input
    (see :meth:`MistakeTable.confirm`); without it, one matching input is enough (as before).
    """
    results, entries = {}, {}
    for entry in mutants(assignment, exercise):
        value = _run(entry.namespace(), exercise, args, kwargs, pick)
        if value is not _FAILED:
            results[entry.description] = value
            entries[entry.description] = entry
    return MistakeTable(results, assignment, exercise, args, kwargs, pick, learner, entries)


def matching_mistakes(assignment, exercise, inputs):
    """The descriptions of the catalogued mistakes of ``exercise`` that pass a test on every one
    of ``inputs``, joined by "or when you" (as :func:`helpers.checks.name_mistake` joins them);
    None if there is none.

    ``inputs`` is a list of ``(args, kwargs, matches)``: the arguments the learner's function was
    called with (wire markers included: each mistake gets its own decoded copy, so an ``RNG``
    gives every mistake the seed the learner's function saw) and a predicate of a mistake's result
    saying whether it is wrong in the way the learner's was. A mistake that raises on any input
    does not match. For results that no tolerance can compare (random ones), where the suite knows
    what "wrong in the same way" means; otherwise use :func:`mistakes`. Trusted code only."""
    found = []
    for entry in mutants(assignment, exercise):
        for args, kwargs, matches in inputs:
            value = _run(entry.namespace(), exercise, args, kwargs, None)
            try:
                if value is _FAILED or not matches(value):
                    break
            except Exception:
                break
        else:
            found.append(entry.description)
    return ", or when you ".join(found) or None


_FAILED = object()


def _run(namespace, exercise, args, kwargs, pick):
    """``namespace[exercise](*args, **kwargs)`` on private copies, or _FAILED if it raises."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = namespace[exercise](*(_private(a, namespace) for a in args),
                                        **{k: _private(v, namespace) for k, v in kwargs.items()})
        return value[pick] if pick is not None else value
    except Exception:
        return _FAILED


def _private(value, namespace):
    """A copy of an argument for one trusted call; wire markers become what they stand for (a
    ``Function`` marker names a function of ``namespace``), decoded as the learner's kernel
    decodes them: the markers are the suite's own, never anything a kernel sent."""
    if isinstance(value, (wire.Function, wire.Lambda, wire.Partial, wire.RNG)):
        return agent.decode(wire.encode_argument(value), namespace)
    return copy.deepcopy(value)  # every call gets its own copy of arrays and generators


def _same(a, b):
    try:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype.kind in "biufc" and b.dtype.kind in "biufc" and \
            bool(np.allclose(a, b, rtol=1e-5, atol=1e-7, equal_nan=True))
    except (TypeError, ValueError):
        return False


def probe_inputs(args, kwargs, generic=6):
    """Other inputs to confirm a mistake on: the same arguments with every floating-point array
    replaced (other arguments, such as masks, sizes and functions, are kept):

    - ``generic`` inputs of random values of the same shapes and dtypes, alternately standard
      normal and heavy-tailed (normal times a log-normal factor, so vectors of very different
      lengths occur), each with its own seed. Several are needed because a function that returns
      one of a few discrete answers (the value of one key) can agree with a mistake by chance;
    - the arguments themselves with each entry scaled by a random factor in [0.8, 1.2] (zeros,
      infinities, signs and magnitudes kept, so an input built to expose one mistake, such as a
      row of zeros or huge logits, still exposes it).
    """
    def normal(v, rng):
        return rng.standard_normal(v.shape)

    def heavy(v, rng):
        return rng.standard_normal(v.shape) * np.exp(rng.standard_normal(v.shape))

    def jitter(v, rng):
        return v * (1 + 0.2 * rng.uniform(-1, 1, v.shape))

    makers = [normal if seed % 2 == 0 else heavy for seed in range(generic)] + [jitter]
    for seed, make in enumerate(makers):
        rng = np.random.default_rng(seed)

        def replace(value):
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                return make(value, rng).astype(value.dtype)
            return value
        yield [replace(a) for a in args], {k: replace(v) for k, v in kwargs.items()}


class MistakeTable(dict):
    """What each catalogued mistake of one function returns on one input: description -> value.

    It remembers the input, so that :meth:`confirm` can try a candidate on others."""

    def __init__(self, results, assignment, exercise, args, kwargs, pick, learner, entries):
        super().__init__(results)
        self.assignment, self.exercise = assignment, exercise
        self.args, self.kwargs, self.pick = args, kwargs, pick
        self.learner, self.entries = learner, entries

    def confirm(self, description):
        """Whether the learner's function makes this mistake on other inputs too.

        On every input of :func:`probe_inputs`, the learner's result must equal the mistake's,
        and on at least one of them the mistake must differ from the reference solution (an
        input where both agree cannot tell the mistake from a correct function). A correct but
        fragile implementation that coincides with a mistake on one special input therefore
        fails the generic inputs, where it is right and the mistake is not. Without a learner
        there is nothing to confirm against: True."""
        if self.learner is None:
            return True
        entry = self.entries.get(description)
        if entry is None:
            return False
        told_apart = False
        for args, kwargs in probe_inputs(self.args, self.kwargs):
            wrong = _run(entry.namespace(), self.exercise, args, kwargs, self.pick)
            if wrong is _FAILED:
                continue
            if not _same(self._learners(args, kwargs), wrong):
                return False
            right = _run(reference.namespace(self.assignment), self.exercise, args, kwargs,
                         self.pick)
            told_apart = told_apart or (right is not _FAILED and not _same(wrong, right))
        return told_apart

    def derive(self, part=None, keep=None):
        """The same table with ``part(value)`` in place of each value (an entry whose part
        cannot be taken is dropped) and only the entries whose new value passes ``keep``.
        Confirmation still compares whole results on the second input."""
        results = {}
        for description, value in self.items():
            try:
                value = part(value) if part is not None else value
            except Exception:
                continue
            if keep is None or keep(value):
                results[description] = value
        return MistakeTable(results, self.assignment, self.exercise, self.args, self.kwargs,
                            self.pick, self.learner, self.entries)

    def _learners(self, args, kwargs):
        """The learner's result on another input (None if the call fails). The submission's
        record of its last call is kept as it was, since the suite may still inspect it."""
        learner = self.learner
        function = learner if callable(learner) else getattr(learner, self.exercise)
        last = getattr(learner, "_last", None)  # not `last`: reading that labels the test
        try:
            value = function(*args, **kwargs)
            return value[self.pick] if self.pick is not None else value
        except Exception:
            return None
        finally:
            if hasattr(learner, "_last"):
                learner._last = last


def filled_notebook(assignment, replacements=None):
    """The released learner notebook with every answer cell filled in from the solution, except
    those named in ``replacements`` (grade_id -> source): what a learner hands in."""
    import json
    solution = json.loads(reference.solution_notebook(assignment).read_text(encoding="utf-8"))
    answers = {c["metadata"]["nbgrader"]["grade_id"]: _answer(c) for c in solution["cells"]
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


MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
MODEL_ANSWER = re.compile(r"\A\*\*Model answer[^*]*\*\*\s*")


def _answer(cell):
    """A solution cell's source as a learner would hand it in: without the BEGIN/END SOLUTION
    lines, and for a written answer, the model answer's text alone (no "Model answer" label, no
    rubric)."""
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    kept = "\n".join(line for line in source.splitlines() if line.strip() not in MARKERS)
    if cell["cell_type"] != "markdown":
        return kept
    answer = MODEL_ANSWER.sub("", kept.strip())
    return answer.split("\n\n**Rubric", 1)[0].strip()


def notebook_with(entry):
    """The submission of a learner who made exactly this mistake (or this choice)."""
    return filled_notebook(entry.assignment, {entry.exercise: entry.source})
