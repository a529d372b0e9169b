"""helpers.alignment, the toy translation of 08-learning-to-attend: sentences, their known
alignment, the frozen encoder and what queries and keys read."""
import numpy as np
import pytest
from helpers import alignment, grammar

ASSIGNMENT = "08-learning-to-attend"
# Every test carries the assignment id so that `pytest -k 08-learning-to-attend` selects it.
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])

KIND = {**{w: "det" for w in alignment.DETERMINERS}, **{w: "noun" for w in alignment.NOUN_WORDS},
        **{w: "adj" for w in grammar.ADJECTIVES}, **{w: "verb" for w in grammar.CLAUSE_VERBS},
        **{w: "prep" for w in grammar.PREPOSITIONS}}


def translate_by_rule(source_words):
    """The target word order, written from the rule alone: in each noun phrase the noun moves
    right after the determiner and the adjectives follow it, last one first."""
    out, adjectives, in_phrase = [], [], False
    for word in source_words:
        kind = KIND[word]
        if kind == "det":
            out.append(word)
            in_phrase, adjectives = True, []
        elif kind == "adj":
            assert in_phrase, "an adjective outside a noun phrase"
            adjectives.append(word)
        elif kind == "noun":
            assert in_phrase, "a noun without its determiner"
            out.extend([word] + adjectives[::-1])
            in_phrase = False
        else:
            assert not in_phrase, "a noun phrase without its noun"
            out.append(word)
    return out


@pytest.mark.parametrize("length", [5, 6, 9, 10, 14, 21, 24, 33, 40])
def test_sentences_translations_and_alignments_agree_with_the_rule(assignment, length):
    batch = alignment.make_batch(40, length, np.random.default_rng(length))
    source, target, align = batch["source"], batch["target"], batch["alignment"]
    assert source.shape == target.shape == align.shape == batch["previous"].shape == (40, length)
    for row in range(40):
        words = alignment.words(source[row])
        assert [KIND[w] for w in words][:1] == ["det"] and KIND[words[-1]] == "noun"
        assert sorted(align[row]) == list(range(length)), "the alignment is not a permutation"
        assert alignment.words(target[row]) == translate_by_rule(words)
        # no adjective repeats inside a noun phrase
        phrase = []
        for word in words:
            phrase = [] if KIND[word] == "det" else phrase + [word] * (KIND[word] == "adj")
            assert len(phrase) == len(set(phrase))
    assert (target == np.take_along_axis(source, align, axis=1)).all()
    start = alignment.WORD_ID[alignment.START]
    assert (batch["previous"][:, 0] == start).all()
    assert (batch["previous"][:, 1:] == target[:, :-1]).all()


def test_alignment_is_monotone_only_without_adjectives(assignment):
    short = alignment.make_batch(20, 5, np.random.default_rng(0))
    assert (short["alignment"] == np.arange(5)).all()
    long = alignment.make_batch(200, 16, np.random.default_rng(1))
    reordered = (long["alignment"] != np.arange(16)).any(axis=1)
    assert reordered.mean() > 0.9
    # every reordering stays inside a noun phrase: a word moves by at most 2 positions
    assert np.abs(long["alignment"] - np.arange(16)).max() == 2


def test_batches_depend_only_on_the_generator(assignment):
    one = alignment.make_batch(8, 12, np.random.default_rng(5))
    two = alignment.make_batch(8, 12, np.random.default_rng(5))
    other = alignment.make_batch(8, 12, np.random.default_rng(6))
    assert all((one[k] == two[k]).all() for k in one)
    assert not (one["source"] == other["source"]).all()
    for bad in (alignment.MIN_LENGTH - 1, alignment.MAX_LENGTH + 1):
        with pytest.raises(ValueError, match="length must be between"):
            alignment.make_batch(2, bad, np.random.default_rng(0))


def test_guess_rate_is_one_over_the_size_of_each_words_kind(assignment):
    ids = [alignment.WORD_ID[w] for w in ("the", "cats", "old", "saw", "near")]
    sizes = [len(alignment.DETERMINERS), len(alignment.NOUN_WORDS), len(grammar.ADJECTIVES),
             len(grammar.CLAUSE_VERBS), len(grammar.PREPOSITIONS)]
    assert alignment.guess_rate(np.array(ids)) == pytest.approx(np.mean([1 / n for n in sizes]))
    assert sorted(w for kind in alignment.KINDS.values() for w in kind) == sorted(
        alignment.VOCAB[:-1])


def test_alignment_matrix_and_description(assignment):
    M = alignment.alignment_matrix(np.array([[0, 2, 1]]))
    assert M.shape == (1, 3, 3) and (M.sum(axis=-1) == 1).all()
    assert M[0, 1, 2] == 1 and M[0, 2, 1] == 1
    batch = alignment.make_batch(1, 6, np.random.default_rng(2))
    left, right = alignment.describe(batch).split("  ->  ")
    assert left.split() == alignment.words(batch["source"][0])
    assert right.split() == alignment.words(batch["target"][0])


def test_frozen_encoder_reads_both_directions(assignment):
    encoder = alignment.FrozenEncoder(np.random.default_rng(0), d_h=8)
    source = alignment.make_batch(3, 10, np.random.default_rng(1))["source"]
    H, final = encoder(source)
    assert H.shape == (3, 10, 16) and final.shape == (3, 16)
    assert np.array_equal(final[:, :8], H[:, -1, :8]) and np.array_equal(final[:, 8:], H[:, 0, 8:])
    changed = source.copy()
    changed[:, 6] = (source[:, 6] + 1) % (alignment.N_VOCAB - 1)     # another word at position 6
    H2, _ = encoder(changed)
    # the left-to-right half at word 5 has not read word 6 yet; the right-to-left half at word 7
    # has not read it either; both halves see it at word 6
    assert np.array_equal(H2[:, :6, :8], H[:, :6, :8])
    assert np.array_equal(H2[:, 7:, 8:], H[:, 7:, 8:])
    assert not np.isclose(H2[:, 6], H[:, 6]).all(axis=-1).any()
    same = alignment.FrozenEncoder(np.random.default_rng(0), d_h=8)(source)[0]
    assert np.array_equal(same, H)


def test_decoder_inputs_and_keys_carry_words_and_positions(assignment):
    previous = np.array([[alignment.WORD_ID[alignment.START], 3, 7]])
    X = alignment.decoder_inputs(previous)
    assert X.shape == (1, 3, alignment.N_VOCAB + alignment.D_POS)
    assert (X[0, :, :alignment.N_VOCAB].argmax(axis=-1) == previous[0]).all()
    assert np.allclose(X[0, :, :alignment.N_VOCAB].sum(axis=-1), 1.0)
    P = alignment.positions(3)
    assert np.allclose(X[0, :, alignment.N_VOCAB:], P)
    assert np.allclose((P[:, 0::2] ** 2 + P[:, 1::2] ** 2), 1.0)   # sine-cosine pairs
    H = np.ones((2, 3, 5))
    keys_in = alignment.with_positions(H)
    assert keys_in.shape == (2, 3, 5 + alignment.D_POS)
    assert np.allclose(keys_in[1, :, 5:], P) and (keys_in[..., :5] == 1).all()


@pytest.mark.parametrize("reads", ["attention", "final state"])
def test_init_params_shapes(assignment, reads):
    encoder = alignment.FrozenEncoder(np.random.default_rng(0), d_h=8)
    params = alignment.init_params(np.random.default_rng(1), encoder, reads, d_k=12, d_v=6,
                                   d_hidden=10)
    d_in = alignment.N_VOCAB + alignment.D_POS
    shapes = {"W_v": (16, 6), "W_1": (6 + d_in, 10), "b_1": (10,), "W_2": (10, alignment.N_VOCAB),
              "b_2": (alignment.N_VOCAB,)}
    if reads == "attention":
        shapes.update(W_q=(d_in, 12), W_k=(16 + alignment.D_POS, 12))
    assert {k: v.shape for k, v in params.items()} == shapes


def test_queries_and_keys_start_with_unit_variance(assignment):
    encoder = alignment.FrozenEncoder(np.random.default_rng(0))
    params = alignment.init_params(np.random.default_rng(1), encoder, d_k=256)
    batch = alignment.make_batch(64, 15, np.random.default_rng(2))
    H, _ = encoder(batch["source"])
    Q = alignment.decoder_inputs(batch["previous"]) @ params["W_q"]
    K = alignment.with_positions(H) @ params["W_k"]
    assert 0.7 < Q.var() < 1.4 and 0.7 < K.var() < 1.4
    with pytest.raises(ValueError, match="reads must be"):
        alignment.init_params(np.random.default_rng(1), encoder, "everything")
