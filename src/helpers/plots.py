"""Every figure of the course, so notebooks read like the prose and look alike.

One picture per idea: every attention map goes through :func:`attention_heatmap` (queries down the
side, keys along the top, weights written in the cells when the map is at most 8 x 8), and maps
shown side by side go through :func:`heatmap_grid`, which puts them on one colour scale with one
shared colour bar, so that the same shade means the same weight in every panel.
"""
import numpy as np

ANNOTATE_MAX_SIDE = 8  # write the weights in the cells of maps up to 8 x 8


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


def curves(x, series, xlabel, ylabel, title=None, ax=None, logx=False, logy=False, marker="o",
           reference=None, legend_loc="best", bands=None):
    """Line plot of several named series against ``x`` (a dict name -> values).

    ``reference`` draws labelled horizontal lines (name -> y), e.g. chance level. ``bands`` shades,
    in a series' colour, the range between two curves (name -> (low, high)), e.g. the spread of many
    random draws around their median.
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.5))
    for name, values in series.items():
        line, = ax.plot(x, values, marker=marker, label=name)
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
