"""Results kept on disk: written whole or not at all, under a key that cannot go stale.

A result is kept under :func:`content_key`, a digest of everything it depends on:

- the graded content: the cells after the locked ones are restored (or the bytes of a notebook
  that could not be read);
- every setting that can change a result (:func:`~autograder.engine.options.result_values`), and
  the confinement actually in force on this machine (``auto`` names none);
- the assignment's version (:func:`version`): its suite folder and the suites' own
  ``conftest.py``, its instructor notebook (the reference) and its release (the locked cells), the
  grading code, and the code a learner's kernel runs that is not the learner's
  (:func:`kernel_digest`).

The grading code is not a list kept by hand: it is the import closure (:func:`closure`) of the
engine's grading entry point (:mod:`autograder.engine.grade`) and of the suite's files, read from
their import statements (those inside functions too). Modules of the engine's own distribution
(and any module no installed distribution claims) count by their bytes; the standard library and
other distributions (numpy, pytest, pyzmq...) by the interpreter's version and the distribution's
version. The grading code's digest is taken once per process (:func:`code_digest`): it is the
code this process runs. The course's files are read at every call.

The kernel runs code of the course's too, which the grader never imports: the course's learner
packages (``helpers``), every file of them by its bytes wherever they are installed, and the
closure of what the release notebook's cells import, read from the notebook itself
(:func:`kernel_digest`). A kernel is a new process for every submission, so these are read again
whenever one of their files changes (by its status), in a process that keeps running too.

A learner's file is also noted by its bytes (:func:`file_key`, under the same settings and
version): the recording of a class then finds each file the workers graded, and a command run
again finds every file it graded, without reading it again. A note names the content key its
file was graded as, and is written only once that result is kept.

Every file the grader writes (a kept result, ``--json``, Gradescope's ``results.json``, a mark of
the recording) goes through :func:`write_atomically`: a reader sees the whole of it or nothing.
"""
from __future__ import annotations

import ast
import errno
import warnings
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import demonstrations, notebook
from .assignment import Assignment, contents_digest
from .options import Options, result_values
from .result import Result

ENTRY_POINT = __name__.rsplit(".", 1)[0] + ".grade"  # what grading one notebook runs
ENGINE_PACKAGE = __name__.split(".")[0]


class StateFull(OSError):
    """The state folder's disk is full: grading must stop, keeping what it recorded."""


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader only ever sees the whole of it: a temporary
    file named after this process (cleared by a later run if this one is killed), flushed to
    disk, then renamed into place. A full disk raises :class:`StateFull` and leaves nothing."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StateFull(error.errno, f"the state folder {path.parent} is full "
                            f"({error.strerror})") from None
        raise


# ------------------------------------------------------------------ the grading code

@functools.lru_cache(maxsize=None)
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _own_distributions() -> set[str]:
    return set(_distributions().get(ENGINE_PACKAGE, []))


def imported_names(path: Path, module: str | None = None, package: bool = False) -> set[str]:
    """The modules the file ``path`` may import, every import statement counted (those inside
    functions too), each with its parent packages; ``from m import x`` counts ``m.x`` too, in case
    ``x`` is a module. Relative imports are resolved against ``module`` (None: skipped)."""
    return _imported(ast.parse(path.read_bytes(), str(path)), module, package)


def _imported(tree: ast.AST, module: str | None = None, package: bool = False) -> set[str]:
    found: set[str] = set()
    here = (module if package else module.rpartition(".")[0]) if module else None
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            bases = [alias.name for alias in node.names]
            extra: list[str] = []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if here is None:
                    continue
                parts = here.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            bases = [base]
            extra = [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
        else:
            continue
        for name in bases:
            parts = name.split(".")
            found |= {".".join(parts[:depth]) for depth in range(1, len(parts) + 1)}
        found |= set(extra)
    return {name for name in found if name}


def _statements(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement of ``tree``, however nested (an import is a statement: the expressions,
    most of a module's nodes, need not be visited)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                todo += [item for item in value
                         if isinstance(item, (ast.stmt, ast.excepthandler, ast.match_case))]


def _source_of(name: str) -> tuple[Path, bool] | None:
    """``(file, is a package)`` of first-party module ``name``, or None (not a module, no source)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin), spec.submodule_search_locations is not None


def closure(modules: Iterable[str], files: Iterable[Path] = ()) -> tuple[dict[str, Path], set[str]]:
    """The grading code reached from ``modules`` (names) and ``files`` (a suite's): ``(module name
    -> source file, for every first-party module; "distribution==version" of every other
    distribution imported)``. The standard library is left out (the interpreter's version stands
    for it)."""
    own = _own_distributions()
    todo: list[str] = list(modules)
    for path in files:
        todo += imported_names(path)
    found: dict[str, Path] = {}
    others: set[str] = set()
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top == "__future__":
            continue
        owners = set(_distributions().get(top, []))
        if owners and not owners & own:
            others |= {f"{d}=={importlib.metadata.version(d)}" for d in owners}
            continue
        located = _source_of(name)
        if located is None:
            continue
        path, package = located
        found[name] = path
        todo += sorted(imported_names(path, name, package))
    return found, others


def _digest(modules: tuple[str, ...]) -> str:
    files, others = closure(modules)
    digest = hashlib.sha256(f"python {platform.python_version()}\0".encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes() + b"\0")
    for distribution in sorted(others):
        digest.update(distribution.encode() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def code_digest(modules: tuple[str, ...]) -> str:
    """A digest of the grading code :func:`closure` reaches from ``modules``, taken once per
    process: the code this process runs."""
    return _digest(modules)


# ------------------------------------------------------------------ the learner's kernel

def package_files(names: Iterable[str]) -> list[Path]:
    """Every file of the packages ``names`` (the course's learner packages), found where a
    learner's kernel imports them from (an interpreter in isolated mode:
    :func:`~autograder.sandbox.confinement.python_layout`), caches of compiled code left out."""
    from ..sandbox import confinement
    try:
        locations = [Path(p) for p in confinement.python_layout(show=tuple(names))["show"]]
    except confinement.SandboxUnavailable:  # the interpreter could not be asked: this one's view
        locations = [found[0].parent if found[1] else found[0]
                     for found in map(_source_of, names) if found is not None]
    files: list[Path] = []
    for location in locations:
        if location.is_dir():
            files += sorted(p for p in location.rglob("*") if p.is_file()
                            and "__pycache__" not in p.parts and p.suffix != ".pyc")
        elif location.is_file():
            files.append(location)
    return files


def notebook_imports(cells: Iterable[dict[str, Any]]) -> set[str]:
    """The modules the code cells of a notebook may import (lines of IPython magics left out; a
    cell Python cannot parse imports nothing it can tell)."""
    found: set[str] = set()
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        lines = notebook.source(cell).splitlines()
        text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        try:
            found |= _imported(ast.parse(text))
        except (SyntaxError, ValueError):
            continue
    return found


# The kernel's closure (files by status, distributions by version), by the digest of the release
# and the learner packages' files: read again only when one of them changes.
_kernel_closures: dict[str, tuple[tuple[Path, ...], tuple[str, ...]]] = {}


def kernel_digest(assignment: Assignment) -> str:
    """A digest of the code a learner's kernel runs that is not the learner's: every file of the
    course's learner packages, and the closure of the modules the release notebook's cells import
    (first-party modules by their bytes, other distributions by their version)."""
    packages = package_files(assignment.course.learner_packages)
    base = contents_digest([assignment.release, *packages])
    if base not in _kernel_closures:
        imported = notebook_imports(notebook.load(assignment.release)["cells"])
        found, distributions = closure(sorted(imported | set(assignment.course.learner_packages)))
        _kernel_closures[base] = (tuple(sorted(found.values())), tuple(sorted(distributions)))
    files, others = _kernel_closures[base]
    every = sorted(set(files) | set(packages))
    listed = "\0".join(str(path) for path in every)
    return hashlib.sha256(contents_digest(every).encode() + b"\0" + listed.encode() + b"\0"
                          + "\0".join(others).encode()).hexdigest()


def confinement_in_force(options: Options) -> str:
    """The confinement grading with ``options`` uses on this machine (``auto`` resolved), without
    the warnings grading itself gives."""
    from ..sandbox.confinement import SandboxUnavailable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return options.confinement()
        except SandboxUnavailable:
            return "unavailable"


def _settings(options: Options) -> bytes:
    """What of ``options`` a key holds: every setting that can change a result, and the
    confinement in force."""
    return json.dumps({**result_values(options), "in force": confinement_in_force(options)},
                      sort_keys=True).encode()


# ------------------------------------------------------------------ an assignment's version

def suite_files(assignment: Assignment) -> list[Path]:
    """The files of the assignment's suite folder, and the suites' own ``conftest.py`` (pytest
    loads it when it runs the suite)."""
    files = sorted(p for p in assignment.suite.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    conftest = assignment.course.suites_folder / "conftest.py"
    return files + ([conftest] if conftest.is_file() else [])


# The modules the suite's files import (and the entry point), by the digest of the files they
# were read from: parsed again only when a file changes.
_imports: dict[str, tuple[str, ...]] = {}


def version(assignment: Assignment) -> str:
    """A digest of everything a score of ``assignment`` depends on but the notebook and the
    settings: the grading code, the suite, the reference, the release, and the code the kernel
    runs besides the learner's (:func:`kernel_digest`)."""
    files = [*suite_files(assignment), assignment.solution, assignment.release]
    contents = contents_digest(files)  # read again only when a file's status changes
    if contents not in _imports:
        _imports[contents] = tuple(sorted({ENTRY_POINT}.union(
            *(imported_names(path) for path in files if path.suffix == ".py"))))
    names = "\0".join(str(path.relative_to(assignment.course.root)) for path in files)
    return hashlib.sha256(code_digest(_imports[contents]).encode() + b"\0" + names.encode()
                          + b"\0" + contents.encode() + b"\0"
                          + kernel_digest(assignment).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ kept results

def content_key(assignment: Assignment, options: Options, content: dict[str, Any] | bytes) -> str:
    """Identifies what grading depends on: the graded cells (or raw bytes), the settings that can
    change a result, and the assignment's version."""
    digest = hashlib.sha256(assignment.name.encode() + b"\0" + version(assignment).encode() + b"\0"
                            + _settings(options))
    if isinstance(content, bytes):
        digest.update(b"raw:" + content)
    else:
        # a demonstration cell not re-run shows the learner's own figures: they are content too
        digest.update(json.dumps([[c["cell_type"], c["source"]] + (
            [c.get("outputs", [])] if demonstrations.is_demonstration(c) else [])
            for c in content["cells"]]).encode())
    return digest.hexdigest()[:32]


def file_key(assignment: Assignment, options: Options, raw: bytes) -> str:
    """Identifies a learner's file by its bytes, under the same settings and version as
    :func:`content_key`: a file graded before is found without reading it (the recording of a
    class finds each learner's file graded by the workers; a command run again finds every file
    it graded)."""
    return hashlib.sha256(b"file\0" + assignment.name.encode() + b"\0"
                          + version(assignment).encode() + b"\0"
                          + _settings(options) + b"\0" + raw).hexdigest()[:32]


def lookup_file(folder: str | Path, key: str) -> tuple[Result, dict[str, Any] | None] | None:
    """What :func:`lookup` keeps for the content the file with :func:`file_key` ``key`` was
    graded as, or None."""
    try:
        content = (Path(folder) / f"{key}.file").read_text()
    except (OSError, ValueError):
        return None
    if len(content) != 32 or not all(c in "0123456789abcdef" for c in content):
        return None
    return lookup(folder, content)


def store_file(folder: str | Path, key: str, content: str) -> None:
    """Note that the file with :func:`file_key` ``key`` was graded as ``content`` (a
    :func:`content_key` whose result is already stored)."""
    write_atomically(Path(folder) / f"{key}.file", content)


def lookup(folder: str | Path, key: str) -> tuple[Result, dict[str, Any] | None] | None:
    """The result kept under ``key`` and its executed notebook (None for a notebook that did not
    run), or None when nothing is kept (a damaged entry is as good as none: it is graded again)."""
    entry = Path(folder) / f"{key}.json"
    try:
        stored = json.loads(entry.read_text())
        executed = stored["executed"]
        return Result.from_json(stored["result"]), (dict(executed) if executed else None)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(folder: str | Path, key: str, result: Result, executed: dict[str, Any] | None) -> None:
    write_atomically(Path(folder) / f"{key}.json",
                     json.dumps({"result": result.to_json(), "executed": executed}))
