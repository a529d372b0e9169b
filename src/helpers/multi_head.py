"""Toy data and figures of notebook 06, multi-head attention and positions.

- :func:`one_hot_sentence` turns a list of tokens into the readable features of the "heads with
  different jobs" experiment: ``[one-hot word | one-hot position | 1 | zeros]``;
- :func:`encoding_image` draws a position-by-dimension matrix (a positional encoding) with a
  diverging colour map, since its entries lie in [-1, 1];
- :func:`head_table` prints, for each position of a sentence, a short text per head.

Attention maps are not drawn here: they go through :func:`helpers.plots.attention_heatmap` and
:func:`helpers.plots.heatmap_grid`.
"""
import numpy as np


def one_hot_sentence(tokens, d_model):
    """Features of a sentence that a hand-built head can read exactly.

    Returns ``(X, vocab, layout)``: ``X`` of shape ``(T, d_model)`` whose row ``t`` is the
    concatenation of the one-hot vector of word ``tokens[t]`` (``len(vocab)`` entries), the one-hot
    vector of position ``t`` (``T`` entries), a constant 1 and zeros up to ``d_model``; ``vocab`` the
    distinct words in order of first appearance; ``layout`` a dict of the column slices
    ``"word"`` and ``"position"`` and the column index ``"one"``.
    """
    vocab = list(dict.fromkeys(tokens))
    T, V = len(tokens), len(vocab)
    if V + T + 1 > d_model:
        raise ValueError(f"d_model = {d_model} is too small for {V} words, {T} positions and a 1")
    X = np.zeros((T, d_model))
    X[np.arange(T), [vocab.index(w) for w in tokens]] = 1.0
    X[:, V:V + T] = np.eye(T)
    X[:, V + T] = 1.0
    layout = {"word": slice(0, V), "position": slice(V, V + T), "one": V + T}
    return X, vocab, layout


def encoding_image(P, ax=None, title=None, max_dims=None):
    """Draw ``P[pos, j]`` as an image: positions down the side, dimensions along the top.

    Red is +1, blue is -1. ``max_dims`` keeps only the first columns (the fast-turning ones).
    Returns the Axes.
    """
    import matplotlib.pyplot as plt  # imported lazily: importing helpers stays cheap
    P = np.asarray(P, dtype=float)
    if max_dims is not None:
        P = P[:, :max_dims]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    image = ax.imshow(P, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.set_xlabel("dimension j (columns 2i, 2i+1 share one frequency)")
    ax.set_ylabel("position")
    if title:
        ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def head_table(tokens, columns):
    """Print one row per position: the token, then one short text per named column.

    ``columns`` is a dict ``name -> list of texts`` (one text per position).
    """
    names = list(columns)
    widths = [max(len(n), *(len(str(v)) for v in columns[n])) for n in names]
    token_width = max(len("token"), *(len(t) for t in tokens))
    header = f"{'pos':>3}  {'token':<{token_width}}  " + "  ".join(
        f"{n:<{w}}" for n, w in zip(names, widths))
    print(header)
    print("-" * len(header))
    for t, token in enumerate(tokens):
        print(f"{t:>3}  {token:<{token_width}}  " + "  ".join(
            f"{str(columns[n][t]):<{w}}" for n, w in zip(names, widths)))
