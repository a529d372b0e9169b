"""The instructor's `autograde` (autograder/course/instructor.py, recorder.py): several
assignments in one command share one pool of grading workers and one recording process, and every
submission of each is graded and recorded as it would be by a command of its own."""
import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

from autograder.course import instructor
from autograder.engine import batch
from autograder.engine.options import Options
from support import (COURSE, REPO, course_state, gradebook, sandbox_mode,  # noqa: F401
                     write_notebook)

FIRST, SECOND = "00-getting-started", "02-scoring"


def _counting(monkeypatch, owner, name):
    """Replace ``owner.name`` (a class) by a subclass that counts its instances."""
    made = []
    real = getattr(owner, name)

    class Counted(real):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(owner, name, Counted)
    return made


@pytest.mark.slow
def test_one_command_grades_and_records_several_assignments_with_one_pool_and_one_recorder(
        tmp_path, course_state, monkeypatch):
    released = tmp_path / "release"
    for name in (FIRST, SECOND):
        instructor.nbgrader("generate_assignment", name, "--force",
                            f"--CourseDirectory.release_directory={released}",
                            state=course_state)
    first, second = COURSE.assignment(FIRST), COURSE.assignment(SECOND)
    submitted = course_state / "submitted"
    solution = {a.name: json.loads(a.solution.read_text(encoding="utf-8")) for a in (first, second)}
    blank = json.loads((released / SECOND / second.release.name).read_text(encoding="utf-8"))
    write_notebook(submitted / "alice" / FIRST / first.release.name, solution[FIRST])
    write_notebook(submitted / "alice" / SECOND / second.release.name, blank)
    write_notebook(submitted / "bob" / SECOND / second.release.name, solution[SECOND])

    recorders = _counting(monkeypatch, instructor, "Recorder")
    pools = _counting(monkeypatch, concurrent.futures, "ProcessPoolExecutor")
    options = Options(sandbox=sandbox_mode(), figures="off")
    results = instructor.autograde([first, second], jobs=2, state=course_state, progress=False,
                                   options=options)
    assert len(recorders) == 1 and len(pools) == 1  # for both assignments
    scores = {(r.assignment, r.notebook.split("/")[-3]): r.score for r in results}
    full = {r.assignment: r.max_score for r in results}
    assert scores == {(FIRST, "alice"): full[FIRST], (SECOND, "alice"): 0,
                      (SECOND, "bob"): full[SECOND]}
    with gradebook(course_state) as book:
        for (assignment, student), score in scores.items():
            assert book.find_submission(assignment, student).score == score
    for assignment, student in scores:
        assert (course_state / "recorded" / assignment / f"{student}.json").is_file()
        assert (course_state / "autograded" / student / assignment).is_dir()

    # Everything is recorded: the same command again grades from the cache, starts no recording.
    again = instructor.autograde([first, second], jobs=2, state=course_state, progress=False,
                                 options=options)
    assert [r.score for r in again] == [r.score for r in results]
    assert len(recorders) == 1

    # One learner's submission changes: only it is recorded again, the other assignment's not.
    write_notebook(submitted / "alice" / SECOND / second.release.name, solution[SECOND])
    marks = {p: p.stat().st_mtime_ns for p in (course_state / "recorded").rglob("*.json")}
    instructor.autograde([first, second], jobs=2, state=course_state, progress=False,
                         options=options)
    changed = {p.relative_to(course_state / "recorded").as_posix()
               for p in (course_state / "recorded").rglob("*.json")
               if marks.get(p) != p.stat().st_mtime_ns}
    assert changed == {f"{SECOND}/alice.json"}
    with gradebook(course_state) as book:
        assert book.find_submission(SECOND, "alice").score == full[SECOND]


def test_a_recording_refuses_an_assignment_id_before_it_starts(tmp_path):
    with pytest.raises(ValueError, match="assignment id"):
        instructor.Recording([("../elsewhere", "alice")], COURSE, Options(), tmp_path)
    assert not (tmp_path / "recorded").exists()


def test_the_command_names_an_unknown_assignment_before_grading_any(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "autograde", FIRST,
                           "no-such-assignment", "--course", str(REPO)],
                          capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "AUTOGRADER_STATE": str(tmp_path)})
    assert done.returncode == 2
    assert "no-such-assignment" in done.stderr
    assert not (tmp_path / "grading-cache").exists() and not (tmp_path / "recorded").exists()


def test_grading_many_refuses_assignments_that_do_not_match_the_notebooks():
    with pytest.raises(ValueError, match="2 notebooks but 1 assignments"):
        batch.grade_many(["a.ipynb", "b.ipynb"], [COURSE.assignment(FIRST)], progress=False)
