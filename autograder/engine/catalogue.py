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

A suite names its assignment by name (``mistakes(ASSIGNMENT, ...)``): the name is the assignment
whose suite is running (:func:`running`), of the course being graded.
"""
from __future__ import annotations

import ast
import collections
import contextlib
import contextvars
import copy
import dataclasses
import functools
import hashlib
import importlib.util
import inspect
import json
import pickle
import re
import textwrap
import warnings
from types import CodeType
from typing import Any, Callable, Generator, Iterator, Sequence, TypeVar

import numpy as np

from . import agent, reference, wire
from .assignment import Assignment, contents_digest
from .notebook import source as cell_source

Function = TypeVar("Function", bound=Callable[..., Any])

# The assignment whose hidden suite is running (set by the engine's suite runner, and by a
# course's suites/conftest.py when a suite runs on its own).
_running: contextvars.ContextVar[Assignment] = contextvars.ContextVar("running")


@contextlib.contextmanager
def running(assignment: Assignment) -> Iterator[Assignment]:
    """While the suite of ``assignment`` runs: its name stands for it."""
    token = _running.set(assignment)
    try:
        yield assignment
    finally:
        _running.reset(token)


def resolve(assignment: Assignment | str) -> Assignment:
    """An assignment, given as itself or by the name a suite knows it by (see :func:`running`)."""
    if isinstance(assignment, Assignment):
        return assignment
    current = _running.get(None)
    if current is None:
        raise LookupError(f"the assignment {assignment!r} is named outside a run of its hidden "
                          f"suite: pass the Assignment itself")
    return current if current.name == assignment else current.course.assignment(assignment)


@dataclasses.dataclass(frozen=True)
class Entry:
    exercise: str       # the graded function this replaces
    description: str
    source: str         # a plain ``def <exercise>(...)`` as a learner would write it
    kind: str           # "mutant" or "alternative"
    assignment: Assignment
    key: str            # unique id, e.g. "softmax/no_max_subtraction"

    def namespace(self) -> dict[str, Any]:
        """The reference namespace with this entry in place of its graded function (the other
        reference functions call the entry, as they would call a learner's function)."""
        namespace = reference.namespace(self.assignment)
        exec(_compiled(self.source, self.key), namespace)  # trusted: the catalogue's own code
        return namespace


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, key: str) -> CodeType:
    return compile(source, f"<{key}>", "exec")


_registry: list[tuple[str, str, str, str, str]] = []


def _register(kind: str, exercise: str, description: str) -> Callable[[Function], Function]:
    def decorate(function: Function) -> Function:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
        definition = tree.body[0]
        assert isinstance(definition, ast.FunctionDef)
        definition.decorator_list = []
        definition.name = exercise
        _registry.append((kind, exercise, description, ast.unparse(definition), function.__name__))
        return function
    return decorate


def mutant(exercise: str, description: str) -> Callable[[Function], Function]:
    return _register("mutant", exercise, description)


def alternative(exercise: str, description: str) -> Callable[[Function], Function]:
    return _register("alternative", exercise, description)


def with_source(namespace: dict[str, Any], source: str) -> dict[str, Any]:
    """Execute ``source`` (a learner-style definition) into ``namespace`` and return it; the
    functions already there then call the new definition."""
    exec(compile(source, "<catalogue>", "exec"), namespace)  # trusted: the catalogue's own code
    return namespace


# Entries read, by assignment and the digest of its catalogue files: an edited catalogue is read
# anew, even in a process that keeps running (the formgrader).
_entries: dict[tuple[Assignment, str], tuple[Entry, ...]] = {}
KINDS = ("mutants", "alternatives")


def entries(assignment: Assignment | str) -> tuple[Entry, ...]:
    """All catalogue entries of an assignment, in file order."""
    assignment = resolve(assignment)
    paths = [assignment.suite / f"{kind}.py" for kind in KINDS]
    digest = contents_digest(paths)
    if (assignment, digest) in _entries:
        return _entries[assignment, digest]
    found = []
    for kind, path in zip(KINDS, paths):
        if not path.exists():
            continue
        del _registry[:]
        spec = importlib.util.spec_from_file_location(
            f"_catalogue_{assignment.name.replace('-', '_')}_{kind}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for entry_kind, exercise, description, source, name in _registry:
            found.append(Entry(exercise, description, source, entry_kind, assignment,
                               f"{exercise}/{name}"))
        del _registry[:]
    _entries[assignment, digest] = tuple(found)
    return _entries[assignment, digest]


def mutants(assignment: Assignment | str, exercise: str | None = None) -> list[Entry]:
    return [e for e in entries(assignment) if e.kind == "mutant"
            and (exercise is None or e.exercise == exercise)]


def alternatives(assignment: Assignment | str, exercise: str | None = None) -> list[Entry]:
    return [e for e in entries(assignment) if e.kind == "alternative"
            and (exercise is None or e.exercise == exercise)]


def mistakes(assignment: Assignment | str, exercise: str, *args: Any, pick: int | None = None,
             learner: Any = None, **kwargs: Any) -> MistakeTable:
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
    assignment = resolve(assignment)
    results: dict[str, Any] = {}
    named: dict[str, Entry] = {}
    for entry in mutants(assignment, exercise):
        value = _remembered_run(assignment, entry, exercise, args, kwargs, pick)
        if value is not _FAILED:
            results[entry.description] = value
            named[entry.description] = entry
    return MistakeTable(results, assignment, exercise, args, kwargs, pick, learner, named)


Inputs = Sequence[tuple[Sequence[Any], dict[str, Any], Callable[[Any], bool]]]


def matching_mistakes(assignment: Assignment | str, exercise: str, inputs: Inputs) -> str | None:
    """The descriptions of the catalogued mistakes of ``exercise`` that pass a test on every one
    of ``inputs``, joined by "or when you" (as :func:`helpers.checks.name_mistake` joins them);
    None if there is none.

    ``inputs`` is a list of ``(args, kwargs, matches)``: the arguments the learner's function was
    called with (wire markers included: each mistake gets its own decoded copy, so an ``RNG``
    gives every mistake the seed the learner's function saw) and a predicate of a mistake's result
    saying whether it is wrong in the way the learner's was. A mistake that raises on any input
    does not match. For results that no tolerance can compare (random ones), where the suite knows
    what "wrong in the same way" means; otherwise use :func:`mistakes`. Trusted code only."""
    assignment = resolve(assignment)
    found = []
    for entry in mutants(assignment, exercise):
        for args, kwargs, matches in inputs:
            value = _remembered_run(assignment, entry, exercise, args, kwargs, None)
            try:
                if value is _FAILED or not matches(value):
                    break
            except Exception:
                break
        else:
            found.append(entry.description)
    return ", or when you ".join(found) or None


_FAILED = object()


def _run(namespace: dict[str, Any], exercise: str, args: Sequence[Any], kwargs: dict[str, Any],
         pick: int | None) -> Any:
    """``namespace[exercise](*args, **kwargs)`` on private copies, or _FAILED if it raises."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = namespace[exercise](*(_private(a, namespace) for a in args),
                                        **{k: _private(v, namespace) for k, v in kwargs.items()})
        return value[pick] if pick is not None else value
    except Exception:
        return _FAILED


# What trusted code (a mutant, or the reference) returned on an input, kept by the process that
# grades (a pool's worker grades a class: learners who make the same mistake get the same table
# without running every mutant again). The key is everything the value depends on: the solution
# notebook's contents (the namespace an entry runs in), the entry's own source, the function, the
# part picked and the pickled arguments (wire markers and generators with their state); a value
# is kept as its pickle, so each caller gets its own copy. Bounded in entries and bytes; a value
# or an argument that cannot be pickled, or a large one, is computed every time.
MEMO_ENTRIES = 4096
MEMO_BYTES = 64 << 20
MEMO_VALUE_BYTES = 4 << 20
_memo: collections.OrderedDict[bytes, bytes | None] = collections.OrderedDict()
_memo_bytes = 0


def _memo_key(assignment: Assignment, entry: Entry | None, exercise: str, args: Sequence[Any],
              kwargs: dict[str, Any], pick: int | None) -> bytes | None:
    try:
        arguments = (list(args), sorted(kwargs.items()))
        pickled = pickle.dumps(arguments, protocol=5)  # trusted: a dump, nothing is loaded
    except Exception:
        return None
    if len(pickled) > MEMO_VALUE_BYTES:
        return None
    who = ("reference", "") if entry is None else (entry.kind, entry.source)
    solution = assignment.solution  # a listing of its folder: read once
    digest = hashlib.blake2b(digest_size=32)
    for part in (str(solution), contents_digest([solution]), *who,
                 exercise, repr(pick)):
        digest.update(part.encode("utf-8") + b"\0")
    digest.update(pickled)
    return digest.digest()


def _remembered_run(assignment: Assignment, entry: Entry | None, exercise: str,
                    args: Sequence[Any], kwargs: dict[str, Any], pick: int | None) -> Any:
    """``entry``'s ``exercise`` (the reference's when ``entry`` is None) on these arguments, as
    :func:`_run` returns it, remembered by the process (see ``_memo``)."""
    global _memo_bytes
    key = _memo_key(assignment, entry, exercise, args, kwargs, pick)
    if key is not None and key in _memo:
        _memo.move_to_end(key)
        kept = _memo[key]
        # a value this process dumped, of what the catalogue's own code returned
        return _FAILED if kept is None else pickle.loads(kept)  # trusted: our own dump
    namespace = reference.namespace(assignment) if entry is None else entry.namespace()
    value = _run(namespace, exercise, args, kwargs, pick)
    if key is None:
        return value
    try:
        kept = None if value is _FAILED else pickle.dumps(value, protocol=5)  # trusted: a dump
    except Exception:
        return value
    if kept is not None and len(kept) > MEMO_VALUE_BYTES:
        return value
    _memo[key] = kept
    _memo_bytes += len(kept or b"")
    while len(_memo) > MEMO_ENTRIES or _memo_bytes > MEMO_BYTES:
        _memo_bytes -= len(_memo.popitem(last=False)[1] or b"")
    return value


def _private(value: Any, namespace: dict[str, Any]) -> Any:
    """A copy of an argument for one trusted call; wire markers become what they stand for (a
    ``Function`` marker names a function of ``namespace``), decoded as the learner's kernel
    decodes them: the markers are the suite's own, never anything a kernel sent."""
    if isinstance(value, (wire.Function, wire.Lambda, wire.Partial, wire.RNG)):
        return agent.decode(wire.encode_argument(value), namespace)
    return copy.deepcopy(value)  # every call gets its own copy of arrays and generators


def _same(a: Any, b: Any) -> bool:
    try:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype.kind in "biufc" and b.dtype.kind in "biufc" and \
            bool(np.allclose(a, b, rtol=1e-5, atol=1e-7, equal_nan=True))
    except (TypeError, ValueError):
        return False


def probe_inputs(args: Sequence[Any], kwargs: dict[str, Any], generic: int = 6
                 ) -> Generator[tuple[list[Any], dict[str, Any]], None, None]:
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
    Maker = Callable[[np.ndarray[Any, Any], np.random.Generator], Any]

    def normal(v: np.ndarray[Any, Any], rng: np.random.Generator) -> Any:
        return rng.standard_normal(v.shape)

    def heavy(v: np.ndarray[Any, Any], rng: np.random.Generator) -> Any:
        return rng.standard_normal(v.shape) * np.exp(rng.standard_normal(v.shape))

    def jitter(v: np.ndarray[Any, Any], rng: np.random.Generator) -> Any:
        return v * (1 + 0.2 * rng.uniform(-1, 1, v.shape))

    makers: list[Maker] = [normal if seed % 2 == 0 else heavy for seed in range(generic)]
    makers.append(jitter)
    for seed, make in enumerate(makers):
        rng = np.random.default_rng(seed)

        def replace(value: Any) -> Any:
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                return make(value, rng).astype(value.dtype)
            return value
        yield [replace(a) for a in args], {k: replace(v) for k, v in kwargs.items()}


class MistakeTable(dict[str, Any]):
    """What each catalogued mistake of one function returns on one input: description -> value.

    It remembers the input, so that :meth:`confirm` can try a candidate on others."""

    def __init__(self, results: dict[str, Any], assignment: Assignment, exercise: str,
                 args: Sequence[Any], kwargs: dict[str, Any], pick: int | None, learner: Any,
                 entries: dict[str, Entry]) -> None:
        super().__init__(results)
        self.assignment, self.exercise = assignment, exercise
        self.args, self.kwargs, self.pick = args, kwargs, pick
        self.learner, self.entries = learner, entries

    def confirm(self, description: str) -> bool:
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
            wrong = _remembered_run(self.assignment, entry, self.exercise, args, kwargs,
                                    self.pick)
            if wrong is _FAILED:
                continue
            if not _same(self._learners(args, kwargs), wrong):
                return False
            right = _remembered_run(self.assignment, None, self.exercise, args, kwargs,
                                    self.pick)
            told_apart = told_apart or (right is not _FAILED and not _same(wrong, right))
        return told_apart

    def derive(self, part: Callable[[Any], Any] | None = None,
               keep: Callable[[Any], bool] | None = None) -> MistakeTable:
        """The same table with ``part(value)`` in place of each value (an entry whose part
        cannot be taken is dropped) and only the entries whose new value passes ``keep``.
        Confirmation still compares whole results on the second input."""
        results: dict[str, Any] = {}
        for description, value in self.items():
            try:
                value = part(value) if part is not None else value
            except Exception:
                continue
            if keep is None or keep(value):
                results[description] = value
        return MistakeTable(results, self.assignment, self.exercise, self.args, self.kwargs,
                            self.pick, self.learner, self.entries)

    def _learners(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
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


def filled_notebook(assignment: Assignment, replacements: dict[str, str] | None = None
                    ) -> dict[str, Any]:
    """The released learner notebook with every answer cell filled in from the solution, except
    those named in ``replacements`` (grade_id -> source): what a learner hands in."""
    solution = json.loads(assignment.solution.read_text(encoding="utf-8"))
    answers = {c["metadata"]["nbgrader"]["grade_id"]: _answer(c) for c in solution["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    answers.update(replacements or {})
    notebook: dict[str, Any] = json.loads(assignment.release.read_text(encoding="utf-8"))
    found = set()
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell["source"] = answers[meta["grade_id"]]
            found.add(meta["grade_id"])
    missing = set(replacements or {}) - found
    if missing:
        raise LookupError(f"{assignment.name}: no answer cell for {sorted(missing)}")
    return notebook


MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
MODEL_ANSWER = re.compile(r"\A\*\*Model answer[^*]*\*\*\s*")


def _answer(cell: dict[str, Any]) -> str:
    """A solution cell's source as a learner would hand it in: without the BEGIN/END SOLUTION
    lines, and for a written answer, the model answer's text alone (no "Model answer" label, no
    rubric)."""
    source = cell_source(cell)
    kept = "\n".join(line for line in source.splitlines() if line.strip() not in MARKERS)
    if cell["cell_type"] != "markdown":
        return kept
    answer = MODEL_ANSWER.sub("", kept.strip())
    return answer.split("\n\n**Rubric", 1)[0].strip()


def notebook_with(entry: Entry) -> dict[str, Any]:
    """The submission of a learner who made exactly this mistake (or this choice)."""
    return filled_notebook(entry.assignment, {entry.exercise: entry.source})
