"""The relay between a kernel and the grader (autograder/engine/relay.py): what a kernel sends is
capped before the grader buffers it (the ZMTP limits of one message, a total per submission), and
the grader connects to no path the kernel can create, replace or link.
"""
import json
import os
import socket
import threading

import pytest
import zmq

from autograder.engine import grade, relay
from autograder.sandbox import confinement
from autograder.engine import kernel
from autograder.engine.kernel import KernelSession
from support import COURSE, write_notebook
from support.attacks import (ASSIGNMENT, FULL, SOLUTION_FILE, needs_bubblewrap, options,  # noqa: F401
                             with_extra_cell)
from support.bounds import code

pytestmark = pytest.mark.slow


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


LIMITS = [
    ("a message of many small frames", message(*[b"x" * 200] * 40), "frames"),
    ("a message of many 1 MiB frames", message(*[b"x" * (1 << 20)] * 600), "bytes"),
    ("one frame over the cap", frame(b"x" * (relay.MAX_MESSAGE_BYTES + 1)), "frame of"),
    ("a size of 2**63 announced", b"\x02" + (1 << 63).to_bytes(8, "big"), "frame of"),
    ("reserved flag bits", b"\x80\x01x", "malformed"),
    ("a command with MORE", b"\x05\x01x", "malformed"),
    ("a huge command", b"\x06" + (1 << 40).to_bytes(8, "big"), "frame of"),
]


# each case is named by its name: pytest would otherwise write the stream into the test's id
# (600 MiB of it, which the worker cannot send back to the controller)
@pytest.mark.parametrize("name, stream, words", LIMITS, ids=[case[0] for case in LIMITS])
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


def test_closing_a_relay_twice_closes_no_other_descriptor(tmp_path):
    """A relay closed a second time (a shutdown run again after one that failed half-way) closes
    nothing more: the number of its folder's descriptor may be another's by then."""
    kernel = FakeKernel(tmp_path)
    kernel.close()
    other = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)  # likely the folder's old number
    try:
        kernel.relay.close()
        os.fstat(other)  # still open
    finally:
        os.close(other)
