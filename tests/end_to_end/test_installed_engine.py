"""The engine installed as a package, the course folder elsewhere: nbgrader's usual JupyterHub
layout (docs/jupyterhub.md), where the course's package lives, not editable, in one shared
environment and the instructor's course folder anywhere.

The engine is built into a wheel and installed, without its suites, into a virtual environment
of its own (its dependencies come from this one's, through a path file); the course (its notebooks,
suites and nbgrader configuration) is copied to a folder of its own. There, ``nbgrader autograde``
(the formgrader's own grading step) and ``python -m autograder autograde`` grade a submission, and
``python -m autograder grade`` grades one from a third folder: the engine finds the solutions, the
releases and the suites through the course root nbgrader gives it, never next to its own files
(there, it once looked for ``solutions/`` and failed with "expected one notebook").
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.engine import catalogue
from support import COURSE, REPO, environment_with_wheel, sandbox_mode, write_notebook

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"
FULL = 8.0


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python of the environment the engine is installed in, its site-packages)``."""
    top = tmp_path_factory.mktemp("installed")
    source = top / "source"  # what the wheel is built from (a build writes next to its sources)
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "suites")
    shutil.copytree(REPO / "autograder", source / "autograder", ignore=ignore)
    shutil.copytree(REPO / "src", source / "src", ignore=ignore)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(top / "wheel"), str(source)],
                   check=True, capture_output=True, timeout=600)
    [wheel] = (top / "wheel").glob("*.whl")
    return environment_with_wheel(top, wheel)


@pytest.fixture
def course_folder(tmp_path):
    """This course's notebooks, suites and configuration for one assignment, in a folder of its
    own: no engine code in it."""
    root = tmp_path / "course"
    for relative in ("pyproject.toml", "nbgrader_config.py", "requirements.lock",
                     "suites/conftest.py", "suites/attention_kit.py"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, root / relative)
    for folder in (COURSE.solutions, COURSE.release, COURSE.suites):
        shutil.copytree(REPO / folder / ASSIGNMENT, root / folder / ASSIGNMENT,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run(python, *args, cwd, state):
    env = {"PATH": f"{Path(python).parent}:{Path(sys.executable).parent}:/usr/bin:/bin",
           "HOME": str(cwd), "LANG": "C.UTF-8", "AUTOGRADER_STATE": str(state),
           "AUTOGRADER_SANDBOX": sandbox_mode(), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([str(python), *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


def test_the_installed_engine_grades_a_course_elsewhere(installed, course_folder, tmp_path):
    python, packages = installed
    state = tmp_path / "state"
    where = run(python, "-c", "import autograder, helpers; print(autograder.__file__); "
                "print(helpers.__file__)", cwd=course_folder, state=state).stdout.split()
    assert all(Path(p).is_relative_to(packages) for p in where), where
    assert not (packages / "autograder" / "suites").exists()  # suites are the course's
    assert not (course_folder / "autograder" / "__init__.py").exists()

    run(python, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course_folder,
        state=state)
    notebook = COURSE.assignment(ASSIGNMENT).release.name
    filled = catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))
    write_notebook(state / "submitted" / "alice" / ASSIGNMENT / notebook, filled)
    graded = run(python, "-m", "nbgrader", "autograde", ASSIGNMENT, cwd=course_folder,
                 state=state)
    assert "expected one notebook" not in graded.stdout + graded.stderr
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        assert book.find_submission(ASSIGNMENT, "alice").score == FULL

    # the engine's own parallel autograde, with a second learner
    mutant = catalogue.mutants(COURSE.assignment(ASSIGNMENT), "row_normalize")[0]
    write_notebook(state / "submitted" / "bob" / ASSIGNMENT / notebook,
                   catalogue.notebook_with(mutant))
    run(python, "-m", "autograder", "autograde", ASSIGNMENT, "--jobs", "2", cwd=course_folder,
        state=state)
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        assert book.find_submission(ASSIGNMENT, "alice").score == FULL
        assert book.find_submission(ASSIGNMENT, "bob").score < FULL

    # and one notebook from a third folder, the course named
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = write_notebook(elsewhere / notebook, filled)
    done = run(python, "-m", "autograder", "grade", "--course", course_folder,
               "--assignment", ASSIGNMENT, "--json", "-", path, cwd=elsewhere, state=state)
    assert json.loads(done.stdout)["score"] == FULL
    assert not (course_folder / ".course").exists()  # the state went where it was told
