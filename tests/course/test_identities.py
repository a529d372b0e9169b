"""Identities come from the operating system, and every learner-chosen string is checked or escaped
where it lands.

Names learners choose (folders in the exchange's inbound and in ``submitted/``) become student ids,
gradebook keys, CSV fields, HTML and lines of the recording protocol; a learner's exception text and
outputs become markdown and HTML in the formgrader and on feedback pages. Each attack here would,
without the checks, replace another learner's work, forge a row of ``grades.csv``, run script in
the instructor's browser or stop recording for the whole class. Through the real nbgrader command
line, as root and as an unprivileged instructor, with real OS accounts where ownership matters, and
in Chromium for what a browser runs. The rules these cases rest on have their modules' tests:
test_identity.py (ids), test_export.py and test_formats.py (CSV), test_sanitize.py (markdown and
HTML); this file holds the attacks that cross them, through the exchange, the gradebook and the
browser.
"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.course import config, exchange, identity, instructor, mathml, sanitize
from autograder.engine.options import Options
from support import (BIN, COURSE, REPO, gradebook, html_of_markdown, needs_root_and_users,
                     read_csv_rows as read_rows, run_as, write_notebook)
from support.attacks import (ASSIGNMENT, FORGED, FULL, SOLUTION_FILE, base,  # noqa: F401
                             listener, with_answer, with_extra_cell)
from support.accounts import people  # noqa: F401  (real OS accounts: instructor, alice, bob, carol)

NOTEBOOK = SOLUTION_FILE.name
COURSE_ID = "attention-course"


def stamp(when):
    """A timestamp as nbgrader submit writes it into a folder name and timestamp.txt."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


# ------------------------------------------------------------------ private and shared exchanges

@pytest.fixture
def top():
    """A folder other accounts may pass through (pytest's own is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="identities-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_exchange_is_private_only_when_no_other_account_can_write_into_it(top):
    inbound = top / "exchange" / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    for folder in (top / "exchange", top / "exchange" / COURSE_ID):
        folder.chmod(0o755)
    inbound.chmod(0o2733)  # as nbgrader release_assignment makes it
    assert identity.others_can_write(inbound), "others may write into a 2733 inbound"
    (top / "exchange").chmod(0o700)  # the demo's and the course's own private exchange
    assert not identity.others_can_write(inbound)
    (top / "exchange").chmod(0o711)  # others may pass (x), not list: still shared
    assert identity.others_can_write(inbound)
    inbound.chmod(0o755)
    assert not identity.others_can_write(inbound)
    (top / "exchange").chmod(0o777)  # others could replace the course folder below
    assert identity.others_can_write(inbound)
    (top / "exchange").chmod(0o1777)  # ... not with the sticky bit
    assert not identity.others_can_write(inbound)
    if os.geteuid() == 0:
        os.chown(top / "exchange" / COURSE_ID, 65534, 65534)  # a folder on the way is another's
        assert identity.others_can_write(inbound)


def test_the_courses_own_exchange_stays_private_after_a_release(top, monkeypatch):
    """One person on one machine, the course's state in a folder others may pass through:
    ``.course/exchange`` is made 700, and nbgrader's release_assignment (which opens an exchange
    root to 777) leaves it so; the inbound under it is private."""
    state = top / "state"
    monkeypatch.setenv("ATTENTION_COURSE_STATE", str(state))
    for step in ("generate_assignment", "release_assignment"):
        instructor.nbgrader(step, ASSIGNMENT, "--force",
                            f"--CourseDirectory.release_directory={top / 'release'}",
                            state=state)
    assert os.stat(state).st_mode & 0o777 == 0o755  # others may pass through the state
    assert os.stat(state / "exchange").st_mode & 0o777 == 0o700
    inbound = inbound_of(state / "exchange")
    assert inbound.is_dir() and not identity.others_can_write(inbound)


# ------------------------------------------------------------------ collect in a private exchange

def inbound_of(exchange_root):
    return exchange_root / COURSE_ID / "inbound"


def plant(inbound, folder, notebook, timestamp=True, owner=None):
    """A submission folder as a learner (or an attacker) leaves it in the inbound."""
    path = inbound / folder
    write_notebook(path / NOTEBOOK, notebook)
    if timestamp:
        (path / "timestamp.txt").write_text(folder.split("+")[2])
    if owner is not None:
        for item in [path, *path.rglob("*")]:
            os.chown(item, owner, owner)
    return path


def collect(state, exchange_root, *extra, check=True):
    done = instructor.nbgrader("collect", ASSIGNMENT, f"--Exchange.root={exchange_root}",
                           f"--CourseDirectory.course_id={COURSE_ID}", *extra, state=state,
                           check=check)
    return done.stdout + done.stderr


@pytest.fixture
def private_exchange(top):
    """``(root, inbound)`` of an exchange only this account can enter, as ``make demo``'s."""
    root = top / "exchange"
    inbound_of(root).mkdir(parents=True)
    root.chmod(0o700)
    return root, inbound_of(root)


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("giving a file to another account needs root (CI runs as root)")


@pytest.fixture
def release(course_state, tmp_path):
    """The course's nbgrader state with the assignment generated (its gradebook knows it)."""
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                    f"--CourseDirectory.release_directory={tmp_path / 'release'}",
                    state=course_state)
    return course_state


def test_a_private_exchange_counts_its_owners_folders_for_any_name_a_shared_one_does_not(
        release, private_exchange):
    """The demo's layout: one account, an exchange no other account can enter. Every folder there
    is that account's, and counts for the name it bears; a file of a third account does not.
    Opened to others (nbgrader's usual 2733 inbound under a folder others may pass), the same
    folders count for nobody who is not their owner, and each refusal says why."""
    needs_root()
    state, (root, inbound) = release, private_exchange
    now = utcnow() - datetime.timedelta(minutes=5)
    plant(inbound, f"learner01+{ASSIGNMENT}+{stamp(now)}", base())
    plant(inbound, f"nobody+{ASSIGNMENT}+{stamp(now)}", base())      # an account's name
    planted = plant(inbound, f"learner02+{ASSIGNMENT}+{stamp(now)}", base())
    os.chown(planted / NOTEBOOK, 65534, 65534)                        # a third account's file
    log = collect(state, root)
    assert sorted(p.name for p in (state / "submitted").iterdir()) == ["learner01", "nobody"]
    assert "learner02" in log and "belongs to nobody, not root" in log

    shutil.rmtree(state / "submitted")
    for folder in (root, root / COURSE_ID):
        folder.chmod(0o755)
    inbound.chmod(0o2733)
    log = collect(state, root)
    assert not (state / "submitted").exists() or not list((state / "submitted").iterdir())
    assert "learner01 is not an account on this machine" in log
    assert "the folder belongs to root, not nobody" in log
    refused = identity.read_refusals(state / "submitted", ASSIGNMENT)
    assert {e["student"] for e in refused} == {"learner01", "learner02", "nobody"}


def test_one_bad_folder_never_stops_collect(release, private_exchange):
    """Names nbgrader's own collect crashes on (a timestamp its parser rejects, an overflowing
    year, a bare name) or would take as someone else's (a newline or a ``+`` in the id, a
    timestamp.txt that disagrees with the name, a date in the future): each is refused with a
    sentence, the honest learner is collected, the refusals are kept for autograde."""
    state, (root, inbound) = release, private_exchange
    now = utcnow() - datetime.timedelta(minutes=5)
    honest = plant(inbound, f"alice+{ASSIGNMENT}+{stamp(now - datetime.timedelta(hours=1))}",
                   base())
    blank = json.loads(COURSE.assignment(ASSIGNMENT).release.read_text())
    bad = {
        f"alice+{ASSIGNMENT}+{stamp(now + datetime.timedelta(days=365 * 70))}": "in the future",
        f"alice+{ASSIGNMENT}+{stamp(now + datetime.timedelta(minutes=30))}": "in the future",
        f"alice+{ASSIGNMENT}+not a time": "does not end in a timestamp",
        f"alice+{ASSIGNMENT}+99999-01-01 00:00:00 UTC": "does not end in a timestamp",
        f"alice+{ASSIGNMENT}+2026-13-45 00:00:00 UTC": "does not end in a timestamp",
        f"alice+{ASSIGNMENT}+2026-01-01 00:00:00 999999999999": "does not end in a timestamp",
        f"alice\n+{ASSIGNMENT}+{stamp(now)}": "not a valid student id",
        f"bob+alice+{ASSIGNMENT}+{stamp(now)}": "not a valid student id",
        f"\x1b[2K\ralice+{ASSIGNMENT}+{stamp(now)}": "not a valid student id",
    }
    for folder in bad:
        plant(inbound, folder, blank)
    late = plant(inbound, f"carol+{ASSIGNMENT}+{stamp(now)}", base(), timestamp=False)
    (late / "timestamp.txt").write_text(stamp(now - datetime.timedelta(days=30)))  # not late!
    bad[late.name] = "its timestamp.txt says"
    log = collect(state, root)
    assert sorted(p.name for p in (state / "submitted").iterdir()) == ["alice"]
    kept = (state / "submitted" / "alice" / ASSIGNMENT)
    assert json.loads((kept / NOTEBOOK).read_text()) == json.loads((honest / NOTEBOOK).read_text())
    refused = {e["folder"]: e["reason"] for e in identity.read_refusals(state / "submitted",
                                                                         ASSIGNMENT)}
    assert set(refused) == set(bad)
    for folder, words in bad.items():
        assert words in refused[folder], (folder, refused[folder])
    assert "\x1b" not in log and "alice\n+" not in log  # shown escaped, in the log too
    lines = instructor.refusals(COURSE.assignment(ASSIGNMENT), state)
    assert len(lines) == len(bad) and all(line.isprintable() for line in lines)

    # a folder without timestamp.txt gets the (checked) time of its name
    shutil.rmtree(state / "submitted")
    (honest / "timestamp.txt").unlink()
    collect(state, root)
    assert (kept / "timestamp.txt").read_text() == honest.name.split("+")[2]


def test_the_owner_is_checked_again_on_each_file_as_it_is_copied(release, private_exchange,
                                                                  monkeypatch):
    """A file swapped in after the check and before the copy (nbgrader leaves submission folders
    writable by all) is caught on the opened file itself: that submission is refused, and the
    rest of the class is collected."""
    needs_root()
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    state, (root, inbound) = release, private_exchange
    now = utcnow() - datetime.timedelta(minutes=5)
    plant(inbound, f"alice+{ASSIGNMENT}+{stamp(now)}", base())
    swapped = plant(inbound, f"bob+{ASSIGNMENT}+{stamp(now)}", base())
    os.chown(swapped / NOTEBOOK, 65534, 65534)
    monkeypatch.setattr(exchange, "find_problem", lambda *args, **kwargs: None)  # as if checked
    settings = Config()
    config.configure(settings, REPO)
    settings.CourseDirectory.course_id = COURSE_ID
    settings.Exchange.root = str(root)
    coursedir = CourseDirectory(config=settings)
    coursedir.assignment_id = ASSIGNMENT
    exchange.SafeCollect(coursedir=coursedir, authenticator=Authenticator(config=settings),
                         config=settings).start()
    assert sorted(p.name for p in (state / "submitted").iterdir()) == ["alice"]
    [refused] = identity.read_refusals(state / "submitted", ASSIGNMENT)
    assert refused["student"] == "bob" and f"{NOTEBOOK} belongs to nobody" in refused["reason"]


def test_any_change_after_a_submission_is_found_on_some_entry(tmp_path, monkeypatch):
    """What collect checks in a shared exchange (:func:`exchange.late_change`): every entry's
    last change (its ctime, which a write, a rename, a link or ``utime`` moves and no account but
    root can set back) lies within moments of the others' and of the submission's time, and no
    file has a second name."""
    now = utcnow().replace(tzinfo=None)
    folder = plant(tmp_path, f"alice+{ASSIGNMENT}+{stamp(now)}", base())
    assert exchange.late_change(folder, now) is None
    late = exchange.late_change(folder, now - datetime.timedelta(minutes=5))
    assert "after the submission was handed in" in late, late
    monkeypatch.setattr(exchange, "SUBMIT_SPREAD", datetime.timedelta(seconds=0.2))
    time.sleep(0.3)
    info = os.stat(folder / NOTEBOOK)
    (folder / NOTEBOOK).write_text((folder / NOTEBOOK).read_text())  # the same bytes again
    os.utime(folder / NOTEBOOK, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same times
    assert os.stat(folder / NOTEBOOK).st_mtime_ns == info.st_mtime_ns
    late = exchange.late_change(folder, now)
    assert late and late.startswith(f"{NOTEBOOK} was changed at") and "s after the rest" in late
    other = plant(tmp_path, f"bob+{ASSIGNMENT}+{stamp(now)}", base())
    os.link(other / NOTEBOOK, tmp_path / "elsewhere")
    assert "has 2 names (hard links)" in exchange.late_change(other, now)


def test_a_change_while_collect_copies_is_caught_once_copied(release, top, monkeypatch):
    """A learner's older notebook moved over her latest one after collect checked the folder and
    before it copied it: the folder is checked again once copied, and refused."""
    needs_root()
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    state, root = release, top / "exchange"
    inbound = inbound_of(root)
    inbound.mkdir(parents=True)
    inbound.chmod(0o2733)  # a shared exchange, as nbgrader's release_assignment makes it
    nobody = identity.account_uid("nobody")
    now = utcnow()
    older = plant(inbound, f"nobody+{ASSIGNMENT}+{stamp(now - datetime.timedelta(seconds=2))}",
                  json.loads(COURSE.assignment(ASSIGNMENT).release.read_text()), owner=nobody)
    latest = plant(inbound, f"nobody+{ASSIGNMENT}+{stamp(now)}", base(), owner=nobody)
    monkeypatch.setattr(exchange, "SUBMIT_SPREAD", datetime.timedelta(seconds=0.2))
    copy = exchange.copy_regular_tree

    def copy_after_a_swap(source, *args, **kwargs):
        time.sleep(0.3)
        os.rename(older / NOTEBOOK, latest / NOTEBOOK)
        return copy(source, *args, **kwargs)
    monkeypatch.setattr(exchange, "copy_regular_tree", copy_after_a_swap)
    settings = Config()
    config.configure(settings, REPO)
    settings.CourseDirectory.course_id = COURSE_ID
    settings.Exchange.root = str(root)
    coursedir = CourseDirectory(config=settings)
    coursedir.assignment_id = ASSIGNMENT
    exchange.SafeCollect(coursedir=coursedir, authenticator=Authenticator(config=settings),
                         config=settings).start()
    assert not (state / "submitted" / "nobody").exists()
    [refused] = identity.read_refusals(state / "submitted", ASSIGNMENT)
    assert refused["folder"] == latest.name and LATE in refused["reason"], refused


# ------------------------------------------------------------------ a shared exchange, real accounts

ATTACK = """import os, sys
inbound, folder, text, written = sys.argv[1:5]
path = os.path.join(inbound, folder)
os.makedirs(path, exist_ok=True)
target = os.path.join(path, %r)
if os.path.lexists(target):
    os.unlink(target)  # nbgrader submit leaves every submission folder writable by all (0777)
open(target, "w").write(text)
if written:
    open(os.path.join(path, "timestamp.txt"), "w").write(written)
""" % NOTEBOOK


@pytest.mark.slow
@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_another_account_cannot_hand_in_work_as_a_learner_through_a_shared_exchange(
        who, people):
    """Attack 7 and variants, with real accounts on a shared exchange laid out as
    docs/jupyterhub.md lays it out (a 1777 root, nbgrader's 2733 inbound). alice submits perfect
    work twice and bob once, through ``nbgrader submit``. carol writes folders claiming to be
    alice's later work (now, and in 2099), claims to be root and names a folder with a newline.
    bob dates a folder of his own in 2099, writes one whose timestamp.txt is earlier than its name
    (dodging lateness) and hands in for a name with no account. Collect refuses each with the
    reason and takes alice's latest submission; bob's own folders that fail their checks keep his
    real one from counting too (collect cannot tell which of his is the latest), and says so.
    autograde lists every refusal: alice scores full marks, and ``grades.csv`` holds her row
    alone. (Changes inside a learner's own folders: the next test.)"""
    names, homes, root = people
    teacher = names["instructor"]
    exchange_root = root / "exchange"
    exchange_root.mkdir()
    exchange_root.chmod(0o1777)
    if who == "root":
        state = root / "root-course"
        state.mkdir(mode=0o700)

        def instructor(*args, check=True):
            done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900,
                                  env={**os.environ, "AUTOGRADER_STATE": str(state)})
            assert not check or done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
            return done
    else:
        state = homes["instructor"] / "course"
        run_as(teacher, homes["instructor"], "mkdir", "-p", str(state))

        def instructor(*args, check=True):
            return run_as(teacher, homes["instructor"], *args, cwd=REPO, check=check,
                          env={"AUTOGRADER_STATE": str(state)})
    flags = [f"--Exchange.root={exchange_root}", f"--CourseDirectory.course_id={COURSE_ID}"]
    nbgrader = str(BIN / "nbgrader")
    instructor(nbgrader, "generate_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={state / 'release'}")
    instructor(nbgrader, "release_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={state / 'release'}", *flags)

    def as_learner(role, *args):
        return run_as(names[role], homes[role], *args)

    def submit(role, notebook):
        path = homes[role] / ASSIGNMENT / NOTEBOOK
        path.write_text(json.dumps(notebook))
        shutil.chown(path, names[role], names[role])
        as_learner(role, "nbgrader", "submit", ASSIGNMENT, f"--course={COURSE_ID}",
                   f"--Exchange.root={exchange_root}")
        time.sleep(1.1)

    for role in ("alice", "bob"):
        as_learner(role, "nbgrader", "fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}",
                   f"--Exchange.root={exchange_root}")
    submit("alice", base())
    submit("alice", base())
    submit("bob", base())
    inbound = inbound_of(exchange_root)
    alice, bob, carol = names["alice"], names["bob"], names["carol"]
    first, latest = sorted(p.name for p in inbound.iterdir() if p.name.startswith(alice + "+"))
    blank = COURSE.assignment(ASSIGNMENT).release.read_text()

    def attack(role, folder, written=""):
        as_learner(role, str(BIN / "python"), "-c", ATTACK, str(inbound), folder, blank, written)
        return folder

    now = stamp(utcnow() - datetime.timedelta(seconds=1))
    future = stamp(utcnow() + datetime.timedelta(days=365 * 73))
    old = stamp(utcnow() - datetime.timedelta(days=30))
    expected = {
        attack("carol", f"{alice}+{ASSIGNMENT}+{now}", now): f"belongs to {carol}, not {alice}",
        attack("carol", f"{alice}+{ASSIGNMENT}+{future}", future): f"belongs to {carol}",
        attack("carol", f"root+{ASSIGNMENT}+{now}", now): f"belongs to {carol}, not root",
        attack("carol", f"{alice}\n+{ASSIGNMENT}+{now}", now): "not a valid student id",
        attack("bob", f"{bob}+{ASSIGNMENT}+{future}", future): "in the future",
        attack("bob", f"{bob}+{ASSIGNMENT}+{now}", old): "its timestamp.txt says",
        attack("bob", f"ghost+{ASSIGNMENT}+{now}", now): "ghost is not an account",
    }
    [real] = [p.name for p in inbound.iterdir() if p.name.startswith(bob + "+")
              and (inbound / p.name / "submission_secret.txt").exists()]
    expected[real] = f"another submission of {bob}'s"
    collected = instructor(nbgrader, "collect", ASSIGNMENT, *flags)
    log = collected.stdout + collected.stderr
    assert f"{len(expected)} submission(s) of {ASSIGNMENT} refused" in log, log[-3000:]
    submitted = state / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == [alice]
    kept = (submitted / alice / ASSIGNMENT / "timestamp.txt").read_text()
    assert kept == (inbound / latest / "timestamp.txt").read_text()
    refused = {e["folder"]: e["reason"] for e in identity.read_refusals(submitted, ASSIGNMENT)}
    assert set(refused) == set(expected)
    for folder, words in expected.items():
        assert words in refused[folder], (folder, refused[folder])

    graded = instructor(str(BIN / "python"), "-m", "autograder", "autograde", ASSIGNMENT,
                        "--require-sandbox", "--jobs", "2", "--cell-timeout", "10",
                        "--call-timeout", "5", "--budget", "120")
    report = graded.stdout
    assert "refused, not graded" in report
    for folder in expected:
        assert identity.shown(folder) in report, folder
    instructor(nbgrader, "export", f"--to={state / 'grades.csv'}")
    rows = read_rows(state / "grades.csv")
    assert {r["student_id"]: float(r["score"]) for r in rows} == {alice: FULL}


# ------------------------------------------------------------------ what a learner handed in stays so

TAMPER = """import os, sys
action, inbound, older, latest = sys.argv[1:5]
a, b, nb = os.path.join(inbound, older), os.path.join(inbound, latest), %r
try:
    if action == "move":        # her older notebook moved over her latest one
        os.rename(os.path.join(a, nb), os.path.join(b, nb))
    elif action == "exchange":  # the notebooks of two of her submissions swapped by renames
        os.rename(os.path.join(a, nb), os.path.join(b, "x"))
        os.rename(os.path.join(b, nb), os.path.join(a, nb))
        os.rename(os.path.join(b, "x"), os.path.join(b, nb))
    elif action == "link":      # a hard link to her older notebook in place of the latest
        os.link(os.path.join(a, nb), os.path.join(b, "x"))
        os.rename(os.path.join(b, "x"), os.path.join(b, nb))
    elif action == "rewrite":   # the latest rewritten with the older's bytes, its times put back
        info = os.stat(os.path.join(b, nb))
        data = open(os.path.join(a, nb), "rb").read()
        with open(os.path.join(b, nb), "wb") as out:
            out.write(data)
        os.utime(os.path.join(b, nb), ns=(info.st_atime_ns, info.st_mtime_ns))
    elif action == "replace":   # her older notebook moved over the latest, every time put back
        kept = {path: os.stat(path) for path in (a, b, os.path.join(b, nb))}
        os.rename(os.path.join(a, nb), os.path.join(b, nb))
        for path, info in kept.items():
            os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif action == "symlink":   # a link to her older notebook in place of the latest
        os.symlink(os.path.join(a, nb), os.path.join(b, "x"))
        os.rename(os.path.join(b, "x"), os.path.join(b, nb))
    elif action == "rename":    # the folders themselves swapped
        os.rename(b, b + "-x")
        os.rename(a, b)
        os.rename(b + "-x", a)
except OSError as error:
    print("refused:", error.strerror)
else:
    print("done")
""" % NOTEBOOK

LATE = "what a learner hands in is changed by no one afterwards"


@pytest.mark.slow
@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_no_other_account_can_change_what_a_learner_handed_in(who, people):
    """Issue 32, mechanism 5 and its variants, with real accounts on a shared exchange laid out as
    docs/jupyterhub.md lays it out, collected as root and as an unprivileged instructor. alice and
    bob each hand in a blank notebook, then a perfect one, through ``nbgrader submit``; some
    seconds later another account changes what one of them handed in, in a way that keeps every
    file the learner's own: her older notebook moved over her latest one; the notebooks of her two
    submissions swapped by renames; a hard link to the older one, and the latest rewritten with the
    older's bytes and its times put back with ``utime`` (both as root: the kernel stops another
    account, which is checked too); a symbolic link; the older moved over the latest and every
    file's and folder's times put back (as root). Collect refuses the changed folder, names it
    with the reason, and takes none of that learner's submissions (an older one in its place is
    what the change aimed at). The folders themselves cannot be swapped: the inbound has the sticky
    bit. An honest learner in the same exchange is collected each time."""
    names, homes, root = people
    teacher = names["instructor"]
    exchange_root = root / "exchange"
    exchange_root.mkdir()
    exchange_root.chmod(0o1777)
    if who == "root":
        state = root / "root-course"
        state.mkdir(mode=0o700)

        def instructor(*args):
            done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900,
                                  env={**os.environ, "ATTENTION_COURSE_STATE": str(state)})
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
            return done
    else:
        state = homes["instructor"] / "course"
        run_as(teacher, homes["instructor"], "mkdir", "-p", str(state))

        def instructor(*args):
            return run_as(teacher, homes["instructor"], *args, cwd=REPO,
                          env={"ATTENTION_COURSE_STATE": str(state)})
    flags = [f"--Exchange.root={exchange_root}", f"--CourseDirectory.course_id={COURSE_ID}"]
    nbgrader = str(BIN / "nbgrader")
    instructor(nbgrader, "generate_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={state / 'release'}")
    instructor(nbgrader, "release_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.release_directory={state / 'release'}", *flags)
    inbound = inbound_of(exchange_root)
    assert os.stat(inbound).st_mode & 0o1000, "the inbound has the sticky bit"
    blank = json.loads(COURSE.assignment(ASSIGNMENT).release.read_text())

    def as_learner(role, *args):
        return run_as(names[role], homes[role], *args)

    def submit(role, notebook):
        path = homes[role] / ASSIGNMENT / NOTEBOOK
        path.write_text(json.dumps(notebook))
        shutil.chown(path, names[role], names[role])
        as_learner(role, "nbgrader", "submit", ASSIGNMENT, f"--course={COURSE_ID}",
                   f"--Exchange.root={exchange_root}")
        time.sleep(1.1)  # the next submission's timestamp is another second

    def folders(role):
        return sorted(p.name for p in inbound.iterdir() if p.name.startswith(names[role] + "+"))

    def tamper(actor, action, victim):
        older, latest = folders(victim)
        args = [str(BIN / "python"), "-c", TAMPER, action, str(inbound), older, latest]
        if actor == "root":
            done = subprocess.run(args, capture_output=True, text=True, check=True)
        else:
            done = as_learner(actor, *args)
        return done.stdout.strip()

    for role in ("alice", "bob", "carol"):
        as_learner(role, "nbgrader", "fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}",
                   f"--Exchange.root={exchange_root}")
    rounds = [
        {"alice": ("carol", "move"), "bob": ("carol", "exchange")},
        {"alice": ("root", "link"), "bob": ("root", "rewrite")},
        {"alice": ("carol", "symlink"), "bob": ("carol", "rename")},
        {"alice": ("root", "replace")},
    ]
    for attacks in rounds:
        for role in attacks:
            submit(role, blank)
            submit(role, base())
        submit("carol", base())
        time.sleep(exchange.SUBMIT_SPREAD.total_seconds() + 1)
        handed_in = {role: folders(role) for role in ("alice", "bob", "carol")}
        outcomes = {}
        for victim, (actor, action) in attacks.items():
            if action in ("link", "rewrite"):  # another account is stopped by the kernel
                assert tamper("carol", action, victim).startswith("refused:"), action
            outcomes[victim] = tamper(actor, action, victim)
        assert outcomes == {victim: "refused: Operation not permitted" if action == "rename"
                            else "done" for victim, (_, action) in attacks.items()}, outcomes
        collected = instructor(nbgrader, "collect", ASSIGNMENT, *flags)
        log = collected.stdout + collected.stderr
        refused = {e["folder"]: e["reason"] for e in
                   identity.read_refusals(state / "submitted", ASSIGNMENT)}
        taken = sorted(p.name for p in (state / "submitted").iterdir())
        changed = [victim for victim, (_, action) in attacks.items() if action != "rename"]
        assert taken == sorted(names[r] for r in ("carol", *attacks) if r not in changed)
        assert set(refused) == {f for victim in changed for f in handed_in[victim]}, refused
        assert f"{len(refused)} submission(s) of {ASSIGNMENT} refused" in log, log[-3000:]
        for victim in changed:
            action = attacks[victim][1]
            older, latest = handed_in[victim]
            untaken = f"another submission of {names[victim]}'s ({latest})"
            words = {"move": (LATE, LATE), "exchange": (LATE, LATE),
                     "link": ("has 2 names (hard links)", "has 2 names (hard links)"),
                     "rewrite": (LATE, untaken), "replace": (LATE, LATE),
                     "symlink": (f"{NOTEBOOK} is a symbolic link", untaken)}[action]
            assert words[0] in refused[latest], (action, refused[latest])
            assert words[1] in refused[older], (action, refused[older])
            for folder in (older, latest):
                assert f"Refused the submission {folder} of {names[victim]}" in log
        for role in ("alice", "bob", "carol"):  # the next round starts afresh
            for folder in inbound.glob(f"{names[role]}+*"):
                shutil.rmtree(folder)
        shutil.rmtree(state / "submitted")
        shutil.rmtree(state / "refused", ignore_errors=True)


# ------------------------------------------------------------------ a bad name in submitted/

BAD_NAMES = ["bob\n", FORGED, "\x1b]0;pwned\x07\x1b[2Kmallory", "a,b"]


@pytest.mark.slow
def test_a_bad_folder_name_in_submitted_stops_neither_grading_nor_recording(release, tmp_path):
    """Attack 10 and variants: folders in ``submitted/`` (put there by hand, or by a collect
    that did not check) whose names hold a newline, a carriage return and a forged row, terminal
    control sequences, a comma. ``python -m autograder autograde`` grades and records the honest
    learner, lists each bad folder escaped, and exits 0; the recording layer refuses such a name
    on its own too. nbgrader's own autograde (which adds a student to the gradebook before any
    grading step runs) grades the honest learner and reports the others refused; the export
    then still parses into exactly the gradebook's rows."""
    state = release
    write_notebook(state / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK, base())
    for name in BAD_NAMES:
        write_notebook(state / "submitted" / name / ASSIGNMENT / NOTEBOOK, base())
    done = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT,
                           "--require-sandbox", "--cell-timeout", "10", "--call-timeout", "5",
                           "--budget", "120"], cwd=REPO, capture_output=True, text=True,
                          timeout=900, env={**os.environ, "AUTOGRADER_STATE": str(state)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "refused, not graded" in done.stdout
    for name in BAD_NAMES:
        assert identity.shown(name) in done.stdout
    assert "\x1b" not in done.stdout + done.stderr
    with gradebook(state) as book:
        assert [s.id for s in book.students] == ["alice"]
        assert book.find_submission(ASSIGNMENT, "alice").score == FULL

    with pytest.raises(instructor.RecordingFailed, match="not recorded: 'bob\\\\n' is not a valid"):
        instructor.record(COURSE.assignment(ASSIGNMENT), ["alice", "bob\n"],
                          Options(sandbox="require"), state)

    shutil.rmtree(state / "autograded")
    direct = instructor.nbgrader("autograde", ASSIGNMENT, state=state, check=False)
    assert direct.returncode != 0 and "refused, not graded" in direct.stdout + direct.stderr
    assert (state / "autograded" / "alice" / ASSIGNMENT / NOTEBOOK).is_file()
    with gradebook(state) as book:
        ids = sorted(s.id for s in book.students)
        assert book.find_submission(ASSIGNMENT, "alice").score == FULL
    assert len(ids) > 1  # nbgrader added some of them: the export must hold still
    instructor.nbgrader("export", f"--to={tmp_path / 'grades.csv'}", state=state)
    assert sorted(r["student_id"] for r in read_rows(tmp_path / "grades.csv")) == ids


# ------------------------------------------------------------------ script in the instructor's browser

HOOK = "window.__hits = []; window.__hit = (n) => window.__hits.push(n);"


def hostile_notebook(port):
    """The reference notebook with, everywhere a learner can put text, something that would run
    script in whoever views it: ``js(n)`` calls ``__hit(n)`` in the page and asks the listener
    on ``port`` for ``/n``, so a payload that ran is seen even from another origin."""
    counter = iter(range(1, 10_000))

    def js(n=None):
        n = next(counter) if n is None else n
        return f"try{{top.__hit({n})}}catch(e){{}};new Image().src='http://127.0.0.1:{port}/{n}'"

    def html_attacks():
        return [
            f'<img src=x onerror="{js()}">', f'<svg onload="{js()}"><script>{js()}</script></svg>',
            f"<script>{js()}</script>", f'<iframe src="javascript:{js()}"></iframe>',
            f'<iframe srcdoc="<script>{js()}</script>"></iframe>',
            f'<a href="javascript:{js()}">click</a>',
            f'<details open ontoggle="{js()}"><summary>s</summary>d</details>',
            f'<object data="javascript:{js()}"></object>', f'<embed src="javascript:{js()}">',
            f'<input autofocus onfocus="{js()}">', f'<video><source onerror="{js()}"></video>',
            f'<math><mtext><table><mglyph><style><img src=x onerror="{js()}">',
            f'<noscript><p title="</noscript><img src=x onerror={js()}>">',
            f'<!--><img src=x onerror="{js()}">-->', f'<body onload="{js()}">',
            f'<meta http-equiv="refresh" content="0;url=javascript:{js()}">',
            f'<form><button formaction="javascript:{js()}">b</button></form>',
            f'<div style="background:url(javascript:{js()})">x</div>',
            f'<base href="javascript:{js()}//">', f'</div></div></div><script>{js()}</script>',
            f'<img src="x` `<script>{js()}</script>"` `>',
        ]

    def markdown_attacks():
        return [*html_attacks(), f"[link](javascript:{js()})", f"![image](javascript:{js()})",
                f'<http://x" onmouseover="{js()}>', f"`</code><script>{js()}</script>`",
                f"$</span><img src=x onerror=\"{js()}\">$",
                # formulas become MathML on these pages: TeX that would make a link or a style
                f"$\\href{{javascript:{js()}}}{{x}}$ and $\\style{{color:red}}{{y}}$",
                f"$$\\href{{javascript:{js()}}}{{\\frac{{a}}{{b}}}}$$"]

    notebook = with_answer(
        "def row_normalize(X):\n"
        f"    raise RuntimeError({' '.join(html_attacks() + markdown_attacks()[-5:])!r})\n")
    displays = [
        ({"text/html": "".join(html_attacks()), "text/plain": "html"}, {}),
        ({"text/html": "".join(html_attacks())}, {"text/html": {"isolated": True}}),
        ({"text/markdown": "\n\n".join(markdown_attacks())}, {}),
        ({"application/javascript": js()}, {}),
        ({"image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{js()}">'
                           f"<script>{js()}</script></svg>"}, {}),
        ({"image/png": f'AAAA" onerror="{js()}" x="'},
         {"image/png": {"width": f"1 onerror={js()}", "alt": f'"><img src=x onerror="{js()}">'}}),
        ({"image/jpeg": "AAAA", "text/plain": "j"}, {"filenames": {"image/jpeg": f'x" onerror="{js()}'}}),
        ({"text/latex": f'</div><img src=x onerror="{js()}">'}, {}),
        ({"application/vnd.jupyter.widget-view+json": {"model_id": f"</script><script>{js()}</script>"}},
         {}),
        ({"text/html": ["<b>", f'<img src=x onerror="{js()}">', "</b>"]}, {}),
    ]
    source = "from IPython.display import display\n" + "".join(
        f"display({data!r}, raw=True, metadata={metadata!r})\n" for data, metadata in displays)
    source += f"print({html_attacks()[0]!r})\n"
    notebook = with_extra_cell(source, answer=notebook_answer(notebook))
    cells = notebook["cells"]
    extra = next(i for i, c in enumerate(cells) if c["source"] == source)
    cells[extra]["metadata"]["tags"] = [f'"><img src=x onerror="{js()}">']
    for cell in cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("q_") or "Your prediction" in "".join(cell["source"]):
            cell["source"] = "\n\n".join(markdown_attacks())  # a written answer, a prediction
    cells.append({"cell_type": "markdown", "metadata": {}, "source": "![a](attachment:a.png)",
                  "attachments": {"a.png": {f'image/png;" onerror="{js()}" x="': "AAAA"}}})
    cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                  "source": f"raise ValueError({html_attacks()[2]!r})"})
    return notebook


def notebook_answer(notebook):
    return next(c["source"] for c in notebook["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "row_normalize")


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory, listener):
    """A class of two graded by the course and given feedback by nbgrader: honest (full marks)
    and mallory (the hostile notebook, whose function raises)."""
    from autograder.sandbox import confinement
    if not confinement.available():
        pytest.skip("bubblewrap is not installed: the class cannot be graded here")
    port, hits = listener
    state = tmp_path_factory.mktemp("hostile") / "course"
    state.mkdir()
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                    f"--CourseDirectory.release_directory={state.parent / 'release'}", state=state)
    write_notebook(state / "submitted" / "honest" / ASSIGNMENT / NOTEBOOK, base())
    write_notebook(state / "submitted" / "mallory" / ASSIGNMENT / NOTEBOOK, hostile_notebook(port))
    instructor.autograde(COURSE.assignment(ASSIGNMENT), jobs=2, state=state, progress=False,
                         options=Options(sandbox="require", cell_timeout=20, call_timeout=5,
                                         budget=120))
    instructor.nbgrader("generate_feedback", ASSIGNMENT, state=state)
    return state, hits


@pytest.mark.slow
@pytest.mark.xdist_group("hostile-class")  # one worker grades the class for both of its tests
def test_learner_text_lands_escaped_and_honest_grading_is_unchanged(hostile_class):
    """Attack 9's source: the exception text a learner's code raised reaches the check cell's
    feedback table as text (entities and escapes), never as markup; the honest learner keeps
    full marks and mallory earns nothing."""
    state, _ = hostile_class
    with gradebook(state) as book:
        assert book.find_submission(ASSIGNMENT, "honest").score == FULL
        assert book.find_submission(ASSIGNMENT, "mallory").score == 0
    autograded = json.loads((state / "autograded" / "mallory" / ASSIGNMENT / NOTEBOOK).read_text())
    [table] = ["".join(o["data"]["text/markdown"]) for c in autograded["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == "check_row_normalize"
               for o in c["outputs"] if "text/markdown" in o.get("data", {})]
    assert "&lt;img src\\=x onerror\\=" in table and "<img" not in table and "<script" not in table
    rendered = sanitize.clean_html(html_of_markdown(table))
    assert "onerror" in rendered and "<img" not in rendered  # shown, as text


LIVE = """() => {
    const root = document.querySelector('#notebook-container');
    const all = [root, ...root.querySelectorAll('*')];
    const attributes = (e) => [...e.attributes];
    // what cells render (the formgrader's own score inputs and buttons sit around them)
    const rendered = [...root.querySelectorAll('.text_cell_render, .output_subarea, .input_area')];
    const active = 'script, iframe, object, embed, frame, base, meta, form, link, style, svg, '
                   + 'input, button, textarea, select';
    // formulas are MathML the course makes (autograder.course.mathml): presentation elements only
    const mathml = new Set(%s);
    const foreign = [...root.querySelectorAll('math, math *')]
        .filter(e => !mathml.has(e.localName)
                     || [...e.attributes].some(a => !%s.includes(a.name))).length;
    return {
        handlers: all.filter(e => attributes(e).some(a => a.name.toLowerCase().startsWith('on'))).length,
        scripts: rendered.map(e => e.querySelectorAll(active).length).reduce((a, b) => a + b, 0)
                 + foreign,
        cells: rendered.length,
        urls: all.filter(e => attributes(e).some(a => /^\\s*(javascript|vbscript):/i.test(a.value)
                                                 || /^(src|srcdoc|formaction)$/i.test(a.name)
                                                    && !/^data:image\\//.test(a.value))).length,
        hits: window.__hits, text: root.innerText,
    };
}""" % (json.dumps(sorted(mathml.TAGS)), json.dumps(sorted(mathml.ATTRIBUTES)))


def no_script_ran(page, url, hits):
    page.add_init_script(HOOK)
    page.goto(url)
    page.wait_for_selector("#notebook-container", timeout=120_000)
    page.mouse.move(200, 300)
    page.mouse.move(600, 500)
    page.keyboard.press("Tab")
    page.wait_for_timeout(3000)  # an image that fails to load fires its onerror by then
    found = page.evaluate(LIVE)
    assert found["hits"] == [] and list(hits) == [], f"script ran: {found['hits']} {list(hits)}"
    assert (found["handlers"], found["scripts"], found["urls"]) == (0, 0, 0), found
    assert found["cells"] > 10, "the page shows no cells"
    return found["text"]


@pytest.mark.slow
@pytest.mark.xdist_group("hostile-class")
def test_the_formgrader_and_feedback_pages_of_a_hostile_submission_run_no_script(hostile_class,
                                                                                  tmp_path):
    """Attack 9 in Chromium: the formgrader's page of mallory's submission and the feedback page
    both learners fetch. A handler that would record a hit never runs, no element carries an
    event handler, a script, a frame or a javascript: URL, and the attempts show as text; the
    honest learner's pages are held to the same."""
    from support.browser import BROWSER_ARGS, CHROMIUM, TOKEN, jupyterlab, playwright
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    state, hits = hostile_class
    with gradebook(state) as book:
        submissions = {student: book.find_submission_notebook(
            NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, student).id for student in
            ("honest", "mallory")}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            with jupyterlab(REPO, REPO, tmp_path, {"AUTOGRADER_STATE": str(state)}) as url:
                for student, submission in submissions.items():
                    page = browser.new_page()
                    text = no_script_ran(
                        page, f"{url}/formgrader/submissions/{submission}?token={TOKEN}", hits)
                    assert ("onerror" in text) == (student == "mallory")
                    page.close()
            for student in submissions:
                [feedback] = (state / "feedback" / student / ASSIGNMENT).glob("*.html")
                page = browser.new_page()
                text = no_script_ran(page, feedback.as_uri(), hits)
                assert ("onerror" in text) == (student == "mallory")
                page.close()
        finally:
            browser.close()
