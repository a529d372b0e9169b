"""The instructor's loop with real people: an instructor and three learners as real OS users,
sharing a local nbgrader exchange, each running the real nbgrader command line as themselves.

release -> fetch -> answer -> submit (one learner twice, one late) -> collect -> grade ->
generate_feedback -> release_feedback -> fetch_feedback -> export.

Creating users needs root (as in CI); elsewhere the test skips and says why.
"""
import csv
import datetime
import json
import pwd
import shutil
import time

import pytest

from autograder.engine import catalogue
from support import BIN, COURSE, REPO, run_as
from support.accounts import people  # noqa: F401  (a fixture: an instructor and three learners)

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"
NOTEBOOK = COURSE.assignment(ASSIGNMENT).solution.name
COURSE_ID = "attention-course"


@pytest.mark.xdist_group("users")
def test_release_submit_grade_feedback_export_with_real_users(people):
    names, homes, root = people
    teacher, home_t = names["instructor"], homes["instructor"]
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # as nbgrader's documentation asks for a shared exchange
    state = home_t / "course"
    run_as(teacher, home_t, "mkdir", "-p", str(state))
    # The instructor's own nbgrader config: late work gets zero points (nbgrader's "zero" plugin).
    (home_t / ".jupyter").mkdir()
    (home_t / ".jupyter" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n"
        "c.LateSubmissionPlugin.penalty_method = 'zero'\n")
    shutil.chown(home_t / ".jupyter", teacher, teacher)
    shutil.chown(home_t / ".jupyter" / "nbgrader_config.py", teacher, teacher)
    course_env = {"AUTOGRADER_STATE": str(state)}

    def instructor(*args):
        return run_as(teacher, home_t, *args, cwd=REPO, env=course_env)

    release = state / "release"
    instructor("nbgrader", "generate_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={release}")
    instructor("nbgrader", "release_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={release}", f"--Exchange.root={exchange}")

    learner_flags = [f"--course={COURSE_ID}", f"--Exchange.root={exchange}"]

    def learner(role, *args, check=True):
        return run_as(names[role], homes[role], *args, check=check)

    def answer(role, notebook):
        path = homes[role] / ASSIGNMENT / NOTEBOOK
        path.write_text(json.dumps(notebook))
        shutil.chown(path, names[role], names[role])

    right = catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))
    wrong = catalogue.notebook_with(
        catalogue.mutants(COURSE.assignment(ASSIGNMENT), "row_normalize")[0])
    for role in ("alice", "bob", "carol"):
        learner(role, "nbgrader", "fetch_assignment", ASSIGNMENT, *learner_flags)
        assert (homes[role] / ASSIGNMENT / NOTEBOOK).exists()
    answer("alice", right)
    learner("alice", "nbgrader", "submit", ASSIGNMENT, *learner_flags)
    answer("bob", wrong)
    learner("bob", "nbgrader", "submit", ASSIGNMENT, *learner_flags)
    time.sleep(1.1)
    answer("bob", right)  # bob fixes his answer and submits again: the latest counts
    learner("bob", "nbgrader", "submit", ASSIGNMENT, *learner_flags)
    time.sleep(1.1)
    due = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(1.1)
    answer("carol", right)
    learner("carol", "nbgrader", "submit", ASSIGNMENT, *learner_flags)  # after the due date
    instructor("nbgrader", "db", "assignment", "add", ASSIGNMENT,
               f"--duedate={due.strftime('%Y-%m-%d %H:%M:%S')} UTC")

    # No learner can see another's submission in the exchange.
    inbound = exchange / COURSE_ID / "inbound"
    peek = learner("alice", "ls", str(inbound), check=False)
    assert peek.returncode != 0 and "Permission denied" in peek.stderr
    assert learner("alice", "ls", str(homes["bob"]), check=False).returncode != 0

    instructor("nbgrader", "collect", ASSIGNMENT, f"--Exchange.root={exchange}")
    instructor(str(BIN / "python"), "-m", "autograder", "autograde", ASSIGNMENT, "--jobs", "2")
    instructor("nbgrader", "generate_feedback", ASSIGNMENT)
    instructor("nbgrader", "release_feedback", ASSIGNMENT, f"--Exchange.root={exchange}")
    grades = state / "grades.csv"
    instructor("nbgrader", "export", f"--to={grades}")

    rows = {r["student_id"]: r for r in csv.DictReader(open(grades))}
    assert float(rows[names["alice"]]["score"]) == 8.0
    assert float(rows[names["bob"]]["score"]) == 8.0  # his second submission
    assert float(rows[names["carol"]]["raw_score"]) == 8.0
    assert float(rows[names["carol"]]["late_submission_penalty"]) == 8.0
    assert float(rows[names["carol"]]["score"]) == 0.0

    for role in ("alice", "bob", "carol"):
        learner(role, "nbgrader", "fetch_feedback", ASSIGNMENT, *learner_flags)
        pages = list((homes[role] / ASSIGNMENT / "feedback").rglob("*.html"))
        assert len(pages) >= 1, f"{role} got no feedback"
        assert "Hidden tests of" in pages[-1].read_text()
    # ... and none can read another's feedback or the instructor's gradebook.
    feedback_dir = exchange / COURSE_ID / "feedback"
    assert learner("alice", "ls", str(feedback_dir), check=False).returncode != 0
    assert learner("alice", "cat", str(state / "gradebook.db"), check=False).returncode != 0
    bob_feedback = next((homes["bob"] / ASSIGNMENT / "feedback").rglob("*.html"))
    assert learner("alice", "cat", str(bob_feedback), check=False).returncode != 0
    assert pwd.getpwnam(names["alice"]).pw_uid != pwd.getpwnam(names["bob"]).pw_uid
