"""What passes for a figure: an image output, which has an allowance of its own, larger than text's.

The grader's kernel keeps a learner's figures within :data:`MAX_FIGURE_CHARS` each and
:data:`MAX_CELL_FIGURE_CHARS` a cell (:mod:`~autograder.engine.kernel`); a demonstration cell that
is not re-run shows the figures of the learner's own submitted copy
(:mod:`~autograder.engine.demonstrations`), read from the submission by :func:`plain_figure`.
"""
from __future__ import annotations

import base64
import binascii
import re
from typing import Any

Output = dict[str, Any]

MAX_FIGURE_CHARS = 1_000_000    # of one figure (an image output: see is_figure)
MAX_CELL_FIGURE_CHARS = 3_000_000  # of one cell's figures together
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
    return {"output_type": "display_data", "metadata": {},
            "data": {key: data[key] for key in MIMES if key in data}}


def within_allowance(outputs: Any) -> list[Output]:
    """The figures of a cell's ``outputs`` (untrusted), as :func:`plain_figure` rebuilds them,
    as many as fit the cell's allowance, in order."""
    kept: list[Output] = []
    total = 0
    for output in outputs if isinstance(outputs, list) else []:
        figure = plain_figure(output)
        if figure is None:
            continue
        size = sum(len(value) for value in figure["data"].values())
        if total + size <= MAX_CELL_FIGURE_CHARS:
            total += size
            kept.append(figure)
    return kept
