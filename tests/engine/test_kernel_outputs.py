"""What the grader keeps of a kernel's outputs (autograder/engine/kernel_outputs.py): a cell's
text and figures, each within its own allowance, and a stream's text as one output.
"""
import json

import pytest

from autograder.sandbox import confinement
from autograder.engine import kernel
from autograder.engine.kernel import KernelSession
from support.attacks import needs_bubblewrap  # noqa: F401

pytestmark = pytest.mark.slow


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
