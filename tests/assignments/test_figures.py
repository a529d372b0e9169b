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
before matplotlib's own) records, for each figure, its titles and any series that look alike. The
run is the one the claims' test reads too (tests/seed_zero.py).
"""
import html
import re

import pytest

import seed_zero
from helpers.plots import plain
from support import ASSIGNMENTS

pytestmark = pytest.mark.slow
IMAGE = re.compile(r'^<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">$')


def shown_figures(notebook):
    """Every figure output: the alt text of its image, or the output itself when it is not one."""
    shown = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "<img" in data.get("text/html", ""):
                match = IMAGE.match(data.get("text/html", ""))
                shown.append(html.unescape(match.group(1)) if match else {
                    key: value[:80] for key, value in data.items()})
    return shown


@pytest.mark.parametrize("assignment", [pytest.param(a, marks=seed_zero.group(a))
                                        for a in ASSIGNMENTS])
def test_every_figure_has_a_text_alternative_and_reads_in_greyscale(assignment):
    shared = seed_zero.run(assignment)
    notebook, probe = shared.notebook, shared.probe
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
