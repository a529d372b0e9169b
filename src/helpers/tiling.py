"""Figures of notebook 09 (memory-efficient attention).

Attention weights themselves are always drawn with :func:`helpers.plots.attention_heatmap`; this
module adds what is specific to the topic: the tiles of the score matrix drawn over such a map, and
the cost panels (peak memory and time against the sequence length or the block size), with guide
lines for the slopes a cost that grows like ``x`` or like ``x**2`` would have.
"""
import numpy as np

from .plots import LINESTYLES, attention_heatmap, curves

MIB = 2 ** 20


def _pyplot():
    import matplotlib.pyplot as plt  # imported lazily, as in helpers.plots
    return plt


def tiled_map(weights, block_size, ax=None, title=None, current=None, query_block=None,
              annotate=None):
    """An attention map with the key blocks of ``blockwise_attention`` drawn over it.

    Dashed vertical lines separate blocks of ``block_size`` keys; ``query_block`` (optional) adds
    horizontal lines for blocks of queries. ``current`` (a key-block index) outlines the one
    strip of scores that exists in memory while that block is processed. Returns the Axes.
    """
    weights = np.asarray(weights, dtype=float)
    n_q, n_k = weights.shape
    ax = attention_heatmap(weights, ax=ax, title=title, annotate=annotate,
                           keys=[f"k{j}" for j in range(1, n_k + 1)],
                           queries=[f"q{i}" for i in range(1, n_q + 1)])
    for edge in range(block_size, n_k, block_size):
        ax.axvline(edge - 0.5, color="#d62728", linestyle="--", linewidth=1.2)
    if query_block:
        for edge in range(query_block, n_q, query_block):
            ax.axhline(edge - 0.5, color="#d62728", linestyle="--", linewidth=1.2)
    if current is not None:
        from matplotlib.patches import Rectangle
        start = current * block_size
        width = min(block_size, n_k - start)
        ax.add_patch(Rectangle((start - 0.5, -0.5), width, n_q, fill=False, edgecolor="#d62728",
                               linewidth=3))
    return ax


def _guide(ax, x, anchor, power, label, linestyle):
    """A grey line through (x[0], anchor) growing like x**power."""
    x = np.asarray(x, dtype=float)
    ax.plot(x, anchor * (x / x[0]) ** power, color="grey", linestyle=linestyle, linewidth=1.2,
            label=label)


def cost_panels(x, memory, seconds, xlabel, title=None, guides=(2, 1), variable="T", levels=None):
    """Two log-log panels side by side: peak memory (MiB) and time (ms) against ``x``.

    ``memory`` and ``seconds`` map a name (e.g. "naive", "blockwise") to one value per entry of
    ``x``, in bytes and in seconds. ``guides`` lists powers p: a grey line for each shows how a
    cost growing like ``x**p`` would continue from the first point of the first series (compare
    the slopes, not the heights); ``variable`` names ``x`` in their labels. ``levels`` maps a name
    to a pair (bytes, seconds) drawn as horizontal reference lines in the two panels.
    Returns the Figure.
    """
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    mib = {name: np.asarray(v, dtype=float) / MIB for name, v in memory.items()}
    ms = {name: 1e3 * np.asarray(v, dtype=float) for name, v in seconds.items()}
    styles = {2: "--", 1: ":"}
    for index, (ax, series, ylabel) in enumerate(((left, mib, "peak memory (MiB)"),
                                                  (right, ms, "time (ms)"))):
        curves(x, series, xlabel, ylabel, ax=ax, logx=True, logy=True)
        first = next(iter(series.values()))
        for power in guides:
            label = f"grows like ${variable}$" if power == 1 else f"grows like ${variable}^{{{power}}}$"
            _guide(ax, x, first[0], power, label, styles.get(power, "-."))
        for k, (name, pair) in enumerate((levels or {}).items()):
            value = pair[index] / MIB if index == 0 else 1e3 * pair[index]
            # the two dash patterns no guide uses: a level never looks like a guide in greyscale
            ax.axhline(value, color=f"C{len(series) + k}", linewidth=1.2, label=name,
                       linestyle=LINESTYLES[4 + k % 2])
        ax.legend(frameon=False, fontsize=8)
    left.set_title("memory")
    right.set_title("time")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
