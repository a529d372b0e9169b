"""The attack catalogue: submissions that try to cheat or misbehave, each with the exact score it
must get, and what every attack's result must satisfy (:func:`check_result`).

Every attack is the reference notebook of 00-getting-started (worth 8 points) with something
added, replaced or broken. Attacks that try to cheat are written so that success would earn full
marks and failure earns nothing: "if I can read the hidden suite, define a correct function,
otherwise one that raises". Attacks that only misbehave (loops, bombs, exits) keep a correct
function, so the score shows the grader survived them and still graded the rest.

tests/end_to_end/test_adversarial.py runs them three ways; other tests build their own attacks
from the same pieces (:func:`with_answer`, :func:`with_extra_cell`, :func:`in_place_with`).
"""
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from autograder.engine import catalogue, grade, wire
from autograder.engine.options import Options
from autograder.engine.result import Result
from autograder.sandbox import confinement
from support import (COURSE, REPO, interpreter_open_to_others, needs_root_and_users, os_users,
                     write_notebook)

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

# Learner code that looks for files everywhere it can see: a walk of / without /proc and /sys
# (their links lead back to / for ever) that gives up after two seconds, so that the attack goes
# on to use what it found before its cell's timeout cuts it (check_result: SEARCHES).
EVERYWHERE = """def _everywhere(wanted, seconds=2.0):
    import os, time
    end, found = time.monotonic() + seconds, []
    for top, folders, files in os.walk('/'):
        if top == '/':
            folders[:] = [f for f in folders if f not in ('proc', 'sys')]
        found += [os.path.join(top, f) for f in files if wanted(f)]
        if time.monotonic() > end:
            break
    return found
"""

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


def options(attack=None):
    """Attacks on the trust boundary, graded as the command line grades for Gradescope: no figure
    is drawn (the figures' own path is tested in tests/engine/test_kernel_outputs.py and in the
    feedback page's test). An attack that only keeps the processor busy until it is cut
    (``CUT_BY_A_TIMEOUT``) is graded alone with shorter timeouts: what it must show is that it is
    cut and scores what it should, whatever the length (the class's commands grade it with the
    others, at the usual ones)."""
    usual = Options(sandbox="require", cell_timeout=4, notebook_timeout=40, call_timeout=3,
                    budget=60, figures="off")
    if attack in CUT_BY_A_TIMEOUT:
        return dataclasses.replace(usual, cell_timeout=2, call_timeout=1)
    return usual


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
        EVERYWHERE + "import sqlite3\nfor path in _everywhere(lambda name: name == 'gradebook.db'):\n"
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
        "def row_normalize(X):\n    return np.zeros(2_000_000)\n"), 0, ""),
    # --- the output caps count everything
    "a flood of wire-typed output": (with_extra_cell(
        f"from IPython.display import display\nfor _ in range(10):\n"
        f"    display({{{MIME!r}: 'x' * (100 << 20)}}, raw=True)\n"
        f"for _ in range(10):\n    display({{{MIME!r}: 'y' * (30 << 20)}}, raw=True)\n"), FULL, ""),
    # --- the sandbox shows an allowlist
    "see folders outside the allowlist": (with_answer(if_it_works(
        f"import os\nassert any(os.path.exists(p) for p in {OUTSIDE_THE_ALLOWLIST!r})")), 0, ""),
    "read a file only the grader may read": (with_answer(if_it_works(
        EVERYWHERE + f"import glob\nfound = glob.glob({str(SECRET_FILE)!r}) + "
        f"glob.glob('/root/secret-*') + _everywhere(lambda name: name == 'secret-{MARKER}')\n"
        f"assert [open(p).read() for p in found]")),
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
    # --- the kernel's streams, whose empty flushes the agent skips, are the learner's too
    "streams that never flush": (with_extra_cell(
        "import sys\ntype(sys.stdout).flush = lambda self: None\nprint('waits for no flush')\n"),
        FULL, ""),
})

# Attacks whose source the grader must flag for the instructor (it patches modules, names the
# agent, or uses what reaches objects by a name built at run time or raw memory: ctypes); no other
# attack may be flagged.
FLAGGED = {"patch numpy.allclose", "fake pytest and builtins", "tamper with the wire in the kernel",
           "patch numpy to hide an in-place change", "patch the agent to hide an in-place change",
           "forge replies with callable encodings during a call",
           "forged replies in cells, outside any call", "a flood of wire-typed output",
           "segfault in the function"}
# Attacks a timeout must cut (a cell's or a call's). And searches: a search cut by its cell's
# timeout would score as if the sandbox had refused it, so each must run to its end.
CUT_BY_A_TIMEOUT = {"infinite loop in a cell", "infinite loop in the function"}
SEARCHES = {"read other submissions", "read the gradebook", "overwrite the gradebook with sqlite",
            "read a file only the grader may read"}
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
    cut = [line for line in [*result.errors, *failed]
           if "timed out after" in line or "did not return within" in line]
    if name in CUT_BY_A_TIMEOUT | SEARCHES:
        assert bool(cut) == (name in CUT_BY_A_TIMEOUT), f"{name}: {cut or 'no timeout'}"
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


# A student id that carries a whole forged row of grades.csv after a carriage return.
FORGED = "x\r02-scoring,,,mallory,Mallory,M,,47.0,0.0,47.0,47.0"
