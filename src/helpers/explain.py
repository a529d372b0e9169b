"""A tiny attention classifier we can read completely, its toy reviews, and two figures.

Notebook 07 asks what attention weights tell us about a model's decision. To answer with
measurements rather than impressions, it needs a model whose reasoning we know exactly. This
module builds one by hand.

The model contract
------------------
Every model in notebook 07 is a plain function

    model(x, weights=None) -> (prediction, weights)

- ``x``: the input, shape ``(T, d_model)``, one row per token (any ``T >= 1``).
- ``prediction``: class probabilities, shape ``(n_classes,)``, non-negative, summing to 1.
- ``weights``: the attention weights the model used, shape ``(T,)`` (one query attending over
  the ``T`` tokens), non-negative, summing to 1.
- Passing ``weights=w`` (shape ``(T,)``) **overrides** the attention: the model skips computing
  its own weights, uses ``w`` instead, and returns ``(prediction, w)``. Nothing else changes.

Calling a model never changes ``x`` or ``weights``.
"""
import functools

import numpy as np

from .plots import series_hatch

# Each token's embedding has two coordinates: [salience, sentiment].
# salience  -> how strongly the model's query matches the token (its attention score)
# sentiment -> the token's value: what it contributes to the decision if attended to
# The sink "." attracts attention but carries nothing; "avoid" and "must-see" are rarely attended
# to but carry a value large enough to decide the review on their own.
EMBEDDINGS = {
    "the": (0.0, 0.0), "a": (0.0, 0.0), "this": (0.0, 0.0),
    "movie": (0.5, 0.0), "film": (0.5, 0.0), "plot": (0.5, 0.0), "acting": (0.5, 0.0),
    "was": (0.0, 0.0), "is": (0.0, 0.0), "and": (0.0, 0.0), "really": (0.3, 0.0),
    "good": (2.0, 1.0), "great": (2.5, 1.5), "fun": (2.0, 1.0),
    "bad": (2.0, -1.0), "awful": (2.5, -1.5), "boring": (2.0, -1.0),
    "avoid": (0.0, -40.0), "must-see": (0.0, 40.0),
    ".": (3.0, 0.0),
}
CLASSES = ("negative", "positive")
D_MODEL = 2

# Parameters of the hand-built classifier (see attention_classifier).
W_SCORE = np.array([1.0, 0.0])             # query . key for each token = its salience
W_V = np.array([[0.0], [1.0]])             # value of each token = its sentiment (d_v = 1)
W_OUT = np.array([[-4.0, 4.0]])            # context -> logits of (negative, positive)
B_OUT = np.array([0.0, 0.0])


def _softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_classifier(x, weights=None, *, w_score, W_v, W_out, b_out, mix=0.0):
    """One query attends over the tokens of ``x``; a linear read-out of the context decides.

    x: (T, d_model). Scores ``s_i = x_i . w_score``; weights ``alpha = softmax(s)`` (or the
    ``weights`` given); values ``v_i = x_i W_v``, mixed with their mean when ``mix > 0``
    (``v_i <- (1 - mix) v_i + mix * mean_j v_j``, as if an encoder had spread information across
    positions); context ``c = sum_i alpha_i v_i``; prediction ``softmax(c W_out + b_out)``.
    Returns ``(prediction (n_classes,), weights (T,))``.
    """
    x = np.asarray(x, dtype=float)
    if weights is None:
        weights = _softmax(x @ w_score)
    else:
        weights = np.asarray(weights, dtype=float)
    values = x @ W_v
    values = (1.0 - mix) * values + mix * values.mean(axis=0)
    context = weights @ values
    return _softmax(context @ W_out + b_out), weights


def toy_model(mix=0.0):
    """The hand-built classifier as a model ``model(x, weights=None) -> (prediction, weights)``.

    ``mix=0``: each value is its own token's sentiment ("bag of words" values).
    ``mix=0.9``: each value is mostly the sentence's average sentiment ("contextual" values).
    """
    return functools.partial(attention_classifier, w_score=W_SCORE, W_v=W_V, W_out=W_OUT,
                             b_out=B_OUT, mix=float(mix))


def embed(tokens):
    """The ``(T, 2)`` input of a list of tokens."""
    return np.array([EMBEDDINGS[t] for t in tokens], dtype=float)


_SUBJECTS = ("movie", "film", "plot", "acting")
_OPINIONS = ("good", "great", "fun", "bad", "awful", "boring")


def toy_reviews(n, rng):
    """``n`` short reviews (lists of tokens) such as "the plot was great . avoid ."

    Each review has a subject, one or two opinion words, the sink "." and, in about a third of
    the reviews, a verdict ("avoid" or "must-see") that the model weighs heavily but attends to
    little. ``rng`` is a numpy Generator.
    """
    reviews = []
    for _ in range(n):
        tokens = [str(rng.choice(("the", "this"))), str(rng.choice(_SUBJECTS)),
                  str(rng.choice(("was", "is")))]
        if rng.random() < 0.3:
            tokens.append("really")
        tokens.append(str(rng.choice(_OPINIONS)))
        if rng.random() < 0.4:
            tokens += ["and", str(rng.choice(_OPINIONS))]
        tokens.append(".")
        if rng.random() < 0.35:
            tokens += [str(rng.choice(("avoid", "must-see"))), "."]
        reviews.append(tokens)
    return reviews


# ---------------------------------------------------------------- figures of notebook 07

def compare_bars(tokens, series, title=None, ax=None):
    """Grouped bars, one group per token: e.g. attention weight beside leave-one-out importance.

    ``series``: dict name -> values (one per token). Each series is scaled to a maximum of 1 so
    rankings can be compared by eye; the raw maximum is shown in the legend.
    """
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 + 0.75 * len(tokens), 3.2))
    width = 0.8 / max(len(series), 1)
    positions = np.arange(len(tokens))
    for k, (name, values) in enumerate(series.items()):
        values = np.asarray(values, dtype=float)
        top = values.max() if values.max() > 0 else 1.0
        ax.bar(positions + (k - (len(series) - 1) / 2) * width, values / top, width,
               label=f"{name} (max {top:.3g})", **series_hatch(k))
    ax.set_xticks(positions, tokens)
    ax.set_ylabel("share of the largest value")
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def histograms(samples, xlabel, title=None, bins=20, range=None, ax=None):
    """Overlaid histograms of several named samples (dict name -> 1-D values)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.2))
    for k, (name, values) in enumerate(samples.items()):
        values = np.asarray(values, dtype=float).ravel()
        ax.hist(values, bins=bins, range=range, alpha=0.55,
                label=f"{name} (median {np.median(values):.3g})", **series_hatch(k))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("count")
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title)
    return ax
