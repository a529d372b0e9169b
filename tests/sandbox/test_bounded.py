"""The trusted side is bounded like the kernel.

- What a kernel sends is capped before the grader buffers it (the relay's ZMTP limits, a total per
  submission), and every loop that reads from a kernel has a deadline.
- Reading a submission (JSON, flags) happens in a child process bounded in memory and CPU time,
  with patterns that take linear time.
- The grader connects to no path the kernel can create, replace or link.
- A kernel's memory and processes are held in total in every layout, with or without a control
  group (one process, with its address space as the total).
- What rests on the kernel's word is labelled, and reaching for the agent is flagged.

Each attack on the grader's own resources is graded by a grading process of its own
(:func:`support.grade_measured`), whose peak memory and time are printed and held to the bounds
the README states (:data:`GRADER_PEAK_MIB`, :data:`OVERRUN_SECONDS`).
"""
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import zmq

from autograder.engine import demonstrations, figures, flags, grade, reference, relay, suite, wire
from autograder.sandbox import confinement, launcher
from autograder.engine import kernel, notebook
from autograder.engine.kernel import CallFailed, KernelSession
from support import (COURSE, REPO, autograde_measured, figure_flood, formgrader_pages,
                     grade_measured, measured_module, metadata_bomb, peaks, run_as,
                     write_notebook)
from support.attacks import (ASSIGNMENT, CORRECT, FULL, SOLUTION_FILE, expected_score,  # noqa: F401
                             in_place_with, instructor, needs_bubblewrap, options, with_answer,
                             with_extra_cell)

pytestmark = pytest.mark.slow

# The bounds "What the grader guarantees" states, per submission.
GRADER_PEAK_MIB = 512   # the grading process's own memory (the kernel and the reader apart)
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


# ------------------------------------------------------------------ the relay's ZMTP limits

GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\x00") + b"\x00" * 32
READY = b"\x04\x19\x05READY\x0bSocket-Type\x00\x00\x00\x03PUB"


def frame(body, more=False):
    long = len(body) > 255
    flags_byte = (0x01 if more else 0) | (0x02 if long else 0)
    return bytes([flags_byte]) + len(body).to_bytes(8 if long else 1, "big") + body


def message(*bodies):
    return b"".join(frame(body, more=index < len(bodies) - 1) for index, body in enumerate(bodies))


def verdict(stream, step=None, **limits):
    """What FrameLimits says of ``stream`` fed whole, or ``step`` bytes at a time."""
    reader = relay.FrameLimits(**limits)
    step = step or len(stream)
    for start in range(0, len(stream), step):
        problem = reader.feed(stream[start:start + step])
        if problem:
            return problem, start
    return "", len(stream)


JUPYTER = message(b"", b"<IDS|MSG>", b"a" * 64, b'{"msg_type": "status"}', b"{}", b"{}",
                  b'{"execution_state": "idle"}')


@pytest.mark.parametrize("step", [None, 1, 7, 4096])
def test_the_relay_passes_jupyter_messages_in_any_chunking(step):
    stream = GREETING + READY + JUPYTER * 50 + message(b"x" * (1 << 20))
    assert verdict(stream, step) == ("", len(stream))


@pytest.mark.parametrize("name, stream, words", [
    ("a message of many small frames", message(*[b"x" * 200] * 40), "frames"),
    ("a message of many 1 MiB frames", message(*[b"x" * (1 << 20)] * 600), "bytes"),
    ("one frame over the cap", frame(b"x" * (relay.MAX_MESSAGE_BYTES + 1)), "frame of"),
    ("a size of 2**63 announced", b"\x02" + (1 << 63).to_bytes(8, "big"), "frame of"),
    ("reserved flag bits", b"\x80\x01x", "malformed"),
    ("a command with MORE", b"\x05\x01x", "malformed"),
    ("a huge command", b"\x06" + (1 << 40).to_bytes(8, "big"), "frame of"),
])
def test_the_relay_refuses_what_breaks_a_limit_before_its_end(name, stream, words):
    problem, at = verdict(GREETING + stream, 4096)
    assert words in problem, (name, problem)
    assert at <= relay.MAX_MESSAGE_BYTES + 4096, "refused only after buffering the whole message"


@pytest.mark.parametrize("greeting", [b"\x00" * 64, b"\xff" + b"\x00" * 8 + b"\x7e" + b"\x03" * 54,
                                      GREETING[:10] + b"\x02" + GREETING[11:]])
def test_the_relay_refuses_a_kernel_that_does_not_speak_zmtp_3(greeting):
    assert "ZMTP 3" in verdict(greeting + JUPYTER)[0]


class FakeKernel:
    """The kernel's end of a Relay's sockets, driven by the test instead of ipykernel."""

    def __init__(self, folder, total=relay.MAX_TOTAL_BYTES):
        self.allowance = relay.Allowance(total)
        self.relay = relay.Relay(folder, self.allowance, {c: n for n, c in
                                                           enumerate(relay.CHANNELS, start=1)})
        self.listener = socket.socket(fileno=os.dup(self.relay.descriptors()["iopub"]))
        self.relay.start()

    def connect(self):
        """(the grader's side, the kernel's side) of one connection through the relay."""
        grader = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        grader.connect(f"{self.relay.address}-2")
        sender, _ = self.listener.accept()
        return grader, sender

    def close(self):
        self.relay.close()
        self.listener.close()


def received(grader, seconds=3.0):
    """Bytes read from ``grader`` until it closes or ``seconds`` pass without any."""
    grader.settimeout(seconds)
    total = 0
    try:
        while True:
            chunk = grader.recv(1 << 20)
            if not chunk:
                return total, True
            total += len(chunk)
    except socket.timeout:
        return total, False


def test_the_relay_closes_a_message_of_many_frames_without_buffering_it(tmp_path):
    """600 frames of 1 MiB in one message: libzmq alone buffers all of it (600 MiB) before the
    grader reads; through the relay, the grader sees at most one message's cap, then the end."""
    fake = FakeKernel(tmp_path)
    try:
        grader, sender = fake.connect()
        frames = [GREETING] + [frame(b"x" * (1 << 20), more=True)] * 600
        threading.Thread(target=lambda: _send_quietly(sender, *frames), daemon=True).start()
        total, closed = received(grader)
        assert closed and total <= relay.MAX_MESSAGE_BYTES + relay.CHUNK + 64
        assert "bytes" in fake.relay.broken
    finally:
        fake.close()


def _send_quietly(connection, *pieces):
    try:
        for piece in pieces:
            connection.sendall(piece)
    except OSError:
        pass


def test_the_relay_keeps_at_most_a_chunk_while_the_grader_does_not_read(tmp_path):
    """A kernel that sends while the grader reads nothing is held back by the socket buffers:
    the relay stops reading, and holds no more than one chunk."""
    fake = FakeKernel(tmp_path)
    try:
        grader, sender = fake.connect()
        sender.sendall(GREETING)
        sender.settimeout(3)
        sent = 0
        try:
            while sent < 256 << 20:
                sent += sender.send(JUPYTER * 1000)
        except socket.timeout:
            pass
        assert sent < 32 << 20, f"the kernel got {sent >> 20} MiB past a grader that reads nothing"
        assert all(len(pair.to_grader) <= relay.CHUNK for pair in fake.relay.pairs.values())
    finally:
        fake.close()


def test_the_relay_stops_at_the_submissions_total(tmp_path):
    fake = FakeKernel(tmp_path, total=4 << 20)
    try:
        grader, sender = fake.connect()
        threading.Thread(target=lambda: _send_quietly(sender, GREETING + JUPYTER * 100_000),
                         daemon=True).start()
        total, closed = received(grader)
        assert closed and total <= (4 << 20) + relay.CHUNK
        assert fake.allowance.exhausted and "in all" in fake.relay.broken
        again = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        again.connect(f"{fake.relay.address}-2")
        assert received(again, 2) == (0, True), "a new connection was served past the total"
    finally:
        fake.close()


def test_json_from_a_kernel_is_counted_before_it_is_parsed():
    """``[{},{},...]`` makes a 64-byte object of every 3 bytes: refused before any is made."""
    bomb = "[" + "{}," * (wire.MAX_STRUCTURE + 1) + "{}]"
    with pytest.raises(ValueError, match="values"):
        wire.loads(bomb)
    with pytest.raises(ValueError, match="values"):
        wire.loads(bomb.encode())
    assert wire.loads('{"text": "a, b, c"}') == {"text": "a, b, c"}


# ------------------------------------------------------------------ loops with deadlines

class FloodingClient:
    """A kernel client whose channels always hold one more message: a kernel that never stops
    sending, none of it an answer."""

    def __init__(self):
        self.read = 0

    def get_shell_msg(self, timeout=None):
        self.read += 1
        return {"parent_header": {"msg_id": "someone else"}, "msg_type": "stream",
                "content": {"name": "stdout", "text": "x"}}

    get_msg = get_shell_msg  # as the session's own iopub channel
    get_stdin_msg = get_shell_msg  # questions of stand-ins, none of this call's

    class session:  # the client's session makes each request's message
        @staticmethod
        def msg(kind, content, metadata=None):
            return {"header": {"msg_id": "this cell"}, "content": content, "metadata": metadata}

    class shell_channel:  # and its shell channel sends it
        @staticmethod
        def send(message):
            pass

    def kernel_info(self):
        return "this request"


@pytest.fixture
def flooded_session(monkeypatch):
    session = KernelSession()
    session.client = session.iopub = FloodingClient()
    session.process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    monkeypatch.setattr(session, "_iopub_dropped", lambda deadline: False)
    monkeypatch.setattr(session, "_interrupt", lambda msg_id: False)
    yield session
    if session.process is not None:
        session.process.kill()
        session.process.wait()


def timed(action):
    started = time.monotonic()
    value = action()
    return value, time.monotonic() - started


def test_every_loop_that_reads_the_kernel_ends_while_it_floods(flooded_session):
    session = flooded_session
    far = time.monotonic() + 600
    for channel in ("iopub", "shell", "stdin"):
        assert timed(lambda: session._drain(channel, far))[1] < 2 * 0.5 + 1
    replied, seconds = timed(lambda: session._replied("this cell", far))
    assert replied is False and seconds < 2 * 0.5 + 1
    (error, timed_out, died), seconds = timed(lambda: session._run("x = 1", 2, lambda o: None))
    assert timed_out and seconds < 2 + 2 * 0.5 + 1
    client = session.client
    started = time.monotonic()
    with pytest.raises(CallFailed, match="did not start"):
        session._wait_ready(2)
    assert time.monotonic() - started < 2 + 1 and client.read > 100


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


FIGURE_CELL = """
import matplotlib.pyplot as plt
from IPython.display import display
figure, ax = plt.subplots()
ax.plot([0, 1, 2], [1, 0, 1], marker="o")
ax.set_title("a learner's curve")
plt.show()
print("after the figure")
"""


def test_a_figure_is_drawn_in_the_sandbox_and_kept_apart_from_the_text_allowance():
    """The kernel draws with matplotlib's inline backend, as JupyterLab does: a figure arrives as
    an image and is kept, even in a cell whose text was cut at its own allowance; figures over
    their allowance are left out and counted in a note, and nothing passes for a figure that
    carries anything but an image and its text."""
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        drawn = session.execute(FIGURE_CELL, 60)
        assert not drawn.error, drawn.error
        images = [o for o in drawn.outputs if kernel.is_figure(o)]
        assert len(images) == 1 and "image/png" in images[0]["data"], drawn.outputs
        assert any("after the figure" in o.get("text", "") for o in drawn.outputs)
        flooded = session.execute(
            "print('t' * 50_000)\n" + FIGURE_CELL + "from IPython.display import display\n"
            "for _ in range(8):\n"
            f"    display({{'image/png': 'iVBORw0KGgo' + 'A' * {kernel.MAX_FIGURE_CHARS // 2}}}, "
            "raw=True)\n"
            f"display({{'image/png': 'A' * {kernel.MAX_FIGURE_CHARS + 10}}}, raw=True)\n"
            "display({'text/html': '<img src=\"data:image/png;base64,AAAA\" alt=\"x\">"
            "<script>1</script>', 'text/plain': 'x'}, raw=True)\n", 60)
        kept = [o for o in flooded.outputs if kernel.is_figure(o)]
        texts = "".join(o.get("text", "") for o in flooded.outputs)
        assert "[output truncated by the grader]" in texts   # the text's own allowance
        assert "image/png" in kept[0]["data"]                # the learner's figure is still there
        assert sum(len(json.dumps(o)) for o in kept) <= kernel.MAX_CELL_FIGURE_CHARS
        # the drawn figure and five of the eight half-allowance ones fill the cell's allowance;
        # the other three, and the one over a figure's own allowance, are left out
        assert len(kept) == 6, [len(json.dumps(o)) for o in kept]
        assert "[4 figure(s) left out by the grader" in texts
        assert not any("<script>" in json.dumps(o) for o in flooded.outputs)
    # --figures off: the same cell draws nothing (Agg), for results that show no figures
    with KernelSession(mode=confinement.BUBBLEWRAP, figures=False) as session:
        undrawn = session.execute(FIGURE_CELL, 60)
        assert not undrawn.error and not any(kernel.is_figure(o) for o in undrawn.outputs)
        assert any("after the figure" in o.get("text", "") for o in undrawn.outputs)
    assert confinement.kernel_environment("/h")["MPLBACKEND"] == confinement.INLINE_BACKEND
    assert confinement.kernel_environment("/h", figures=False)["MPLBACKEND"] == "Agg"


def test_a_cell_keeps_a_hundred_outputs_and_one_streams_text_is_one_output():
    """A cell keeps at most MAX_CELL_OUTPUTS outputs, figures included, and says what it left
    out; text a stream sends in many messages (a print flushed in a loop) is one output, as
    JupyterLab shows it, so a cell that prints as it goes keeps all its text."""
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        printed = session.execute("for i in range(300):\n    print(i, flush=True)\n", 60)
        assert len(printed.outputs) == 1, printed.outputs[:3]
        assert printed.outputs[0]["text"].split() == [str(i) for i in range(300)]
        shown = session.execute(
            "from IPython.display import display\nfor i in range(300):\n"
            "    display({'image/png': 'iVBORw0KGgo='}, raw=True)\n"
            "    display({'text/plain': str(i)}, raw=True)\n", 60)
        kept = shown.outputs
        assert len(kept) == kernel.MAX_CELL_OUTPUTS + 2  # and two notes
        assert sum(kernel.is_figure(o) for o in kept) == kernel.MAX_CELL_OUTPUTS // 2
        assert "[output truncated by the grader]" in kept[-2]["text"]
        assert "250 figure(s) left out by the grader" in kept[-1]["text"]


def test_a_calls_arguments_travel_in_its_message_not_in_a_cell_the_kernel_echoes():
    """A call's request rides in its execute request's metadata: the cell is
    ``__autograder_call__()``, whatever the arguments weigh. In a cell's text, IPython would
    tokenize megabytes of arguments (a tenth of a second per MiB), and the kernel would echo
    them back on iopub (execute_input), counted against the submission's total."""
    import numpy as np
    big = np.arange(250_000, dtype=float)  # 2 MB of float64, 2.7 MB of text on the wire
    assert len(wire.request("size", (big,), {}, "n")) > 2_500_000
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        session.install_agent()
        assert not session.execute("def size(x):\n    return int(x.size)\n", 30).error
        assert session.allowance.used < 1_000_000
        before = session.allowance.used
        reply = session.call("size", (big,), {}, 60)
        assert reply["ok"] and reply["value"] == 250_000
        assert session.allowance.used - before < 100_000  # the reply, not the arguments


def test_only_an_image_and_its_text_pass_for_a_figure():
    png = "iVBORw0KGgoAAAA"
    good = [{"image/png": png, "text/plain": "a curve"},
            {"text/html": f'<img src="data:image/png;base64,{png}" alt="A curve &amp; dots.">',
             "text/plain": "A curve"}]
    bad = [{"text/plain": "x" * 100}, {"image/png": png, "text/markdown": "# x"},
           {"image/png": png + "<"}, {"image/svg+xml": "<svg/>"},
           {"text/html": f'<img src="data:image/png;base64,{png}" alt="x"><b>more</b>'},
           {"text/html": f'<img src="data:image/png;base64,{png}" alt="x" onerror="y">'},
           {"image/png": ["not", "a", "string"]}]
    assert all(kernel.is_figure({"output_type": "display_data", "data": d}) for d in good)
    assert not any(kernel.is_figure({"output_type": "display_data", "data": d}) for d in bad)
    assert not kernel.is_figure({"output_type": "stream", "data": good[0]})


def test_a_kernel_that_sends_more_than_the_total_is_no_longer_heard(tmp_path):
    """2 MiB messages forever, from the graded function itself: the submission's kernels reach
    the total (lowered to 64 MiB here), the grader stops listening, and says why."""
    answer = ("import threading\nfrom IPython.display import display\n_started = []\n"
              "def row_normalize(X):\n    if not _started:\n        _started.append(1)\n"
              "        threading.Thread(target=lambda: [display({'text/plain': 'v' * (2 << 20)}, "
              "raw=True) for _ in iter(int, 1)], daemon=True).start()\n"
              "    sums = X.sum(axis=-1, keepdims=True)\n    return X / np.where(sums == 0, 1, sums)\n")
    path = write_notebook(tmp_path / "total" / ASSIGNMENT / SOLUTION_FILE.name,
                          with_answer(answer))
    result = within_bounds("more than the total, from the graded function", path, budget=120,
                           received_bytes=64 << 20)
    assert result["score"] < FULL
    assert any("in all" in e for e in result["errors"]), result["errors"]


# ------------------------------------------------------------------ reading a submission

def raw_notebook(cells, **extra):
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
                       **extra}, ensure_ascii=False).encode()


def code(source):
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [],
            "execution_count": None}


def read_costs(raw):
    """``(outcome, wall seconds, reader CPU seconds, grader peak MiB)`` of reading ``raw``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    try:
        outcome = notebook.read_submission(raw)
    except notebook.NotebookProblem as problem:
        outcome = problem
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return outcome, time.monotonic() - started, cpu


READER_BOMBS = {
    # the issue: blank lines made the magic-line pattern quadratic (20k lines took 3.4 s)
    "200k blank lines then a magic": raw_notebook([code("\n" * 200_000 + "%time x = 1\n")]),
    "a million blank lines in a cell": raw_notebook([code("\n" * 1_000_000 + "x = 1\n")]),
    "200k lines of magics": raw_notebook([code("%who\n" * 200_000)]),
    "200k help lines": raw_notebook([code("x?\n" * 200_000)]),
    "a 4 MiB cell of [a,a,...]": raw_notebook([code("[" + "a," * 2_000_000 + "a]")]),
    "a 16 MiB cell of [a,a,...]": raw_notebook([code("[" + "a," * 8_000_000 + "a]")]),
    "a cell nested 100k deep": raw_notebook([code("(" * 100_000 + ")" * 100_000)]),
    "JSON nested 1M deep": b"[" * 1_000_000 + b"]" * 1_000_000,
    "18 MiB of empty objects": raw_notebook([code("x = 1")], extra=[{}] * 4_500_000),
    "100k cells": raw_notebook([code("")] * 100_000),
    "an 18 MiB markdown cell": raw_notebook([{"cell_type": "markdown", "metadata": {},
                                              "source": "é" * (9 << 20)}]),
    # one 4-byte character makes Python hold the whole string at 4 bytes a character
    "an 18 MiB string and an emoji in a code cell": raw_notebook([code(
        'x = "' + "a" * (18 << 20) + '\U0001F600"\n')]),
}
# the fourth round's, made when a test needs them: a metadata of 6.3 million empty lists (19 MB);
# 300,000 figures in the demonstrations (20 MB, kept within a cell's and the notebook's allowances)
MADE_BOMBS = {"6.3 million empty lists of metadata": lambda: metadata_bomb(ASSIGNMENT),
              "300,000 figures in the demonstrations": lambda: figure_flood(ASSIGNMENT)}


def bomb_bytes(name):
    return MADE_BOMBS[name]() if name in MADE_BOMBS else READER_BOMBS[name]


@pytest.mark.parametrize("bomb", [*READER_BOMBS, *MADE_BOMBS])
def test_reading_a_submission_is_bounded(bomb):
    """The reader child, not the grader, parses: within its CPU time, in linear-time patterns,
    and what it cannot read is refused with a sentence."""
    raw = bomb_bytes(bomb)
    assert len(raw) <= notebook.MAX_BYTES
    outcome, seconds, cpu = read_costs(raw)
    print(f"\n[bounded] reading {bomb} ({len(raw) >> 10} KiB): {seconds:.2f} s wall, "
          f"{cpu:.2f} s CPU in the reader; "
          + (f"refused: {outcome}" if isinstance(outcome, Exception) else "read"))
    assert cpu <= notebook.READ_CPU_SECONDS + 1
    assert seconds < 3 * notebook.READ_CPU_SECONDS
    if isinstance(outcome, Exception):
        assert str(outcome).endswith("resubmit") or "not valid JSON" in str(outcome), outcome
    else:
        read, found = outcome
        assert read["metadata"] == {} and len(read["cells"]) <= notebook.MAX_CELLS


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


def test_no_pattern_of_the_flagger_is_superlinear():
    """Doubling a pathological cell at most about doubles the time to flag it."""
    def cost(lines):
        cells = {"cells": [{"cell_type": "code", "metadata": {}, "source":
                               "\n" * lines + "% x\n" + " \n" * lines + "x?\n" * lines}]}
        started = time.process_time()
        flags.scan(cells)
        return time.process_time() - started
    cost(1000)
    small, large = cost(50_000), cost(200_000)
    assert large < 8 * small + 0.5, (small, large)


# ------------------------------------------------------------------ no path the kernel controls

PATHS_ATTACK = """import os, socket, threading, json
home = os.path.expanduser('~/.kernel')
accepted = []
def serve(listener):
    while True:
        try:
            listener.accept()[0].close()
            accepted.append(1)
        except OSError:
            return
for number in range(1, 10):
    path = os.path.join(home, f'ipc-{number}')
    try:
        os.unlink(path)
    except OSError:
        pass
    os.symlink(HOST, path)  # every socket name a channel could have: a link to the host's socket
for name in ['shell', 'iopub', 'control', 'ipc', 'kernel-iopub', 'grader-2']:
    own = socket.socket(socket.AF_UNIX)
    own.bind(os.path.join(home, name))
    own.listen(8)
    threading.Thread(target=serve, args=(own,), daemon=True).start()
from IPython.display import display
display({'text/plain': 'x' * (20 << 20)}, raw=True)  # too big: the grader's iopub reconnects
"""


def test_the_grader_connects_to_no_path_the_kernel_controls(tmp_path):
    """The issue's fourth attack and more: the kernel links every socket name in its home to a
    socket on the host and binds sockets of its own there, then forces a reconnection. The root
    grader connects to none of them, and grades on."""
    host = tmp_path / "host"
    host.mkdir(mode=0o777)
    host.chmod(0o777)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(host / "host.sock"))
    (host / "host.sock").chmod(0o777)
    listener.listen(64)
    listener.settimeout(0.2)
    hits = []

    def count():
        while not stopped:
            try:
                listener.accept()[0].close()
                hits.append(1)
            except socket.timeout:
                continue
            except OSError:
                return

    stopped = False
    threading.Thread(target=count, daemon=True).start()
    attack = f"HOST = {str(host / 'host.sock')!r}\n" + PATHS_ATTACK
    later = "print('ACCEPTED', len(accepted))\n"
    attacked = with_extra_cell(attack)
    attacked["cells"].append(code(later))
    path = write_notebook(tmp_path / "paths" / ASSIGNMENT / SOLUTION_FILE.name, attacked)
    try:
        result, executed = grade.grade_notebook(path, COURSE.assignment(ASSIGNMENT), options())
    finally:
        stopped = True
        listener.close()
    assert result.score == FULL, result.errors
    assert hits == [], "the grader connected to a socket the kernel linked to"
    printed = [o.get("text", "") for c in executed["cells"] for o in c.get("outputs", [])]
    assert any("ACCEPTED 0" in text for text in printed), printed


def test_the_grader_reaches_its_kernel_only_through_its_own_folder():
    if not confinement.available():
        pytest.skip("bubblewrap is not installed")
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        runtime = str(session.runtime)
        urls = [session.client._make_url(c) for c in relay.CHANNELS]
        folder = int(session.relay.address.split("/")[4])
        assert os.readlink(f"/proc/self/fd/{folder}") == runtime
        assert all(u.startswith(f"ipc://{session.relay.address}-") for u in urls), urls
        for channel in (session.client.shell_channel, session.iopub):
            assert channel.socket.getsockopt(zmq.RCVHWM) == kernel.RECEIVE_QUEUE
            assert channel.socket.getsockopt(zmq.MAXMSGSIZE) == relay.MAX_MESSAGE_BYTES
        inside = session.execute("import os\nprint(sorted(os.listdir(os.path.expanduser("
                                 "'~/.kernel'))))", 30)
    # the channels the grader reads have no socket file the kernel could see or replace
    listed = json.loads(inside.outputs[0]["text"].replace("'", '"'))
    assert len(listed) <= 2, listed  # ipykernel's own heartbeat and stdin, which nobody reads


# ------------------------------------------------------------------ the kernel's total, per layout

MEMORY_PROBE = r"""import ctypes, json, os, subprocess, threading
report = {}
def attempt(name, action):
    try:
        report[name] = action()
    except BaseException as error:
        report[name] = f"refused: {type(error).__name__}"
def forks():  # the issue's fifth attack: four processes of 1.25 GiB against a 2 GiB promise
    for _ in range(4):
        if os.fork() == 0:
            hog = bytearray(1280 << 20)
            import time
            time.sleep(20)
            os._exit(0)
    return "forked"
attempt("fork", forks)
attempt("subprocess", lambda: subprocess.run(["/bin/true"]).returncode)
libc = ctypes.CDLL(None, use_errno=True)
def unshare():  # a user and mount namespace of its own could mount an unlimited tmpfs
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    return "unshared"
attempt("unshare", unshare)
attempt("memfd", lambda: os.memfd_create("hog") and "made")
def write(path):
    with open(path, "wb") as handle:
        handle.write(b"x" * (16 << 20))
    os.unlink(path)
    return "written"
for path in ["/dev/shm/hog", "/hog", "/run/hog", "/etc/hog", "/usr/hog"]:
    attempt(path, lambda path=path: write(path))
held = []
def hold():
    try:
        while True:
            held.append(bytearray(64 << 20))
    except MemoryError:
        pass
threads = [threading.Thread(target=hold) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
report["held_by_threads_mib"] = len(held) * 64
del held[:]
import resource
report["open_files"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
print("MEMORY-REPORT " + json.dumps(report))
"""


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_a_kernel_is_held_to_its_total_in_every_layout(who, tmp_path, request):
    """Graded as root (a control group) and as an ordinary user (none): the kernel cannot fork,
    unshare, make memory files or write outside its scratch folder, and its threads together
    hold less than its one address space. The run says at its start which mechanism holds."""
    if who == "root":
        top = tmp_path / "layout"
    else:
        user, home = request.getfixturevalue("instructor")
        top = home / "layout"
    path = write_notebook(top / "class" / "mallory" / ASSIGNMENT / SOLUTION_FILE.name,
                          with_extra_cell(MEMORY_PROBE))
    state, out = top / "state", top / "results.json"
    args = [sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
            "--require-sandbox", "--jobs", "1", "--cell-timeout", "60", "--budget", "180",
            "--state", str(state), "--json", str(out), str(path)]
    if who == "root":
        done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(top)], check=True)
        done = run_as(user, home, *args, cwd=REPO)
    print(f"\n[bounded] {who}: {done.stderr.splitlines()[0]}")
    assert "held in total by" in done.stderr and "one process each" in done.stderr
    if who == "root":
        assert "control group" in done.stderr
    assert json.loads(out.read_text())["score"] == FULL
    [entry] = state.glob("*.json")
    texts = [o.get("text", "") for c in json.loads(entry.read_text())["executed"]["cells"]
             for o in c.get("outputs", [])]
    line = next(t for t in texts if "MEMORY-REPORT" in t)
    found = json.loads(line.split("MEMORY-REPORT ", 1)[1])
    print(f"[bounded] {who}: the kernel's attempts: {found}")
    for refused in ("fork", "subprocess", "unshare", "memfd", "/dev/shm/hog", "/hog", "/run/hog",
                    "/etc/hog", "/usr/hog"):
        assert str(found[refused]).startswith("refused"), (refused, found[refused])
    assert 0 < found["held_by_threads_mib"] <= confinement.Limits().memory_bytes >> 20
    assert found["open_files"] == confinement.Limits().open_files


def test_the_run_says_when_no_mechanism_holds_the_total(monkeypatch):
    monkeypatch.setattr(confinement.Cgroup, "works", classmethod(lambda cls, limits: False))
    monkeypatch.setattr(confinement, "one_process_works", lambda: False)
    assert "NOT held in total" in confinement.limits_statement(confinement.BUBBLEWRAP,
                                                               confinement.Limits())


def test_the_one_process_filter_covers_this_machine():
    assert launcher.one_process_filter() is not None
    assert confinement.one_process_works()


# ------------------------------------------------------------------ the kernel's word

AGENT_REACHES = {
    "globals() and a name built at run time":
        "g = globals()\nagent = g['__atten' + 'tion_course_agent__']\nagent._array_equal = _same\n",
    "getattr on __main__": "import __main__\nagent = getattr(__main__, '__atten' + "
                           "'tion_course_agent__')\nagent._array_equal = _same\n",
    "vars() of the namespace": "agent = [v for k, v in vars().items() if k.endswith('agent__')][0]"
                               "\nagent._array_equal = _same\n",
    "the exit object's shell": "agent = exit._ip.user_ns['__atten' + 'tion_course_agent__']\n"
                               "agent._array_equal = _same\n",
    "sys.modules and __dict__": "import sys\nagent = sys.modules['__main__'].__dict__['__atten' + "
                                "'tion_course_agent__']\nagent._array_equal = _same\n",
    "the garbage collector": "import gc\nagent = [m for m in gc.get_objects() if "
                             "getattr(m, '__name__', '') == 'autograder' + '_agent'][0]\n"
                             "agent._array_equal = _same\n",
    "a frame's globals": "import inspect\nagent = inspect.currentframe().f_globals['__atten' + "
                         "'tion_course_agent__']\nagent._array_equal = _same\n",
    "numpy's shared function, through an alias": "f = np.array_equal\nf.__code__ = _same.__code__\n",
    "eval of a built name": "agent = eval('__atten' + 'tion_course_agent__')\n"
                            "agent._array_equal = _same\n",
}
SAME = "def _same(*args, **kwargs):\n    return True\n"
# IPython's escapes run code too: what they run is flagged like any cell.
ESCAPES = {
    "a reach inside %time": "%time agent = globals()['__atten' + 'tion_course_agent__']",
    "a reach inside %%timeit": "%%timeit -n 1\nagent = vars()['__atten' + 'tion_course_agent__']",
    "a reach after a prompt": ">>> agent = globals()['__atten' + 'tion_course_agent__']",
    "a reach in an indented cell": "    agent = globals()['__atten' + 'tion_course_agent__']",
    "another magic": "%run -i elsewhere.py",
    "another cell magic": "%%python3\nprint(1)",
    "an autocall": "/getattr np name",
    "an assigned magic": "out = %who_ls",
}


@pytest.mark.parametrize("reach", list(AGENT_REACHES))
def test_every_reach_for_the_agent_is_flagged(reach):
    attacked = in_place_with(SAME + AGENT_REACHES[reach])
    assert flags.scan(notebook.check_structure(attacked)), reach


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_ipython_escapes_are_read_as_what_they_run(escape):
    notebook = {"cells": [code(ESCAPES[escape])]}
    assert flags.scan(notebook), escape


def test_the_escapes_course_work_uses_are_not_flagged():
    sources = ["%matplotlib inline\nimport numpy as np", "%timeit -n 3 -r 1 np.exp(1.0)",
               "%time y = np.ones(3)", "!pip install numpy", "np.exp?",
               'def f():\n    """\n    % of rows\n    !important\n    """\n    return 1']
    assert flags.scan({"cells": [code(source) for source in sources]}) == []


@pytest.mark.parametrize("reach", ["globals() and a name built at run time",
                                   "numpy's shared function, through an alias",
                                   "the exit object's shell"])
def test_a_hidden_in_place_change_ends_at_the_honest_score_or_flagged(reach, tmp_path):
    """The issue's sixth attack, graded: an in-place change hidden by patching the agent reached
    without naming it. It either loses the point it should, or is flagged."""
    path = write_notebook(tmp_path / "reach" / ASSIGNMENT / SOLUTION_FILE.name,
                          in_place_with(SAME + AGENT_REACHES[reach]))
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT), options())
    honest = expected_score("patch numpy to hide an in-place change")
    assert result.score == honest or result.flags, (result.score, result.flags)
    print(f"\n[bounded] {reach}: score {result.score:g} (honest {honest:g}), flags {result.flags}")


def test_what_rests_on_the_kernels_word_is_labelled():
    found = COURSE.assignment(ASSIGNMENT)
    result = grade.grade_local(found, reference.namespace(found))
    labelled = [t for t in result.tests if t.feedback == suite.KERNEL_WORD]
    assert result.score == FULL and labelled
    assert all(t.passed for t in labelled)
    names = {t.name for t in labelled}
    assert any("unchanged" in n or "warning" in n for n in names), names
    assert any(t.feedback == "" for t in result.tests), "a test that reads only values is unlabelled"


# ------------------------------------------------------------------ hostile files, every reader

OUTPUT_FLOOD = ("from IPython.display import display\n"
                "for _ in range(150):\n"
                "    display({'image/png': 'iVBORw0KGgo='}, raw=True)\n"
                "    print('and a line', flush=True)\n")
BIG_FIGURES = ("from IPython.display import display\n"
               "for _ in range(3):\n"
               f"    display({{'image/png': 'iVBORw0KGgo=' + 'A' * {kernel.MAX_FIGURE_CHARS - 300}}},"
               " raw=True)\n")
RENDER_SECONDS = 30  # the formgrader's and the feedback page of any submission's outputs


def with_cells(*sources):
    """The reference submission with cells the learner added after the answer."""
    submission = with_answer(CORRECT)
    index = next(i for i, c in enumerate(submission["cells"])
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "row_normalize")
    submission["cells"][index + 1:index + 1] = [code(source) for source in sources]
    return submission


def hostile_class():
    """learner -> (the file they hand in, their score, words their refusal says): the worst
    input of each kind for the readers of a learner's file, and an honest learner."""
    honest = json.dumps(base()).encode()
    deep = json.dumps(base()).encode()[:-1] + b', "x": ' + b"[" * 1_000_000 + b"]" * 1_000_000 \
        + b"}"
    return {
        "honest": (honest, FULL, None),
        # the two attacks
        "figures": (figure_flood(ASSIGNMENT), FULL, None),
        "wide": (metadata_bomb(ASSIGNMENT), FULL, None),
        # the kernel's outputs past every allowance: counts, a cell's figures, the notebook's
        "outputs": (json.dumps(with_cells(*[BIG_FIGURES] * 3, *[OUTPUT_FLOOD] * 12)).encode(),
                    FULL, None),
        "deep": (deep, 0, "not valid JSON"),
        "flagger": (json.dumps(with_cells("[" + "a," * 8_000_000 + "a]")).encode(), 0,
                    "resubmit"),
        "cells": (READER_BOMBS["100k cells"], 0, "more than the 2000"),
        "oversized": (honest[:-1] + b', "x": "' + b"z" * (30 << 20) + b'"}', 0,
                      "over the 20 MiB limit"),
    }


def base():
    return with_answer(CORRECT)


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_every_reader_of_a_learners_file_is_bounded(who, request):
    """The worst file of each kind (300,000 figures in the demonstrations, 6.3 million empty
    lists of metadata, outputs past every allowance, JSON nested a million deep, a cell too
    large to flag, 100,000 cells, 30 MB) in one class, through nbgrader's collect, ``python -m
    autograder autograde`` (grading, and the recording's writer and building worker), the
    feedback, the formgrader's pages and, as root, nbgrader's own autograde: each reader's peak
    memory is printed and within its bound, each page renders within RENDER_SECONDS, each
    learner gets their score (0 with a sentence for a file no reader may read), and what is
    kept of each (cache entry, autograded notebook) is bounded."""
    top = Path(tempfile.mkdtemp(prefix="hostile-readers-"))
    top.chmod(0o755)
    state, exchange, peak_file = top / "course", top / "exchange", top / "peaks.jsonl"
    env = {"AUTOGRADER_STATE": str(state), "PEAK_FILE": str(peak_file)}
    learners = hostile_class()
    try:
        for learner, (raw, _, _) in learners.items():
            folder = (exchange / "attention-course" / "inbound" /
                      f"{learner}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC")
            folder.mkdir(parents=True)
            (folder / SOLUTION_FILE.name).write_bytes(raw)
        if who == "root":
            def run(*args):
                done = subprocess.run(args, cwd=REPO, env={**os.environ, **env},
                                      capture_output=True, text=True, timeout=1800)
                assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
                return done
        else:
            user, home = request.getfixturevalue("instructor")
            subprocess.run(["chown", "-R", f"{user}:{user}", str(top)], check=True)

            def run(*args):
                return run_as(user, home, *args, cwd=REPO, env=env, timeout=1800)
        exchange_flags = [f"--Exchange.root={exchange}",
                          "--CourseDirectory.course_id=attention-course"]
        run(*measured_module("nbgrader", "generate_assignment", ASSIGNMENT, "--force",
                             f"--CourseDirectory.release_directory={top / 'release'}"))
        run(*measured_module("nbgrader", "collect", ASSIGNMENT, *exchange_flags))
        collected = peaks(peak_file)["nbgrader"]
        graded = autograde_measured(ASSIGNMENT, {"sandbox": "require", "cell_timeout": 20,
                                                 "call_timeout": 5, "budget": 120}, state,
                                    run=None if who == "root" else run)
        peak_file.unlink()
        started = time.monotonic()
        run(*measured_module("nbgrader", "generate_feedback", ASSIGNMENT))
        pages_seconds = time.monotonic() - started
        feedback = peaks(peak_file)["nbgrader"]
        print(f"\n[bounded] {who}: collect {collected:.0f} MiB; autograde: grader "
              f"{graded['grader_peak_mib']:.0f} MiB, recording {graded['recorder_peak_mib']:.0f} "
              f"MiB, {graded['seconds']:.0f} s; feedback {feedback:.0f} MiB, {pages_seconds:.0f} s "
              f"for {len(learners)} pages\n[bounded] {who}: the recording's peak after each "
              f"learner: {graded['recorder_peaks_mib']}")
        assert pages_seconds < RENDER_SECONDS * len(learners)
        for peak in (collected, graded["grader_peak_mib"], graded["recorder_peak_mib"], feedback):
            assert peak < GRADER_PEAK_MIB
        scores = {Path(r["notebook"]).parent.parent.name: r for r in graded["results"]}
        for learner, (_, score, words) in learners.items():
            assert scores[learner]["score"] == score, (learner, scores[learner]["errors"])
            if words:
                assert any(words in e for e in scores[learner]["errors"]), scores[learner]
        # its visible check ran after the notebook's budget was spent: still reported as it fared
        assert scores["outputs"]["checks"]["row_normalize"]["status"] == "passed"
        for entry in (state / "grading-cache").glob("*.json"):
            assert entry.stat().st_size < 10 << 20, entry
        check_autograded(state, learners)
        pages = formgrader_pages(sorted((state / "autograded").glob("*/*/*.ipynb")), run=run)
        for path, (seconds, chars) in pages.items():
            print(f"[bounded] {who}: the formgrader's page of {Path(path).parts[-3]}: "
                  f"{seconds:.1f} s, {chars:,} characters")
            assert seconds < RENDER_SECONDS and chars < 20 << 20
        assert len(pages) == len(learners)
        for learner in learners:
            page = state / "feedback" / learner / ASSIGNMENT / SOLUTION_FILE.with_suffix(".html").name
            assert page.stat().st_size < 20 << 20
        if who == "root":  # nbgrader's own autograde, grading in its process: no cache
            direct = top / "direct"
            shutil.copytree(state / "submitted", direct / "submitted")
            shutil.copy(state / "gradebook.db", direct / "gradebook.db")
            peak_file.unlink()
            subprocess.run(measured_module("nbgrader", "autograde", ASSIGNMENT), cwd=REPO,
                           check=True, env={**os.environ, **env,
                                            "AUTOGRADER_STATE": str(direct)},
                           capture_output=True, timeout=1800)
            alone = peaks(peak_file)["nbgrader"]
            print(f"[bounded] nbgrader autograde (grading in its own process): {alone:.0f} MiB")
            assert alone < GRADER_PEAK_MIB
            check_autograded(direct, learners)
            assert gradebook_scores(direct) == gradebook_scores(state) == {
                learner: score for learner, (_, score, _) in learners.items()}
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(top)], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def check_autograded(state, learners):
    """Each learner's autograded notebook: outputs within the notebook's budget (besides the
    feedback tables of the check cells), and the release in place of a refused file."""
    release = json.loads(SOLUTION_FILE.read_text())
    for learner, (_, score, words) in learners.items():
        path = state / "autograded" / learner / ASSIGNMENT / SOLUTION_FILE.name
        assert path.stat().st_size < 10 << 20, path
        cells = json.loads(path.read_text())["cells"]
        kept = [o for c in cells if not c["metadata"].get("nbgrader", {}).get("grade")
                for o in c.get("outputs", [])]
        assert len(kept) <= figures.MAX_NOTEBOOK_OUTPUTS + 1, (learner, len(kept))
        assert sum(figures.size(o) for o in kept) <= figures.MAX_NOTEBOOK_OUTPUT_CHARS + 500
        notes = "".join("".join(o.get("text", "")) for o in kept)  # nbformat keeps lines
        if learner in ("figures", "outputs"):
            assert "left out by the grader" in notes, learner
        if learner == "figures":
            assert "149,900 more output(s) of your submitted copy" in notes
        if learner == "outputs":
            assert "the cells below keep no outputs" in notes
        if words:
            assert len(cells) == len(release["cells"]), learner


def gradebook_scores(state):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        return {s.student.id: s.score for s in book.assignment_submissions(ASSIGNMENT)}
