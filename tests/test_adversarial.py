"""Attack submissions, each with the exact score it must get.

Every attack is the reference notebook of 00-getting-started (worth 8 points) with something
added, replaced or broken. Attacks that try to cheat are written so that success would earn full
marks and failure earns nothing: "if I can read the hidden suite, define a correct function,
otherwise one that raises". Attacks that only misbehave (loops, bombs, exits) keep a correct
function, so the score shows the grader survived them and still graded the rest.
"""
import json
import os
import socket
import subprocess
import threading
import uuid

import pytest

from autograder import batch, grade, reference, sandbox
from support import REPO, write_notebook

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-getting-started"
FULL = 8.0
SUITE_FILE = REPO / "autograder" / "suites" / ASSIGNMENT / "test_getting_started.py"
SOLUTION_FILE = reference.solution_notebook(ASSIGNMENT)
MARKER = uuid.uuid4().hex  # a unique word for files and processes attacks leave behind

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
    return grade.Options(sandbox="require", cell_timeout=4, notebook_timeout=40,
                         call_timeout=3, budget=60)


def base():
    return json.loads(SOLUTION_FILE.read_text())


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
    if not sandbox.available():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is missing in CI: .ci/run must install it")
        pytest.skip("bubblewrap is not installed: the sandbox cannot be tested here")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_gets_exactly_its_score(name, tmp_path, listener):
    notebook, expected, words = ATTACKS[name]
    port, hits = listener
    if name == "open a network connection":
        notebook = with_answer(if_it_works(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).close()"))
    path = tmp_path / "submitted" / "mallory" / ASSIGNMENT / SOLUTION_FILE.name
    path.parent.mkdir(parents=True)
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        write_notebook(path, notebook)
    result = batch.grade_safely(path, ASSIGNMENT, options())
    failed = [f"{t['name']}: {t['feedback']}" for t in result["tests"] if t["status"] != "passed"]
    assert result["score"] == expected, f"{name}: score {result['score']}\n" + "\n".join(failed)
    assert result["max_score"] == FULL
    text = json.dumps(result)
    assert words.lower() in text.lower()
    assert "def test_" not in text and "from autograder" not in text, "suite code leaked"
    if name == "open a network connection":
        assert hits == []
    assert not list(SUITE_FILE.parent.glob(f"*{MARKER}*")), "a file was planted in the suite"
    assert not (REPO / f"planted-{MARKER}").exists()
    assert not os.path.exists(f"/tmp/planted-{MARKER}")
    assert not os.path.exists(f"/var/tmp/planted-{MARKER}")
    survivors = subprocess.run(["pgrep", "-f", MARKER], capture_output=True, text=True).stdout
    assert survivors.strip() == "", "a process started by learner code outlived its grading"


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
    results = batch.grade_many([honest, mallory], ASSIGNMENT, options(), jobs=2, state=state,
                               progress=False)
    assert [r["score"] for r in results] == [FULL, FULL]
    again = batch.grade_many([honest], ASSIGNMENT, options(), jobs=1, state=state, progress=False)
    assert again[0]["score"] == FULL


def test_require_sandbox_refuses_without_bubblewrap(monkeypatch):
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap"):
        grade.Options(sandbox="require").sandboxed()
    with pytest.warns(RuntimeWarning, match="NOT sandboxed"):
        assert grade.Options(sandbox="auto").sandboxed() is False
