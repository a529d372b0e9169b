"""Every figure of the course, so notebooks read like the prose and look alike.

One picture per idea: every attention map goes through :func:`attention_heatmap` (queries down the
side, keys along the top, weights written in the cells when the map is at most 8 x 8), and maps
shown side by side go through :func:`heatmap_grid`, which puts them on one colour scale with one
shared colour bar, so that the same shade means the same weight in every panel.

Figures are for every reader:

- each series of a line plot has its own dashes and marker (:func:`series_style`), not only its own
  colour, so a plot still reads in greyscale or to a reader who does not tell some colours apart;
- in a notebook, every figure is shown as an image whose text alternative, read by screen readers,
  is the figure in words (:func:`describe_figure`: its titles, axes, series and values), in
  JupyterLab and on any page nbconvert makes of the notebook (:func:`show_figures_in_words`).
"""
import html
import math
import re
import sys

import numpy as np

ANNOTATE_MAX_SIDE = 8  # write the weights in the cells of maps up to 8 x 8
# Each series of a plot differs from the others in its dashes and its marker: 6 dash patterns and
# 7 markers give 42 distinct pairs, and 6 distinct lines where markers are off.
LINESTYLES = ["-", "--", "-.", ":", (0, (6, 1.5)), (0, (3, 1, 1, 1, 1, 1))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
HATCHES = ["", "//", "..", "\\\\", "xx", "oo"]   # bars and filled histograms, likewise


def _pyplot():
    import matplotlib.pyplot as plt  # imported lazily: importing helpers stays cheap
    return plt


def small_enough_to_annotate(shape):
    """True when a map of this shape is at most 8 x 8, so its numbers stay readable."""
    return len(shape) == 2 and max(shape) <= ANNOTATE_MAX_SIDE


def attention_heatmap(weights, keys=None, queries=None, ax=None, title=None, annotate=None,
                      cmap="Blues", vmax=1.0, colorbar=True):
    """Draw one attention map: ``weights[i, j]`` is how much query ``i`` attends to key ``j``.

    ``keys`` and ``queries`` are labels (tokens); ``annotate`` writes each weight in its cell
    (default: when the map is at most 8 x 8). The colour scale runs from 0 to ``vmax``.
    Returns the Axes.
    """
    plt = _pyplot()
    weights = np.asarray(weights, dtype=float)
    if weights.ndim == 1:
        weights = weights[None, :]
    if weights.ndim != 2:
        raise ValueError(f"attention_heatmap draws one 2-D map; got shape {weights.shape}")
    n_q, n_k = weights.shape
    for labels, count, side in [(keys, n_k, "keys (columns)"), (queries, n_q, "queries (rows)")]:
        if labels is not None and len(labels) != count:
            raise ValueError(f"attention_heatmap got {len(labels)} labels for the {side} of a map "
                             f"of shape {weights.shape}: are these weights the ones meant, and not "
                             f"transposed?")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.55 * n_k, 0.8 + 0.45 * n_q) if n_k <= 16 else (6, 5))
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(n_k), keys if keys is not None else range(n_k),
                  rotation=45 if keys is not None else 0, ha="right" if keys is not None else "center")
    ax.set_yticks(range(n_q), queries if queries is not None else range(n_q))
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = small_enough_to_annotate(weights.shape)
    if annotate:
        for i in range(n_q):
            for j in range(n_k):
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if weights[i, j] > 0.6 * vmax else "black")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def heatmap_grid(maps, titles=None, keys=None, queries=None, ncols=None, annotate=None, vmax=1.0,
                 colorbar=True):
    """Several attention maps side by side (heads, layers, before/after), one shared style.

    Every map uses the same colour scale, from 0 to ``vmax`` (``vmax=None``: the largest value of
    all the maps), and the figure has one colour bar for all of them. ``annotate`` writes the
    values in the cells (default: in each map that is at most 8 x 8). ``keys`` and ``queries``
    label every map alike, or give one label list per map (a list of lists, as long as ``maps``).
    Returns the Figure.
    """
    plt = _pyplot()
    maps = [np.asarray(m, dtype=float) for m in maps]
    if vmax is None:
        vmax = max(float(np.max(m)) for m in maps) or 1.0
    ncols = ncols or len(maps)
    nrows = int(np.ceil(len(maps) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols + 0.6, 3.0 * nrows), squeeze=False,
                             layout="constrained")
    for index, ax in enumerate(axes.flat):
        if index >= len(maps):
            ax.axis("off")
            continue
        attention_heatmap(maps[index], keys=_per_map(keys, index, len(maps)),
                          queries=_per_map(queries, index, len(maps)), ax=ax, annotate=annotate,
                          title=titles[index] if titles else None, colorbar=False, vmax=vmax)
    if colorbar and maps:
        fig.colorbar(axes.flat[0].images[0], ax=axes, shrink=0.8, label="weight")
    return fig


def _per_map(labels, index, count):
    """``labels`` for map ``index``: shared labels, or the index-th of one list per map."""
    if labels is not None and len(labels) == count and all(
            isinstance(item, (list, tuple)) for item in labels):
        return labels[index]
    return labels


def series_style(index, marker=True):
    """The dashes (and, with ``marker``, the marker) of the ``index``-th series of a plot, as
    keyword arguments of ``plot``: the first 6 series differ in their dashes, and the first 42 in
    their dashes or their marker."""
    style = {"linestyle": LINESTYLES[index % len(LINESTYLES)]}
    if marker:
        style["marker"] = MARKERS[index % len(MARKERS)]
    return style


def series_hatch(index):
    """The hatching of the ``index``-th series of bars or filled histograms, as keyword arguments
    of ``bar`` or ``hist``: the first 6 differ."""
    return {"hatch": HATCHES[index % len(HATCHES)]}


def curves(x, series, xlabel, ylabel, title=None, ax=None, logx=False, logy=False, marker="o",
           reference=None, legend_loc="best", bands=None):
    """Line plot of several named series against ``x`` (a dict name -> values).

    Each series has its own colour, dashes and, unless ``marker`` is None or "" (for dense curves),
    its own marker (:func:`series_style`). ``reference`` draws labelled horizontal lines
    (name -> y), e.g. chance level. ``bands`` shades, in a series' colour, the range between two
    curves (name -> (low, high)), e.g. the spread of many random draws around their median.
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.5))
    for index, (name, values) in enumerate(series.items()):
        line, = ax.plot(x, values, label=name, **series_style(index, marker=bool(marker)))
        if bands and name in bands:
            low, high = bands[name]
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    for name, y in (reference or {}).items():
        ax.axhline(y, color="grey", linestyle="--", linewidth=1)
        ax.annotate(name, (ax.get_xlim()[0], y), textcoords="offset points", xytext=(4, 3),
                    fontsize=8, color="grey")
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(series) > 1:
        ax.legend(frameon=False, loc=legend_loc)
    ax.grid(alpha=0.3)
    return ax


def bars(labels, values, ylabel, title=None, ax=None):
    """A bar chart with the value written on each bar."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.8 * len(labels), 3.2))
    rects = ax.bar(range(len(labels)), values, color="#4c72b0")
    ax.set_xticks(range(len(labels)), labels)
    ax.bar_label(rects, fmt="%.3g", fontsize=8)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


# ---------------------------------------------------------------- every figure in words

LISTED_ROWS = 16     # a larger map lists the largest value of its first 16 rows
LISTED_POINTS = 12   # more bars than this are a histogram, described by its range and peak
SYMBOLS = {"cdot": "·", "times": "×", "sqrt": "√", "sum": "Σ", "partial": "∂", "infty": "∞",
           "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "approx": "≈", "to": "→", "top": "ᵀ",
           "ldots": "…", "dots": "…", "|": "‖", "alpha": "α", "beta": "β", "gamma": "γ",
           "delta": "δ", "epsilon": "ε", "lambda": "λ", "mu": "μ", "sigma": "σ", "tau": "τ",
           "theta": "θ", "pi": "π"}


def plain(text):
    """Matplotlib's mathtext (``$\\|J\\|_F$``) as plain text a screen reader can say (``‖J‖_F``)."""
    text = str(text).replace("$", "")
    text = re.sub(r"\\(?:text|mathrm|operatorname|mathbf|mathit)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\[,;:! ]", " ", text)                          # TeX's spaces
    text = re.sub(r"\\([A-Za-z]+) ?|\\(\|)",                             # a command eats one space
                  lambda m: SYMBOLS.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "").replace("\\", "")).strip()


def _number(value):
    if abs(value) < 1e-12:   # rounding noise, as in a bin edge of -3.5e-18
        return "0"
    return f"{value:.3g}" if math.isfinite(value) else str(value)


def _tick_labels(axis, count):
    """The label of each of ``count`` integer positions along an axis (a map's rows or columns):
    the tick label at that position, or the position itself."""
    labels = [str(index) for index in range(count)]
    for position, tick in zip(axis.get_ticklocs(), axis.get_ticklabels()):
        index = int(round(float(position)))
        if 0 <= index < count and abs(position - index) < 1e-6 and tick.get_text():
            labels[index] = plain(tick.get_text())
    return labels


def _describe_map(ax, image, scale):
    """A heatmap: its size, what its rows and columns are, and its values (every value of a map
    small enough to be annotated, else the largest value of each row)."""
    values = np.ma.filled(np.ma.asarray(image.get_array(), dtype=float), np.nan)
    if values.ndim != 2:
        return "an image"
    n_rows, n_columns = values.shape
    rows, columns = _tick_labels(ax.yaxis, n_rows), _tick_labels(ax.xaxis, n_columns)
    low, high = image.get_clim()
    text = (f"a map of {n_rows} rows ({plain(ax.get_ylabel()) or 'rows'}: {', '.join(rows)}) by "
            f"{n_columns} columns ({plain(ax.get_xlabel()) or 'columns'}: {', '.join(columns)}), "
            f"shaded from {_number(low)} to {_number(high)}{scale}")
    if small_enough_to_annotate(values.shape):   # as the cells write them
        listed = [f"row {row}: " + ", ".join(f"{column} {v:.2f}"
                                             for column, v in zip(columns, values[i]))
                  for i, row in enumerate(rows)]
        return text + ". Values, " + "; ".join(listed)
    listed = []
    for i, row in enumerate(rows[:LISTED_ROWS]):
        if np.isfinite(values[i]).any():
            j = int(np.nanargmax(values[i]))
            listed.append(f"{row} at {columns[j]} ({_number(values[i, j])})")
    more = f"; rows after the first {LISTED_ROWS} not listed" if n_rows > LISTED_ROWS else ""
    return text + ". Largest value of each row: " + "; ".join(listed) + more


def _trend(x, y):
    """Where a series starts, ends, and peaks or dips between."""
    finite = np.isfinite(x) & np.isfinite(y)
    x, y = x[finite], y[finite]
    if len(y) == 0:
        return "no values"
    if len(y) == 1:
        return f"{_number(y[0])} at {_number(x[0])}"
    text = f"from {_number(y[0])} at {_number(x[0])} to {_number(y[-1])} at {_number(x[-1])}"
    top, bottom = int(np.argmax(y)), int(np.argmin(y))
    if 0 < top < len(y) - 1:
        text += f", highest {_number(y[top])} at {_number(x[top])}"
    if 0 < bottom < len(y) - 1:
        text += f", lowest {_number(y[bottom])} at {_number(x[bottom])}"
    return text


def _as_floats(values):
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _describe_lines(ax):
    """Each named line with its trend; unnamed horizontal and vertical lines as levels."""
    named, levels, others = [], [], 0
    for line in ax.get_lines():
        x, y = _as_floats(line.get_xdata()), _as_floats(line.get_ydata())
        if not line.get_visible() or x is None or y is None or len(y) == 0:
            continue
        label = line.get_label()
        if not label.startswith("_"):
            named.append(f"{plain(label)}, {_trend(x, y)}")
        elif len(y) == 2 and y[0] == y[1]:
            levels.append(f"a horizontal line at {_number(y[0])}")
        elif len(x) == 2 and x[0] == x[1]:
            levels.append(f"a vertical line at {_number(x[0])}")
        else:
            others += 1
    if others:
        levels.append(f"{others} unlabelled line{'s' if others > 1 else ''}")
    return named, levels


def _describe_bars(ax, container):
    patches = list(container.patches)
    name = next((label for label in (container.get_label(), patches[0].get_label())
                 if label and not label.startswith("_")), "") if patches else ""
    name = f" {plain(name)}" if name else ""
    if len(patches) > LISTED_POINTS:     # a histogram
        heights = np.array([p.get_height() for p in patches])
        peak = patches[int(np.argmax(heights))]
        return (f"histogram{name} of {len(patches)} bins from {_number(patches[0].get_x())} to "
                f"{_number(patches[-1].get_x() + patches[-1].get_width())}, tallest "
                f"{_number(heights.max())} at {_number(peak.get_x() + peak.get_width() / 2)}")
    ticks = list(zip(ax.get_xticks(), (plain(t.get_text()) for t in ax.get_xticklabels())))
    listed = []
    for patch in patches:
        centre = patch.get_x() + patch.get_width() / 2
        label = min(ticks, key=lambda tick: abs(tick[0] - centre))[1] if ticks else ""
        listed.append(f"{label or _number(centre)} {_number(patch.get_height())}")
    return f"bars{name}: " + ", ".join(listed)


def _describe_outlines(ax):
    """Step histograms (``histtype="step"``): their names, ranges and peaks."""
    from matplotlib.patches import Polygon
    described = []
    for patch in ax.patches:
        if isinstance(patch, Polygon) and not patch.get_label().startswith("_"):
            xy = np.asarray(patch.get_xy(), dtype=float)
            peak = int(np.argmax(xy[:, 1]))
            described.append(f"histogram outline {plain(patch.get_label())} from "
                             f"{_number(xy[:, 0].min())} to {_number(xy[:, 0].max())}, highest "
                             f"{_number(xy[peak, 1])} at {_number(xy[peak, 0])}")
    return described


def _axis(ax, which):
    axis = ax.xaxis if which == "x" else ax.yaxis
    label = plain(axis.get_label_text())
    if not label:
        return ""
    scale = (ax.get_xscale() if which == "x" else ax.get_yscale())
    return f"{which}: {label}" + (f" ({scale} scale)" if scale != "linear" else "")


def describe_axes(ax, scale=""):
    """One panel in words: its title, what it draws (maps, named lines with their trends, bars,
    histograms, points), its axes and any text written on it. ``scale`` names the colour bar."""
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    parts = []
    if ax.images:
        parts += [_describe_map(ax, image, scale) for image in ax.images]
    named, levels = _describe_lines(ax)
    if named:
        parts.append("lines: " + "; ".join(named))
    parts += [_describe_bars(ax, c) for c in ax.containers if isinstance(c, BarContainer)]
    parts += _describe_outlines(ax)
    for collection in ax.collections:
        if isinstance(collection, PathCollection):
            label = collection.get_label()
            label = "" if label.startswith("_") else f" ({plain(label)})"
            parts.append(f"{len(collection.get_offsets())} points{label}")
    if levels:
        parts.append("; ".join(levels))
    axes = [a for a in (_axis(ax, "x"), _axis(ax, "y")) if a] if not ax.images else []
    if axes:
        parts.append(", ".join(axes))
    if not ax.images:
        written = [plain(t.get_text()) for t in ax.texts if t.get_visible() and t.get_text()]
        if written:
            parts.append("text on it: " + ", ".join(written))
    title = plain(ax.get_title() or ax.get_title(loc="left") or ax.get_title(loc="right"))
    return (f"{title}: " if title else "") + (". ".join(parts) or "empty")


def describe_figure(fig):
    """The figure in words, for a reader who cannot see it: its title, then each panel
    (:func:`describe_axes`). Colour bars name the scale of the maps beside them."""
    colorbars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    scale = ", colour scale: " + ", ".join(plain(ax.get_ylabel() or ax.get_xlabel())
                                             for ax in colorbars) if any(
        ax.get_ylabel() or ax.get_xlabel() for ax in colorbars) else ""
    panels = [ax for ax in fig.axes if ax not in colorbars and ax.get_visible() and (
        ax.axison or ax.images or ax.lines or ax.patches or ax.collections or ax.texts)]
    suptitle = plain(fig.get_suptitle())
    parts = [f"Figure: {suptitle}." if suptitle else "Figure."]
    if len(panels) == 1:
        parts.append(describe_axes(panels[0], scale) + ".")
    else:
        parts.append(f"{len(panels)} panels.")
        parts += [f"Panel {k}, {describe_axes(ax, scale)}." for k, ax in enumerate(panels, 1)]
    return " ".join(parts)


def _show_figure(fig):
    """Display a figure as a PNG image whose alt text is the figure in words."""
    from IPython.core.pylabtools import print_figure
    from IPython.display import publish_display_data
    png = print_figure(fig, "png", base64=True, facecolor="white")  # legible on a dark theme too
    if not png:
        return   # nothing drawn
    text = describe_figure(fig)   # after drawing: tick labels are set
    publish_display_data({"text/html": f'<img src="data:image/png;base64,{png}" '
                                       f'alt="{html.escape(text)}">',
                          "text/plain": text})


def show_figures_in_words(shell=None):
    """Make the IPython kernel show every matplotlib figure through :func:`_show_figure`.

    JupyterLab shows a plain PNG output without alt text, so a screen reader announces an
    unlabelled image; an HTML image carries its alt text, in JupyterLab (trusted or not: its
    sanitiser keeps ``alt`` and ``data:`` images) and in every HTML page nbconvert makes of the
    notebook, feedback included. The text form of the output is the same description, for
    front ends that show text only. Outside a kernel (a terminal, a script) nothing changes.
    Returns True when installed.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "kernel"):
        return False
    shell.display_formatter.ipython_display_formatter.for_type_by_name(
        "matplotlib.figure", "Figure", _show_figure)
    return True
