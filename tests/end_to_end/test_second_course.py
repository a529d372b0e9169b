"""The engine grades a second course, by the same commands, in the sandbox.

tests/end_to_end/second-course/ is a course of its own: one notebook with one graded function
(``center``), its hidden suite, one mutant and one alternative, nbgrader's default folders
(``source/``, ``release/``) and its suites in ``suites/``; nothing of it is known to the engine
but through its course root. It is copied to a temporary folder, then graded by
``python -m autograder grade`` (run from another folder), by nbgrader's own ``autograde`` and the
engine's ``autograde``, and through its Gradescope zip.
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.course import gradescope, instructor
from autograder.engine import catalogue, grade, reference
from autograder.engine.assignment import Course
from autograder.sandbox import confinement
from support import interpreter_open_to_others, sandbox_mode, write_notebook

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parent / "second-course"
ASSIGNMENT = "centering"
FULL = 3.0
MISTAKE = "subtract the mean of the whole array instead of each row's"


@pytest.fixture
def course(tmp_path):
    """A copy of the second course, wherever the engine is."""
    root = tmp_path / "second-course"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return Course.from_root(root)


def submissions(course, folder):
    """name -> a notebook of the second course: right, a catalogued mistake, a correct
    alternative, untouched."""
    assignment = course.assignment(ASSIGNMENT)
    [mutant] = catalogue.mutants(assignment)
    [alternative] = catalogue.alternatives(assignment)
    notebooks = {"alice": catalogue.filled_notebook(assignment),
                 "bob": catalogue.notebook_with(mutant),
                 "carol": catalogue.notebook_with(alternative),
                 "dan": json.loads(assignment.release.read_text())}
    return {name: write_notebook(folder / name / ASSIGNMENT / assignment.release.name, notebook)
            for name, notebook in notebooks.items()}


def run(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def test_its_release_is_what_nbgrader_generates_and_its_suite_proves_itself(course, tmp_path):
    generated = tmp_path / "generated"
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                        f"--CourseDirectory.release_directory={generated}",
                        state=tmp_path / "state", cwd=course.root)
    assignment = course.assignment(ASSIGNMENT)
    assert (generated / ASSIGNMENT / "centering.ipynb").read_text() == \
        assignment.release.read_text()
    assert "raise NotImplementedError" in assignment.release.read_text()
    assert grade.grade_local(assignment, reference.namespace(assignment)).score == FULL
    [mutant] = catalogue.mutants(assignment)
    [alternative] = catalogue.alternatives(assignment)
    assert grade.grade_local(assignment, mutant.namespace()).score < FULL
    assert grade.grade_local(assignment, alternative.namespace()).score == FULL


def test_the_command_line_grades_it_in_the_sandbox_from_another_folder(course, tmp_path):
    paths = submissions(course, tmp_path / "class")
    out = tmp_path / "results.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run("grade", "--course", course.root, "--sandbox", sandbox_mode(), "--json", out,
        *paths.values(), cwd=elsewhere)
    results = dict(zip(paths, json.loads(out.read_text())))
    assert {name: r["score"] for name, r in results.items()} == {
        "alice": FULL, "bob": 0.0, "carol": FULL, "dan": 0.0}
    assert all(r["assignment"] == ASSIGNMENT and r["max_score"] == FULL for r in results.values())
    assert all(f"This is what you get when you {MISTAKE}" in t["feedback"]
               for t in results["bob"]["tests"][:2])
    assert results["alice"]["checks"] == {"center": {"status": "passed",
                                                     "message": "the visible checks pass"}}
    assert any("not implemented yet" in t["feedback"] for t in results["dan"]["tests"])


def test_nbgrader_and_the_engines_autograde_grade_it_into_its_gradebook(course, tmp_path):
    state = tmp_path / "state"
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force", state=state,
                        cwd=course.root)
    paths = submissions(course, state / "submitted")
    expected = {"alice": FULL, "bob": 0.0, "carol": FULL, "dan": 0.0}
    instructor.nbgrader("autograde", ASSIGNMENT, state=state, cwd=course.root,
                        env_extra={"AUTOGRADER_SANDBOX": sandbox_mode()})
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        assert {s: book.find_submission(ASSIGNMENT, s).score for s in paths} == expected
    # the engine's parallel autograde, recording with the course's own nbgrader step
    done = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT,
                           "--course", course.root, "--sandbox", sandbox_mode(), "--jobs", "2"],
                          cwd=course.root, capture_output=True, text=True, timeout=900,
                          env=instructor.nbgrader_env(state))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"graded {len(paths)} submissions of {ASSIGNMENT}" in done.stdout
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        scores = {s: book.find_submission(ASSIGNMENT, s).score for s in paths}
    assert scores == expected
    feedback = (state / "autograded" / "bob" / ASSIGNMENT / "centering.ipynb").read_text()
    assert "Hidden tests of" in feedback and "This is what you get when you" in feedback


@pytest.mark.xdist_group("users")
def test_its_gradescope_zip_holds_its_suite_and_the_engine_and_grades_it(course, tmp_path):
    zipped = tmp_path / "centering.zip"
    run("gradescope", ASSIGNMENT, "--course", course.root, "-o", zipped, cwd=tmp_path)
    with zipfile.ZipFile(zipped) as archive:
        names = set(archive.namelist())
        settings = json.loads(archive.read("settings.json"))
    assert {"suites/centering/test_centering.py", "suites/centering/mutants.py",
            "solutions/centering/centering.ipynb", "notebooks/centering/centering.ipynb",
            "autograder/engine/grade.py", "autograder/sandbox/confinement.py",
            "autograder/engine/checks.py"} <= names
    assert "suites/centering/alternatives.py" not in names
    # no learner package of its own, and nothing of the attention course's
    assert not [n for n in names if n.startswith(("learner/", "autograder/tools/", "helpers/"))]
    assert settings["assignment"] == ASSIGNMENT and settings["notebooks"] == {
        ASSIGNMENT: "centering.ipynb"}
    if os.geteuid() != 0 or not confinement.available():
        pytest.skip("grading in Gradescope's layout needs root and bubblewrap (CI has both)")
    paths = submissions(course, tmp_path / "uploads")
    with interpreter_open_to_others():  # learner code runs as another user, with this Python
        scores = {name: gradescope.try_zip(zipped, path)["score"] for name, path in paths.items()
                  if name in ("alice", "bob")}
    assert scores == {"alice": FULL, "bob": 0.0}


def test_its_suite_runs_by_hand_against_the_reference_a_mutant_and_an_alternative(course):
    """The engine's pytest plugin, turned on by one line in the course's suites/conftest.py,
    finds this course from the suite's folder (a layout by default, at a depth of its own): the
    reference passes, the mutant fails the tests it should, the alternative passes, and an
    unknown name lists the valid ones."""
    suite_folder = course.suites_folder / ASSIGNMENT

    def by_hand(*args):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run([sys.executable, "-m", "pytest", str(suite_folder), "-q",
                               "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                              cwd=course.root, env=env, capture_output=True, text=True,
                              timeout=300)
    reference_run = by_hand()
    assert reference_run.returncode == 0 and "3 passed" in reference_run.stdout, reference_run.stdout
    mutant_run = by_hand("--mutant", "whole_mean")
    assert mutant_run.returncode == 1 and "failed" in mutant_run.stdout, mutant_run.stdout
    alternative_run = by_hand("--alternative", "center/by_sum")
    assert alternative_run.returncode == 0, alternative_run.stdout
    unknown = by_hand("--mutant", "no_such_mistake")
    assert unknown.returncode != 0 and "center/whole_mean" in unknown.stdout + unknown.stderr
