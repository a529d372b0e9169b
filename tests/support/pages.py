"""The feedback pages of a class of two on 02-scoring, made as an instructor makes them (the
course's autograde, then nbgrader's ``generate_feedback``): the solution, run as a learner's lab
runs it, and the release as handed out."""
import json
import re

import nbformat
import pytest

from autograder.course import instructor
from autograder.engine.options import Options
from autograder.sandbox import confinement
from support import COURSE, execute, write_notebook

ASSIGNMENT = "02-scoring"
# The tests that read the class's pages, in tests/course/ and tests/accessibility/, run on one
# worker (an xdist group), where the class is graded once for all of them (a session fixture).
ON_THE_CLASS = pytest.mark.xdist_group("feedback-class")


def graded_feedback(tmp_path_factory):
    """{learner: feedback HTML} for the solution ("honest") and the release ("blank"): the
    ``feedback`` fixture (tests/conftest.py), graded once per test process; the tests only read
    the pages."""
    if not confinement.available():
        pytest.skip("bubblewrap is not installed: the class cannot be graded here")
    state = tmp_path_factory.mktemp("feedback") / "course"
    state.mkdir()
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                    f"--CourseDirectory.release_directory={state.parent / 'release'}", state=state)
    solution = COURSE.assignment(ASSIGNMENT).solution
    released = state.parent / "release" / ASSIGNMENT / solution.name
    # the honest learner ran their notebook before handing it in, as JupyterLab does: its
    # demonstrations, which the grader does not re-run, keep the figures they drew
    ran = execute(nbformat.read(str(solution), as_version=4), solution.parent)
    write_notebook(state / "submitted" / "honest" / ASSIGNMENT / solution.name,
                   json.loads(nbformat.writes(ran)))
    write_notebook(state / "submitted" / "blank" / ASSIGNMENT / solution.name,
                   json.loads(released.read_text()))
    instructor.autograde(COURSE.assignment(ASSIGNMENT), jobs=2, state=state, progress=False,
                         options=Options(sandbox="require"))
    instructor.nbgrader("generate_feedback", ASSIGNMENT, state=state)
    scores = {learner: float(re.search(r"autograded ([0-9.]+) of ([0-9.]+)", (next(
        (state / "feedback" / learner / ASSIGNMENT).glob("*.html"))).read_text()).group(1))
        for learner in ("honest", "blank")}
    assert scores["honest"] > 0 and scores["blank"] == 0, scores  # graded, not failed to start
    pages = {}
    for learner in ("honest", "blank"):
        [page] = (state / "feedback" / learner / ASSIGNMENT).glob("*.html")
        pages[learner] = page
    return pages
