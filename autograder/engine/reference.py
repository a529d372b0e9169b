"""The reference solution of an assignment, loaded from its instructor notebook in ``solutions/``.

The definitions a suite compares against are the very code the solution notebook teaches: the
code cells marked as nbgrader solution cells, plus cells tagged ``setup`` (imports, code the
notebook gives the learner). Nothing is written twice.
"""
import functools
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "solutions"
RELEASE = REPO / "notebooks"


def assignments():
    return sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def solution_notebook(assignment):
    found = sorted((SOLUTIONS / assignment).glob("*.ipynb"))
    if len(found) != 1:
        raise LookupError(f"expected one notebook in solutions/{assignment}, found {len(found)}")
    return found[0]


def release_notebook(assignment):
    return RELEASE / assignment / solution_notebook(assignment).name


def definition_cells(notebook):
    """Code cells that define things: nbgrader solution cells and cells tagged ``setup``."""
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        meta = cell.get("metadata", {})
        if meta.get("nbgrader", {}).get("solution") or "setup" in meta.get("tags", []):
            source = cell["source"]
            cells.append("".join(source) if isinstance(source, list) else source)
    return cells


@functools.lru_cache(maxsize=None)
def _compiled(assignment):
    notebook = json.loads(solution_notebook(assignment).read_text(encoding="utf-8"))
    return [compile(source, f"<{assignment} reference cell {index}>", "exec")
            for index, source in enumerate(definition_cells(notebook))]


def namespace(assignment):
    """A fresh namespace with the reference definitions, executed anew for each caller.

    Functions defined here look their helpers up in this very dict, as in a learner's kernel:
    replace ``softmax`` in it and ``attend`` calls the replacement."""
    result = {"__name__": f"reference_{assignment.replace('-', '_')}"}
    for code in _compiled(assignment):
        exec(code, result)  # trusted: the course's solution notebook
    return result
