"""Read a submitted notebook defensively and put back what the learner may not change.

A submission is untrusted JSON. :func:`load` turns anything unreadable into a
:class:`NotebookProblem` with a sentence for the learner. :func:`restore_locked` rebuilds the
notebook on the released one: locked cells (instructions, given code, visible checks) come from the
release, answers come from the learner, and cells the learner added stay where they put them.
"""
import errno
import json
import os
import stat
from pathlib import Path

MAX_BYTES = 20 << 20


class NotebookProblem(Exception):
    pass


def read_regular(path, limit=MAX_BYTES, root=None):
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


def load(path, root=None):
    """A submitted notebook, checked and cleaned (see :func:`check_structure`)."""
    return parse(read_regular(path, root=root))


def parse(raw):
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise NotebookProblem(f"the notebook is not valid JSON ({type(error).__name__}); it may "
                              f"have been damaged: download a fresh copy and paste your answers in")
    return check_structure(notebook)


def check_structure(notebook):
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
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        nbgrader = metadata.get("nbgrader") if isinstance(metadata.get("nbgrader"), dict) else {}
        clean = {"cell_type": cell["cell_type"], "source": source,
                 "metadata": {**metadata, "nbgrader": nbgrader} if nbgrader else dict(metadata)}
        if cell["cell_type"] == "code":
            clean["outputs"] = []
            clean["execution_count"] = None
        cells.append(clean)
    return {"cells": cells, "metadata": notebook.get("metadata", {}) if isinstance(
        notebook.get("metadata"), dict) else {}, "nbformat": 4,
        "nbformat_minor": notebook.get("nbformat_minor", 5)
        if isinstance(notebook.get("nbformat_minor"), int) else 5}


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def is_locked(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and not meta.get("solution")


def restore_locked(submitted, released):
    """The released notebook's cell order with the learner's answers and added cells in it.

    Returns ``(notebook, notes)``; ``notes`` lists, for the learner, what had to be restored.
    """
    released_ids = {grade_id(c): c for c in released["cells"] if grade_id(c)}
    answers, extras_after, notes = {}, {}, []
    previous = None
    for cell in submitted["cells"]:
        gid = grade_id(cell)
        if gid in released_ids:
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
