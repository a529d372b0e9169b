"""A fault of the grading machine is the instructor's, never a learner's grade.

When the learner's kernel cannot be started (a broken interpreter path, a memory limit too small
for Python itself), none of their code has run: the grader records no grade for them, keeps
nothing in its cache, names each notebook with the cause in the command's own output and exits
non-zero; once the cause is fixed, the same command grades them normally."""
import dataclasses
import json
import subprocess
import sys

import pytest

from autograder.course import instructor
from autograder.engine import batch, grade
from autograder.engine.options import Options
from autograder.sandbox import confinement
from support import COURSE, REPO, course_state, sandbox_mode, write_notebook  # noqa: F401

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"
TOO_SMALL = 30_000_000  # bytes of address space: Python cannot even start its kernel in it


def broken(options=None):
    options = options or Options(sandbox=sandbox_mode(), figures="off")
    return dataclasses.replace(options, limits=dataclasses.replace(options.limits,
                                                                   memory_bytes=TOO_SMALL))


def cached_files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_broken_interpreter_path_grades_nobody_and_keeps_nothing(tmp_path, monkeypatch):
    """The interpreter learners' kernels run through does not exist: both notebooks are named with
    the cause, neither gets a result (not even a sheet of zeros), and the cache stays empty, so
    that grading them again once the path is fixed grades them normally."""
    assignment = COURSE.assignment(ASSIGNMENT)
    right = assignment.solution
    blank = write_notebook(tmp_path / "blank" / right.name,
                           json.loads(assignment.release.read_text(encoding="utf-8")))
    state = tmp_path / "state"
    options = Options(sandbox=sandbox_mode(), figures="off")
    monkeypatch.setattr(confinement, "interpreter", lambda: str(tmp_path / "no-such" / "python"))
    with pytest.raises(batch.HostFaults) as raised:
        batch.grade_many([right, blank], assignment, options, jobs=1, state=state,
                         progress=False)
    faults = dict(raised.value.faults)
    assert set(faults) == {str(right), str(blank)}
    assert all("kernel could not be started" in cause for cause in faults.values()), faults
    assert raised.value.results == []
    assert not [p for p in cached_files(state) if p.suffix == ".json"], cached_files(state)
    monkeypatch.undo()
    results = batch.grade_many([right, blank], assignment, options, jobs=1, state=state,
                               progress=False)
    assert [r.score for r in results] == [8, 0]


def test_a_kernel_that_cannot_start_fails_the_command_loudly(tmp_path):
    """From the command line, as an instructor runs it: exit status 6, the notebook and the cause
    on stderr, no JSON written; the same command with a sane limit then grades it (nothing of the
    failed run was kept in the state folder)."""
    solution = COURSE.assignment(ASSIGNMENT).solution
    out, state = tmp_path / "result.json", tmp_path / "state"
    command = [sys.executable, "-m", "autograder", "grade", str(solution), "--course", str(REPO),
               "--json", str(out), "--state", str(state), "--figures", "off",
               "--sandbox", sandbox_mode()]
    done = subprocess.run(command + ["--memory-bytes", str(TOO_SMALL)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 6, done.stderr[-2000:]
    assert "were not graded" in done.stderr and str(solution) in done.stderr
    assert "kernel could not be started" in done.stderr and "MemoryError" in done.stderr
    assert "0 of 8" not in done.stdout and "could not be run" not in done.stdout
    assert not out.exists()
    again = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(out.read_text())["score"] == 8


def test_autograde_records_the_rest_of_the_class_and_names_who_was_not_graded(
        tmp_path, course_state, monkeypatch):
    """Through nbgrader's gradebook: a learner whose kernel cannot start is not recorded (no
    grade of 0 waits in the gradebook), and the command exits non-zero naming them."""
    from nbgrader.api import Gradebook, MissingEntry
    assignment = COURSE.assignment(ASSIGNMENT)
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                        f"--CourseDirectory.release_directory={tmp_path / 'release'}",
                        state=course_state)
    name = assignment.release.name
    write_notebook(course_state / "submitted" / "alice" / ASSIGNMENT / name,
                   json.loads(assignment.solution.read_text(encoding="utf-8")))
    with pytest.raises(batch.HostFaults) as raised:
        instructor.autograde(assignment, jobs=1, state=course_state, progress=False,
                             options=broken())
    assert [n for n, _ in raised.value.faults] == [
        str(course_state / "submitted" / "alice" / ASSIGNMENT / name)]
    assert not (course_state / "autograded" / "alice").exists()
    gradebook = Gradebook("sqlite:///" + str(course_state / "gradebook.db"))
    try:
        with pytest.raises(MissingEntry):
            gradebook.find_submission(ASSIGNMENT, "alice")
    finally:
        gradebook.close()
    results = instructor.autograde(assignment, jobs=1, state=course_state, progress=False,
                                   options=Options(sandbox=sandbox_mode(), figures="off"))
    assert [r.score for r in results] == [8]
    assert (course_state / "autograded" / "alice").is_dir()


def test_a_crash_after_learner_code_ran_is_still_the_learners(tmp_path):
    """The rule has an edge: only a failure before any learner code ran is the machine's. A
    notebook whose own code kills its kernel is graded (its tests at 0, the reason given)."""
    assignment = COURSE.assignment(ASSIGNMENT)
    notebook = json.loads(assignment.solution.read_text(encoding="utf-8"))
    notebook["cells"].insert(1, {"cell_type": "code", "metadata": {}, "outputs": [],
                                 "execution_count": None,
                                 "source": "import os\nos._exit(1)"})
    path = write_notebook(tmp_path / assignment.solution.name, notebook)
    result = grade.grade_safely(path, assignment, Options(sandbox=sandbox_mode(), figures="off",
                                                          max_restarts=0))
    assert result.max_score == 8 and result.errors
