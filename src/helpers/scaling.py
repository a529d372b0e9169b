"""Figures of notebook 04 (the square-root-of-d_k saturation experiment).

Attention weights themselves are always drawn with :func:`helpers.plots.attention_heatmap`; this
module adds the pictures specific to the topic: histograms of raw scores, softmax rows beside their
Jacobians, the three panels of the saturation sweep, and the typical (not the mean) gradient.
"""
import numpy as np

from .plots import attention_heatmap, curves, series_style

#: Every entry of a softmax Jacobian lies in [-1/4, 1/4]: p_i (1 - p_i) <= 1/4 on the diagonal and
#: p_i p_j <= 1/4 off it. One fixed colour scale makes Jacobians comparable across figures.
JACOBIAN_LIMIT = 0.25


def _pyplot():
    import matplotlib.pyplot as plt  # imported lazily, as in helpers.plots
    return plt


def mark_levels(ax, levels):
    """Labelled horizontal reference lines (a dict label -> y), readable on linear and log axes."""
    transform = ax.get_yaxis_transform()  # x in axes fraction, y in data units
    for label, y in levels.items():
        ax.axhline(y, color="grey", linestyle="--", linewidth=1, zorder=0)
        ax.text(0.01, y, label, transform=transform, fontsize=8, color="grey",
                ha="left", va="bottom")
    return ax


def variance_plot(d_ks, variances, ax=None, title=None):
    """Measured Var(q·k) and Var(q·k / sqrt(d_k)) against d_k on log-log axes, beside the theory
    (the line d_k and the level 1)."""
    plt = _pyplot()
    d_ks = np.asarray(d_ks, dtype=float)
    variances = np.asarray(variances, dtype=float)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(d_ks, d_ks, linestyle="--", color="grey", linewidth=1, label="theory: $d_k$ and 1")
    ax.plot(d_ks, np.ones_like(d_ks), linestyle="--", color="grey", linewidth=1)
    ax.plot(d_ks, variances, marker="o", label=r"Var$(q\cdot k)$, measured")
    ax.plot(d_ks, variances / d_ks, marker="s",
            label=r"Var$(q\cdot k/\sqrt{d_k})$, measured")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("variance")
    if title:
        ax.set_title(title)
    ax.legend(frameon=False, fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def score_histograms(samples, ax=None, title=None, xlabel="score", bins=60):
    """Overlaid histograms (as densities) of several named samples: a dict label -> 1-D array."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.2))
    for index, (label, values) in enumerate(samples.items()):
        ax.hist(np.ravel(values), bins=bins, density=True, histtype="step", linewidth=1.6,
                label=label, linestyle=series_style(index)["linestyle"])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    if title:
        ax.set_title(title)
    ax.legend(frameon=False, fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def jacobian_heatmap(J, ax=None, title=None, keys=None, annotate=None, colorbar=True):
    """Draw one softmax Jacobian ``J[i, j] = d alpha_i / d s_j`` on a fixed diverging scale
    (red positive, blue negative, white zero). Returns the Axes."""
    plt = _pyplot()
    J = np.asarray(J, dtype=float)
    n = J.shape[-1]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 + 0.5 * n, 0.8 + 0.5 * n))
    image = ax.imshow(J, cmap="RdBu_r", vmin=-JACOBIAN_LIMIT, vmax=JACOBIAN_LIMIT)
    labels = keys if keys is not None else range(n)
    ax.set_xticks(range(n), labels)
    ax.set_yticks(range(n), labels)
    ax.set_xlabel("score $e_j$ nudged")
    ax.set_ylabel(r"weight $\alpha_i$ that moves")
    if title:
        ax.set_title(title, fontsize=10)
    if annotate is None:
        annotate = n <= 8
    if annotate:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{J[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(J[i, j]) > 0.6 * JACOBIAN_LIMIT else "black")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def rows_and_jacobians(rows, jacobians, titles, keys=None):
    """One column per softmax row: the row of weights on top (the course's attention heatmap),
    its Jacobian below with the Frobenius norm in the title. ``jacobians`` are computed by the
    caller (the notebook passes the learner's own ``softmax_jacobian``). Two colour scales, each
    with one colour bar: the weights (0 to 1) and the Jacobians (-1/4 to 1/4)."""
    plt = _pyplot()
    rows = [np.asarray(r, dtype=float) for r in rows]
    n = rows[0].shape[-1]
    fig, axes = plt.subplots(2, len(rows), figsize=(3.6 * len(rows) + 1.0, 1.4 + 0.45 * n),
                             gridspec_kw={"height_ratios": [1, n]}, squeeze=False,
                             layout="constrained")
    for column, (row, J, title) in enumerate(zip(rows, jacobians, titles)):
        top, bottom = axes[0, column], axes[1, column]
        attention_heatmap(row[None, :], keys=keys, queries=["α"], ax=top, title=title,
                          colorbar=False, annotate=True)
        top.set_xlabel("")
        top.set_ylabel("")
        norm = float(np.sqrt(np.sum(np.asarray(J, dtype=float) ** 2)))
        jacobian_heatmap(J, ax=bottom, keys=keys, colorbar=False,
                         title=f"Jacobian, $\\|J\\|_F$ = {norm:.3g}")
    fig.colorbar(axes[0, 0].images[0], ax=axes[0, :].tolist(), label="weight", aspect=5)
    fig.colorbar(axes[1, 0].images[0], ax=axes[1, :].tolist(), label=r"$\partial\alpha_i / \partial e_j$")
    return fig


def sweep_panels(d_ks, sweeps, n_keys, title=None):
    """The saturation sweep in three panels (max weight, entropy, gradient norm) against d_k.

    ``sweeps`` maps a label (e.g. "scaled") to a result of ``saturation_sweep``. Grey lines mark
    the two extremes: uniform weights over ``n_keys`` keys and a one-hot row.
    """
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.6))
    uniform = {"max_weight": 1.0 / n_keys, "entropy": np.log(n_keys),
               "grad_norm": np.sqrt(n_keys - 1) / n_keys}
    one_hot = {"max_weight": 1.0, "entropy": 0.0, "grad_norm": 0.0}
    labels = {"max_weight": "mean of the largest weight", "entropy": "mean entropy (nats)",
              "grad_norm": r"mean $\|J\|_F$ (gradient norm)"}
    for ax, key in zip(axes, ["max_weight", "entropy", "grad_norm"]):
        series = {label: np.asarray(result[key], dtype=float) for label, result in sweeps.items()}
        curves(np.asarray(d_ks), series, "$d_k$", labels[key], ax=ax, logx=True)
        levels = {"uniform row": uniform[key], "one-hot row": one_hot[key]}
        if key == "grad_norm":   # on a log scale, so that the fall of the mean stays visible
            ax.set_yscale("log")
            levels = {"uniform row": uniform[key]}
        mark_levels(ax, levels)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def gradient_panels(d_ks, norms, threshold=1e-3, title=None):
    """What a *typical* trial's gradient does, which a mean over trials hides.

    ``norms`` maps a label (e.g. "scaled") to a list, one array per d_k, of the Frobenius norms of
    the softmax Jacobian in every trial. Left: the median norm with the band from the 10th to the
    90th percentile, on a log scale. Right: the fraction of trials whose norm is below
    ``threshold`` (a row so saturated that it passes almost no gradient). Returns the Figure.
    """
    plt = _pyplot()
    d_ks = np.asarray(d_ks)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for index, (label, per_d_k) in enumerate(norms.items()):
        values = [np.asarray(v, dtype=float) for v in per_d_k]
        median = np.array([np.median(v) for v in values])
        low = np.array([np.percentile(v, 10) for v in values])
        high = np.array([np.percentile(v, 90) for v in values])
        line, = left.plot(d_ks, median, label=f"{label}: median", **series_style(index))
        left.fill_between(d_ks, low, high, color=line.get_color(), alpha=0.15,
                          label=f"{label}: 10th to 90th percentile")
        right.plot(d_ks, [np.mean(v < threshold) for v in values], label=label,
                   **series_style(index))
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("$d_k$")
    left.set_ylabel(r"$\|J\|_F$ of one trial")
    left.set_title("the typical gradient norm (log scale)")
    left.legend(frameon=False, fontsize=8, loc="lower left")
    left.grid(alpha=0.3)
    right.set_xscale("log", base=2)
    right.set_ylim(-0.02, 1.02)
    right.set_xlabel("$d_k$")
    right.set_ylabel(f"fraction of trials with $\\|J\\|_F < {threshold:g}$")
    right.set_title("rows that pass almost no gradient")
    right.legend(frameon=False, fontsize=8)
    right.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
