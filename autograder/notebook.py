"""Read a submitted notebook defensively and put back what the learner may not change.

A submission is untrusted JSON. :func:`load` turns anything unreadable into a
:class:`NotebookProblem` with a sentence for the learner. :func:`restore_locked` rebuilds the
notebook on the released one: locked cells (instructions, given code, visible checks) come from the
release, answers come from the learner, and cells the learner added stay where they put them.
"""
import json
from pathlib import Path

MAX_BYTES = 20 << 20


class NotebookProblem(Exception):
    pass


def load(path):
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise NotebookProblem(f"the notebook file could not be opened ({error.strerror})")
    if size > MAX_BYTES:
        raise NotebookProblem(f"the notebook is {size >> 20} MiB, over the {MAX_BYTES >> 20} MiB "
                              f"limit; clear its outputs (Edit > Clear Outputs) and resubmit")
    try:
        notebook = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NotebookProblem(f"the notebook is not valid JSON ({error}); it may have been "
                              f"damaged: download a fresh copy and paste your answers in")
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
