"""The grading process's own memory and time (autograder/engine/grade.py), under every flood and
every huge notebook.

Each attack on the grader's own resources is graded by a grading process of its own
(:func:`support.grade_measured`), whose peak memory and time are printed and held to the bounds
the README states (:data:`support.bounds.GRADER_PEAK_MIB`, :data:`OVERRUN_SECONDS`).
"""
import json
import os
import subprocess
import time

import pytest

from autograder.engine import demonstrations, figures, relay
from autograder.engine import kernel
from support import REPO, figure_flood, grade_measured, measured_module, peaks, write_notebook
from support.attacks import (ASSIGNMENT, FULL, SOLUTION_FILE, needs_bubblewrap, with_answer,  # noqa: F401
                             with_extra_cell)
from support.bounds import GRADER_PEAK_MIB, bomb_bytes

pytestmark = pytest.mark.slow


OVERRUN_SECONDS = 30    # wall-clock time past --budget


def report(attack, measured):
    """Print what the grader spent on ``attack`` (shown with ``pytest -s``) and return it."""
    result = measured["result"]
    print(f"\n[bounded] {attack}: grader peak {measured['peak_mib']:.0f} MiB, "
          f"{measured['seconds']:.1f} s wall, {measured['cpu']:.1f} s CPU, score "
          f"{result['score']:g}/{result['max_score']:g}"
          + (f" ({result['errors'][-1][:120]})" if result["errors"] else ""))
    return measured


def within_bounds(attack, path, budget, **extra):
    measured = report(attack, grade_measured(path, ASSIGNMENT, {
        "sandbox": "require", "cell_timeout": 10, "notebook_timeout": budget,
        "call_timeout": 3, "budget": budget, "figures": "off", **extra}))
    assert measured["peak_mib"] < GRADER_PEAK_MIB, measured["peak_mib"]
    assert measured["seconds"] < budget + OVERRUN_SECONDS, measured["seconds"]
    return measured["result"]


# ------------------------------------------------------------------ the grader's memory and time

FLOODS = {
    "an honest notebook": "x = 1\n",  # the baseline the others compare with
    # the first attack: 60 messages of 40 MiB, each over the cap
    "sixty 40 MiB messages": "from IPython.display import display\nfor _ in range(60):\n"
                             "    display({'text/plain': 'x' * (40 << 20)}, raw=True)\n",
    # just under the cap: read, counted, dropped
    "sixty messages just under the cap": (
        "from IPython.display import display\nfor _ in range(60):\n"
        f"    display({{'text/plain': 'y' * ({relay.MAX_MESSAGE_BYTES} - (256 << 10))}}, raw=True)\n"),
    # one message of 600 frames, sent with the kernel's own session (zmq would buffer it whole)
    "messages of 600 frames of 1 MiB": (
        "k = get_ipython().kernel\nfor _ in range(3):\n"
        "    k.session.send(k.iopub_socket, 'display_data', {'data': {}, 'metadata': {}},\n"
        "                   parent=k.get_parent('shell'), buffers=[b'x' * (1 << 20)] * 600)\n"),
    # the second attack: a thread that publishes 1 MiB messages and never stops
    "a publisher thread that never stops": (
        "import threading\nfrom IPython.display import display\ndef flood():\n"
        "    while True:\n        display({'text/plain': 'z' * (1 << 20)}, raw=True)\n"
        "threading.Thread(target=flood, daemon=True).start()\n"),
    # figures without end, each just under a figure's allowance: a cell keeps its own allowance
    "figures without end": (
        "from IPython.display import display\nfor _ in range(400):\n"
        f"    display({{'image/png': 'iVBORw0KGgo' + 'A' * {kernel.MAX_FIGURE_CHARS - 200}}}, "
        "raw=True)\n"),
    # slow enough never to reach the total: only the loops' deadlines stop it
    "a slow publisher that never stops": (
        "import threading, time\ndef flood():\n    while True:\n        print('w' * 1000)\n"
        "        time.sleep(0.001)\nthreading.Thread(target=flood, daemon=True).start()\n"),
    # speaks raw ZMTP on the listening sockets the grader handed it, racing ipykernel for them
    "raw frames on the kernel's own sockets": """import os, socket, threading
GREETING = b'\\xff' + b'\\x00' * 8 + b'\\x7f' + b'\\x03\\x01' + b'NULL'.ljust(20, b'\\x00') + b'\\x00' * 32
FRAME = b'\\x03' + (1 << 20).to_bytes(8, 'big') + b'x' * (1 << 20)
def talk(connection):
    try:
        connection.sendall(GREETING)
        while True:
            connection.sendall(FRAME)
    except OSError:
        pass
def serve(listener):
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=talk, args=(connection,), daemon=True).start()
for name in os.listdir('/proc/self/fd'):
    try:
        candidate = socket.socket(fileno=os.dup(int(name)))
    except OSError:
        continue
    try:
        listening = candidate.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    except OSError:
        listening = 0
    if listening:
        threading.Thread(target=serve, args=(candidate,), daemon=True).start()
    else:
        candidate.close()
""",
}


@pytest.mark.parametrize("attack", list(FLOODS))
def test_a_flooding_kernel_leaves_the_grader_within_its_bounds(attack, tmp_path):
    path = write_notebook(tmp_path / "flood" / ASSIGNMENT / SOLUTION_FILE.name,
                          with_extra_cell(FLOODS[attack]))
    result = within_bounds(attack, path, budget=40)
    assert len(result["tests"]) > 0 and result["max_score"] == FULL
    if attack in ("an honest notebook", "sixty 40 MiB messages", "figures without end",
                  "sixty messages just under the cap", "messages of 600 frames of 1 MiB"):
        assert result["score"] == FULL, result  # the flood ends; grading goes on


def test_a_kernel_that_sends_more_than_the_total_is_no_longer_heard(tmp_path):
    """2 MiB messages forever, from a thread the graded function starts: the submission's kernels
    reach the total (lowered to 64 MiB here), the grader stops listening, and says why. The first
    call returns only once the thread has sent 80 MiB, so that the total is passed while the
    suite runs, however fast the grader is (a quick grader once finished first and gave 8/8)."""
    answer = ("import threading\nfrom IPython.display import display\n_started = []\n"
              "_past_the_total = threading.Event()\n"
              "def _flood():\n    sent = 0\n    while True:\n"
              "        display({'text/plain': 'v' * (2 << 20)}, raw=True)\n"
              "        sent += 1\n        if sent == 40:\n            _past_the_total.set()\n"
              "def row_normalize(X):\n    if not _started:\n        _started.append(1)\n"
              "        threading.Thread(target=_flood, daemon=True).start()\n"
              "        _past_the_total.wait(60)\n"
              "    sums = X.sum(axis=-1, keepdims=True)\n    return X / np.where(sums == 0, 1, sums)\n")
    path = write_notebook(tmp_path / "total" / ASSIGNMENT / SOLUTION_FILE.name,
                          with_answer(answer))
    result = within_bounds("more than the total, from the graded function", path, budget=120,
                           received_bytes=64 << 20)
    assert result["score"] < FULL
    assert any("in all" in e for e in result["errors"]), result["errors"]


@pytest.mark.parametrize("bomb", ["a 16 MiB cell of [a,a,...]", "18 MiB of empty objects",
                                  "an 18 MiB markdown cell", "100k cells",
                                  "a million blank lines in a cell",
                                  "an 18 MiB string and an emoji in a code cell",
                                  "6.3 million empty lists of metadata",
                                  "300,000 figures in the demonstrations"])
def test_a_huge_notebook_costs_the_grader_little(bomb, tmp_path):
    """Graded whole, in a grading process of its own: its peak memory and time stay within the
    bounds, whether the notebook is refused with a sentence or graded."""
    path = tmp_path / "huge" / ASSIGNMENT / SOLUTION_FILE.name
    path.parent.mkdir(parents=True)
    path.write_bytes(bomb_bytes(bomb))
    measured = report(f"{bomb}, graded", grade_measured(
        path, ASSIGNMENT, {"sandbox": "require", "budget": 60, "cell_timeout": 10},
        state=tmp_path / "state"))
    assert measured["peak_mib"] < GRADER_PEAK_MIB
    assert measured["seconds"] < 60 + OVERRUN_SECONDS
    result = measured["result"]
    if bomb in ("a 16 MiB cell of [a,a,...]", "100k cells"):
        assert result["score"] == 0 and any("resubmit" in e for e in result["errors"])


def test_300000_figures_through_the_command_line_keep_a_bounded_result(tmp_path):
    """The issue's attack through ``python -m autograder grade``: a 20 MB submission whose own
    demonstration cells hold 300,000 tiny "PNG" outputs. It keeps its full score, shows at most
    a cell's hundred of them per demonstration cell with a note saying how many were left out,
    and the result, the cache entry and the grader's memory and time stay small."""
    path = tmp_path / "class" / "mallory" / ASSIGNMENT / SOLUTION_FILE.name
    path.parent.mkdir(parents=True)
    path.write_bytes(figure_flood(ASSIGNMENT))
    state, out, peak_file = tmp_path / "state", tmp_path / "results.json", tmp_path / "peaks"
    started = time.monotonic()
    done = subprocess.run(measured_module(
        "autograder", "grade", "--assignment", ASSIGNMENT, "--require-sandbox", "--jobs", "1",
        "--budget", "120", "--state", state, "--json", out, path), cwd=REPO,
        env={**os.environ, "PEAK_FILE": str(peak_file)}, capture_output=True, text=True,
        timeout=600)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    peak = peaks(peak_file)["autograder"]
    [entry] = state.glob("*.json")
    result = json.loads(out.read_text())
    print(f"\n[bounded] 300,000 figures: grader peak {peak:.0f} MiB, {seconds:.1f} s; result "
          f"{out.stat().st_size:,} bytes, cache entry {entry.stat().st_size:,} bytes")
    assert result["score"] == FULL
    assert peak < GRADER_PEAK_MIB and seconds < 120 + OVERRUN_SECONDS
    assert out.stat().st_size < 100_000 and entry.stat().st_size < 200_000
    executed = json.loads(entry.read_text())["executed"]
    shown = [c["outputs"] for c in executed["cells"] if demonstrations.is_demonstration(c)]
    assert [sum(figures.is_figure(o) for o in outputs) for outputs in shown] == \
        [figures.MAX_CELL_OUTPUTS] * len(shown)
    assert all("149,900 more output(s) of your submitted copy" in outputs[-1]["text"]
               for outputs in shown)
