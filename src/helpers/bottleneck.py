"""Toy data and figures of notebook 01 (the bottleneck).

- :func:`random_tokens` and :func:`one_hot`: sequences of token ids drawn uniformly from a small
  vocabulary, and their one-hot vectors (the inputs and the recall targets of the experiment).
- :func:`echo_state_weights`: the weights of a fixed, untrained recurrent encoder in the
  echo-state style (Jaeger, 2001): random recurrent weights rescaled to a chosen spectral radius.
- :data:`BAHDANAU_2015_TABLE1`, :data:`BAHDANAU_2015_FIG2` and :func:`beside_bahdanau`: the
  published BLEU scores we compare our measurements with (Table 1 exactly, the curves of Fig. 2
  approximately, as read from the figure), and the figure that puts them side by side.
"""
import numpy as np

from .plots import curves

__all__ = ["random_tokens", "one_hot", "echo_state_weights", "BAHDANAU_2015_TABLE1",
           "BAHDANAU_2015_FIG2", "beside_bahdanau"]

# Bahdanau, Cho and Bengio (2015), "Neural machine translation by jointly learning to align and
# translate", ICLR, Table 1: BLEU on the WMT'14 English-to-French test set, all sentences.
# The suffix is the longest training sentence (30 or 50 words). RNNencdec squeezes the source into
# one fixed vector; RNNsearch keeps one annotation per source word and attends over them.
BAHDANAU_2015_TABLE1 = {
    "RNNencdec-30": 13.93,
    "RNNsearch-30": 21.50,
    "RNNencdec-50": 17.82,
    "RNNsearch-50": 26.75,
}

# Bahdanau et al. (2015), Fig. 2: BLEU on the same test set against the length of the source
# sentence, for the two models trained on sentences of up to 50 words (RNNencdec-50 is labelled
# RNNenc-50 in the figure). The paper gives these curves only as a plot: the values below are
# APPROXIMATE, read off the figure by eye at every tenth sentence length (to within about 2 BLEU).
# They show the shape of the effect, not numbers to quote.
BAHDANAU_2015_FIG2 = {
    "sentence length": (10, 20, 30, 40, 50, 60),
    "RNNencdec-50": (20, 21, 18, 14, 10, 8),
    "RNNsearch-50": (24, 27, 27, 27, 26, 25),
}


def random_tokens(n, T, vocab_size, rng):
    """``n`` sequences of ``T`` token ids, each drawn uniformly from ``0 .. vocab_size - 1``.

    Returns an int array of shape ``(n, T)``. ``rng`` is a ``numpy.random.Generator``.
    """
    return rng.integers(0, vocab_size, size=(n, T))


def one_hot(labels, k):
    """One-hot float vectors: ``labels`` of shape ``(...)`` with values in ``0 .. k-1`` gives
    an array of shape ``(..., k)`` with a single 1 per vector."""
    labels = np.asarray(labels)
    return (labels[..., None] == np.arange(k)).astype(np.float64)


def echo_state_weights(d_in, d_h, rng, spectral_radius=0.95, input_scale=0.2, bias_scale=0.05):
    """Weights ``(W_xh, W_hh, b_h)`` of a fixed random recurrent encoder.

    ``W_hh`` is Gaussian, rescaled so that its largest eigenvalue modulus is ``spectral_radius``
    (below 1, the influence of an old input fades instead of blowing up); ``W_xh`` and ``b_h``
    are Gaussian with standard deviations ``input_scale`` and ``bias_scale``. Shapes:
    ``W_xh (d_in, d_h)``, ``W_hh (d_h, d_h)``, ``b_h (d_h,)``.
    """
    W_hh = rng.normal(size=(d_h, d_h))
    W_hh *= spectral_radius / np.max(np.abs(np.linalg.eigvals(W_hh)))
    W_xh = input_scale * rng.normal(size=(d_in, d_h))
    b_h = bias_scale * rng.normal(size=d_h)
    return W_xh, W_hh, b_h


def beside_bahdanau(lengths, fixed_vector, every_state, chance=None,
                    title="This notebook: mean recall accuracy"):
    """Our measurement (left) beside Bahdanau et al. (2015), Fig. 2 (right), in matching colours.

    ``fixed_vector`` and ``every_state`` hold one accuracy per entry of ``lengths``: recall from
    one fixed vector (red, like RNNencdec) and from every kept state (blue, like RNNsearch).
    ``chance`` draws the chance level. The right panel draws :data:`BAHDANAU_2015_FIG2`, BLEU
    against sentence length, labelled as approximate. Returns the Figure.
    """
    import matplotlib.pyplot as plt

    fixed_colour, kept_colour = "#c44e52", "#4c72b0"
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.6))
    curves(lengths, {"final state h_T (one fixed vector)": fixed_vector,
                     "targeted state h_i (every state kept)": every_state},
           "sequence length T", "recall accuracy (test)", title=title, ax=left, logx=True,
           reference={"chance": chance} if chance is not None else None)
    for line, colour in zip(left.get_lines(), (fixed_colour, kept_colour)):
        line.set_color(colour)
    left.legend(frameon=False, loc="center right")
    left.set_xticks(list(lengths), [str(t) for t in lengths])
    left.set_ylim(0, 1.05)

    sentence = BAHDANAU_2015_FIG2["sentence length"]
    curves(sentence, {"RNNencdec-50 (one fixed vector)": BAHDANAU_2015_FIG2["RNNencdec-50"],
                      "RNNsearch-50 (attention)": BAHDANAU_2015_FIG2["RNNsearch-50"]},
           "source sentence length (words)", "BLEU, WMT'14 En-Fr test",
           title="Bahdanau et al. (2015), Fig. 2 (approximate)", ax=right)
    for line, colour in zip(right.get_lines(), (fixed_colour, kept_colour)):
        line.set_color(colour)
        line.set_linestyle("--")
    right.legend(frameon=False, loc="lower left")
    right.set_ylim(0, 30)
    right.annotate("values read by eye from their Fig. 2 (±2 BLEU)", (0.02, 0.97),
                   xycoords="axes fraction", va="top", fontsize=8, color="dimgrey")
    fig.tight_layout()
    return fig
