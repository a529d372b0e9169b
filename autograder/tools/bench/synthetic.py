"""The class the bench grades: the demo's mix of answers for every assignment measured (or those
chosen with ``--assignments``), each submission made distinct by a comment of its own, and the
notebooks' run-time budgets."""
from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import demo
from ...course import folders, instructor
from ...engine.assignment import Course


LIGHT_ASSIGNMENTS = ("00-getting-started", "02-scoring")  # the capacity curve's class
NOTEBOOK_BUDGET = 15.0    # seconds, from a fresh kernel on 2 cores; the heavier three have their own
NOTEBOOK_BUDGETS = {"10-learning-self-attention": 20.0, "11-transformer-block": 30.0,
                    "12-real-words": 60.0}
_selected: list[str] | None = None   # --assignments; None: every assignment of the course


def select(names: list[str] | None) -> None:
    """Measure only the assignments ``names`` (``--assignments``); None: every one."""
    global _selected
    _selected = names


def selected() -> list[str] | None:
    return _selected


def course() -> Course:
    """The course measured: the one in nbgrader's course root (``make bench`` runs in it)."""
    return folders.current_course()


def assignments() -> list[str]:
    """The names of the assignments measured: every one of the course, in its order, or those
    chosen with ``--assignments``."""
    names = [a.name for a in course().assignments()]
    return names if _selected is None else [a for a in names if a in _selected]


def light_assignments() -> list[str]:
    """The capacity curve's assignments (:data:`LIGHT_ASSIGNMENTS`) that the course has."""
    known = {a.name for a in course().assignments()}
    return [a for a in LIGHT_ASSIGNMENTS if a in known]


def notebook_budget(name: str) -> float:
    return NOTEBOOK_BUDGETS.get(name, NOTEBOOK_BUDGET)


def make_distinct(notebook: dict[str, Any], tag: str) -> dict[str, Any]:
    """A copy of ``notebook`` whose first answer cell starts with a comment naming ``tag``: other
    bytes, the same behaviour and score (a comment line changes neither what runs nor a cell's
    last expression)."""
    notebook = copy.deepcopy(notebook)
    line = f"# submission {tag}\n"
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and \
                cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            if isinstance(cell["source"], list):
                cell["source"] = [line, *cell["source"]]
            else:
                cell["source"] = line + cell["source"]
            return notebook
    raise ValueError("the notebook has no answer cell to vary")


def class_notebooks(size_per_assignment: int, distinct: bool = True,
                    names: list[str] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """[(learner, assignment, notebook dict)]: the demo's mix of reference answers, mistakes,
    alternatives, blanks and cheats, ``size_per_assignment`` learners per assignment measured (or
    of ``names``), each submission made distinct (``distinct``) or left as the demo writes it
    (identical ones from an assignment's 5th learner on: see :func:`has_identical`)."""
    here = course()
    names = assignments() if names is None else names
    plans = demo.sample_class(size_per_assignment, here, names)
    made: dict[tuple[str, str], dict[str, Any]] = {}  # (assignment, plan) -> its notebook
    out: list[tuple[str, str, dict[str, Any]]] = []
    for assignment in names:
        for learner, per in plans.items():
            key = (assignment, per[assignment].describe())
            if key not in made:
                made[key] = demo.answer_notebook(here.assignment(assignment), per[assignment])
            notebook = made[key]
            if distinct:
                notebook = make_distinct(notebook, f"{learner}/{assignment}")
            out.append((learner, assignment, notebook))
    return out


def synthetic_class(state: Path, per_assignment: int, distinct: bool = True) -> list[Path]:
    """Write the class into ``state/submitted/<learner>/<assignment>/``; return the paths."""
    paths: list[Path] = []
    for learner, assignment, notebook in class_notebooks(per_assignment, distinct):
        path = state / "submitted" / learner / assignment / course().assignment(
            assignment).release.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook))
        paths.append(path)
    return paths


def _fresh_state(root: str | Path, per_assignment: int,
                 distinct: bool = True) -> tuple[Path, list[Path]]:
    state = Path(tempfile.mkdtemp(prefix="state-", dir=root))
    for assignment in assignments():
        instructor.nbgrader("generate_assignment", assignment, "--force",
                            f"--CourseDirectory.release_directory={state / 'release'}",
                            state=state, cwd=course().root)
    return state, synthetic_class(state, per_assignment, distinct)


def distinct_count(paths: Iterable[str | Path]) -> int:
    return len({Path(p).read_bytes() for p in paths})
