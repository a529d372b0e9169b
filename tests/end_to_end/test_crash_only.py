"""Crash-only grading: the grader's own death, a full disk or a busy gradebook lose nothing and
leave nothing running.

The kill loops start the real command line, SIGKILL it at random moments (during a kernel, a
suite, a cache write, the gradebook pass...), then check that nothing it started survives, run
the same command again, and compare what the resumed run produced with a clean run's, byte for
byte. Each loop is bounded in time (three kills at least, for 20 s by default); the seed is in
every failure message.
"""
import functools
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.engine import batch, catalogue
from autograder.sandbox import confinement, lifetime
from autograder.engine.options import Options
from support import COURSE, REPO, write_notebook

ASSIGNMENT = "00-getting-started"
# Each run of make test kills each command at MIN_TRIALS random moments at least, more if
# LOOP_SECONDS allows, with a seed of its own (named in every failure): runs add up to a search of
# the moments. ATTENTION_COURSE_KILL_LOOP_SECONDS=600 searches longer in one run.
LOOP_SECONDS = float(os.environ.get("ATTENTION_COURSE_KILL_LOOP_SECONDS", "20"))
MIN_TRIALS = 3

@functools.lru_cache(maxsize=None)
def released_gradebook(folder):
    """A gradebook that knows ASSIGNMENT, as it does once the instructor has released it."""
    from autograder.course import instructor
    state = Path(folder) / "released"
    instructor.release([COURSE.assignment(ASSIGNMENT)], release_directory=str(state / "release"),
                       state=state)
    return (state / "gradebook.db").read_bytes()


def a_class(folder, size=4, gradebook=None):
    """``size`` distinct submissions of ASSIGNMENT in nbgrader's layout under ``folder``:
    the reference, mutants and an alternative, so scores differ between learners; and a
    copy of ``gradebook`` (bytes), if given."""
    if gradebook is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gradebook.db").write_bytes(gradebook)
    name = COURSE.assignment(ASSIGNMENT).release.name
    mutants = catalogue.mutants(COURSE.assignment(ASSIGNMENT))
    notebooks = [catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT)),
                 catalogue.notebook_with(catalogue.alternatives(COURSE.assignment(ASSIGNMENT))[0])]
    notebooks += [catalogue.notebook_with(m) for m in mutants[:size - 2]]
    paths = []
    for number, notebook in enumerate(notebooks[:size], start=1):
        paths.append(write_notebook(folder / "submitted" / f"learner{number}" / ASSIGNMENT / name,
                                    notebook))
    return paths


def grader(args, tmpdir, state=None):
    """Start ``python -m autograder ARGS`` with its own temporary folder (and course state)."""
    env = dict(os.environ, TMPDIR=str(tmpdir))
    if state is not None:
        env["AUTOGRADER_STATE"] = str(state)
    return subprocess.Popen([sys.executable, "-m", "autograder", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ------------------------------------------------------------------ processes

def start_time(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def descendants(root):
    """``{pid: start time}`` of ``root`` and every process below it."""
    children = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(proc.name))
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        stamp = start_time(pid)
        if stamp is not None:
            found[pid] = stamp
        todo += children.get(pid, [])
    return found


def traces(tmpdir, pids):
    """Living processes that belong to a run: started by it (same pid, same start time), with
    its temporary folder in their command line or environment, or running as the kernel user
    of one of its processes."""
    kernel_uids = {confinement.UID_BASE + pid for pid in pids}
    marker = str(tmpdir).encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        pid = int(proc.name)
        try:
            if start_time(pid) is not None and pids.get(pid) == start_time(pid):
                found.append((pid, "started by the run"))
                continue
            if marker in (proc / "cmdline").read_bytes() or marker in (proc / "environ").read_bytes():
                found.append((pid, (proc / "cmdline").read_bytes()[:120]))
                continue
            uid = int((proc / "status").read_text().split("Uid:")[1].split()[1])
            if uid in kernel_uids:
                found.append((pid, f"kernel user {uid}"))
        except (OSError, IndexError, ValueError):
            continue
    return found


def expect_nothing_survives(tmpdir, pids, why):
    deadline = time.monotonic() + 10
    while (left := traces(tmpdir, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid, _ in left:  # not to leave a kernel running when this fails
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert left == [], f"{why}: still running after the grader died: {left}"


def kill_at_random(args, tmpdir, state, delay, why):
    """Start the command, SIGKILL it after ``delay`` seconds (if it is still running), and
    check that nothing it started outlives it. Returns whether it was killed, what it had
    started (``{pid: start time}``) and how long it ran."""
    started = time.monotonic()
    process = grader(args, tmpdir, state)
    deadline = started + delay
    pids = {}
    while time.monotonic() < deadline and process.poll() is None:
        pids.update(descendants(process.pid))
        time.sleep(0.02)
    killed = process.poll() is None
    if killed:
        pids.update(descendants(process.pid))
        process.send_signal(signal.SIGKILL)
    process.communicate()
    elapsed = time.monotonic() - started
    expect_nothing_survives(tmpdir, pids, why)
    return killed, pids, elapsed


def leftovers(tmpdir):
    return sorted(p.name for p in Path(tmpdir).iterdir())


def own_cgroups(pids):
    names = []
    for parent in confinement.Cgroup.parents():
        for child in parent.iterdir() if parent.is_dir() else []:
            match = lifetime.CGROUP_PATTERN.match(child.name)
            if match and int(match.group(1)) in pids:
                names.append(str(child))
    return names


def kill_loop(tmp_path, run_clean, args_for, outcome, seed, gradebook=None):
    """Kill, check, resume, compare: as many trials as LOOP_SECONDS allows (at least three)."""
    rng = random.Random(seed)
    clean_tmp = tmp_path / "clean-tmp"
    clean_tmp.mkdir()
    started = time.monotonic()
    clean = run_clean(clean_tmp)
    duration = time.monotonic() - started
    trials = killed = 0
    loop_end = time.monotonic() + LOOP_SECONDS
    while trials < MIN_TRIALS or time.monotonic() < loop_end:
        trials += 1
        trial = tmp_path / f"trial{trials}"
        tmpdir = trial / "tmp"
        tmpdir.mkdir(parents=True)
        state = trial / "state"
        a_class(state, gradebook=gradebook)
        delay = rng.uniform(0.05, duration * 1.1)
        why = f"seed {seed}, trial {trials}, killed after {delay:.2f} s"
        was_killed, pids, elapsed = kill_at_random(args_for(trial), tmpdir, state, delay, why)
        killed += was_killed
        if not was_killed:
            # The clean run can be slower than the rest (a cold disk cache, a busy machine):
            # a run that finished before its delay is the better measure of how long one takes.
            duration = min(duration, elapsed)
        resumed = grader(args_for(trial), tmpdir, state)
        out, err = resumed.communicate(timeout=600)
        assert resumed.returncode == 0, f"{why}: the resumed run failed:\n{err[-3000:]}"
        assert outcome(trial) == clean, f"{why}: the resumed run's results differ from a clean run's"
        assert leftovers(tmpdir) == [], f"{why}: left in the temporary folder: {leftovers(tmpdir)}"
        assert own_cgroups(pids) == [], f"{why}: control groups left: {own_cgroups(pids)}"
        assert not [p for p in state.rglob(".*.*") if lifetime.TEMPORARY_ENTRY.match(p.name)], (
            f"{why}: a half-written entry was left in the state folder")
    assert killed >= MIN_TRIALS - 1, f"seed {seed}: only {killed} of {trials} runs were killed"


def test_a_killed_grade_command_resumes_to_a_clean_runs_results_and_leaves_nothing(tmp_path):
    seed = random.randrange(10**6)
    clean_state = tmp_path / "clean"
    paths = a_class(clean_state)

    def args_for(trial):
        return ["grade", *[str(trial / "state" / p.relative_to(clean_state)) for p in paths],
                "--assignment", ASSIGNMENT, "--state", str(trial / "cache"), "--jobs", "2",
                "--json", str(trial / "results.json")]

    def outcome(trial):
        text = (trial / "results.json").read_text()
        return text.replace(str(trial / "state"), "<class>")

    def run_clean(tmpdir):
        trial = tmp_path / "clean-run"
        (trial / "state").mkdir(parents=True)
        a_class(trial / "state")
        done = grader(args_for(trial), tmpdir)
        _, err = done.communicate(timeout=600)
        assert done.returncode == 0, err
        return outcome(trial)

    kill_loop(tmp_path, run_clean, args_for, outcome, seed)


SLOW_START = """
import sys
from autograder.sandbox import confinement
from autograder.engine.kernel import KernelSession
# the kernel's start is held in a shell for a while before bubblewrap runs: the window in which
# bubblewrap's own --die-with-parent does not hold yet
confinement.Cgroup.prefix = lambda self: ["/bin/sh", "-c", 'sleep 3; exec "$@"', "held"]
print("starting", flush=True)
KernelSession(mode=confinement.BUBBLEWRAP).start()
"""


def command_line(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_grader_killed_while_its_kernel_is_starting_leaves_no_kernel(tmp_path):
    """A grading process killed after it forked a kernel's start, before bubblewrap runs: the
    start dies with it instead of going on, orphaned, to run a kernel nobody will stop."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(REPO))
    process = subprocess.Popen([sys.executable, "-c", SLOW_START], env=env, cwd=REPO,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "starting"
    deadline = time.monotonic() + 30
    held = []
    while not held and time.monotonic() < deadline:
        pids = descendants(process.pid)
        held = [pid for pid in pids if command_line(pid).startswith(b"/bin/sh\0-c\0sleep 3")]
        time.sleep(0.01)
    assert held, "the kernel's start was not seen"
    process.kill()
    process.wait()
    time.sleep(5)  # past the shell's wait: an orphaned start would be running its kernel now
    left = traces(tmpdir, pids)
    for pid, _ in left:  # not to leave a kernel running when this fails
        os.kill(pid, signal.SIGKILL)
    assert len(pids) >= 2  # the grader and the kernel's start
    assert left == []


KEPT_BY_A_KEEPER = """
import sys, time
from autograder.sandbox import confinement
from autograder.engine.kernel import KernelSession
# between the grader and bubblewrap, a process whose parent-death signal is cleared and that
# waits for bubblewrap: as bubblewrap itself is while it changes credentials to set the sandbox
# up (Linux then clears that signal), nothing ties the sandbox to the grader but the lifeline
confinement.Cgroup.prefix = lambda self: ["setpriv", "--pdeathsig", "clear", "/bin/sh", "-c",
                                          '"$@" & wait', "keeper"]
session = KernelSession(mode=confinement.BUBBLEWRAP).start()
print("ready", flush=True)
time.sleep(600)
"""


def kill_a_grader_holding_a_kernel(tmp_path, source, why):
    """Run ``source`` (a grader that prints "ready" once it holds a kernel) in a process of its
    own, check that a bubblewrap sandbox is among its descendants, SIGKILL it, and expect nothing
    of the run left. Returns what the grader printed on its standard error."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(REPO))
    process = subprocess.Popen([sys.executable, "-c", source], env=env, cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready", process.stderr.read()
        pids = descendants(process.pid)
        assert any(command_line(pid).startswith(b"/bin/sh\0-c") for pid in pids)
        assert any(command_line(pid).startswith(b"/usr/bin/bwrap") or
                   command_line(pid).startswith(b"bwrap") for pid in pids), pids
    finally:
        process.kill()
        _, said = process.communicate()
    expect_nothing_survives(tmpdir, pids, f"{why} ({said.strip()})")
    return said


def test_a_grader_killed_whatever_holds_its_kernel_leaves_no_kernel(tmp_path):
    """The kernel holds one end of a socket pair whose other end only its grader holds: when the
    grader dies, the kernel exits, even when the parent-death signals between them are gone (a
    whole run once left a kernel so; bubblewrap changing credentials, which clears its own, is
    the likely cause)."""
    kill_a_grader_holding_a_kernel(tmp_path, KEPT_BY_A_KEEPER,
                                   "the grader killed with its kernel ready")


# learner code that tries to keep its kernel alive once its grader is gone: the lifeline's
# descriptor (named on the kernel's command line) replaced, a second writer opened on it through
# /proc, and the functions its watcher calls replaced
CUT_THE_LIFELINE = r"""
import os, ctypes
line = open("/proc/self/cmdline", "rb").read().split(b"\0")
fd = int(next(a for a in line if a.startswith(b"lifeline=")).partition(b"=")[2])
tried = []
for attempt in ("reopen", "dup2", "exit", "read"):
    try:
        if attempt == "reopen":
            keep = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)
        elif attempt == "dup2":
            spare = os.open("/dev/null", os.O_RDONLY)
            os.dup2(spare, fd)
        elif attempt == "exit":
            os._exit = lambda code: None
        else:
            os.read = lambda fd, n: b"x"
        tried.append(attempt)
    except OSError as error:
        tried.append(f"{attempt}: {error.strerror}")
print(tried)
"""


def test_learner_code_cannot_keep_its_kernel_alive_past_its_grader(tmp_path):
    """Learner code runs in the kernel, where the lifeline's watcher and its descriptor live: it
    replaces the descriptor, opens a writer of its own on it through /proc, and replaces the
    functions the watcher calls. With nothing else tying the sandbox to the grader (as in the
    test above), the kernel still exits when the grader is killed."""
    source = KEPT_BY_A_KEEPER.replace(
        'print("ready", flush=True)',
        f'print(session.execute({CUT_THE_LIFELINE!r}, 30).outputs, file=sys.stderr)\n'
        'print("ready", flush=True)')
    said = kill_a_grader_holding_a_kernel(tmp_path, source, "the kernel's lifeline attacked")
    assert "'dup2'" in said and "'exit'" in said, said  # the attack ran in the kernel
    assert "'reopen: " in said, said  # no second writer: the grader's end alone holds it open


def gradebook_contents(state):
    """Every grade and comment of the assignment in the gradebook, and the autograded notebooks'
    bytes, per student: what the formgrader, feedback and export read."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as gradebook:
        rows = []
        for submission in gradebook.assignment_submissions(ASSIGNMENT):
            for notebook in submission.notebooks:
                rows.append([submission.student.id, notebook.name, notebook.score,
                             notebook.max_score,
                             sorted([g.name, g.auto_score, g.manual_score] for g in notebook.grades),
                             sorted([c.name, c.auto_comment] for c in notebook.comments)])
    files = {str(p.relative_to(state)): p.read_bytes()
             for p in sorted((state / "autograded").rglob("*")) if p.is_file()}
    return sorted(rows), files


def test_a_killed_autograde_command_resumes_to_the_same_gradebook_and_leaves_nothing(tmp_path):
    seed = random.randrange(10**6)
    released = released_gradebook(tmp_path)

    def args_for(trial):
        return ["autograde", ASSIGNMENT, "--jobs", "2"]

    def outcome(trial):
        return gradebook_contents(trial / "state")

    def run_clean(tmpdir):
        state = tmp_path / "clean-run" / "state"
        a_class(state, gradebook=released)
        done = grader(args_for(None), tmpdir, state)
        _, err = done.communicate(timeout=600)
        assert done.returncode == 0, err
        rows, _ = gradebook_contents(state)
        assert len(rows) == 4 and len({row[2] for row in rows}) > 1, rows
        return gradebook_contents(state)

    kill_loop(tmp_path, run_clean, args_for, outcome, seed, gradebook=released)


# ------------------------------------------------------------------ a full disk

@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 2 MiB (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder, leave):
    """Fill ``folder``'s file system until only about ``leave`` bytes are free."""
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with open(folder / "filler", "wb") as handle:
        handle.write(b"\0" * max(0, free - leave))


def test_a_full_state_disk_stops_grading_clearly_and_corrupts_nothing(tmp_path, small_disk):
    paths = a_class(tmp_path / "class")
    state = small_disk / "state"
    state.mkdir()
    args = ["grade", *map(str, paths), "--assignment", ASSIGNMENT, "--state", str(state),
            "--jobs", "1", "--json", str(tmp_path / "results.json")]
    clean = grader([*args[:-2], "--json", str(tmp_path / "clean.json"), "--state",
                    str(tmp_path / "clean-state")], tmp_path)
    assert clean.wait(timeout=600) == 0
    # Room for about one cache entry, not four.
    one = len((next((tmp_path / "clean-state").glob("*.json"))).read_bytes())
    fill(small_disk, int(one * 1.5))
    full = grader(args, tmp_path)
    _, err = full.communicate(timeout=600)
    assert full.returncode == 3, err
    assert "is full" in err and "run the same command again" in err, err
    assert "Traceback" not in err
    kept = list(state.glob("*.json"))
    assert len(kept) < len(paths)
    for entry in kept:  # everything kept is whole
        assert "result" in json.loads(entry.read_text())
    assert [p.name for p in state.iterdir() if p.name.startswith(".")] == []
    assert not (tmp_path / "results.json").exists()
    (small_disk / "filler").unlink()
    again = grader(args, tmp_path)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert (tmp_path / "results.json").read_text() == (tmp_path / "clean.json").read_text()


# ------------------------------------------------------------------ a busy gradebook

def test_a_locked_gradebook_is_waited_for_then_named(tmp_path):
    state = tmp_path / "state"
    a_class(state, gradebook=released_gradebook(tmp_path))
    holder = sqlite3.connect(state / "gradebook.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another program in the middle of writing
    try:
        busy = grader(["autograde", ASSIGNMENT, "--jobs", "2", "--lock-wait", "3"], tmp_path,
                      state)
        _, err = busy.communicate(timeout=600)
        assert busy.returncode == 4, err
        assert "locked" in err and f"pid {os.getpid()}" in err, err
        assert "Traceback" not in err
        assert len(list((state / "grading-cache").glob("*.json"))) == 4  # grading itself is kept
        # The lock goes away while the next run waits: it records everything.
        threading.Timer(4, holder.rollback).start()
        waiting = grader(["autograde", ASSIGNMENT, "--jobs", "2", "--lock-wait", "60"],
                         tmp_path, state)
        _, err = waiting.communicate(timeout=600)
        assert waiting.returncode == 0, err
    finally:
        holder.close()
    rows, files = gradebook_contents(state)
    assert [row[0] for row in rows] == [f"learner{n}" for n in range(1, 5)]
    assert len(files) >= 4


def is_recorder(pid):
    return b"autograder.course.recorder" in command_line(pid)


def parent_of(pid):
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def test_a_killed_recording_process_stops_no_grading_and_the_rerun_records_the_rest(tmp_path):
    """The recording process (one per command, beside the grading) dies during grading: every
    submission is still graded and kept, the command says what happened and exits 5, and the
    same command run again records everyone."""
    state = tmp_path / "state"
    a_class(state, gradebook=released_gradebook(tmp_path))
    run = grader(["autograde", ASSIGNMENT, "--jobs", "1"], tmp_path, state)
    deadline = time.monotonic() + 120
    recorder = None
    while recorder is None and time.monotonic() < deadline and run.poll() is None:
        for pid in descendants(run.pid):
            # the recording process itself, not one of its building workers (forked from it)
            if is_recorder(pid) and not is_recorder(parent_of(pid)):
                recorder = pid
        time.sleep(0.05)
    assert recorder is not None, "no recording process was seen"
    os.kill(recorder, signal.SIGKILL)
    _, err = run.communicate(timeout=600)
    assert run.returncode == 5, err
    assert "recording process" in err and "run the same command again" in err, err
    assert "Traceback" not in err
    assert len(list((state / "grading-cache").glob("*.json"))) == 4  # grading went on
    again = grader(["autograde", ASSIGNMENT, "--jobs", "1"], tmp_path, state)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    rows, files = gradebook_contents(state)
    assert [row[0] for row in rows] == [f"learner{n}" for n in range(1, 5)]
    assert len(list((state / "recorded" / ASSIGNMENT).glob("*.json"))) == 4


def test_a_killed_building_worker_loses_nothing_its_learners_are_recorded_whole(tmp_path):
    """The recording process builds autograded folders in workers of its own and writes rows
    itself. A worker killed during the command (here, as soon as it is seen) breaks the pool:
    every learner left goes through nbgrader's whole converter in the writer, the command
    succeeds, and the gradebook and autograded notebooks are a clean run's."""
    released = released_gradebook(tmp_path)
    outcomes = []
    for killing in (False, True):
        state = tmp_path / f"killing-{killing}"
        a_class(state, gradebook=released)
        run = grader(["autograde", ASSIGNMENT, "--jobs", "2"], tmp_path, state)
        killed = None
        deadline = time.monotonic() + 120
        while killing and killed is None and time.monotonic() < deadline and run.poll() is None:
            for pid in descendants(run.pid):
                if is_recorder(pid) and is_recorder(parent_of(pid)):
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.02)
        assert killed is not None or not killing, "no building worker was seen"
        _, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        assert "Traceback" not in err
        assert len(list((state / "recorded" / ASSIGNMENT).glob("*.json"))) == 4
        outcomes.append(gradebook_contents(state))
    rows, files = outcomes[0]
    assert len(rows) == 4 and len(files) >= 4
    assert outcomes[1] == outcomes[0]


# ------------------------------------------------------------------ recording, fast and unchanged

def test_the_course_records_exactly_what_stock_nbgrader_records(tmp_path):
    """The course records grades with nbgrader's own converter, in one process fed learner by
    learner while grading runs (autograder/course/recorder.py), started without nbgrader's server
    extensions and with one database engine per command (autograder/course/nbgrader_launch.py): the
    gradebook, the autograded notebooks, the feedback and the export are the same as stock
    ``nbgrader autograde``'s, byte for byte; so are the course's ``nbgrader autograde``'s."""
    from autograder.course import instructor
    released = released_gradebook(tmp_path)
    outcomes = {}
    for how in ("recorder", "launcher", "stock"):
        state = tmp_path / how
        a_class(state, gradebook=released)
        # the same cached grades for all: grading itself is not what is compared here
        if outcomes:
            shutil.copytree(tmp_path / "recorder" / "grading-cache", state / "grading-cache")
        else:
            batch.grade_many(sorted((state / "submitted").rglob("*.ipynb")),
                             COURSE.assignment(ASSIGNMENT), Options(), jobs=2,
                             state=state / "grading-cache", progress=False)
        if how == "recorder":
            instructor.record(COURSE.assignment(ASSIGNMENT),
                              [p.name for p in (state / "submitted").iterdir()], Options(), state)
        else:
            instructor.nbgrader("autograde", ASSIGNMENT, state=state, stock=how == "stock")
        for command in (["generate_feedback", ASSIGNMENT],
                        ["export", f"--to={state / 'grades.csv'}"]):
            instructor.nbgrader(*command, state=state, stock=how == "stock")
        feedback = {str(p.relative_to(state)): p.read_bytes()
                    for p in sorted((state / "feedback").rglob("*.html"))}
        outcomes[how] = (gradebook_contents(state), feedback, (state / "grades.csv").read_text())
    (rows, notebooks), feedback, export = outcomes["stock"]
    assert len(rows) == 4 and len(feedback) == 4 and export.count("\n") == 5
    assert outcomes["recorder"] == outcomes["stock"]
    assert outcomes["launcher"] == outcomes["stock"]
    assert len(list((tmp_path / "recorder" / "recorded" / ASSIGNMENT).glob("*.json"))) == 4
