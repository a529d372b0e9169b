"""nbgrader integration: ``nbgrader autograde`` grades with the hidden suites.

:class:`HiddenSuiteGrading` takes the place of nbgrader's ``Execute`` step. It grades the notebook
with the course's engine (sandboxed kernel, hidden suite in this trusted process), copies the
learner's outputs back for the feedback pages, and gives each grade cell ``check_<function>`` an
output nbgrader reads as partial credit: a feedback table followed by the number of points the
hidden tests of ``<function>`` earned. A learner's stray warning on stderr can no longer zero a
correct answer, because a grade cell's outputs are written here, not by the learner's code.
"""
import json
import os
import tempfile
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat import from_dict
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,
                                    LimitOutput, NbGraderPreprocessor, SaveAutoGrades)
from traitlets import Unicode

from . import course
from . import grade as engine

CHECK_PREFIX = "check_"


def exercise_of(cell):
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("grade") and not meta.get("solution") and gid.startswith(CHECK_PREFIX):
        return gid[len(CHECK_PREFIX):]
    return None


def feedback_markdown(exercise, tests):
    lines = [f"**Hidden tests of `{exercise}`**", "", "| test | points | |", "|---|---|---|"]
    for test in tests:
        mark = "passed" if test["status"] == "passed" else test["feedback"].replace("|", "\\|")
        lines.append(f"| {test['name'].split(': ', 1)[-1]} | {test['score']:g} / "
                     f"{test['max_score']:g} | {mark} |")
    return "\n".join(lines)


def annotate(notebook, result, executed):
    """Write outputs and per-exercise scores into ``notebook`` (a dict or NotebookNode)."""
    unused = [c for c in (executed or {"cells": []})["cells"] if c["cell_type"] == "code"]
    by_exercise = {}
    for test in result["tests"]:
        by_exercise.setdefault(test["exercise"], []).append(test)
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        exercise = exercise_of(cell)
        if exercise is not None:
            tests = by_exercise.get(exercise, [])
            score = sum(t["score"] for t in tests)
            points = float(cell["metadata"]["nbgrader"]["points"])
            cell["outputs"] = [
                {"output_type": "display_data", "metadata": {},
                 "data": {"text/markdown": feedback_markdown(exercise, tests),
                          "text/plain": f"hidden tests of {exercise}: {score:g} points"}},
                {"output_type": "execute_result", "metadata": {}, "execution_count": None,
                 "data": {"text/plain": repr(round(min(score, points), 6))}},
            ]
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        match = next((c for c in unused if c["source"] == source), None)
        if match is not None:
            unused.remove(match)
            cell["outputs"] = [o for o in match.get("outputs", [])]
    if result["errors"]:
        notebook.setdefault("metadata", {})["attention_course_errors"] = list(result["errors"])
    return notebook


class HiddenSuiteGrading(NbGraderPreprocessor):
    """Execute in the sandbox and score grade cells from the hidden suite (replaces Execute)."""

    sandbox = Unicode(os.environ.get("ATTENTION_COURSE_SANDBOX", "auto"),
                      help="auto, require or off: how learner code is confined").tag(config=True)

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        name = resources["nbgrader"]["notebook"]
        with tempfile.TemporaryDirectory(prefix="attention-autograde-") as folder:
            path = Path(folder) / f"{name}.ipynb"
            path.write_text(json.dumps(nb), encoding="utf-8")
            result, executed = engine.grade_notebook(
                path, assignment, engine.Options(sandbox=self.sandbox), cache=course.cache_dir())
        for error in result["errors"]:
            self.log.warning("%s/%s: %s", assignment, name, error)
        plain = annotate(json.loads(json.dumps(nb)), result, executed)
        for index, cell in enumerate(plain["cells"]):
            if cell["cell_type"] == "code":
                nb.cells[index].outputs = [from_dict(o) for o in cell["outputs"]]
        return nb, resources


def configure(c):
    """Make ``nbgrader autograde`` use the hidden suites (called from nbgrader_config.py)."""
    c.Autograde.autograde_preprocessors = [
        HiddenSuiteGrading, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    c.OverwriteCells.add_missing_cells = True
