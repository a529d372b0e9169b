"""Checks specific to 01-bottleneck: its helpers, the published numbers it quotes, and that the
effect its experiment teaches is robust (not an accident of one random seed)."""
import numpy as np
import pytest

from autograder.engine import reference
from helpers import bottleneck
from support import COURSE

ASSIGNMENT = "01-bottleneck"
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])


def test_random_tokens_and_one_hot(assignment):
    tokens = bottleneck.random_tokens(50, 7, 5, np.random.default_rng(0))
    assert tokens.shape == (50, 7) and tokens.dtype.kind == "i"
    assert tokens.min() >= 0 and tokens.max() <= 4
    again = bottleneck.random_tokens(50, 7, 5, np.random.default_rng(0))
    assert np.array_equal(tokens, again), "randomness must come only from the rng argument"
    hot = bottleneck.one_hot(tokens, 5)
    assert hot.shape == (50, 7, 5) and hot.dtype == np.float64
    assert np.array_equal(hot.sum(-1), np.ones((50, 7)))
    assert np.array_equal(hot.argmax(-1), tokens)


def test_echo_state_weights(assignment):
    W_xh, W_hh, b_h = bottleneck.echo_state_weights(8, 20, np.random.default_rng(1),
                                                    spectral_radius=0.7)
    assert W_xh.shape == (8, 20) and W_hh.shape == (20, 20) and b_h.shape == (20,)
    assert np.isclose(np.max(np.abs(np.linalg.eigvals(W_hh))), 0.7)


def test_published_numbers(assignment):
    # Bahdanau et al. (2015), Table 1, "All" column, as the curriculum quotes them.
    assert bottleneck.BAHDANAU_2015_TABLE1["RNNencdec-50"] == 17.82
    assert bottleneck.BAHDANAU_2015_TABLE1["RNNsearch-50"] == 26.75
    # Fig. 2, read approximately: the fixed-vector model collapses with length, attention does not
    fig2 = bottleneck.BAHDANAU_2015_FIG2
    lengths, encdec, search = (np.array(fig2[k]) for k in ("sentence length", "RNNencdec-50",
                                                            "RNNsearch-50"))
    assert len(lengths) == len(encdec) == len(search) and np.all(np.diff(lengths) > 0)
    assert encdec[-1] < encdec.max() / 2 and search[-1] > 0.9 * search.max()
    assert np.all(search >= encdec)


def test_bottleneck_effect_is_robust(assignment):
    """On several seeds: the final state forgets early tokens of long sequences, the state
    written when a token arrived does not."""
    ns = reference.namespace(COURSE.assignment(assignment))
    rnn_encode, fit_readout, recall_accuracy = (ns[k] for k in ("rnn_encode", "fit_readout",
                                                                "recall_accuracy"))
    V, n_train, n_test, T, d_h = 8, 500, 300, 32, 32
    for seed in range(3):
        rng = np.random.default_rng(seed)
        tokens = bottleneck.random_tokens(n_train + n_test, T, V, rng)
        H = rnn_encode(bottleneck.one_hot(tokens, V), *bottleneck.echo_state_weights(V, d_h, rng))

        def accuracy(features, i):
            W = fit_readout(features[:n_train], bottleneck.one_hot(tokens[:n_train, i], V))
            return recall_accuracy(features[n_train:], W, tokens[n_train:, i])

        assert accuracy(H[:, -1], 0) < 0.25            # first token from h_T: near chance (1/8)
        assert accuracy(H[:, -1], T - 1) > 0.95         # last token from h_T: recalled
        assert min(accuracy(H[:, i], i) for i in (0, T // 2, T - 1)) > 0.95   # token i from h_i


def test_beside_bahdanau_draws(assignment):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure = bottleneck.beside_bahdanau([2, 4, 8], [1.0, 0.7, 0.4], [1.0, 1.0, 1.0], chance=0.125)
    left, right = figure.axes[:2]
    assert len(right.get_lines()) == 2 and not right.patches     # curves against length, no bars
    assert "approximate" in right.get_title()
    assert list(right.get_lines()[0].get_xdata()) == list(
        bottleneck.BAHDANAU_2015_FIG2["sentence length"])
    assert len(left.get_lines()) >= 2
    plt.close(figure)
