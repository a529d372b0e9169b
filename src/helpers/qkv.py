"""Toy data and figures of notebook 03, queries, keys and values.

- :func:`word_vector` / :func:`word_vectors` turn words into unit vectors of letter pairs, so that a
  dot product measures how alike two spellings are (a key that a misspelled query can still match);
- :func:`toy_regression` draws the one-dimensional regression data of the Nadaraya-Watson section;
- :func:`plot_fits` draws training points, the true curve and several fitted curves on one axis;
- :func:`call_cleanly` calls a function as the grader does: no numpy warning, no input changed,
  nothing printed.

Attention maps are not drawn here: they go through :func:`helpers.plots.attention_heatmap`.
"""
import numpy as np

from .plots import series_style

_SYMBOLS = "^$abcdefghijklmnopqrstuvwxyz"   # ^ and $ mark the start and end of a word
_INDEX = {c: i for i, c in enumerate(_SYMBOLS)}
WORD_DIM = len(_SYMBOLS) ** 2


def word_vector(word):
    """A unit vector of shape ``(WORD_DIM,)`` counting the letter pairs of ``word``.

    The word is lower-cased and framed as ``^word$``, so ``"cat"`` has the pairs ``^c, ca, at, t$``.
    Characters other than a-z are dropped. Two words sharing most of their letter pairs have a dot
    product close to 1; words sharing none have a dot product of 0.
    """
    letters = "".join(c for c in str(word).lower() if c in _INDEX and c not in "^$")
    framed = "^" + letters + "$"
    vector = np.zeros(WORD_DIM)
    for a, b in zip(framed, framed[1:]):
        vector[_INDEX[a] * len(_SYMBOLS) + _INDEX[b]] += 1.0
    return vector / np.linalg.norm(vector)


def word_vectors(words):
    """Stack :func:`word_vector` of each word: shape ``(len(words), WORD_DIM)``."""
    return np.stack([word_vector(w) for w in words])


def true_function(x):
    """The curve the regression data is drawn around: ``sin(2x) + 0.4 x``."""
    x = np.asarray(x, dtype=float)
    return np.sin(2.0 * x) + 0.4 * x


def toy_regression(n, rng, noise=0.3, low=0.0, high=5.0):
    """``n`` noisy samples ``(x, y)`` of :func:`true_function`, ``x`` sorted in ``[low, high]``.

    Returns two arrays of shape ``(n,)``. ``rng`` is a ``numpy.random.Generator``.
    """
    x = np.sort(rng.uniform(low, high, size=n))
    y = true_function(x) + noise * rng.normal(size=n)
    return x, y


def plot_fits(x_train, y_train, x_grid, fits, truth=None, ax=None, title=None):
    """Training points, an optional true curve, and fitted curves (a dict label -> values on ``x_grid``)."""
    import matplotlib.pyplot as plt  # imported lazily: importing helpers stays cheap
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.scatter(x_train, y_train, s=14, color="grey", alpha=0.7, label="training points $(x_i, y_i)$",
               zorder=3)
    if truth is not None:   # solid black: the fits take the other dash patterns
        ax.plot(x_grid, truth, color="black", linewidth=1, label="true curve")
    for index, (label, values) in enumerate(fits.items(), start=1):
        ax.plot(x_grid, values, linewidth=1.6, label=label, **series_style(index, marker=False))
    ax.set_xlabel("x (query)")
    ax.set_ylabel("y")
    if title:
        ax.set_title(title)
    ax.legend(frameon=False, fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    return ax


def call_cleanly(function, *args, **kwargs):
    """Call ``function(*args, **kwargs)`` the way the grader does and return its result.

    Fails (:class:`helpers.checks.CheckFailed`) when the call emits a numpy warning (overflow,
    invalid value, division by zero; harmless underflow to 0 is allowed), changes one of its
    array arguments in place, or prints.
    """
    import contextlib
    import io
    import warnings
    from helpers.checks import fail
    inputs = list(args) + list(kwargs.values())
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else None for a in inputs]
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter("always")
        with np.errstate(all="warn", under="ignore"):
            result = function(*args, **kwargs)
    name = getattr(function, "__name__", "the function")
    if caught:
        fail(f"{name} emitted a warning: {caught[0].category.__name__}: {caught[0].message}. "
             f"Valid input must not produce warnings (an overflow in exp usually means the "
             f"maximum was not subtracted; an invalid value, a 0/0 or -inf minus -inf).")
    for number, (old, new) in enumerate(zip(before, inputs), start=1):
        if old is not None and not (np.shape(new) == old.shape
                                    and np.array_equal(new, old, equal_nan=True)):
            fail(f"{name} changed its input argument number {number} in place; work on a copy "
                 f"instead (for example `Q = Q / s` rather than `Q /= s`).")
    if printed.getvalue().strip():
        fail(f"{name} printed {printed.getvalue().strip()[:60]!r}; graded functions must not "
             f"print (remove debugging prints).")
    return result
