"""Every course figure reads without colour and without sight.

Each solution notebook runs top to bottom in a fresh kernel with matplotlib's inline backend, as in
JupyterLab. Then:

- every figure it shows is an HTML image with a text alternative (``<img alt>``, which JupyterLab
  and nbconvert's pages give to screen readers), never a bare PNG output (which JupyterLab shows
  with none), and that text names the figure's title and each of its panels' titles;
- in every panel, the named lines differ from each other in their dashes or markers, and named
  bars, filled histograms or outlines in their hatching or dashes: none is told apart by colour
  alone, so each figure still reads in greyscale.

A probe run before each cell's figures are shown (an IPython ``post_execute`` callback registered
before matplotlib's own) records, for each figure, its titles and any series that look alike.
"""
import html
import json
import re

import nbformat
import pytest

from helpers.plots import plain
from support import ASSIGNMENTS, COURSE, execute

pytestmark = pytest.mark.slow
MARKER = "FIGURE-PROBE "
PROBE = r'''
import sys as _sys


def _looks_alike(figure):
    """Labels of the series of one panel that share a look apart from colour."""
    from matplotlib.container import BarContainer
    from matplotlib.patches import Polygon
    alike = []
    for ax in figure.axes:
        looks = {}
        for line in ax.get_lines():
            if line.get_visible() and not line.get_label().startswith("_"):
                marker = line.get_marker()
                marker = None if marker in (None, "", " ", "None", "none") else str(marker)
                looks.setdefault(("line", str(line._unscaled_dash_pattern), marker), []).append(
                    line.get_label())
        for container in ax.containers:
            if isinstance(container, BarContainer) and container.patches:
                label = next((x for x in (container.get_label(), container.patches[0].get_label())
                              if x and not x.startswith("_")), None)
                if label:
                    looks.setdefault(("bars", container.patches[0].get_hatch() or ""), []).append(label)
        for patch in ax.patches:
            if isinstance(patch, Polygon) and not patch.get_label().startswith("_"):
                looks.setdefault(("outline", str(patch._unscaled_dash_pattern), patch.get_hatch()),
                                 []).append(patch.get_label())
        alike += [labels for labels in looks.values() if len(labels) > 1]
    return alike


def _probe_figures():
    pyplot = _sys.modules.get("matplotlib.pyplot")
    for number in pyplot.get_fignums() if pyplot is not None else []:
        figure = pyplot.figure(number)
        titles = [figure.get_suptitle()] + [ax.get_title() for ax in figure.axes]
        _figure_probe.append({"titles": [t for t in titles if t], "alike": _looks_alike(figure)})


_figure_probe = []
get_ipython().events.register("post_execute", _probe_figures)
'''
REPORT = f"print({MARKER!r} + __import__('json').dumps(_figure_probe))"
IMAGE = re.compile(r'^<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">$')


def executed(assignment, monkeypatch):
    """The solution notebook run with the probe; (the notebook, the probe's record)."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)      # the inline backend, as in JupyterLab
    path = COURSE.assignment(assignment).solution
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(PROBE))
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT))
    execute(notebook, path.parent)
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    return notebook, json.loads(printed.split(MARKER, 1)[1])


def shown_figures(notebook):
    """Every figure output: the alt text of its image, or the output itself when it is not one."""
    shown = []
    for cell in notebook.cells[1:-1]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "<img" in data.get("text/html", ""):
                match = IMAGE.match(data.get("text/html", ""))
                shown.append(html.unescape(match.group(1)) if match else {
                    key: value[:80] for key, value in data.items()})
    return shown


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_figure_has_a_text_alternative_and_reads_in_greyscale(assignment, monkeypatch):
    notebook, probe = executed(assignment, monkeypatch)
    shown = shown_figures(notebook)
    assert shown, f"{assignment} shows no figure: is the probe still finding them?"
    bare = [item for item in shown if not isinstance(item, str)]
    assert not bare, f"{assignment}: figures shown without a text alternative: {bare}"
    assert len(shown) == len(probe), (f"{assignment}: {len(shown)} figures shown, "
                                      f"{len(probe)} drawn")
    for number, (text, figure) in enumerate(zip(shown, probe), 1):
        missing = [title for title in figure["titles"] if plain(title) not in text]
        assert not missing, f"{assignment}, figure {number}: its text leaves out {missing}: {text}"
    alike = [(number, labels) for number, figure in enumerate(probe, 1)
             for labels in figure["alike"]]
    assert not alike, (f"{assignment}: series told apart by colour alone (figure number, "
                       f"labels): {alike}")
