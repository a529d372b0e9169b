"""The reference solution of an assignment, loaded from its instructor notebook.

The definitions a suite compares against are the very code the solution notebook teaches: the
code cells marked as nbgrader solution cells, plus cells tagged ``setup`` (imports, code the
notebook gives the learner). Nothing is written twice.
"""
from __future__ import annotations

import json
from types import CodeType
from typing import Any

from .assignment import Assignment, contents_digest
from .notebook import source

# Compiled definitions, by notebook path and content: an edited notebook is compiled anew, even in
# a process that keeps running (the formgrader).
_compiled: dict[tuple[str, str], list[CodeType]] = {}


def definition_cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    """Code cells that define things: nbgrader solution cells and cells tagged ``setup``."""
    cells = []
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {})
        if cell["cell_type"] == "code" and (meta.get("nbgrader", {}).get("solution")
                                            or "setup" in meta.get("tags", [])):
            cells.append(cell)
    return cells


def compiled(assignment: Assignment) -> list[CodeType]:
    """The reference definitions of ``assignment``, compiled."""
    key = (str(assignment.solution), contents_digest([assignment.solution]))
    if key not in _compiled:
        notebook = json.loads(assignment.solution.read_bytes().decode("utf-8"))
        _compiled[key] = [compile(source(cell), f"<{assignment.name} reference cell {index}>",
                                  "exec")
                          for index, cell in enumerate(definition_cells(notebook))]
    return _compiled[key]


def namespace(assignment: Assignment) -> dict[str, Any]:
    """A fresh namespace with the reference definitions, executed anew for each caller.

    Functions defined here look their helpers up in this very dict, as in a learner's kernel:
    replace ``softmax`` in it and ``attend`` calls the replacement."""
    result: dict[str, Any] = {"__name__": f"reference_{assignment.name.replace('-', '_')}"}
    for code in compiled(assignment):
        exec(code, result)  # trusted: the course's solution notebook
    return result
