"""Toy data and one figure of notebook 02, alignment scores.

- :func:`toy_translation` builds encoder and decoder states for a tiny English -> French sentence
  pair, so that an alignment map made from them is easy to read;
- :func:`other_feature_space` re-expresses decoder states in another basis and size, the situation
  where a plain dot product no longer works and Luong's ``general`` score does;
- :func:`score_cost` counts the floating-point operations and parameters of one call of each score;
- :func:`alignment_links` draws an alignment as lines between the words of the two sentences.

The states are built by hand, not trained. They imitate what a trained model's states come to
look like: the decoder state that is about to produce a French word resembles the encoder state of
the English word it translates. Attention maps are not drawn here: they go through
:func:`helpers.plots.attention_heatmap`.
"""
import numpy as np

SOURCE = ("the", "black", "cat", "saw", "a", "white", "mouse", "<eos>")
TARGET = ("le", "chat", "noir", "a", "vu", "une", "souris", "blanche", "<eos>")
# For each French word, the position of the English word it translates ("a vu" both come from "saw").
ALIGNMENT = (0, 2, 1, 3, 3, 4, 6, 5, 7)


def toy_translation(d=16, sharpness=4.0, context=0.3, noise=0.1, seed=0):
    """Hand-built states of the sentence pair ``SOURCE`` -> ``TARGET``.

    Each English word gets its own "meaning" direction, a unit vector of size ``d`` orthogonal to
    the others. An encoder state is its word's meaning plus ``context`` times the meanings of its
    two neighbours (a recurrent encoder mixes in context the same way). The decoder state about to
    produce a French word is ``sharpness`` times the meaning of the English word it translates, plus
    a little noise.

    Returns a dict with ``H`` (T_enc, d), ``S`` (T_dec, d), the token lists ``source`` and
    ``target``, and ``alignment`` (for each French word, the index of its English word).
    """
    rng = np.random.default_rng(seed)
    n = len(SOURCE)
    if d < n:
        raise ValueError(f"d must be at least {n} so that every word gets its own direction")
    meanings = np.linalg.qr(rng.normal(size=(d, n)))[0].T          # (n, d), orthonormal rows
    padded = np.vstack([np.zeros(d), meanings, np.zeros(d)])
    H = padded[1:-1] + context * (padded[:-2] + padded[2:])
    S = sharpness * (meanings[list(ALIGNMENT)] + noise * rng.normal(size=(len(TARGET), d)) / np.sqrt(d))
    return {"H": H, "S": S, "source": list(SOURCE), "target": list(TARGET),
            "alignment": list(ALIGNMENT)}


def other_feature_space(S, d_s, seed=1):
    """Decoder states written in another basis of another size: ``(S @ R.T, R)``.

    ``R`` has shape ``(d_s, d)``: each new state is ``R s``. With ``d_s != d`` a dot product between
    these states and the encoder states is not even defined; with ``d_s == d`` it is defined but
    compares unrelated features.
    """
    S = np.asarray(S, dtype=float)
    R = np.random.default_rng(seed).normal(size=(d_s, S.shape[-1])) / np.sqrt(S.shape[-1])
    return S @ R.T, R


def score_cost(T, d_s, d_h, d_a):
    """Floating-point operations and parameters of one call of each score, for ``T`` encoder states.

    A matrix-vector product of an (m, n) matrix costs 2 m n operations (m n multiplications, about
    as many additions); an element-wise addition or tanh costs one operation per entry. Returns a
    dict: name -> (flops, parameters). ``dot`` needs ``d_s == d_h``; its entry is None otherwise.
    """
    costs = {
        "dot": (2 * T * d_h, 0) if d_s == d_h else None,
        # q = s^T W once (2 d_s d_h), then T dot products of length d_h
        "general": (2 * d_s * d_h + 2 * T * d_h, d_s * d_h),
        # W1 s once, W2 h_i for every i, T x d_a additions, T x d_a tanh, then T dot products with v
        "additive": (2 * d_a * d_s + 2 * T * d_a * d_h + 2 * T * d_a + 2 * T * d_a,
                     d_a * (d_s + d_h + 1)),
    }
    return costs


def alignment_links(weights, source, target, ax=None, threshold=0.05, title=None):
    """Draw an alignment as lines from each target word (bottom) to the source words (top).

    A line's width and darkness grow with the weight; weights below ``threshold`` are not drawn.
    ``weights`` has shape ``(len(target), len(source))``. Returns the Axes.
    """
    import matplotlib.pyplot as plt
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(target), len(source)):
        raise ValueError(f"weights should have shape {(len(target), len(source))}, "
                         f"got {weights.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.75 * max(len(source), len(target)), 2.4))
    xs = np.linspace(0.0, 1.0, len(source))
    xt = np.linspace(0.0, 1.0, len(target))
    for t in range(len(target)):
        for i in range(len(source)):
            w = weights[t, i]
            if w >= threshold:
                ax.plot([xt[t], xs[i]], [0.0, 1.0], color="#1f4e8c", alpha=min(1.0, 0.15 + w),
                        linewidth=0.5 + 4.0 * w, solid_capstyle="round")
    for x, word in zip(xs, source):
        ax.text(x, 1.06, word, ha="center", va="bottom", fontsize=10)
    for x, word in zip(xt, target):
        ax.text(x, -0.06, word, ha="center", va="top", fontsize=10)
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.35, 1.35)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
