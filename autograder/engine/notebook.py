"""Read a submitted notebook defensively and put back what the learner may not change.

A submission is untrusted JSON. :func:`read_submission` parses it and flags its code
(:mod:`autograder.flags`) in a child process of its own, bounded in memory and CPU time, and
returns only a canonical notebook (cell types, sources, nbgrader's cell metadata), whose parse in
the grader costs little more than its size; JSON such as ``[{},{},...]`` or a cell of
``[a,a,...]`` exhausts that child, not the grader. Anything unreadable becomes a
:class:`NotebookProblem` with a sentence for the learner. :func:`restore_locked` rebuilds the
notebook on the released one: locked cells (instructions, given code, visible checks) come from the
release, answers come from the learner, and cells the learner added stay where they put them.

It also says, once for the engine, what a cell is: its text (:func:`source`), its nbgrader id
(:func:`grade_id`), whether it is locked (:func:`is_locked`) and which graded function a visible
check checks (:func:`check_exercise`).
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import figures

MAX_BYTES = 20 << 20
MAX_CELLS = 2000                # the course's notebooks have at most 150
READ_MEMORY = 768 << 20         # address space of the process that reads a submission
READ_CPU_SECONDS = 20           # its CPU time


Notebook = dict[str, Any]
Cell = dict[str, Any]
CHECK_PREFIX = "check_"  # a visible check is the grade cell check_<graded function>


class NotebookProblem(Exception):
    pass


def read_regular(path: str | Path, limit: int = MAX_BYTES, root: str | Path | None = None) -> bytes:
    """The bytes of ``path``, which must be a regular file, read without following links.

    Opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a FIFO cannot stall the grader) and read up to
    ``limit`` bytes (a link to ``/dev/zero`` or a huge file cannot exhaust memory). With ``root``,
    every folder between ``root`` and ``path`` is opened the same way, so a submission folder
    that is itself a link is refused too.
    """
    path = Path(path)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    folder_fd = None
    try:
        if root is not None:
            parts = path.relative_to(root).parts
            folder_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            for part in parts[:-1]:
                next_fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW |
                                  getattr(os, "O_DIRECTORY", 0), dir_fd=folder_fd)
                os.close(folder_fd)
                folder_fd = next_fd
            fd = os.open(parts[-1], flags, dir_fd=folder_fd)
        else:
            fd = os.open(path, flags)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise NotebookProblem("the submission contains a symbolic link where the notebook "
                                  "should be; links are not graded: submit the notebook file "
                                  "itself") from None
        raise NotebookProblem(f"the notebook file could not be opened "
                              f"({error.strerror or error})") from None
    finally:
        if folder_fd is not None:
            os.close(folder_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotebookProblem("the submitted notebook is not a regular file; submit the "
                                  "notebook file itself")
        if info.st_size > limit:
            raise NotebookProblem(f"the notebook is {info.st_size >> 20} MiB, over the "
                                  f"{limit >> 20} MiB limit; clear its outputs (Edit > Clear "
                                  f"Outputs) and resubmit")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise NotebookProblem(f"the notebook is over the {limit >> 20} MiB limit; clear its "
                                  f"outputs (Edit > Clear Outputs) and resubmit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def canonical(notebook: Notebook) -> Notebook:
    """Only what grading reads of a checked notebook: per cell its type, source and nbgrader's
    metadata (plain values); the notebook's own metadata comes from the release."""
    if len(notebook["cells"]) > MAX_CELLS:
        raise NotebookProblem(f"the notebook has {len(notebook['cells'])} cells, more than the "
                              f"{MAX_CELLS} the grader reads; merge or delete cells and resubmit")
    cells = []
    for cell in notebook["cells"]:
        nbgrader = cell["metadata"].get("nbgrader", {})
        plain = {k: v for k, v in nbgrader.items() if isinstance(k, str) and (
            v is None or isinstance(v, (str, bool, int, float)))}
        clean = {"cell_type": cell["cell_type"], "source": cell["source"],
                 "metadata": {"nbgrader": plain} if plain else {}}
        if cell["cell_type"] == "code":
            # a locked cell's figures, as check_structure kept them: a demonstration cell not
            # re-run shows them as submitted
            clean["outputs"] = list(cell["outputs"]) if plain.get("locked") is True else []
            clean["execution_count"] = None
        cells.append(clean)
    return {"cells": cells, "metadata": {}, "nbformat": 4,
            "nbformat_minor": notebook["nbformat_minor"]}


READER = """import importlib, sys
sys.path.insert(0, sys.argv[1])
importlib.import_module(sys.argv[2])._read_in_child(int(sys.argv[3]), sys.argv[4:] == ["figures"])
"""
SIZE_DIGITS = 20  # the length of the first file, in decimal, before two files sent at once


def read_submission(raw: bytes, timeout: float | None = None,
                    figures_from: bytes | None = None) -> tuple[Notebook, list[str]]:
    """``(notebook, flags)`` of a submission's bytes, read in a child process that may use
    :data:`READ_MEMORY` of memory and :data:`READ_CPU_SECONDS` of CPU time: a notebook that needs
    more is refused with a NotebookProblem. ``timeout`` (seconds of wall-clock time, by default
    three times the CPU time) is for a machine too busy to read it: RuntimeError, not a verdict.

    ``figures_from`` is the learner's own file when ``raw`` is a copy without outputs (nbgrader's
    is): each code cell of ``raw`` then shows the figures of the locked cell with its grade id
    in ``figures_from``, read by the same child (a file it cannot read gives no figures)."""
    package = str(Path(__file__).resolve().parents[len(__name__.split(".")) - 1])
    timeout = timeout or 3 * READ_CPU_SECONDS
    command = [sys.executable, "-I", "-S", "-c", READER, package, __name__, str(os.getpid())]
    if figures_from is not None:
        command.append("figures")
        raw = str(len(raw)).zfill(SIZE_DIGITS).encode() + raw + figures_from
    try:
        done = subprocess.run(command, input=raw, capture_output=True,
                              timeout=timeout, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"reading the notebook did not finish within {timeout:g} s") from None
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except ValueError:
        answer = {}
    if "problem" in answer:
        raise NotebookProblem(answer["problem"])
    if "notebook" not in answer:
        raise NotebookProblem(
            f"the grader could not read the notebook within its limits ({READ_MEMORY >> 20} MiB "
            f"of memory, {READ_CPU_SECONDS} s of CPU time): a cell is very large or deeply "
            f"nested; remove it and resubmit")
    return answer["notebook"], list(answer["flags"])


def _read_in_child(parent: int, with_figures: bool = False) -> None:
    """The child's side of :func:`read_submission`: stdin's bytes in (with ``with_figures``, the
    submission's length in :data:`SIZE_DIGITS` digits, the submission, the file to take figures
    from), one JSON answer out."""
    import resource
    from . import flags
    from ..sandbox.lifetime import die_with_parent
    die_with_parent(parent)
    for limit, value in ((resource.RLIMIT_AS, (READ_MEMORY, READ_MEMORY)),
                         (resource.RLIMIT_CPU, (READ_CPU_SECONDS, READ_CPU_SECONDS + 1))):
        try:
            resource.setrlimit(limit, value)
        except (ValueError, OSError):  # macOS refuses an address-space limit
            pass
    try:
        if with_figures:
            size = int(sys.stdin.buffer.read(SIZE_DIGITS))
            raw = sys.stdin.buffer.read(size)[:MAX_BYTES]
            shown = _figures_of(sys.stdin.buffer.read(MAX_BYTES + 1)[:MAX_BYTES])
            read = parse(raw)
            del raw
            for cell in read["cells"]:
                if cell["cell_type"] == "code" and (gid := grade_id(cell)) in shown:
                    cell["outputs"] = shown[gid]
            notebook = canonical(read)
        else:
            notebook = canonical(parse(sys.stdin.buffer.read(MAX_BYTES + 1)[:MAX_BYTES]))
        answer = {"notebook": notebook, "flags": flags.scan(notebook)}
        text = json.dumps(answer, ensure_ascii=False)
    except NotebookProblem as problem:
        text = json.dumps({"problem": str(problem)})
    except (MemoryError, RecursionError):
        text = json.dumps({"problem": (
            f"the notebook is too large or too deeply nested for the grader to read within "
            f"{READ_MEMORY >> 20} MiB of memory; remove the oversized cell and resubmit")})
    sys.stdout.buffer.write(text.encode("utf-8", "surrogatepass"))


def _figures_of(raw: bytes) -> dict[str, list[figures.Output]]:
    """grade id -> the figures its locked cell shows in the notebook ``raw`` (as
    :func:`check_structure` keeps them); none when ``raw`` is no notebook that can be read."""
    try:
        read = canonical(parse(raw))
    except (NotebookProblem, MemoryError, RecursionError):
        return {}
    return {gid: cell["outputs"] for cell in read["cells"]
            if cell.get("outputs") and (gid := grade_id(cell)) is not None}


def load(path: str | Path, root: str | Path | None = None) -> Notebook:
    """A submitted notebook, checked and cleaned (see :func:`check_structure`)."""
    return parse(read_regular(path, root=root))


def parse(raw: bytes) -> Notebook:
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise NotebookProblem(f"the notebook is not valid JSON ({type(error).__name__}); it may "
                              f"have been damaged: download a fresh copy and paste your answers in")
    return check_structure(notebook)


def check_structure(notebook: Any) -> Notebook:
    if not isinstance(notebook, dict):
        raise NotebookProblem("the file is not a Jupyter notebook (no list of cells)")
    if "nbformat" in notebook and notebook["nbformat"] != 4:
        raise NotebookProblem(f"the notebook has format version {notebook.get('nbformat')!r}; "
                              f"this course needs version 4 (open it in JupyterLab and save it)")
    if not isinstance(notebook.get("cells"), list) or notebook.get("nbformat") != 4:
        raise NotebookProblem("the file is not a Jupyter notebook (no list of cells)")
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotebookProblem(f"cell {index + 1} of the notebook is damaged")
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookProblem(f"cell {index + 1} of the notebook has damaged source text")
        given = cell.get("metadata")
        metadata: dict[str, Any] = given if isinstance(given, dict) else {}
        marks = metadata.get("nbgrader")
        nbgrader: dict[str, Any] = marks if isinstance(marks, dict) else {}
        clean = {"cell_type": cell["cell_type"], "source": source,
                 "metadata": {**metadata, "nbgrader": nbgrader} if nbgrader else dict(metadata)}
        if cell["cell_type"] == "code":  # a locked cell keeps its figures, and nothing else
            clean["outputs"] = figures.within_allowance(cell.get("outputs")) \
                if nbgrader.get("locked") is True else []
            clean["execution_count"] = None
        cells.append(clean)
    return {"cells": cells, "metadata": notebook.get("metadata", {}) if isinstance(
        notebook.get("metadata"), dict) else {}, "nbformat": 4,
        "nbformat_minor": notebook.get("nbformat_minor", 5)
        if isinstance(notebook.get("nbformat_minor"), int) else 5}


def source(cell: Cell) -> str:
    """A cell's text (notebooks store it as one string or as a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def grade_id(cell: Cell) -> str | None:
    found = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return found if isinstance(found, str) else None


def is_locked(cell: Cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and not meta.get("solution")


def is_written_answer(cell: Cell) -> bool:
    """A part graded by hand: nbgrader's graded markdown answer cell, or a task."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("task") or (meta.get("grade") and cell.get("cell_type") == "markdown"))


def check_exercise(cell: Cell) -> str | None:
    """The graded function a visible check checks (a locked grade cell ``check_<function>``), or
    None for any other cell."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    gid = grade_id(cell) or ""
    if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution") \
            and gid.startswith(CHECK_PREFIX):
        return gid[len(CHECK_PREFIX):]
    return None


def restore_locked(submitted: Notebook, released: Notebook) -> tuple[Notebook, list[str]]:
    """The released notebook's cell order with the learner's answers and added cells in it.

    Returns ``(notebook, notes)``; ``notes`` lists, for the learner, what had to be restored.
    """
    released_ids = {grade_id(c): c for c in released["cells"] if grade_id(c)}
    answers: dict[str, Any] = {}
    extras_after: dict[str | None, list[Any]] = {}
    notes: list[str] = []
    previous = None
    for cell in submitted["cells"]:
        gid = grade_id(cell)
        if gid is not None and gid in released_ids:
            if not is_locked(released_ids[gid]):
                answers[gid] = cell
            elif cell["source"] != released_ids[gid]["source"]:
                notes.append(f"the locked cell '{gid}' was edited; the original was put back")
            previous = gid
        else:
            extras_after.setdefault(previous, []).append(cell)
    cells = list(extras_after.get(None, []))
    for cell in released["cells"]:
        gid = grade_id(cell)
        if gid is None:  # not tracked by nbgrader: the learner's copy (among the extras) stays
            continue
        if is_locked(cell):
            if not any(grade_id(c) == gid for c in submitted["cells"]):
                notes.append(f"the locked cell '{gid}' was deleted; it was put back")
            cells.append(cell)
        else:
            if gid not in answers:
                notes.append(f"the answer cell '{gid}' is missing from the submission")
            answer = answers.get(gid, cell)
            restored = dict(answer)
            restored["metadata"] = cell["metadata"]  # answer metadata comes from the release
            cells.append(restored)
        cells.extend(extras_after.get(gid, []))
    result = dict(submitted)
    result["cells"] = cells
    result["metadata"] = released.get("metadata", {})
    return result, notes


DEFINED = re.compile(r"^(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)  # linear: learner text
HEADING = re.compile(r"^#{1,2}[ \t]+([^\n]*)", re.M)  # sections, not a "Visible check"


def cell_label(notebook: dict[str, Any], number: int) -> str:
    """How a learner finds code cell ``number`` (1-based, counting every cell) in JupyterLab,
    which shows no cell numbers: by the functions it defines ("the cell that defines `align`"),
    the check it holds ("the check of `align`"), or the heading above it ("a cell under 'Step 3 ·
    Attend'"); its number only when nothing names it."""
    cells: list[Cell] = notebook.get("cells", [])
    cell: Cell = cells[number - 1] if 0 < number <= len(cells) else {}
    defined = DEFINED.findall(source(cell))
    if defined:
        names = ", ".join(f"`{name}`" for name in defined[:3])
        return f"the cell that defines {names}"
    checked = check_exercise(cell)
    if checked:
        return f"the check of `{checked}`"
    for above in reversed(cells[:max(0, number - 1)]):
        if above.get("cell_type") == "markdown":
            headings = HEADING.findall(source(above))
            if headings:
                return f"a cell under '{headings[-1].strip().rstrip('#').strip()[:80]}'"
    return f"code cell {number}"
