"""Reading a submission (autograder/engine/notebook.py) happens in a child process bounded in memory
and CPU time, with patterns that take linear time.
"""
import resource
import time

import pytest

from autograder.engine import notebook
from support.attacks import needs_bubblewrap  # noqa: F401
from support.bounds import MADE_BOMBS, READER_BOMBS, bomb_bytes

pytestmark = pytest.mark.slow


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
