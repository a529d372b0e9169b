"""Results kept on disk: written whole or not at all (:mod:`autograder.engine.atomic`), under a key
that cannot go stale.

A result is kept under :func:`content_key`, a digest of everything it depends on:

- the graded content: the cells after the locked ones are restored (or the bytes of a notebook
  that could not be read);
- every setting that can change a result (:func:`~autograder.engine.options.result_values`), and
  the confinement actually in force on this machine (``auto`` names none);
- the assignment's version (:func:`version`): its suite folder and the suites' own
  ``conftest.py``, its instructor notebook (the reference) and its release (the locked cells), the
  grading code, and the code a learner's kernel runs that is not the learner's
  (:mod:`autograder.engine.closure`: :func:`~autograder.engine.closure.code_digest` and
  :func:`~autograder.engine.closure.kernel_digest`).

A learner's file is also noted by its bytes (:func:`file_key`, under the same settings and
version): the recording of a class then finds each file the workers graded, and a command run
again finds every file it graded, without reading it again. A note names the content key its
file was graded as, and is written only once that result is kept.

Grading a notebook consults the cache at one place, a :class:`Lookup`: the file's note first,
then the content's key; what it grades is kept under that content key, and the file noted.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable

from . import demonstrations, notebook
from .assignment import Assignment, contents_digest
from .atomic import StateFull, write_atomically
from .closure import code_digest, imported_names, kernel_digest
from .options import Options, result_values
from .result import Result

__all__ = ["StateFull", "write_atomically", "content_key", "file_key", "lookup", "lookup_file",
           "store", "store_file", "Lookup", "version", "suite_files", "confinement_in_force"]

ENTRY_POINT = __name__.rsplit(".", 1)[0] + ".grade"  # what grading one notebook runs


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
    """The files of the assignment's suite folder, the suites' own ``conftest.py`` (pytest
    loads it when it runs the suite) and the modules every suite of the course may import
    (:meth:`~autograder.engine.assignment.Course.suite_support`)."""
    files = sorted(p for p in assignment.suite.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    conftest = assignment.course.suites_folder / "conftest.py"
    return files + ([conftest] if conftest.is_file() else []) \
        + assignment.course.suite_support()


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


class Lookup:
    """One notebook's way through the cache in ``folder`` (None: there is none, and nothing is
    found or kept): :meth:`find` what was kept for it, or :meth:`store` what grading it gave.

    The learner's file is tried first, by its bytes (:func:`lookup_file`), before they are even
    parsed; then the graded content (:func:`lookup`). A file found by its content is noted at
    once, and a result graded is kept under its content key, then the file noted as graded as it
    (a file noted is always found graded)."""

    def __init__(self, folder: str | Path | None, assignment: Assignment,
                 options: Options) -> None:
        self.folder = folder
        self.assignment = assignment
        self.options = options
        self.by_file: str | None = None  # the file's key, once the file was read
        self.key: str | None = None      # the content's key, once the content was made

    def find(self, file: bytes | None, content: Callable[[], dict[str, Any] | bytes]
             ) -> tuple[Result, dict[str, Any] | None] | None:
        """What is kept for the learner's ``file`` (its bytes; None when it could not be read)
        or, failing that, for the graded content ``content()`` makes (the cells after the locked
        ones are restored, or bytes that stand for a notebook that could not be read): the result
        and its executed notebook, or None. ``content`` is called unless the file was found."""
        if self.folder is not None and file is not None:
            self.by_file = file_key(self.assignment, self.options, file)
            found = lookup_file(self.folder, self.by_file)
            if found is not None:
                return found
        graded = content()
        if self.folder is None:
            return None
        self.key = content_key(self.assignment, self.options, graded)
        found = lookup(self.folder, self.key)
        if found is not None and self.by_file is not None:
            store_file(self.folder, self.by_file, self.key)
        return found

    def store(self, result: Result, executed: dict[str, Any] | None) -> None:
        """Keep ``result`` and ``executed`` under the content key :meth:`find` made, then note
        the file as graded as it."""
        if self.folder is None:
            return
        if self.key is None:
            raise RuntimeError("Lookup.store before Lookup.find made the content's key")
        store(self.folder, self.key, result, executed)
        if self.by_file is not None:  # after the result: a file noted is always found graded
            store_file(self.folder, self.by_file, self.key)
