"""What a notebook may keep of its outputs: one budget per notebook, and what passes for a figure.

Every output a graded notebook keeps counts in one :class:`Budget` per notebook,
:data:`MAX_NOTEBOOK_OUTPUT_CHARS` characters (as JSON) and :data:`MAX_NOTEBOOK_OUTPUTS` outputs:
the kernel's (:mod:`~autograder.engine.kernel` keeps a cell's within the cell's own caps, then the
grading fits them into the notebook's budget) and the figures a demonstration cell that is not
re-run shows from the learner's own submitted copy (:mod:`~autograder.engine.demonstrations`,
read from the submission by :func:`submitted`, within the same limits, in the bounded child
process that reads it). What does not fit is left out and counted in a note the learner sees.

A figure (an image output, :func:`is_figure`) has an allowance of its own within a cell, larger
than text's: :data:`MAX_FIGURE_CHARS` each and :data:`MAX_CELL_FIGURE_CHARS` a cell; a cell keeps
at most :data:`MAX_CELL_OUTPUTS` outputs of any kind.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

Output = dict[str, Any]

MAX_FIGURE_CHARS = 1_000_000    # of one figure (an image output: see is_figure)
MAX_CELL_FIGURE_CHARS = 3_000_000  # of one cell's figures together
MAX_CELL_OUTPUTS = 100          # of one cell, figures included (a stream's text is one output)
MAX_NOTEBOOK_OUTPUT_CHARS = 8_000_000  # of all cells' outputs together, figures included
MAX_NOTEBOOK_OUTPUTS = 1_000    # of all cells together (the course's notebooks show under 100)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# A figure as the course's notebooks show one (helpers.plots: an HTML image with its text
# alternative), or as matplotlib's inline backend does (a PNG with its text form)
FIGURE_HTML = re.compile(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="[^"<>]*">\Z')
BASE64 = re.compile(r"[A-Za-z0-9+/=\n]+\Z")
MIMES = ("image/png", "text/html", "text/plain")


def is_figure(output: Output) -> bool:
    """An image output: a display of a PNG (as base64) or of the one HTML image tag that shows
    a PNG with its text alternative, with at most a text form besides. Only these may use the
    figure allowance, which is larger than the one for text."""
    data = output.get("data")
    if output.get("output_type") not in ("display_data", "execute_result") or \
            not isinstance(data, dict) or not set(data) & {"image/png", "text/html"} or \
            not set(data) <= set(MIMES):
        return False
    if not all(isinstance(value, str) for value in data.values()):
        return False
    return (("image/png" not in data or bool(BASE64.match(data["image/png"]))) and
            ("text/html" not in data or bool(FIGURE_HTML.match(data["text/html"]))))


def _png(text: str) -> bool:
    try:
        return base64.b64decode(text.replace("\n", "")[:16]).startswith(PNG_SIGNATURE)
    except (binascii.Error, ValueError):
        return False


def plain_figure(output: Any) -> Output | None:
    """``output`` (untrusted: from a submitted notebook) rebuilt as a plain image display within
    a figure's allowance, or None unless it is a figure whose every image is a PNG."""
    if not isinstance(output, dict) or not isinstance(output.get("data"), dict):
        return None
    # a saved notebook keeps a multi-line text (the HTML of an image) as a list of its lines
    data = {key: "".join(value) if isinstance(value, list) and
            all(isinstance(line, str) for line in value) else value
            for key, value in output["data"].items()}
    if not is_figure({"output_type": output.get("output_type"), "data": data}):
        return None
    images = [data["image/png"]] if "image/png" in data else []
    if "text/html" in data:
        html = data["text/html"]
        images.append(html[html.index("base64,") + len("base64,"):html.index('"', 32)])
    if not all(_png(image) for image in images) or \
            sum(len(value) for value in data.values()) > MAX_FIGURE_CHARS:
        return None
    figure = {"output_type": "display_data", "metadata": {},
              "data": {key: data[key] for key in MIMES if key in data}}
    return figure if size(figure) <= MAX_FIGURE_CHARS else None


def size(output: Output) -> int:
    """What an output costs in every allowance: its length as JSON."""
    return len(json.dumps(output))


def note(text: str) -> Output:
    """A line from the grader among a cell's outputs."""
    return {"output_type": "stream", "name": "stdout", "text": f"\n[{text}]\n"}


class Budget:
    """What all the cells of one notebook may keep together: :data:`MAX_NOTEBOOK_OUTPUT_CHARS`
    characters and :data:`MAX_NOTEBOOK_OUTPUTS` outputs, whoever made them (the kernel, or the
    learner's submitted copy of a demonstration cell). :meth:`fit` keeps a cell's outputs that
    fit, in order, and says in a note what it left out; once the budget is spent, one last note
    says so and later cells keep nothing. So a notebook's outputs never exceed the budget by
    more than one note."""

    def __init__(self, chars: int = MAX_NOTEBOOK_OUTPUT_CHARS,
                 outputs: int = MAX_NOTEBOOK_OUTPUTS) -> None:
        self.chars, self.outputs = chars, outputs
        self.closed = False  # the last note has been given

    @property
    def spent(self) -> bool:
        return self.chars <= 0 or self.outputs <= 0

    def fits(self, cost: int) -> bool:
        return cost <= self.chars and self.outputs > 0

    def take(self, cost: int) -> None:
        self.chars -= cost
        self.outputs -= 1

    def fit(self, outputs: list[Output]) -> list[Output]:
        """The outputs of one cell that fit what is left, in order, and a note if any did not."""
        kept: list[Output] = []
        left = 0
        for output in outputs:
            cost = size(output)
            if self.fits(cost):
                self.take(cost)
                kept.append(output)
            else:
                left += 1
        if left and not self.closed:
            text = (f"{left} output(s) of this cell left out by the grader: a notebook's outputs "
                    f"may take {MAX_NOTEBOOK_OUTPUT_CHARS:,} characters and "
                    f"{MAX_NOTEBOOK_OUTPUTS:,} outputs in all")
            if self.chars <= size(note(text)) or self.outputs <= 1:  # this note spends it
                self.closed = True
                text += "; the cells below keep no outputs either"
            told = note(text)
            self.take(size(told))
            kept.append(told)
        return kept


def submitted(outputs: Any, budget: Budget) -> list[Output]:
    """The figures of a cell's ``outputs`` in a submitted notebook (untrusted), as
    :func:`plain_figure` rebuilds them, within a cell's allowances (:data:`MAX_CELL_OUTPUTS`,
    :data:`MAX_CELL_FIGURE_CHARS`) and what is left of ``budget``, in order; then, if any were
    left out, a note saying how many outputs were. It stops examining outputs at the first that
    does not fit, so a cell of 300,000 outputs costs no more than one of a hundred."""
    listed = outputs if isinstance(outputs, list) else []
    kept: list[Output] = []
    total = 0
    examined = 0
    for output in listed:
        if len(kept) >= MAX_CELL_OUTPUTS or budget.spent:
            break
        examined += 1
        figure = plain_figure(output)
        if figure is None:
            continue  # text and anything else a cell held: never shown, not counted
        cost = size(figure)
        if total + cost > MAX_CELL_FIGURE_CHARS or not budget.fits(cost):
            examined -= 1
            break
        total += cost
        budget.take(cost)
        kept.append(figure)
    left = len(listed) - examined
    if left:
        told = note(f"{left:,} more output(s) of your submitted copy of this cell left out by "
                    f"the grader: a cell shows at most {MAX_CELL_OUTPUTS} figures and "
                    f"{MAX_CELL_FIGURE_CHARS:,} characters of them, a notebook "
                    f"{MAX_NOTEBOOK_OUTPUTS:,} outputs and {MAX_NOTEBOOK_OUTPUT_CHARS:,} "
                    f"characters")
        budget.take(size(told))
        kept.append(told)
    return kept
