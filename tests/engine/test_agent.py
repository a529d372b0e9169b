"""The agent (autograder/engine/agent.py) installed in a real kernel: what it changes of the
kernel's own streams. Its replies and their encoding are tested through the suites
(tests/assignments/test_suites.py) and the wire (tests/engine/test_wire.py)."""
import pytest

from autograder.engine.kernel import KernelSession
from autograder.sandbox import confinement
from support.attacks import needs_bubblewrap  # noqa: F401

pytestmark = pytest.mark.slow

# counts what the kernel's streams hand their output thread
COUNTED = """
import sys
_handed = []
_thread = sys.stdout.pub_thread
_schedule = _thread.schedule
_thread.schedule = lambda task: (_handed.append(task), _schedule(task))[1]
"""
FLUSHES = """
_handed.clear()
sys.stdout.flush()
sys.stderr.flush()
_empty = len(_handed)
sys.stdout.write("x")
sys.stdout.flush()
_written = len(_handed) - _empty
"""


def test_a_flush_with_nothing_written_waits_on_nothing_and_outputs_keep_their_order():
    """ipykernel's flush hands its output thread two tasks and waits for both, even with nothing
    written, six times in each call; with the agent in place a flush with nothing to send hands
    it none, and one with text waiting sends it before what comes next, as before."""
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        assert not session.execute(COUNTED, 30).error
        assert not session.execute(FLUSHES, 30).error
        shown = session.execute("print(_empty, _written)", 30).outputs
        assert shown[-1]["text"].split()[0] == "4"  # the kernel as ipykernel makes it
        session.install_agent()
        assert not session.execute(FLUSHES, 30).error
        shown = session.execute("print(_empty, _written)", 30).outputs
        empty, written = map(int, shown[-1]["text"].split())
        assert empty == 0 and written >= 2
        result = session.execute("print('a', end='')\nfrom IPython.display import display\n"
                                 "display({'text/plain': 'b'}, raw=True)\nprint('c')\n", 30)
        assert [(o["output_type"], o.get("text") or o["data"]["text/plain"])
                for o in result.outputs] == [("stream", "a"), ("display_data", "b"),
                                             ("stream", "c\n")]
        assert not session.execute("def double(x):\n    return 2 * x\n", 30).error
        reply = session.call("double", (21,), {}, 30)
        assert reply["ok"] and reply["value"] == 42
