"""A kernel session (autograder/engine/kernel.py) against a kernel that floods: every loop that
reads from a kernel has a deadline, and a call's arguments travel in its request's message.
"""
import queue
import subprocess
import time

import pytest

from autograder.engine import wire
from autograder.sandbox import confinement
from autograder.engine.kernel import CallFailed, KernelSession
from support.attacks import needs_bubblewrap  # noqa: F401

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ loops with deadlines

class FloodingClient:
    """A kernel client whose channels always hold one more message: a kernel that never stops
    sending, none of it an answer."""

    def __init__(self):
        self.read = 0
        # the shell channel sends each request and reads replies; the stdin channel holds the
        # questions of stand-ins, none of this call's
        self.shell_channel = self.stdin_channel = self

    def get_msg(self, timeout=None):  # every channel, the session's own iopub channel too
        self.read += 1
        return {"parent_header": {"msg_id": "someone else"}, "msg_type": "stream",
                "content": {"name": "stdout", "text": "x"}}

    def send(self, message):
        pass

    class session:  # the client's session makes each request's message
        @staticmethod
        def msg(kind, content, metadata=None):
            return {"header": {"msg_id": "this cell"}, "content": content, "metadata": metadata}

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


class BackloggedClient:
    """A kernel client whose iopub still delivers what an earlier cell displayed (a cell of
    hundreds of figures, interrupted at its timeout on a loaded machine): once this request is
    sent, the shell answers it at once, iopub gives ``backlog`` seconds of the earlier cell's
    outputs, and only then this request's own output and its idle status."""

    def __init__(self, backlog):
        self.backlog, self.sent = backlog, None
        self.shell_channel, self.stdin_channel = self.Shell(self), self.Stdin()

    class Shell:
        def __init__(self, client):
            self.client, self.replied = client, False

        def send(self, message):
            self.client.sent = time.monotonic()

        def get_msg(self, timeout=None):
            if self.client.sent is None or self.replied:
                raise queue.Empty
            self.replied = True
            return {"parent_header": {"msg_id": "this cell"}, "msg_type": "execute_reply",
                    "content": {"status": "ok"}}

    class Stdin:
        def get_msg(self, timeout=None):
            raise queue.Empty

    def get_msg(self, timeout=None):  # iopub: the earlier cell's figures, a tenth of a second apart
        if self.sent is None:
            raise queue.Empty
        time.sleep(min(timeout or 0, 0.1))
        if time.monotonic() - self.sent < self.backlog:
            return {"parent_header": {"msg_id": "the cell before"}, "msg_type": "display_data",
                    "content": {"data": {"image/png": "iVBORw0KGgo"}, "metadata": {}}}
        if self.sent is not False:
            self.sent = False
            return {"parent_header": {"msg_id": "this cell"}, "msg_type": "stream",
                    "content": {"name": "stdout", "text": "this cell's own output"}}
        return {"parent_header": {"msg_id": "this cell"}, "msg_type": "status",
                "content": {"execution_state": "idle"}}

    session = FloodingClient.session


def test_a_request_waits_for_its_outputs_behind_an_earlier_cells_still_being_read(monkeypatch):
    """The shell's reply comes before iopub has delivered what an earlier cell displayed; this
    request's outputs come after that backlog, however long it takes iopub to deliver it (three
    times the grace that covers a lost idle message, here), within the request's timeout. With a
    grace counted from the shell's reply alone, a call on a loaded grading machine lost its reply
    (the flood "figures without end" in test_grade_bounds scored 3/8 with three busy processes)."""
    from autograder.engine.kernel import IDLE_GRACE
    session = KernelSession()
    session.client = session.iopub = BackloggedClient(backlog=3 * IDLE_GRACE)
    session.process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    monkeypatch.setattr(session, "_iopub_dropped", lambda deadline: False)
    monkeypatch.setattr(session, "_interrupt", pytest.fail)  # answered: never interrupted
    try:
        outputs = []
        error, timed_out, died = session._run("f()", 30, outputs.append)
        assert (error, timed_out, died) == ("", False, False)
        assert [o.get("text") for o in outputs] == ["this cell's own output"]
        # a backlog that lasts past the request's own timeout: the request ends at the timeout,
        # as answered (the shell said so), with what arrived of its own
        session.client = session.iopub = BackloggedClient(backlog=600)
        (error, timed_out, died), seconds = timed(lambda: session._run("f()", 2, outputs.append))
        assert (error, timed_out, died) == ("", False, False) and 2 <= seconds < 2 + 1
    finally:
        session.process.kill()
        session.process.wait()


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
