"""The feedback page a learner receives: nbgrader's, made readable anywhere.

:func:`configure` (called by :func:`autograder.course.nbgrader_plugin.configure`) puts the course's
``feedback`` template (``autograder/templates/feedback``) in front of nbgrader's, under the name
nbgrader's formgrader asks for, and registers the filter it uses:

- the template writes its own head: a language, no MathJax from a public CDN (formulas are MathML,
  :mod:`autograder.course.mathml`, made by :class:`autograder.course.sanitize.SafeMarkdown`), underlined links;
- ``graded_part_name``: what the page's index calls a graded cell: the function a check cell
  grades, or the written answer's name, never nbgrader's "Test cell" six times over.
"""
import os
import re

import nbgrader

from ..engine import notebook

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(nbgrader.__file__)),
                                  "server_extensions", "formgrader", "templates")


def graded_part_name(cell):
    """``check_align`` -> "align"; ``q_max_subtraction`` -> "Written answer: max subtraction"."""
    checked = notebook.check_exercise(cell)
    if checked is not None:
        return checked
    grade_id = notebook.grade_id(cell) or ""
    words = re.sub(r"^q_", "", grade_id).replace("_", " ").replace("-", " ").strip()
    if cell.get("cell_type") == "markdown":
        return f"Written answer: {words}" if words else "Written answer"
    return words or "Graded cell"


def configure(c):
    """Both template folders, the course's first (the formgrader's own page, "formgrade", is
    only in nbgrader's and unchanged)."""
    c.HTMLExporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    c.HTMLExporter.filters.update({
        "graded_part_name": "autograder.course.feedback_page.graded_part_name"})
