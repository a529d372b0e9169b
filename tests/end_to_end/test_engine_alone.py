"""The engine installs alone and grades another course: its own wheel (autograder-engine, built by
``make engine-wheel`` from packaging/engine/) in a fresh virtual environment, without this
course's learner package, suites or tools, grades the second course (tests/end_to_end/
second-course) in the sandbox, as docs/authoring.md, "Using the engine for another course", says.

The engine's dependencies (numpy, nbgrader, ...) are this environment's, through a path file, so
that no network is needed; the editable install of this checkout is not among them (a path file
listed there is not read), which the test checks: ``helpers`` cannot be imported.
"""
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.engine import catalogue
from autograder.engine.assignment import Course
from support import REPO, environment_with_wheel, sandbox_mode, write_notebook

# one worker builds the engine's wheel and its environment for both tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engine-alone")]

SECOND_COURSE = Path(__file__).parent / "second-course"
ASSIGNMENT = "centering"
FULL = 3.0


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """``(python of a fresh environment holding the engine's wheel alone, the wheel)``."""
    top = tmp_path_factory.mktemp("engine-alone")
    done = subprocess.run(["make", "--no-print-directory", "engine-wheel",
                           f"ENGINE_DIST={top / 'dist'}", f"VENV={Path(sys.executable).parents[1]}"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    [wheel] = (top / "dist").glob("autograder_engine-*.whl")
    python, _ = environment_with_wheel(top, wheel)
    return python, wheel


def run(python, *args, cwd):
    env = {"PATH": f"{Path(python).parent}:{Path(sys.executable).parent}:/usr/bin:/bin",
           "HOME": str(cwd), "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
           "AUTOGRADER_STATE": str(cwd / "state")}
    return subprocess.run([str(python), *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_the_engine_wheel_holds_the_engine_and_nothing_of_this_course(engine):
    python, wheel = engine
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"autograder"}, tops
    assert {"autograder/kit.py", "autograder/engine/checks.py", "autograder/engine/grade.py",
            "autograder/sandbox/confinement.py", "autograder/course/gradescope.py"} <= set(names)
    assert not [n for n in names if n.startswith(("autograder/tools/", "autograder/suites"))]


def test_the_engine_alone_grades_the_second_course_in_the_sandbox(engine, tmp_path):
    python, _ = engine
    probe = run(python, "-c", "import autograder, importlib.util; print(autograder.__file__); "
                "print(importlib.util.find_spec('helpers'))", cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr[-2000:]
    where, helpers = probe.stdout.split()
    assert Path(where).is_relative_to(Path(python).parents[1]) and helpers == "None"

    root = tmp_path / "second-course"
    shutil.copytree(SECOND_COURSE, root, ignore=shutil.ignore_patterns("__pycache__"))
    assignment = Course.from_root(root).assignment(ASSIGNMENT)
    [mutant] = catalogue.mutants(assignment)
    notebook = assignment.release.name
    paths = [write_notebook(tmp_path / "class" / name / ASSIGNMENT / notebook, content)
             for name, content in (("alice", catalogue.filled_notebook(assignment)),
                                   ("bob", catalogue.notebook_with(mutant)))]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run(python, "-m", "autograder", "grade", "--course", root, "--sandbox",
               sandbox_mode(), "--json", "-", *paths, cwd=elsewhere)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    alice, bob = json.loads(done.stdout)
    assert (alice["score"], bob["score"]) == (FULL, 0.0), (alice, bob)
    assert "This is what you get when you" in bob["tests"][0]["feedback"]

    # the suite, run by hand through the engine's plugin, in that environment
    by_hand = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                  root / "suites" / ASSIGNMENT, "--mutant", mutant.key.split("/", 1)[1],
                  cwd=root)
    assert by_hand.returncode == 1 and " failed" in by_hand.stdout, by_hand.stdout[-2000:]
