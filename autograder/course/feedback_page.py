"""The feedback page a learner receives: nbgrader's, made readable anywhere.

:func:`configure` (called by :func:`autograder.course.config.plugin_settings`) puts the course's
``feedback`` template (``autograder/templates/feedback``) in front of nbgrader's, under the name
nbgrader's formgrader asks for, and registers the filter it uses:

- the template writes its own head: a language, no MathJax from a public CDN (formulas are MathML,
  :mod:`autograder.course.mathml`, made by :class:`autograder.course.sanitize.SafeMarkdown`), underlined links;
- ``graded_part_name``: what the page's index calls a graded cell: the function a check cell
  grades, or the written answer's name, never nbgrader's "Test cell" six times over.

The formgrader's grading page ("formgrade") stays nbgrader's but for one macro: the course's
``formgrade/mathjax.html.j2`` loads no MathJax from a public CDN (formulas are MathML there too)
and tells nbgrader's script, which waits for MathJax's startup, that it has ended, so the grading
shortcuts work with no network.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

import nbgrader
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades

from ..engine import notebook
from ..engine.result import score_story

if TYPE_CHECKING:
    from nbformat import NotebookNode
    from traitlets.config import Config

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(nbgrader.__file__)),
                                  "server_extensions", "formgrader", "templates")


def graded_part_name(cell: notebook.Cell) -> str:
    """``check_align`` -> "align"; ``q_max_subtraction`` -> "Written answer: max subtraction"."""
    checked = notebook.check_exercise(cell)
    if checked is not None:
        return checked
    grade_id = notebook.grade_id(cell) or ""
    words = re.sub(r"^q_", "", grade_id).replace("_", " ").replace("-", " ").strip()
    if cell.get("cell_type") == "markdown":
        return f"Written answer: {words}" if words else "Written answer"
    return words or "Graded cell"


class GradesWithPending(GetGrades):  # type: ignore[misc]  # nbgrader is untyped
    """nbgrader's GetGrades, which puts each graded cell's score on it, and also whether that
    score still waits for a person (a written answer not graded yet scores 0 in the gradebook,
    which a page must not show as a grade)."""

    def _get_score(self, cell: NotebookNode, resources: dict[str, Any]) -> None:
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.nbgrader["score"] = grade.score       # as GetGrades does, with one query
        cell.metadata.nbgrader["points"] = grade.max_score
        cell.metadata.nbgrader["pending"] = bool(grade.needs_manual_grade)


def _pending(meta: dict[str, Any]) -> bool:
    return bool(meta.get("pending")) or meta.get("score") is None


def score_story_of(nb: notebook.Notebook) -> str:
    """The page's grade as the course states it everywhere (``score_story``): the autograded
    part (the check cells), then the written answers, graded or still pending."""
    autograded = autograded_max = written = written_max = 0.0
    pending = False
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not (meta.get("grade") or meta.get("task")):
            continue
        points = float(meta.get("points") or 0)
        score = meta.get("score")
        if not notebook.is_written_answer(cell):
            autograded_max += points
            autograded += float(score or 0)
        else:
            written_max += points
            if _pending(meta):
                pending = True
            else:
                written += float(score)
    return score_story(autograded, autograded_max, written_max, None if pending else written)


def configure(c: Config) -> None:
    """Both template folders, the course's first (of the formgrader's own page, "formgrade",
    only its mathjax macro is the course's); the grades read with what is pending."""
    c.GenerateFeedback.preprocessors = [GradesWithPending, CSSHTMLHeaderPreprocessor]
    c.HTMLExporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    c.HTMLExporter.filters.update({
        "graded_part_name": "autograder.course.feedback_page.graded_part_name",
        "score_story": "autograder.course.feedback_page.score_story_of"})
