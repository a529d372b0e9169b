"""Write and review instructor notebooks as plain text.

The instructor notebooks in ``solutions/`` are the source of truth. For review and bulk edits they
round-trip through a plain-text form where each cell starts with a header line::

    # %% markdown id=goals
    # %% code id=softmax solution
    # %% code id=check_softmax grade points=4
    # %% code id=imports locked setup
    # %% code                      (an ordinary cell the learner may edit freely)

``id`` is the nbgrader grade_id; ``solution``, ``grade`` (with ``points``) and ``locked`` are
nbgrader's cell types; ``setup`` tags definitions the reference solution needs (imports, given
code), and ``demonstration`` a locked experiment the grader does not re-run
(:mod:`autograder.engine.demonstrations`). Grade cells are always locked. Usage::

    python -m autograder.tools.authoring export solutions/02-scoring/scoring.ipynb > scoring.txt
    python -m autograder.tools.authoring import scoring.txt solutions/02-scoring/scoring.ipynb
"""
import json
import re
import sys
from typing import Any

from helpers.kernel import LANGUAGE_INFO

HEADER = re.compile(r"^# %% (markdown|code)((?: [\w=.\-]+)*)\s*$")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def to_notebook(text: str) -> dict[str, Any]:
    cells: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        match = HEADER.match(line)
        if match:
            current = _new_cell(match.group(1), match.group(2).split())
            cells.append(current)
        elif current is None:
            if line.strip():
                raise ValueError(f"text before the first cell header: {line!r}")
        else:
            current["_lines"].append(line)
    for index, cell in enumerate(cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        cell["id"] = cell.get("id") or grade_id or f"cell-{index:03d}"
        lines = cell.pop("_lines")
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        cell["source"] = "\n".join(lines)
    # the language the course's kernel reports: JupyterLab then opens the notebook unmodified
    return {"cells": cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO},
            "nbformat": 4, "nbformat_minor": 5}


def _new_cell(kind: str, words: list[str]) -> dict[str, Any]:
    attrs: dict[str, str | bool] = {}  # id=..., points=..., and the words that stand alone
    for word in words:
        if "=" in word:
            name, value = word.split("=", 1)
            attrs[name] = value
        else:
            attrs[word] = True
    unknown = set(attrs) - {"id", "solution", "grade", "points", "locked", "setup", "demonstration"}
    if unknown:
        raise ValueError(f"unknown cell attributes {sorted(unknown)}")
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "_lines": []}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    tags = [tag for tag in ("setup", "demonstration") if tag in attrs]
    if tags:
        cell["metadata"]["tags"] = tags
    flags = {k: bool(attrs.get(k)) for k in ("solution", "grade", "locked")}
    if any(flags.values()):
        if "id" not in attrs:
            raise ValueError(f"an nbgrader cell needs an id= ({words})")
        meta: dict[str, Any] = {"grade": flags["grade"], "grade_id": attrs["id"],
                "locked": flags["locked"] or (flags["grade"] and not flags["solution"]),
                "schema_version": 3, "solution": flags["solution"], "task": False}
        if flags["grade"]:
            meta["points"] = float(attrs["points"])
        cell["metadata"]["nbgrader"] = meta
    elif "id" in attrs:
        cell["id"] = attrs["id"]
    return cell


def from_notebook(notebook: dict[str, Any]) -> str:
    parts: list[str] = []
    for cell in notebook["cells"]:
        words = [cell["cell_type"]]
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta:
            words.append(f"id={meta['grade_id']}")
            if meta.get("solution"):
                words.append("solution")
            if meta.get("grade"):
                words += ["grade", f"points={meta['points']:g}"]
            elif meta.get("locked"):
                words.append("locked")
        words += [tag for tag in ("setup", "demonstration")
                  if tag in cell.get("metadata", {}).get("tags", [])]
        source = cell["source"]
        source = "".join(source) if isinstance(source, list) else source
        parts.append(f"# %% {' '.join(words)}\n{source}\n")
    return "\n".join(parts)


def dump(notebook: dict[str, Any]) -> str:
    """Notebook text exactly as nbformat (and so nbgrader and JupyterLab) writes it."""
    import nbformat
    text: str = nbformat.writes(nbformat.from_dict(notebook))
    return text + "\n"


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "export":
        with open(argv[1], encoding="utf-8") as handle:
            sys.stdout.write(from_notebook(json.load(handle)))
        return 0
    if len(argv) == 3 and argv[0] == "import":
        with open(argv[1], encoding="utf-8") as handle:
            notebook = to_notebook(handle.read())
        with open(argv[2], "w", encoding="utf-8") as handle:
            handle.write(dump(notebook))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
