"""One run of each solution notebook at ``SEED = 0``, shared by the tests that read it.

The run is the one JupyterLab makes (a fresh python3 kernel, IPython's stock one, matplotlib's
inline backend), with one BLAS thread as ``make bench`` measures, and with three cells added: a
probe first, which records each figure's titles and any series that look alike apart from colour
(tests/assignments/test_figures.py reads it; the lab's accessibility test compares its figures'
text with the lab's); its report; and, last, the value of every claim checked at ``SEED = 0``
(tests/assignments/test_claims.py). Each notebook is run once per test process: the tests that
read it share an xdist group (:func:`group`), so they share the process.

The notebook runs as committed, its optional runs off. ``make claims`` makes each optional run
(``run(assignment, "LONGER_RUN = True")``, the same cells with that one line changed) to check the
claims about it and the figures it draws.
"""
import contextlib
import dataclasses
import functools
import json
import re

import nbformat
import pytest

import claims
from support import COURSE, execute

FIGURE_MARKER = "FIGURE-PROBE "
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
REPORT = f"print({FIGURE_MARKER!r} + __import__('json').dumps(_figure_probe))"
CLAIM_MARKER = "CLAIM-VALUES "
READOUT = '''
import json as _json
def _claim_value(_expression):
    try:
        return float(eval(_expression))
    except Exception as _error:
        return f"{{type(_error).__name__}}: {{_error}}"
print({marker!r} + _json.dumps({{_e: _claim_value(_e) for _e in {expressions!r}}}))
'''
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def readout(expressions):
    """A cell that prints the value of each expression (a float, or the error it raised)."""
    return READOUT.format(marker=CLAIM_MARKER, expressions=sorted(set(expressions)))


def read_values(cell):
    """What a :func:`readout` cell printed: {expression: value}."""
    printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    line = next(line for line in printed.splitlines() if line.startswith(CLAIM_MARKER))
    return json.loads(line[len(CLAIM_MARKER):])


@contextlib.contextmanager
def environment(set_to, removed=()):
    """This process's environment (which the kernel inherits) changed for a while: pytest's
    monkeypatch, usable outside a test (a cached run outlives the test that started it)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in set_to.items():
            patch.setenv(name, value)
        for name in removed:
            patch.delenv(name, raising=False)
        yield


@dataclasses.dataclass
class Run:
    notebook: object    # the executed solution notebook, without the added cells
    probe: list         # per figure drawn: {"titles", "alike"}
    values: dict        # claim value expression -> its value (or the error, as text)


def group(assignment):
    """The xdist group of the tests that read ``assignment``'s run."""
    return pytest.mark.xdist_group(f"seed-zero-{assignment}")


def replace_line(notebook, line, new, what):
    """Replace the one line of the notebook's code cells that matches ``line`` (a pattern)."""
    found = [c for c in notebook.cells if c.cell_type == "code" and line.search(c.source)]
    assert len(found) == 1, f"no single line {what} to replace"
    found[0].source = line.sub(new, found[0].source)


def apply_setting(notebook, setting):
    """The notebook with its one ``NAME = ...`` line replaced by ``setting`` (``NAME = value``)."""
    name = claims.SETTING.fullmatch(setting).group(1)
    replace_line(notebook, re.compile(rf"^{name} = .*$", re.M), setting, f"`{name} = ...`")


def claims_of(assignment, setting=""):
    """The claims checked at ``SEED = 0`` in the run with ``setting`` (none: as committed)."""
    module = claims.load(assignment)
    return [c for c in module.CLAIMS if c.setting == setting] if module else []


@functools.cache
def run(assignment, setting=""):
    """The solution notebook of ``assignment`` run once at ``SEED = 0`` (see the module), as
    committed or with ``setting`` (``NAME = value``) in place of its line ``NAME = ...``."""
    path = COURSE.assignment(assignment).solution
    notebook = nbformat.read(path, as_version=4)
    if setting:
        apply_setting(notebook, setting)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(PROBE))
    notebook.cells += [nbformat.v4.new_code_cell(REPORT), nbformat.v4.new_code_cell(
        readout([c.value for c in claims_of(assignment, setting)]))]
    # the inline backend, as in JupyterLab; IPython's stock kernel, whatever JUPYTER_PATH adds
    with environment(ONE_THREAD, removed=("MPLBACKEND", "JUPYTER_PATH")):
        execute(notebook, path.parent)
    printed = "".join(o.get("text", "") for o in notebook.cells[-2].outputs)
    probe = json.loads(printed.split(FIGURE_MARKER, 1)[1])
    values = read_values(notebook.cells[-1])
    notebook.cells = notebook.cells[1:-2]
    return Run(notebook, probe, values)
