"""Attack submissions, each with the exact score it must get.

Every attack is the reference notebook of 00-getting-started (worth 8 points) with something
added, replaced or broken. Attacks that try to cheat are written so that success would earn full
marks and failure earns nothing: "if I can read the hidden suite, define a correct function,
otherwise one that raises". Attacks that only misbehave (loops, bombs, exits) keep a correct
function, so the score shows the grader survived them and still graded the rest.

The same attacks run three ways: in this process (the grader as root, as CI runs it), through
``python -m autograder grade`` as an unprivileged instructor, and through nbgrader's
collect -> autograde -> generate_feedback as root and as an unprivileged instructor.
"""
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from autograder.engine import batch, catalogue, grade, wire
from autograder.engine.options import Options
from autograder.engine.result import Result
from autograder.sandbox import confinement
from support import (COURSE, REPO, grade_measured, interpreter_open_to_others,
                     needs_root_and_users, os_users, run_as, write_notebook)

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"
FULL = 8.0
SUITE_FILE = REPO / "suites" / ASSIGNMENT / "test_getting_started.py"
SOLUTION_FILE = COURSE.assignment(ASSIGNMENT).solution
MARKER = uuid.uuid4().hex  # a unique word for files and processes attacks leave behind

# Folders and files the kernel is never shown. A top-level folder that holds the course or its
# interpreter (a clone under /srv, a virtual environment under /opt) is shown in part, as the
# kernel needs those, so it is left out of the list wherever this test runs.
_SHOWN = [REPO.resolve(), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
OUTSIDE_THE_ALLOWLIST = [
    p for p in ['/srv', '/var', '/opt', '/mnt', '/boot', '/sys', '/etc/shadow', '/etc/hostname',
                '/etc/hosts', '/etc/ssh']
    if not any(shown.is_relative_to(p) for shown in _SHOWN)]

CORRECT = """def row_normalize(X):
    sums = X.sum(axis=-1, keepdims=True)
    return X / np.where(sums == 0, 1, sums)
"""
BROKEN = """def row_normalize(X):
    raise RuntimeError("the attack did not work")
"""


def if_it_works(attempt):
    """A cell that defines a correct function only when ``attempt`` (code) runs without error."""
    body = "\n".join("    " + line for line in attempt.strip().splitlines())
    return (f"try:\n{body}\n    _worked = True\nexcept BaseException:\n    _worked = False\n"
            f"if _worked:\n" + "\n".join("    " + l for l in CORRECT.splitlines())
            + "\nelse:\n" + "\n".join("    " + l for l in BROKEN.splitlines()) + "\n")


def options():
    """Attacks on the trust boundary, graded as the command line grades for Gradescope: no figure
    is drawn (the figures' own path is tested in tests/sandbox/test_bounded.py and in the
    feedback page's test)."""
    return Options(sandbox="require", cell_timeout=4, notebook_timeout=40, call_timeout=3,
                   budget=60, figures="off")


def base():
    """A complete, correct submission (the release with every answer filled in)."""
    return catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))


def with_answer(source):
    notebook = base()
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "row_normalize":
            cell["source"] = source
    return notebook


def with_extra_cell(source, answer=CORRECT):
    """The answer cell, then one more cell the learner added."""
    notebook = with_answer(answer)
    index = next(i for i, c in enumerate(notebook["cells"])
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "row_normalize")
    notebook["cells"].insert(index + 1, {"cell_type": "code", "metadata": {}, "outputs": [],
                                         "execution_count": None, "source": source})
    return notebook


def without_cell(grade_id):
    notebook = base()
    notebook["cells"] = [c for c in notebook["cells"]
                         if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") != grade_id]
    return notebook


def with_edited_cell(grade_id, source):
    notebook = base()
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = source
    return notebook


# name -> (notebook or raw bytes, expected score, words the feedback must contain)
ATTACKS = {
    # --- reading what learners must not see
    "read the hidden suite": (with_answer(if_it_works(f"open({str(SUITE_FILE)!r}).read()")), 0, ""),
    "read the solution notebook": (with_answer(if_it_works(f"open({str(SOLUTION_FILE)!r}).read()")), 0, ""),
    "list the autograder folder": (with_answer(if_it_works(
        f"import os\nassert os.listdir({str(REPO / 'autograder')!r})")), 0, ""),
    "read the gradebook": (with_answer(if_it_works(
        f"import glob\nassert glob.glob({str(REPO / '.course' / '*')!r}) or "
        f"glob.glob('/tmp/*/course/*')")), 0, ""),
    "read other submissions": (with_answer(if_it_works(
        "import glob\nassert [p for p in glob.glob('/tmp/**/*.ipynb', recursive=True) "
        "if 'attention-grade' not in p]")), 0, ""),
    "read the grader's home": (with_answer(if_it_works(
        "import os\nassert [f for f in os.listdir('/root') if f != '.pyenv']")), 0, ""),
    # --- writing where learners must not write
    "plant a test in the suite": (with_extra_cell(
        f"try:\n    open({str(SUITE_FILE.parent / ('test_planted_' + MARKER + '.py'))!r}, 'w')"
        f".write('def test_x(): pass')\nexcept OSError:\n    pass\n"), FULL, ""),
    "write outside the scratch folder": (with_extra_cell(
        f"for path in ['/tmp/planted-{MARKER}', {str(REPO / ('planted-' + MARKER))!r}, "
        f"'/var/tmp/planted-{MARKER}']:\n    try:\n        open(path, 'w').write('x')\n"
        f"    except OSError:\n        pass\n"), FULL, ""),
    "overwrite the gradebook with sqlite": (with_extra_cell(
        "import sqlite3, glob\nfor path in glob.glob('/work/**/gradebook.db', recursive=True):\n"
        "    try:\n        sqlite3.connect(path).execute('DELETE FROM grade')\n"
        "    except Exception:\n        pass\n"), FULL, ""),
    "open a network connection": (None, 0, ""),  # filled in by the test (needs a live port)
    # --- lying to the checks
    "patch numpy.allclose": (with_answer(
        "import numpy\nnumpy.allclose = lambda *a, **k: True\nnumpy.testing.assert_allclose = "
        "lambda *a, **k: None\n" + BROKEN.replace('raise RuntimeError("the attack did not work")',
                                                  "return X * 0")), 0, ""),
    "fake pytest and builtins": (with_answer(
        "import sys, types, builtins\nsys.modules['pytest'] = types.ModuleType('pytest')\n"
        "builtins.AssertionError = type('Fake', (Exception,), {})\n"
        "def row_normalize(X):\n    return X\n"), 0, ""),
    "return an object with a lying __eq__": (with_answer(
        "class Liar:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
        "def row_normalize(X):\n    return Liar()\n"), 0, "object of type Liar"),
    "return an object with a lying __array__": (with_answer(
        "class Liar:\n    def __array__(self, dtype=None, copy=None):\n        import numpy\n"
        "        return numpy.ones((3, 3))\n    def __eq__(self, other): return True\n"
        "def row_normalize(X):\n    return Liar()\n"), 0, "object of type Liar"),
    "return an ndarray subclass that lies": (with_answer(
        "class Liar(np.ndarray):\n    def __eq__(self, other): return np.ones(np.shape(other), bool)\n"
        "def row_normalize(X):\n    return np.zeros_like(X).view(Liar)\n"), 0, "object of type Liar"),
    "return a pickled object array": (with_answer(
        "def row_normalize(X):\n    return np.array([object()] * X.shape[-1])\n"), 0, ""),
    "tamper with the wire in the kernel": (with_answer(
        "import json as _json\n_real = _json.dumps\n"
        "def _forged(obj, *a, **k):\n    if isinstance(obj, dict) and 'ok' in obj:\n"
        "        obj = {'ok': True, 'value': {'__ndarray__': ''}, 'mutated': [], 'warnings': []}\n"
        "    return _real(obj, *a, **k)\n_json.dumps = _forged\n"
        "def row_normalize(X):\n    return X * 0\n"), 0, ""),
    "behave differently when graded": (with_answer(if_it_works(
        "import os\nassert any(k.startswith(('NBGRADER', 'ATTENTION_COURSE', 'PYTEST')) "
        f"for k in os.environ) or os.path.exists({str(REPO / 'autograder')!r})")), 0, ""),
    # --- faults that must not stop grading
    "infinite loop in a cell": (with_extra_cell("while True:\n    pass\n"), FULL, ""),
    "infinite loop in the function": (with_answer(
        "def row_normalize(X):\n    while True:\n        pass\n"), 0, "did not return"),
    "memory bomb in a cell": (with_extra_cell("hog = bytearray(8 << 30)\n"), FULL, ""),
    "memory bomb in the function": (with_answer(
        "def row_normalize(X):\n    hog = [bytearray(1 << 28) for _ in range(64)]\n    return X\n"), 0, ""),
    "fork bomb in a cell": (with_extra_cell(
        "import os, time\nfor _ in range(100000):\n    if os.fork() == 0:\n"
        "        time.sleep(60)\n        os._exit(0)\n"), FULL, ""),
    "sys.exit in a cell": (with_extra_cell("import sys\nsys.exit(3)\n"), FULL, ""),
    "os._exit in a cell": (with_extra_cell("import os\nos._exit(1)\n"), FULL, ""),
    "os._exit in the function": (with_answer(
        "def row_normalize(X):\n    import os\n    os._exit(1)\n"), 0, "crashed the kernel"),
    "segfault in the function": (with_answer(
        "def row_normalize(X):\n    import ctypes\n    ctypes.string_at(0)\n"), 0, ""),
    "kill the sandbox's init": (with_extra_cell("import os, signal\nos.kill(1, signal.SIGKILL)\n"), FULL, ""),
    "megabytes of output": (with_extra_cell("for _ in range(2000):\n    print('x' * 5000)\n"), FULL, ""),
    "a process left running": (with_extra_cell(
        f"import subprocess\nsubprocess.Popen(['sleep', '600', '{MARKER}'], start_new_session=True)\n"),
        FULL, ""),
    # --- damaged notebooks
    "deleted locked cell": (without_cell("imports"), FULL, ""),
    "edited locked cell": (with_edited_cell("imports", "np = None\n"), FULL, ""),
    "edited visible check": (with_edited_cell("check_row_normalize", "print('skip')\n"), FULL, ""),
    "corrupt JSON": (b'{"cells": [', 0, "not valid JSON"),
    "old notebook format": (json.dumps({"nbformat": 3, "worksheets": []}).encode(), 0, "format version"),
    "not UTF-8": (b"\xff\xfe\x00garbage", 0, "not valid JSON"),
    "missing function": (with_answer("def row_normalise(X):\n    return X\n"), 0, "is not defined"),
    "wrong return type": (with_answer("def row_normalize(X):\n    return {'rows': X.tolist()}\n"), 0, "should be a numpy array"),
    "NaN everywhere": (with_answer("def row_normalize(X):\n    return X * np.nan\n"), 0, "nan"),
}



MIME = wire.MIME
PWNED = f"/tmp/pwned-{MARKER}"  # what evaluating a forged reply on the grader's side would write
SECRET_NAME = "GRADER_SECRET_TOKEN"
SECRET_VALUE = f"secret-{MARKER}"
SECRET_FILE = Path(sys.prefix) / f"secret-{MARKER}"  # inside the allowlist, readable by root only

FIND_NONCE = f"""import inspect, json
from IPython.display import display

def _nonce():
    frame = inspect.currentframe()
    while frame is not None:
        text = frame.f_locals.get("request_text")
        if isinstance(text, str):
            return json.loads(text)["nonce"]
        frame = frame.f_back

def _forge(value, nonce):
    display({{{MIME!r}: json.dumps({{"ok": True, "nonce": nonce, "value": value, "mutated": [],
                                    "warnings": [], "stdout": "", "seconds": 0}})}}, raw=True)

EVIL = {{"__lambda__": "__import__('pathlib').Path({PWNED!r}).write_text('x')"}}
"""

IN_PLACE = catalogue.mutants(COURSE.assignment(ASSIGNMENT), "row_normalize")
IN_PLACE = next(e for e in IN_PLACE if e.key == "row_normalize/in_place")


def in_place_with(patch):
    return with_answer(patch + "\n" + IN_PLACE.source)


def link_to(target):
    def make(path):
        path.symlink_to(target)
    return make


def fifo(path):
    os.mkfifo(path)


def folder_link(path):
    """The learner's assignment folder is a link to the solutions' folder."""
    path.parent.symlink_to(SOLUTION_FILE.parent, target_is_directory=True)


ATTACKS.update({
    # --- the wire: nothing a kernel sends is evaluated by the grader
    "forge replies with callable encodings during a call": (with_answer(
        FIND_NONCE + "def row_normalize(X):\n    for value in (EVIL, {'__partial__': EVIL, 'kwargs': "
        "{'__dict__': {}}}, {'__function__': 'row_normalize'}):\n        _forge(value, _nonce())\n"
        "    sums = X.sum(axis=-1, keepdims=True)\n    return X / np.where(sums == 0, 1, sums)\n"),
        0, "object of type"),
    "return a wire-shaped dict": (with_answer(
        "def row_normalize(X):\n    return {'__lambda__': \"__import__('pathlib').Path("
        f"{PWNED!r}).write_text('x')\"}}\n"), 0, "should be a numpy array"),
    "forged replies in cells, outside any call": (with_extra_cell(
        FIND_NONCE + "import secrets\nfor _ in range(50):\n    _forge(EVIL, secrets.token_hex(16))\n"
        "    _forge(EVIL, None)\n"), FULL, ""),
    "a reply too large to read": (with_answer(
        "def row_normalize(X):\n    return np.zeros(8_000_000)\n"), 0, ""),
    # --- the output caps count everything
    "a flood of wire-typed output": (with_extra_cell(
        f"from IPython.display import display\nfor _ in range(10):\n"
        f"    display({{{MIME!r}: 'x' * (100 << 20)}}, raw=True)\n"
        f"for _ in range(10):\n    display({{{MIME!r}: 'y' * (30 << 20)}}, raw=True)\n"), FULL, ""),
    # --- the sandbox shows an allowlist
    "see folders outside the allowlist": (with_answer(if_it_works(
        f"import os\nassert any(os.path.exists(p) for p in {OUTSIDE_THE_ALLOWLIST!r})")), 0, ""),
    "read a file only the grader may read": (with_answer(if_it_works(
        f"import glob\nfound = glob.glob({str(SECRET_FILE)!r}) + glob.glob('/root/secret-*') + "
        f"glob.glob('/**/secret-{MARKER}', recursive=True)\nassert [open(p).read() for p in found]")),
        0, ""),
    "run as root or with capabilities": (with_answer(if_it_works(
        "import os\nstatus = open('/proc/self/status').read().splitlines()\n"
        "effective = int([l for l in status if l.startswith('CapEff')][0].split()[1], 16)\n"
        "assert os.getuid() == 0 or os.geteuid() == 0 or effective != 0")), 0, ""),
    "read the grader's environment": (with_answer(if_it_works(
        f"import os\nassert any({MARKER!r} in value for value in os.environ.values())")), 0, ""),
    "fill the scratch folder": (with_answer(if_it_works(
        "import os\nfor i in range(24):\n    with open(os.path.join(os.environ['HOME'], f'fill{i}'), "
        "'wb') as f:\n        f.write(b'x' * (16 << 20))")), 0, ""),
    "write into the interpreter's folders": (with_answer(if_it_works(
        "import sys\nopen(sys.prefix + '/planted', 'w').write('x')")), 0, ""),
    # --- submissions are data, not paths
    "the notebook is a link to the solution": (link_to(SOLUTION_FILE), 0, "symbolic link"),
    "the notebook is a link to /dev/zero": (link_to("/dev/zero"), 0, "symbolic link"),
    "the notebook is a FIFO": (fifo, 0, "not a regular file"),
    "the submission folder is a link to the solutions": (folder_link, 0, "symbolic link"),
    # --- what rests on the kernel's word is flagged
    "patch numpy to hide an in-place change": (in_place_with(
        "np.array_equal = lambda *a, **k: True\nnp.copy = lambda a, *r, **k: a\n"
        "np.errstate = __import__('contextlib').nullcontext\n"), "in_place", ""),
    "patch the agent to hide an in-place change": (in_place_with(
        "__autograder_agent__._array_equal = lambda *a, **k: True\n"), FULL, ""),
})

# Attacks whose source the grader must flag for the instructor (it patches modules, names the
# agent, or uses what reaches objects by a name built at run time or raw memory: ctypes); no other
# attack may be flagged.
FLAGGED = {"patch numpy.allclose", "fake pytest and builtins", "tamper with the wire in the kernel",
           "patch numpy to hide an in-place change", "patch the agent to hide an in-place change",
           "forge replies with callable encodings during a call",
           "forged replies in cells, outside any call", "a flood of wire-typed output",
           "segfault in the function"}
# Attacks that need to know the class's submitted/ folder (graded in a class, not one file).
CLASS_ONLY = {"the submission folder is a link to the solutions"}


def expected_score(name):
    expected = ATTACKS[name][1]
    if expected == "in_place":  # the agent's own references see through a patched numpy
        return grade.grade_local(COURSE.assignment(ASSIGNMENT), IN_PLACE.namespace()).score
    return expected


def place(name, path, port=None):
    """Write attack ``name`` as the notebook at ``path``."""
    notebook = ATTACKS[name][0]
    if name == "open a network connection":
        notebook = with_answer(if_it_works(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).close()"))
    path.parent.mkdir(parents=True, exist_ok=True)
    if callable(notebook):
        if name in CLASS_ONLY:
            path.parent.rmdir()
        notebook(path)
    elif isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        write_notebook(path, notebook)


def check_result(name, result, hits=()):
    """Everything that must hold of an attack's result, whoever graded it and how."""
    expected, words = expected_score(name), ATTACKS[name][2]
    if isinstance(result, dict):  # read back from the command line's JSON
        result = Result.from_json(result)
    failed = [f"{t.name}: {t.feedback}" for t in result.tests if not t.passed]
    assert result.score == expected, f"{name}: score {result.score}\n" + "\n".join(failed)
    assert result.max_score == FULL
    text = json.dumps(result.to_json())
    assert words.lower() in text.lower(), f"{name}: {words!r} not in {text[:3000]}"
    assert len(text) < 200_000, f"{name}: a result of {len(text)} characters"
    assert "def test_" not in text and "from autograder" not in text, "suite code leaked"
    assert SECRET_VALUE not in text, "the grader's environment leaked"
    assert bool(result.flags) == (name in FLAGGED), f"{name}: flags {result.flags}"
    assert list(hits) == [], "learner code reached the network"
    assert not os.path.exists(PWNED), "the grader evaluated something the kernel sent"
    assert not list(SUITE_FILE.parent.glob(f"*{MARKER}*")), "a file was planted in the suite"
    assert not (REPO / f"planted-{MARKER}").exists()
    assert not (Path(sys.prefix) / "planted").exists()
    assert not os.path.exists(f"/tmp/planted-{MARKER}")
    assert not os.path.exists(f"/var/tmp/planted-{MARKER}")
    survivors = subprocess.run(["pgrep", "-f", MARKER], capture_output=True, text=True).stdout
    assert survivors.strip() == "", "a process started by learner code outlived its grading"


@pytest.fixture(scope="module")
def secret_file():
    """A file of the grader's, readable by root only, inside a folder the sandbox shows."""
    SECRET_FILE.write_text(SECRET_VALUE)
    SECRET_FILE.chmod(0o600)
    yield SECRET_FILE
    SECRET_FILE.unlink()


@pytest.fixture(scope="module")
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    hits = []

    def serve():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            hits.append(1)
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], hits
    server.close()


@pytest.fixture(autouse=True)
def needs_bubblewrap():
    if not confinement.available():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is missing in CI: .ci/run must install it")
        pytest.skip("bubblewrap is not installed: the sandbox cannot be tested here")


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
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT), options(), root=root)
    check_result(name, result, hits)


@pytest.fixture
def instructor(tmp_path_factory):
    """An unprivileged instructor (a real OS user) with a home of their own."""
    needs_root_and_users()
    root = Path(tempfile.mkdtemp(prefix="adversarial-"))
    root.chmod(0o755)
    name = f"acg{os.getpid() % 100000}"
    try:
        with interpreter_open_to_others(), os_users(root, name) as homes:
            yield name, homes[name]
    finally:
        shutil.rmtree(root, ignore_errors=True)


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
    attack = ("import glob, json, os\nfor path in glob.glob('/**/*.json', recursive=True):\n"
              "    try:\n        data = json.load(open(path))\n"
              "        if 'score' in data:\n            data['score'] = 0\n"
              "            json.dump(data, open(path, 'w'))\n    except Exception:\n        pass\n")
    mallory = write_notebook(tmp_path / "mallory" / ASSIGNMENT / SOLUTION_FILE.name,
                             with_extra_cell(attack))
    results = batch.grade_many([honest, mallory], COURSE.assignment(ASSIGNMENT), options(), jobs=2,
                               state=state, progress=False)
    assert [r.score for r in results] == [FULL, FULL]
    again = batch.grade_many([honest], COURSE.assignment(ASSIGNMENT), options(), jobs=1,
                             state=state, progress=False)
    assert again[0].score == FULL


# ------------------------------------------------------------------ a class outside /tmp and /home

THIEF = """import glob, json, os
taken = None
for pattern in ['/srv/**/*.ipynb', '/var/**/*.ipynb', '/opt/**/*.ipynb', '/**/*.ipynb']:
    for path in glob.glob(pattern, recursive=True):
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
