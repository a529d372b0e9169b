"""Attack submissions, each with the exact score it must get.

Every attack is the reference notebook of 00-getting-started (worth 8 points) with something
added, replaced or broken. Attacks that try to cheat are written so that success would earn full
marks and failure earns nothing: "if I can read the hidden suite, define a correct function,
otherwise one that raises". Attacks that only misbehave (loops, bombs, exits) keep a correct
function, so the score shows the grader survived them and still graded the rest.

The attacks themselves are in tests/support/attacks.py. The same attacks run three ways: in this process (the grader as root, as CI runs it), through
``python -m autograder grade`` as an unprivileged instructor, and through nbgrader's
collect -> autograde -> generate_feedback as root and as an unprivileged instructor.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.engine import batch, catalogue, grade
from autograder.engine.options import Options
from autograder.sandbox import confinement
from support import COURSE, REPO, grade_measured, run_as, write_notebook
from support.attacks import (ASSIGNMENT, ATTACKS, BROKEN, CLASS_ONLY, EVERYWHERE,  # noqa: F401
                             FULL, MARKER, OUTSIDE_THE_ALLOWLIST, PWNED, SECRET_NAME, SECRET_VALUE,
                             SOLUTION_FILE, SUITE_FILE, base, check_result, expected_score,
                             instructor, listener, needs_bubblewrap, options, place, secret_file,
                             with_answer, with_extra_cell)

pytestmark = pytest.mark.slow


def test_the_attacks_aim_at_what_is_there():
    """An attack on a file that does not exist scores 0 whatever the sandbox does: the suite and
    the solution the attacks try to read are where the course keeps them, and the allowlist
    attack still has folders to look for."""
    assert SUITE_FILE.is_file() and "def test_" in SUITE_FILE.read_text()
    assert Path(SOLUTION_FILE).is_file()
    assert len(OUTSIDE_THE_ALLOWLIST) >= 7 and any(os.path.exists(p) for p in OUTSIDE_THE_ALLOWLIST)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_gets_exactly_its_score(name, tmp_path, listener, secret_file, monkeypatch):
    """Graded in this process, as CI's root grader."""
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)
    port, hits = listener
    root = tmp_path / "submitted"
    path = root / "mallory" / ASSIGNMENT / SOLUTION_FILE.name
    place(name, path, port)
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT), options(name), root=root)
    check_result(name, result, hits)


@pytest.mark.xdist_group("users")
def test_every_attack_through_the_command_line_as_an_unprivileged_instructor(
        instructor, listener, secret_file):
    """The same attacks, graded by `python -m autograder grade` run by an ordinary user: learner
    code cannot use that user's identity to reach what the allowlist leaves out."""
    user, home = instructor
    port, hits = listener
    (home / f"secret-{MARKER}").write_text(SECRET_VALUE)  # the instructor's own private file
    (home / f"secret-{MARKER}").chmod(0o600)
    names = [n for n in ATTACKS if n not in CLASS_ONLY]
    paths = []
    for number, name in enumerate(names):
        path = home / "class" / f"learner{number:02d}" / ASSIGNMENT / SOLUTION_FILE.name
        place(name, path, port)
        paths.append(path)
    subprocess.run(["chown", "-R", "--no-dereference", f"{user}:{user}", str(home)], check=True)
    out = home / "results.json"
    run_as(user, home, sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
           "--require-sandbox", "--jobs", "2", "--cell-timeout", "4", "--notebook-timeout", "40",
           "--call-timeout", "3", "--budget", "60", "--figures", "off", "--json", out, *paths,
           cwd=REPO,
           env={SECRET_NAME: SECRET_VALUE})
    results = json.loads(out.read_text())
    assert len(results) == len(names)
    for name, result in zip(names, results):
        check_result(name, result, hits)


def test_no_earlier_submission_changes_a_later_ones_score(tmp_path, secret_file):
    """One grading process, attackers first: every wire attack, then an honest learner."""
    attackers = ["forge replies with callable encodings during a call", "return a wire-shaped dict",
                 "forged replies in cells, outside any call", "tamper with the wire in the kernel",
                 "a flood of wire-typed output"]
    paths = []
    for number, name in enumerate(attackers):
        path = tmp_path / f"attacker{number}" / ASSIGNMENT / SOLUTION_FILE.name
        place(name, path)
        paths.append(path)
    honest = write_notebook(tmp_path / "honest" / ASSIGNMENT / SOLUTION_FILE.name, base())
    results = batch.grade_many(paths + [honest], COURSE.assignment(ASSIGNMENT), options(), jobs=1,
                               progress=False)
    alone = grade.grade_safely(honest, COURSE.assignment(ASSIGNMENT), options())
    for name, result in zip(attackers, results):
        check_result(name, result)
    assert results[-1] == alone and alone.score == FULL


def test_a_flood_of_output_leaves_the_graders_memory_and_cache_small(tmp_path):
    """Ten 100 MB and ten 30 MB displays under the wire's type: the grader's own peak memory
    stays far below them and the cache entry holds none of it."""
    path = tmp_path / "flood" / ASSIGNMENT / SOLUTION_FILE.name
    place("a flood of wire-typed output", path)
    state = tmp_path / "state"
    measured = grade_measured(path, ASSIGNMENT, {"sandbox": "require", "cell_timeout": 30,
                                                 "call_timeout": 5}, state)
    assert measured["result"]["score"] == FULL
    assert measured["peak_mib"] < 400, f"the grader peaked at {measured['peak_mib']:.0f} MiB"
    [entry] = state.glob("*.json")
    assert entry.stat().st_size < 1 << 20


def test_one_budget_covers_cells_replays_and_the_suite(tmp_path):
    """A notebook whose slow cells are replayed after every crash, and whose function crashes
    the kernel at every call, is stopped by the notebook's one budget."""
    notebook = with_extra_cell("import time\ntime.sleep(3)\n",
                               answer="def row_normalize(X):\n    import os\n    os._exit(1)\n")
    path = write_notebook(tmp_path / "slow" / ASSIGNMENT / SOLUTION_FILE.name, notebook)
    budget = 20
    started = time.monotonic()
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT), Options(
        sandbox="require", cell_timeout=4, notebook_timeout=40, call_timeout=3, budget=budget,
        max_restarts=50))
    elapsed = time.monotonic() - started
    assert result.score == 0
    assert elapsed < budget + 8, f"grading took {elapsed:.0f} s against a budget of {budget} s"
    assert any("budget" in e for e in result.errors), result.errors
    assert any("budget" in t.feedback for t in result.tests)


def test_an_attacker_cannot_touch_another_learners_result(tmp_path):
    """Grading a class in parallel: the attacker's notebook cannot see or change the results
    of the honest learner graded beside it."""
    honest = write_notebook(tmp_path / "alice" / ASSIGNMENT / SOLUTION_FILE.name, base())
    state = tmp_path / "state"
    attack = (EVERYWHERE + "import json\n"
              "for path in _everywhere(lambda name: name.endswith('.json')):\n"
              "    try:\n        data = json.load(open(path))\n"
              "        if 'score' in data:\n            data['score'] = 0\n"
              "            json.dump(data, open(path, 'w'))\n    except Exception:\n        pass\n")
    mallory = write_notebook(tmp_path / "mallory" / ASSIGNMENT / SOLUTION_FILE.name,
                             with_extra_cell(attack))
    results = batch.grade_many([honest, mallory], COURSE.assignment(ASSIGNMENT), options(), jobs=2,
                               state=state, progress=False)
    assert [r.score for r in results] == [FULL, FULL]
    assert not any("timed out" in error for error in results[1].errors), results[1].errors
    again = batch.grade_many([honest], COURSE.assignment(ASSIGNMENT), options(), jobs=1,
                             state=state, progress=False)
    assert again[0].score == FULL


# ------------------------------------------------------------------ a class outside /tmp and /home

THIEF = """import glob, json, os
taken = None
# every notebook it can see, anywhere (not in /proc and /sys, whose links lead back to / for
# ever: a walk through them is cut by the cell's timeout before it looks anywhere else)
for top, folders, files in os.walk('/'):
    if top == '/':
        folders[:] = [f for f in folders if f not in ('proc', 'sys')]
    for path in [os.path.join(top, f) for f in files if f.endswith('.ipynb')]:
        try:
            notebook = json.load(open(path))
        except Exception:
            continue
        for cell in notebook.get('cells', []):
            source = ''.join(cell.get('source', ''))
            if 'def row_normalize' in source and 'NotImplementedError' not in source:
                taken = source
        try:
            open(path, 'a').write('spoiled')  # and spoil the original
        except OSError:
            pass
for folder in [os.environ.get('TMPDIR', ''), '/srv', '/var/tmp']:
    for path in glob.glob(os.path.join(folder, '**', '*'), recursive=True):
        try:
            open(path, 'a').write('spoiled')
        except OSError:
            pass
if taken:
    exec(taken)
"""


def class_outside_tmp_and_home(top, thief=THIEF):
    """An nbgrader class laid out under ``top``: the course state (submitted, gradebook), a shared
    exchange with every learner's inbound submission and a grader TMPDIR, none of them under
    /tmp or /home. Returns (state, exchange, tmpdir, notebooks by learner)."""
    state, exchange, tmpdir = top / "course", top / "exchange", top / "grader-tmp"
    notebooks = {"alice": base(), "bob": base(), "mallory": with_answer(BROKEN + "\n" + thief)}
    paths = {}
    for learner, notebook in notebooks.items():
        submitted = state / "submitted" / learner / ASSIGNMENT / SOLUTION_FILE.name
        inbound = (exchange / "attention-course" / "inbound" /
                   f"{learner}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC" / SOLUTION_FILE.name)
        for path in (submitted, inbound):
            write_notebook(path, notebook)
        paths[learner] = submitted
    tmpdir.mkdir()
    return state, exchange, tmpdir, paths


@pytest.fixture
def outside():
    top = Path("/srv") / f"attention-course-test-{MARKER}"
    if os.geteuid() != 0:
        pytest.skip("making a class folder under /srv needs root (CI runs as root)")
    top.mkdir(parents=True)
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_a_thief_in_a_parallel_class_outside_tmp_and_home(who, outside, request):
    """The exchange, the course folder and the grader's TMPDIR all sit under /srv; learners are
    graded two at a time; one of them reads everything it can find, copies any answer and tries
    to spoil every file. It finds nothing, changes nothing, and scores 0."""
    state, exchange, tmpdir, paths = class_outside_tmp_and_home(outside)
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    out = outside / "results.json"
    args = [sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
            "--require-sandbox", "--jobs", "2", "--figures", "off", "--json", str(out),
            *map(str, paths.values())]
    env = {"TMPDIR": str(tmpdir), SECRET_NAME: SECRET_VALUE}
    if who == "root":
        done = subprocess.run(args, cwd=REPO, env={**os.environ, **env}, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        user, home = request.getfixturevalue("instructor")
        subprocess.run(["chown", "-R", f"{user}:{user}", str(outside)], check=True)
        run_as(user, home, *args, cwd=REPO, env=env)
    results = dict(zip(paths, json.loads(out.read_text())))
    assert {learner: r["score"] for learner, r in results.items()} == {
        "alice": FULL, "bob": FULL, "mallory": 0}
    assert "spoiled" not in json.dumps(results)
    # the thief looked everywhere and tried to spoil everything: its cell ran to its end
    assert not any("timed out" in error for error in results["mallory"]["errors"]), \
        results["mallory"]["errors"]
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path} was changed"
    assert list(tmpdir.iterdir()) == [], "the grader left files in its TMPDIR"


# ------------------------------------------------------------------ through nbgrader

NBGRADER_GRADED = ["forge replies with callable encodings during a call",
                   "read the grader's environment", "patch numpy to hide an in-place change",
                   "see folders outside the allowlist"]


def inbound_entry(exchange, learner):
    return (exchange / "attention-course" / "inbound" /
            f"{learner}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC")


def nbgrader_class(top):
    """A shared exchange as learners can leave it (they may write anything into inbound/), and a
    submission planted directly in submitted/. Returns (expected scores of graded learners,
    learners whose submission must be refused)."""
    exchange, state = top / "exchange", top / "course"
    expected = {}
    for number, name in enumerate(NBGRADER_GRADED):
        place(name, inbound_entry(exchange, f"attacker{number}") / SOLUTION_FILE.name)
        expected[f"attacker{number}"] = expected_score(name)
    honest = inbound_entry(exchange, "honest")
    write_notebook(honest / SOLUTION_FILE.name,
                   catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT)))
    write_notebook(honest / "extra.ipynb", base())  # reported, not graded
    expected["honest"] = FULL
    place("the notebook is a link to the solution",
          inbound_entry(exchange, "solutionlink") / SOLUTION_FILE.name)
    place("the notebook is a FIFO", inbound_entry(exchange, "fifo") / SOLUTION_FILE.name)
    write_notebook(inbound_entry(exchange, "suitelink") / SOLUTION_FILE.name, base())
    (inbound_entry(exchange, "suitelink") / "notes.py").symlink_to(SUITE_FILE)
    inbound_entry(exchange, "folderlink").symlink_to(SOLUTION_FILE.parent,
                                                     target_is_directory=True)
    planted = state / "submitted" / "planted" / ASSIGNMENT / SOLUTION_FILE.name
    planted.parent.mkdir(parents=True)
    planted.symlink_to(SOLUTION_FILE)  # e.g. copied in by hand: refused when graded
    expected["planted"] = 0
    return expected, ["solutionlink", "fifo", "suitelink", "folderlink"]


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_attacks_through_nbgrader_collect_autograde_and_feedback(who, request, secret_file):
    """collect refuses links and special files; autograde grades only the release's notebook and
    refuses a planted link; each attack gets its score; no feedback page shows suite code, the
    solutions or the grader's environment."""
    top = Path(tempfile.mkdtemp(prefix="nbgrader-attacks-"))
    top.chmod(0o755)
    state, exchange = top / "course", top / "exchange"
    try:
        expected, refused = nbgrader_class(top)
        flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=attention-course"]
        env = {"AUTOGRADER_STATE": str(state), SECRET_NAME: SECRET_VALUE}
        if who == "root":
            def instructor(*args):
                done = subprocess.run(args, cwd=REPO, env={**os.environ, **env},
                                      capture_output=True, text=True, timeout=900)
                assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
                return done
        else:
            user, home = request.getfixturevalue("instructor")
            subprocess.run(["chown", "-R", "--no-dereference", f"{user}:{user}", str(top)],
                           check=True)

            def instructor(*args):
                return run_as(user, home, *args, cwd=REPO, env=env)
        nbgrader = str(Path(sys.executable).parent / "nbgrader")
        instructor(nbgrader, "generate_assignment", ASSIGNMENT, "--force",
                   f"--CourseDirectory.release_directory={top / 'release'}")
        collected = instructor(nbgrader, "collect", ASSIGNMENT, *flags)
        log = collected.stdout + collected.stderr
        for learner in refused:
            assert f"Refused the submission {learner}+" in log, log[-3000:]
            assert not (state / "submitted" / learner).exists()
        graded = instructor(sys.executable, "-m", "autograder", "autograde", ASSIGNMENT,
                            "--require-sandbox", "--jobs", "2", "--cell-timeout", "10",
                            "--call-timeout", "5", "--budget", "120")
        report = graded.stdout + graded.stderr
        assert "extra.ipynb is not part of" in report
        assert "flagged for review" in report and "np.array_equal" in report
        instructor(nbgrader, "generate_feedback", ASSIGNMENT)
        instructor(nbgrader, "export", f"--to={top / 'grades.csv'}")
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(open(top / "grades.csv"))}
        assert {k: rows.get(k) for k in expected} == expected
        assert all(rows.get(learner, 0) == 0 for learner in refused)
        for page in (state / "feedback").rglob("*.html"):
            html = page.read_text()
            assert "def test_" not in html and SUITE_FILE.read_text()[:300] not in html
            assert SECRET_VALUE not in html
            if "honest" not in page.parts:
                assert "BEGIN SOLUTION" not in html, f"solution code in {page}"
        planted = next((state / "feedback" / "planted").rglob("*.html")).read_text()
        assert "symbolic link" in planted and "NotImplementedError" in planted
        assert not os.path.exists(PWNED)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_require_sandbox_refuses_without_bubblewrap(monkeypatch):
    monkeypatch.setattr(confinement, "bubblewrap", lambda: None)
    monkeypatch.setattr(confinement, "namespaces_work", lambda: False)
    with pytest.raises(confinement.SandboxUnavailable, match="bubblewrap"):
        Options(sandbox="require").confinement()
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.warns(RuntimeWarning, match="NOT sandboxed"):
        assert Options(sandbox="auto").confinement() == confinement.LIMITS
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.warns(RuntimeWarning, match="unprivileged user of its own"):
        assert Options(sandbox="auto").confinement() == confinement.USER
