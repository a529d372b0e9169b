"""What a learner's kernel outputs, and what the grader keeps of it: a cell's outputs within the
cell's caps, and the one reply of a call.

A message the kernel publishes becomes an output as nbformat writes one (:func:`output_from`),
with only the fields the grader reads, each of the type it expects. A cell keeps its outputs
within its own caps (:class:`CellOutputs`): :data:`MAX_OUTPUT_CHARS` characters of text (the rest
is dropped with a note), figures within their own allowance (:mod:`autograder.engine.figures`),
and :data:`MAX_CELL_OUTPUTS` outputs in all. A call reads exactly one reply (:class:`CallReply`):
the first output that carries the call's nonce and reads as a reply; every other output of the
call is counted and dropped. Nothing here knows the kernel: :mod:`autograder.engine.kernel_exec`
hands each output over as it arrives.
"""
from __future__ import annotations

import json
from typing import Any

from . import figures, wire

MAX_OUTPUT_CHARS = 20_000       # of one cell's outputs but figures; the rest is dropped with a note
MAX_FIGURE_CHARS = figures.MAX_FIGURE_CHARS  # of one figure (an image output: see is_figure)
MAX_CELL_FIGURE_CHARS = figures.MAX_CELL_FIGURE_CHARS  # of one cell's figures together
MAX_CELL_OUTPUTS = figures.MAX_CELL_OUTPUTS  # of one cell, figures included
# of all cells' outputs together, figures and those of demonstration cells included: one
# figures.Budget per notebook, which the grading fits each cell's outputs into
MAX_NOTEBOOK_OUTPUT_CHARS = figures.MAX_NOTEBOOK_OUTPUT_CHARS

Output = dict[str, Any]

is_figure = figures.is_figure


def output_from(kind: str, content: dict[str, Any]) -> Output:
    """The output a message of type ``kind`` ("stream", "error", "display_data",
    "update_display_data" or "execute_result") with ``content`` shows."""
    if kind == "stream":
        return {"output_type": "stream", "name": str(content.get("name", "stdout")),
                "text": str(content.get("text", ""))}
    if kind == "error":
        return {"output_type": "error", "ename": str(content.get("ename")),
                "evalue": str(content.get("evalue")),
                "traceback": [str(t) for t in content.get("traceback", [])][:200]}
    kind = "display_data" if kind == "update_display_data" else kind
    output: dict[str, Any] = {"output_type": kind, "data": dict(content.get("data", {})),
              "metadata": dict(content.get("metadata", {}))}
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output


class CellOutputs:
    """What one cell keeps of its outputs, handed over one by one (:meth:`keep`): text within
    :data:`MAX_OUTPUT_CHARS` (consecutive text of one stream is one output, as JupyterLab shows
    it), figures within :data:`MAX_FIGURE_CHARS` each and :data:`MAX_CELL_FIGURE_CHARS` together,
    and :data:`MAX_CELL_OUTPUTS` outputs. A reply outside any call is counted, never kept. The
    notebook's own budget (:class:`figures.Budget`) is the grading's to apply to what it keeps."""

    def __init__(self) -> None:
        self.outputs: list[Output] = []
        self.used = 0            # characters of text (and of stray replies) seen
        self.figures_used = 0    # characters of figures seen
        self.noted = False       # whether the note that text was dropped is in
        self.left_out = 0        # figures not kept

    def _truncated(self) -> None:
        if not self.noted:
            self.noted = True
            self.outputs.append(output_from("stream", {
                "name": "stdout", "text": "\n[output truncated by the grader]\n"}))

    def keep(self, output: Output) -> None:
        outputs = self.outputs
        size = len(json.dumps(output))
        if wire.MIME in output.get("data", {}):
            self.used += size
            return  # a reply outside any call: counted, never kept
        if is_figure(output):
            self.figures_used += size
            if size <= MAX_FIGURE_CHARS and self.figures_used <= MAX_CELL_FIGURE_CHARS and \
                    len(outputs) < MAX_CELL_OUTPUTS:
                outputs.append(output)
            else:
                self.left_out += 1
            return
        self.used += size
        if self.used > MAX_OUTPUT_CHARS:
            self._truncated()
        elif output["output_type"] == "stream" and outputs and not self.noted and \
                outputs[-1]["output_type"] == "stream" and \
                outputs[-1]["name"] == output["name"]:
            outputs[-1]["text"] += output["text"]  # one stream's text is one output
        elif len(outputs) < MAX_CELL_OUTPUTS:
            outputs.append(output)
        else:
            self._truncated()

    def kept(self) -> list[Output]:
        """The cell's outputs, once it is over: those kept, and a note of the figures left out."""
        if not self.left_out:
            return self.outputs
        return self.outputs + [output_from("stream", {"name": "stdout", "text": (
            f"\n[{self.left_out} figure(s) left out by the grader: a figure may take up to "
            f"{MAX_FIGURE_CHARS:,} characters, a cell's figures {MAX_CELL_FIGURE_CHARS:,}, "
            f"a cell {MAX_CELL_OUTPUTS} outputs]\n")})]


class CallReply:
    """The reply of one call, read from its outputs (:meth:`take`): the first output that carries
    the call's ``nonce`` and reads as a reply (:func:`wire.read_reply`). Every output counts
    towards twice :data:`wire.MAX_REPLY_CHARS`; past it (:attr:`flooded`), none is read."""

    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.reply: wire.Reply | None = None
        self.problems: list[str] = []  # why outputs that looked like replies were not
        self.seen = 0                  # characters of the call's outputs

    @property
    def flooded(self) -> bool:
        return self.seen > 2 * wire.MAX_REPLY_CHARS

    def take(self, output: Output) -> None:
        data = output.get("data", {})
        self.seen += len(json.dumps(output))
        if self.reply is not None or wire.MIME not in data or self.flooded:
            return  # counted and dropped: only this call's first reply is read
        try:
            self.reply = wire.read_reply(data[wire.MIME], self.nonce)
        except wire.BadReply as problem:
            self.problems.append(str(problem))
