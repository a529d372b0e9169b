"""Shared fixtures of the project's own tests."""
import contextlib
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder.engine.assignment import Course
from autograder.engine.notebook import source as cell_source  # noqa: F401  (tests take it from here)

REPO = Path(__file__).resolve().parents[2]  # tests/support/__init__.py
COURSE = Course.from_root(REPO)  # this repository's course: solutions/, notebooks/, its suites
ASSIGNMENTS = [assignment.name for assignment in COURSE.assignments()]
SUITE_FILES = sorted(COURSE.suites_folder.glob("*/test_*.py"))  # every hidden suite's test file


def solution_cells(assignment):
    """The cells of an assignment's solution notebook."""
    return json.loads(COURSE.assignment(assignment).solution.read_text(encoding="utf-8"))["cells"]


def execute(notebook, folder, timeout=600):
    """Run ``notebook`` (nbformat's) top to bottom in a fresh python3 kernel working in ``folder``,
    as JupyterLab's *Run All* would; its outputs are filled in place. Returns it."""
    from nbclient import NotebookClient
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def environment_with_wheel(top, wheel):
    """``(python, site-packages)`` of a fresh virtual environment in ``top/env`` holding ``wheel``
    alone, its dependencies (numpy, nbgrader, ...) read from this environment's site-packages
    through a path file: this environment's own .pth files, among them the editable install of
    this checkout, are not read from a path listed there."""
    import site
    env = Path(top) / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True,
                   capture_output=True, timeout=300)
    python = env / "bin" / "python"
    packages = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                    "print(sysconfig.get_path('purelib'))"], check=True,
                                   capture_output=True, text=True).stdout.strip())
    (packages / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True,
                   timeout=600)
    return python, packages


def suite_module(assignment):
    """An assignment's hidden suite, imported as a module (for the project's tests of its trusted
    helpers)."""
    import importlib.util

    from autograder.engine import suite
    path = next(COURSE.assignment(assignment).suite.glob("test_*.py"))
    spec = importlib.util.spec_from_file_location(f"suite_{assignment.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    with suite.importable(COURSE.suites_folder):  # what the course's suites share, as grading does
        spec.loader.exec_module(module)
    return module


@pytest.fixture
def course_state(tmp_path, monkeypatch):
    """A private .course/ (gradebook, exchange, submissions) for one test."""
    state = tmp_path / "course"
    state.mkdir()
    monkeypatch.setenv("AUTOGRADER_STATE", str(state))
    return state


def write_notebook(path, notebook):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def sandbox_mode():
    """Tests grade in the sandbox wherever bubblewrap exists (CI installs it)."""
    return os.environ.get("AUTOGRADER_SANDBOX", "auto")


# ------------------------------------------------------------------ real users (root only)

BIN = Path(sys.executable).parent


def needs_root_and_users():
    """Skip, saying why, where OS users cannot be created (CI runs as root and can)."""
    if os.geteuid() != 0:
        pytest.skip("creating OS users needs root (CI runs as root)")
    if not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("useradd and runuser are needed to create and act as users")


OPENED_STATE = Path(tempfile.gettempdir()) / "attention-course-tests-opened.json"


def _interpreter_folders():
    return [*Path(os.path.realpath(sys.executable)).parents, *BIN.parents, *REPO.parents]


@contextlib.contextmanager
def _opened_state():
    """The shared record of folders opened for other users, under an exclusive lock: tests in
    several processes (xdist workers, or a test inside another's block) may hold it at once."""
    with open(OPENED_STATE.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = json.loads(OPENED_STATE.read_text()) if OPENED_STATE.exists() else {}
        except ValueError:
            state = {}
        holders = [h for h in state.get("holders", []) if _alive(h)]
        opened = state.get("opened", [])
        if not holders:  # every holder has ended (a killed run): close what it left open
            for folder, mode in reversed(opened):
                with contextlib.suppress(OSError):
                    Path(folder).chmod(mode)
            opened = []
        state = {"holders": holders, "opened": opened}
        yield state
        OPENED_STATE.write_text(json.dumps(state))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


@contextlib.contextmanager
def interpreter_open_to_others():
    """Let other users traverse (not list) the folders above the interpreter, which may sit under
    a folder only root can enter (pyenv in /root), for as long as the block runs. The folders
    close again only when the last block holding them, in any of the test processes, ends."""
    with _opened_state() as state:
        known = {path for path, _ in state["opened"]}
        for folder in _interpreter_folders():
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                if str(folder) not in known:
                    state["opened"].append([str(folder), mode])
                    known.add(str(folder))
        state["holders"].append(os.getpid())
    try:
        yield
    finally:
        with _opened_state() as state:
            if os.getpid() in state["holders"]:
                state["holders"].remove(os.getpid())
            if not state["holders"]:
                for folder, mode in reversed(state["opened"]):
                    Path(folder).chmod(mode)
                state["opened"] = []


ACCOUNTS_LOCK = Path(tempfile.gettempdir()) / "attention-course-tests-accounts.lock"


@contextlib.contextmanager
def accounts_lock():
    """One test process at a time adds or removes accounts: useradd and userdel lock /etc/passwd
    and /etc/group and fail at once, without waiting, while another holds them."""
    with open(ACCOUNTS_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _account_command(*args, check=True):
    """useradd or userdel, in its turn (:func:`accounts_lock`)."""
    with accounts_lock():
        done = subprocess.run(args, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


@contextlib.contextmanager
def os_users(root, *names):
    """Create users ``names`` with private homes under ``root``; remove them (and anything they
    left running) afterwards. Yields {name: home}."""
    homes = {}
    try:
        for name in names:
            home = Path(root) / "home" / name
            home.parent.mkdir(parents=True, exist_ok=True)
            _account_command("useradd", "--create-home", "--home-dir", str(home), "--shell",
                             "/bin/sh", name)
            home.chmod(0o700)
            homes[name] = home
        yield homes
    finally:
        for name in names:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
            _account_command("userdel", "--remove", name, check=False)


def run_as(user, home, *args, cwd=None, env=None, check=True, timeout=900):
    """Run ``args`` as ``user`` with a clean environment, as a login of theirs would."""
    environment = {"HOME": str(home), "USER": user, "LOGNAME": user,
                   "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    environment.update(env or {})
    command = ["runuser", "-u", user, "--", "env", "-i",
               *[f"{k}={v}" for k, v in environment.items()], *map(str, args)]
    done = subprocess.run(command, cwd=cwd or home, capture_output=True, text=True,
                          timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{user}: {' '.join(map(str, args))} failed ({done.returncode})\n"
                             f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done


# ------------------------------------------------------------------ the grader's own cost

GRADE_AND_MEASURE = """
import json, sys, time
from autograder.engine import batch
from autograder.engine.assignment import Course
from autograder.engine.options import Options
from autograder.sandbox import confinement
path, root, assignment, options, state = json.loads(sys.argv[1])
limits = confinement.Limits(**options.pop("limits", {}))
assignment = Course.from_root(root).assignment(assignment)
started, cpu = time.monotonic(), time.process_time()
[result] = batch.grade_many([path], assignment, Options(limits=limits, **options), jobs=1,
                            state=state, progress=False)
# VmHWM, not ru_maxrss: a process forked from a large one (pytest) keeps that one's peak in
# ru_maxrss across exec; VmHWM is this program's own.
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"result": result.to_json(), "seconds": time.monotonic() - started,
                  "cpu": time.process_time() - cpu, "peak_mib": peak / 1024}))
"""


def grade_measured(path, assignment, options, state=None, timeout=900):
    """Grade ``path`` in a fresh grading process (``options``: keyword arguments of
    Options, ``limits`` a dict of confinement.Limits); return its result (JSON), the grading
    process's own peak memory in MiB (its children, the kernel and the reader, not included) and
    its wall-clock and CPU seconds."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(GRADE_AND_MEASURE),
                           json.dumps([str(path), str(REPO), assignment, options,
                                       state and str(state)])],
                          capture_output=True, text=True, cwd=REPO, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ hostile learner files

TINY_PNG = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}}  # a signature


def figure_flood(assignment, count=300_000):
    """The reference submission of ``assignment`` whose own demonstration cells hold ``count``
    tiny "PNG" outputs between them (each the PNG signature alone), as compact JSON: 300,000 of
    them make a 20 MB file for 00-getting-started."""
    from autograder.engine import catalogue, demonstrations, notebook
    found = COURSE.assignment(assignment)
    submission = catalogue.filled_notebook(found)
    shown = {notebook.grade_id(c) for c in notebook.load(found.release)["cells"]
             if demonstrations.is_demonstration(c)}
    cells = [c for c in submission["cells"] if notebook.grade_id(c) in shown]
    for cell in cells:
        cell["outputs"] = [TINY_PNG] * (count // len(cells))
    return json.dumps(submission, separators=(",", ":")).encode()


def metadata_bomb(assignment, lists=6_300_000):
    """The reference submission of ``assignment`` whose notebook metadata holds ``lists`` empty
    lists: a valid notebook of 19 MB that Python holds in about 400 MB once parsed."""
    from autograder.engine import catalogue
    submission = catalogue.filled_notebook(COURSE.assignment(assignment))
    submission["metadata"]["bomb"] = "BOMB"
    text = json.dumps(submission, separators=(",", ":"))
    return text.replace('"BOMB"', "[" + "[]," * (lists - 1) + "[]]").encode()


# ------------------------------------------------------------------ commands' own peak memory

MEASURE_MODULE = """
import atexit, json, os, runpy, sys
def report():
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    with open(os.environ["PEAK_FILE"], "a") as out:
        out.write(json.dumps({"module": module, "peak_mib": peak / 1024}) + "\\n")
atexit.register(report)
if sys.argv[1] == "-m":  # as python's own command line names a module
    del sys.argv[1]
module = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def measured_module(module, *args):
    """The command that runs ``python -m module args`` and, as it exits, appends its own peak
    memory (VmHWM: its children apart) to the file named by the environment's PEAK_FILE."""
    return [sys.executable, "-c", MEASURE_MODULE, module, *map(str, args)]


def peaks(path):
    """module -> the largest peak (MiB) its runs appended to ``path``."""
    found = {}
    for line in Path(path).read_text().splitlines() if Path(path).exists() else []:
        entry = json.loads(line)
        found[entry["module"]] = max(found.get(entry["module"], 0), entry["peak_mib"])
    return found


AUTOGRADE_AND_MEASURE = """
import json, sys, time
from autograder.course import instructor
from autograder.engine.assignment import Course
from autograder.engine.options import Options
root, assignment, options, state = json.loads(sys.argv[1])
assignment = Course.from_root(root).assignment(assignment)
recording = {}
started = time.monotonic()
results = instructor.autograde(assignment, jobs=1, state=state, progress=False,
                               options=Options(**options),
                               recorded=lambda r: recording.update(r.peaks))
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
print(json.dumps({"results": [r.to_json() for r in results], "grader_peak_mib": peak / 1024,
                  "recorder_peaks_mib": recording, "recorder_peak_mib": max(recording.values()),
                  "seconds": time.monotonic() - started}))
"""


def autograde_measured(assignment, options, state, run=None):
    """``python -m autograder autograde``'s work (grading in this one process, ``jobs`` 1, and
    the recording process with one building worker) in a fresh process: its results, the
    grading process's peak memory and the recording's (its writer's or its worker's, the
    larger: after each learner, and at most), in MiB. ``run(*args)`` runs the command (as
    another user, say)."""
    args = [sys.executable, "-c", textwrap.dedent(AUTOGRADE_AND_MEASURE),
            json.dumps([str(REPO), assignment, options, str(state)])]
    if run is None:
        done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=1800)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    else:
        done = run(*args)
    return json.loads(done.stdout.strip().splitlines()[-1])


FORMGRADE_PAGES = """
import json, sys, time
from nbconvert.exporters import HTMLExporter
from nbgrader.apps import NbGrader
from nbgrader.server_extensions.formgrader import handlers
from traitlets.config import Config
app = NbGrader()
app.load_config_file()  # the course's nbgrader_config.py, as the formgrader loads it
config = Config(app.config)
config.HTMLExporter.template_name = "formgrade"  # what the formgrader's extension sets
config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
for path in sys.argv[1:]:
    started = time.monotonic()
    html, _ = HTMLExporter(config=config).from_filename(path, resources={
        "assignment_id": "a", "notebook_id": "n", "submission_id": "s", "index": 0,
        "total": 1, "base_url": "", "student": "s", "last_name": None, "first_name": None,
        "notebook_path": path})
    print(json.dumps({"path": path, "seconds": time.monotonic() - started, "chars": len(html)}))
"""


def formgrader_pages(paths, run=None):
    """{path: (seconds, characters)} of the formgrader's page of each autograded notebook, made
    as the formgrader's submission handler makes it (its exporter, the course's configuration)."""
    args = [sys.executable, "-c", FORMGRADE_PAGES, *map(str, paths)]
    if run is None:
        done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=1800)
        assert done.returncode == 0, done.stderr[-4000:]
    else:
        done = run(*args)
    pages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {page["path"]: (page["seconds"], page["chars"]) for page in pages}


def gradebook(state):
    from nbgrader.api import Gradebook
    return Gradebook("sqlite:///" + str(state / "gradebook.db"))


def read_csv_rows(path):
    """The rows of a CSV file as dicts, read as Python's csv module reads it."""
    import csv
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def html_of_markdown(text):
    """Markdown as nbconvert renders it into the formgrader's and the feedback's HTML."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    return markdown2html_mistune(text)


def with_answers(assignment, answers, default="    raise NotImplementedError()\n"):
    """The released notebook with each answer cell's source replaced: ``answers[grade_id]``, or
    a stub that raises for the others."""
    from autograder.engine import notebook
    released = notebook.load(assignment.release)
    for cell in released["cells"]:
        gid = notebook.grade_id(cell)
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] == "code":
            cell["source"] = answers.get(gid, f"def {gid}(*args, **kwargs):\n{default}")
    return released
