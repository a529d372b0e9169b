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
run is the one the claims' test reads too (tests/seed_zero.py): the notebook as committed, its
optional runs off. ``make claims`` asks the same of the figures each optional run draws
(tests/assignments/test_claims.py); the checks are tests/support/figure_text.py.
"""
import pytest

import seed_zero
from support import ASSIGNMENTS, figure_text

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", [pytest.param(a, marks=seed_zero.group(a))
                                        for a in ASSIGNMENTS])
def test_every_figure_has_a_text_alternative_and_reads_in_greyscale(assignment):
    figure_text.check(assignment, seed_zero.run(assignment))
