"""A toy translation whose right alignment is known, for notebook 08 (learning to align).

The source language puts adjectives before their noun; the target language puts them after it, in
reverse order, the way French turns "European Economic Area" into "zone économique européenne"
(Bahdanau et al., 2015, Fig. 3)::

    my old grey cat saw the dog near your owls
    my cat grey old saw the dog near your owls

Every target word is a copy of one source word, so the alignment is known exactly:
``alignment[t]`` is the source position of target word ``t``. It is monotone except inside noun
phrases with adjectives. Sentences follow ``NP verb NP (preposition NP)*`` with
``NP = determiner adjective{0,2} noun``; the words come from :mod:`helpers.grammar`.

Everything here is plain numpy and knows nothing about attention. The notebook's model calls the
learner's ``attention_forward`` / ``attention_backward`` between what these functions build:

- :func:`make_batch`: sentences of one length, their translations and alignments;
  :func:`guess_rate`, the accuracy of a decoder that knows the grammar but never reads the source;
- :class:`FrozenEncoder`: notebook 01's recurrent encoder, run in both directions with fixed random
  weights: the states ``H`` (one row per source word) and the final state;
- :func:`decoder_inputs`, :func:`with_positions`: what queries and keys are computed from;
- :func:`init_params`; :class:`Adam`, :func:`cross_entropy` and :func:`weight_grad` come from
  :mod:`helpers.recall`.
"""
import numpy as np

from .bottleneck import echo_state_weights
from .grammar import ADJECTIVES, CLAUSE_VERBS, NOUNS, PREPOSITIONS
from .recall import Adam, cross_entropy, weight_grad  # noqa: F401  (the notebook uses them from here)

DETERMINERS = ("the", "my", "your", "her")
NOUN_WORDS = tuple(word for pair in NOUNS for word in pair)
START = "<s>"            # the "previous word" of the first decoder step
VOCAB = DETERMINERS + NOUN_WORDS + ADJECTIVES + CLAUSE_VERBS + PREPOSITIONS + (START,)
N_VOCAB = len(VOCAB)
WORD_ID = {word: index for index, word in enumerate(VOCAB)}
MIN_LENGTH, MAX_LENGTH = 5, 40
D_POS = 16               # size of the position code appended to decoder inputs and keys


# ---------------------------------------------------------------- sentences and their alignment

def _sentence(length, draws):
    """One source sentence of ``length`` words and its alignment; ``draws`` yields floats in [0, 1)."""
    def pick(options):
        return options[int(next(draws) * len(options))]

    # NP verb NP (prep NP)*m has 5 + 3m words before adjectives; each of the m + 2 noun phrases
    # takes 0, 1 or 2 adjectives.
    fewest, most = max(0, -(-(length - 9) // 5)), (length - 5) // 3
    m = fewest + int(next(draws) * (most - fewest + 1))
    slots = sorted(range(2 * (m + 2)), key=lambda _: next(draws))[: length - 5 - 3 * m]
    adjectives = [sum(1 for s in slots if s // 2 == k) for k in range(m + 2)]
    words, alignment = [], []

    def noun_phrase(k):
        start, n_adj = len(words), adjectives[k]
        chosen = sorted(ADJECTIVES, key=lambda _: next(draws))[:n_adj]
        words.extend([pick(DETERMINERS)] + chosen + [pick(NOUN_WORDS)])
        # target order: determiner, noun, then the adjectives from the last to the first
        alignment.extend([start, start + n_adj + 1] + [start + j for j in range(n_adj, 0, -1)])

    def single(word):
        alignment.append(len(words))
        words.append(word)

    noun_phrase(0)
    single(pick(CLAUSE_VERBS))
    noun_phrase(1)
    for k in range(m):
        single(pick(PREPOSITIONS))
        noun_phrase(2 + k)
    return words, alignment


def make_batch(n, length, rng):
    """``n`` random sentences of exactly ``length`` words, with translations and alignments.

    Returns a dict of integer arrays, each of shape ``(n, length)``:
      ``"source"`` word ids of the sentences; ``"target"`` word ids of their translations;
      ``"alignment"`` the source position of each target word (``target = source[alignment]``);
      ``"previous"`` the decoder's previous word at each step: :data:`START`, then the target
      shifted by one (what the decoder reads when it is fed the right words, "teacher forcing").
    """
    if not MIN_LENGTH <= length <= MAX_LENGTH:
        raise ValueError(f"length must be between {MIN_LENGTH} and {MAX_LENGTH}, got {length}")
    draws = iter(rng.random(n * (4 * length + 16)).tolist())
    pairs = [_sentence(length, draws) for _ in range(n)]
    source = np.array([[WORD_ID[w] for w in words] for words, _ in pairs], dtype=np.int64)
    alignment = np.array([a for _, a in pairs], dtype=np.int64)
    target = np.take_along_axis(source, alignment, axis=1)
    previous = np.concatenate([np.full((n, 1), WORD_ID[START]), target[:, :-1]], axis=1)
    return {"source": source, "target": target, "alignment": alignment, "previous": previous}


def alignment_matrix(alignment, length=None):
    """The true alignment as weights: ``(..., T_out)`` positions give ``(..., T_out, T_in)`` with a 1
    at ``[t, alignment[t]]`` and 0 elsewhere (``T_in`` defaults to ``T_out``)."""
    alignment = np.asarray(alignment)
    length = alignment.shape[-1] if length is None else length
    return (alignment[..., None] == np.arange(length)).astype(np.float64)


KINDS = {"determiner": DETERMINERS, "noun": NOUN_WORDS, "adjective": ADJECTIVES,
         "verb": CLAUSE_VERBS, "preposition": PREPOSITIONS}
_KIND_SIZE = {WORD_ID[word]: len(members) for members in KINDS.values() for word in members}


def guess_rate(target):
    """Word accuracy of a decoder that never reads the source but always knows which kind of word
    comes next (:data:`KINDS`) and picks one word of that kind at random: the mean, over the target
    word ids ``target``, of 1 / (number of words of their kind)."""
    return float(np.mean([1.0 / _KIND_SIZE[int(i)] for i in np.ravel(target)]))


def words(ids):
    """The words of a row of word ids."""
    return [VOCAB[int(i)] for i in np.ravel(ids)]


def describe(batch, index=0):
    """One sentence and its translation as text."""
    return f"{' '.join(words(batch['source'][index]))}  ->  {' '.join(words(batch['target'][index]))}"


# ---------------------------------------------------------------- the frozen encoder

class FrozenEncoder:
    """A bidirectional recurrent encoder with fixed random weights (never trained).

    Each direction is the ``h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)`` of notebook 01, with
    echo-state weights (:func:`helpers.bottleneck.echo_state_weights`); one reads the sentence left
    to right, the other right to left. Calling it on word ids ``(n, T)`` returns ``(H, final)``:
    ``H`` ``(n, T, 2 d_h)``, row ``i`` the two directions' states at word ``i``, and ``final``
    ``(n, 2 d_h)``, the last state of each direction (after the last word, and after the first).
    """

    def __init__(self, rng, d_h=32):
        self.d_h = d_h
        self.forward_weights = echo_state_weights(N_VOCAB, d_h, rng)
        self.backward_weights = echo_state_weights(N_VOCAB, d_h, rng)

    @staticmethod
    def _run(X, W_xh, W_hh, b_h):
        h = np.zeros(X.shape[:-2] + (W_hh.shape[0],))
        states = []
        for t in range(X.shape[-2]):
            h = np.tanh(X[..., t, :] @ W_xh + h @ W_hh + b_h)
            states.append(h)
        return np.stack(states, axis=-2)

    def __call__(self, source):
        X = np.eye(N_VOCAB)[np.asarray(source)]
        forward = self._run(X, *self.forward_weights)
        backward = self._run(X[..., ::-1, :], *self.backward_weights)[..., ::-1, :]
        H = np.concatenate([forward, backward], axis=-1)
        final = np.concatenate([forward[..., -1, :], backward[..., 0, :]], axis=-1)
        return H, final


# ---------------------------------------------------------------- what queries and keys read

def positions(T, d=D_POS):
    """Sinusoidal position codes, ``(T, d)``: the encodings of Vaswani et al. (2017) built in
    notebook 06, with base 100 instead of 10000 (sentences here are short)."""
    angles = np.arange(T)[:, None] / 100.0 ** (np.arange(0, d, 2) / d)
    P = np.zeros((T, d))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P


def decoder_inputs(previous):
    """The decoder's input at every step, ``x_t = [onehot(previous word), position code of t]``:
    word ids ``(..., T)`` give ``(..., T, N_VOCAB + D_POS)``."""
    previous = np.asarray(previous)
    P = np.broadcast_to(positions(previous.shape[-1]), previous.shape + (D_POS,))
    return np.concatenate([np.eye(N_VOCAB)[previous], P], axis=-1)


def with_positions(H):
    """Encoder states with the position code of each word appended: ``(..., T, d)`` gives
    ``(..., T, d + D_POS)``. Keys are computed from these."""
    H = np.asarray(H)
    P = np.broadcast_to(positions(H.shape[-2]), H.shape[:-1] + (D_POS,))
    return np.concatenate([H, P], axis=-1)


# ---------------------------------------------------------------- the model's weights

def init_params(rng, encoder, reads="attention", d_k=64, d_v=32, d_hidden=64):
    """Random starting weights of the toy translator.

    ``reads="attention"``: ``W_q (N_VOCAB + D_POS, d_k)``, ``W_k (2 d_h + D_POS, d_k)`` and
    ``W_v (2 d_h, d_v)``; ``reads="final state"``: ``W_v`` only (it maps the final state to the
    context). Both get the read-out ``W_1 (d_v + N_VOCAB + D_POS, d_hidden)``, ``b_1 (d_hidden,)``,
    ``W_2 (d_hidden, N_VOCAB)``, ``b_2 (N_VOCAB,)``.

    ``W_q`` and ``W_k`` are scaled so that each component of a query or a key has a variance of
    about 1 at the start, the assumption behind the 1/sqrt(d_k) of notebook 04. The other weights
    have a variance of 1 / (number of inputs).
    """
    if reads not in ("attention", "final state"):
        raise ValueError(f"reads must be 'attention' or 'final state', got {reads!r}")
    d_state = 2 * encoder.d_h
    d_in = N_VOCAB + D_POS

    def fan_in(n_in, n_out):
        return rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)

    params = {"W_v": fan_in(d_state, d_v), "W_1": fan_in(d_v + d_in, d_hidden),
              "b_1": np.zeros(d_hidden), "W_2": fan_in(d_hidden, N_VOCAB), "b_2": np.zeros(N_VOCAB)}
    if reads == "attention":
        # mean squared length of a query input (one-hot + D_POS / 2 sine-cosine pairs) and of a key input
        query_norm2 = 1.0 + D_POS / 2
        sample = with_positions(encoder(make_batch(64, 12, rng)["source"])[0])
        key_norm2 = float(np.mean(np.sum(sample ** 2, axis=-1)))
        params["W_q"] = rng.standard_normal((d_in, d_k)) / np.sqrt(query_norm2)
        params["W_k"] = rng.standard_normal((d_state + D_POS, d_k)) / np.sqrt(key_norm2)
    return params
