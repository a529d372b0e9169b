"""The code a grade depends on besides the learner's: the grading code, and the code a learner's
kernel runs that is not the learner's.

The grading code is not a list kept by hand: it is the import closure (:func:`closure`) of the
engine's grading entry point (:mod:`autograder.engine.grade`) and of the suite's files, read from
their import statements (those inside functions too). Modules of the engine's own distribution
(and any module no installed distribution claims) count by their bytes; the standard library and
other distributions (numpy, pytest, pyzmq...) by the interpreter's version and the distribution's
version. The grading code's digest is taken once per process (:func:`code_digest`): it is the
code this process runs.

The kernel runs code of the course's too, which the grader never imports: the course's learner
packages (``helpers``), every file of them by its bytes wherever they are installed, and the
closure of what the release notebook's cells import, read from the notebook itself
(:func:`kernel_digest`). A kernel is a new process for every submission, so these are read again
whenever one of their files changes (by its status), in a process that keeps running too.

:mod:`autograder.engine.cache` puts both in the key a result is kept under.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import platform
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import notebook
from .assignment import Assignment, contents_digest

ENGINE_PACKAGE = __name__.split(".")[0]


# ------------------------------------------------------------------ the grading code

@functools.lru_cache(maxsize=None)
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _own_distributions() -> set[str]:
    return set(_distributions().get(ENGINE_PACKAGE, []))


# What each file imports, by the digest of its bytes (and how relative imports resolve): a file is
# parsed once per process, whichever assignment's closure reaches it, and again when it changes.
_parsed: dict[tuple[str, str | None, bool, bytes], frozenset[str]] = {}
MAX_PARSED = 4096  # files remembered; past it, the memory starts afresh


def imported_names(path: Path, module: str | None = None, package: bool = False) -> set[str]:
    """The modules the file ``path`` may import, every import statement counted (those inside
    functions too), each with its parent packages; ``from m import x`` counts ``m.x`` too, in case
    ``x`` is a module. Relative imports are resolved against ``module`` (None: skipped)."""
    text = path.read_bytes()
    key = (str(path), module, package, hashlib.sha256(text).digest())
    if key not in _parsed:
        if len(_parsed) >= MAX_PARSED:
            _parsed.clear()
        _parsed[key] = frozenset(_imported(ast.parse(text, str(path)), module, package))
    return set(_parsed[key])


@functools.lru_cache(maxsize=None)
def _version(distribution: str) -> str:
    """An installed distribution's version, read from its metadata once per process."""
    return importlib.metadata.version(distribution)


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
            others |= {f"{d}=={_version(d)}" for d in owners}
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
