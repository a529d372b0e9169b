"""helpers.language, the grammar as a probability distribution (11-transformer-block): its exact
next-token probabilities are a distribution, match what the grammar's own sampler produces, and its
entropy floor matches a Monte Carlo estimate computed from the words alone.
"""
import math

import numpy as np
import pytest
from helpers import grammar, language
from helpers import language_model as lm

ASSIGNMENT = "11-transformer-block"
ID = [ASSIGNMENT]  # test ids carry the assignment, so `-k 11-transformer-block` selects them

# The distributions tested: notebook 10 and 11's training text, and make_sentence's defaults.
LANGUAGES = {"nested 0-3": lambda: language.Language(),
             "make_sentence(max_depth=2, p_modifier=0.5)":
                 lambda: language.Language(depths=(2,), p_modifier=0.5),
             "nested 1-2, attractors same": lambda: language.Language(depths=(1, 2), attractors="same")}


@pytest.fixture(params=list(LANGUAGES), ids=lambda name: f"{ASSIGNMENT}-{name}")
def case(request):
    """(the Language, 4000 sentences drawn by the grammar's own sampler)."""
    made = LANGUAGES[request.param]()
    return made, made.sample(np.random.default_rng(11), 4000)


def prefixes(sentences, limit=400):
    """Distinct prefixes of sampled sentences (the empty one included), in a fixed order."""
    found = {}
    for sentence in sentences:
        for t in range(len(sentence.words) + 1):
            found.setdefault(sentence.words[:t], None)
            if len(found) >= limit:
                return list(found)
    return list(found)


def test_next_word_probabilities_are_distributions(case):
    language_, sentences = case
    for prefix in prefixes(sentences):
        p = language_.next_word_probabilities(prefix)
        assert all(value > 0 for value in p.values()), prefix
        assert math.isclose(sum(p.values()), 1.0, abs_tol=1e-12), (prefix, sum(p.values()))
        assert set(p) <= set(lm.VOCAB) - {lm.PAD, lm.START}, set(p) - set(lm.VOCAB)


def test_the_sampler_follows_the_exact_probabilities(case):
    """The grammar's own sampler produces the exact probabilities: only tokens of positive
    probability ever occur, and after every prefix it produced at least 200 times (in 20000
    sentences) the next tokens' chi-square statistic stays within 6 standard deviations of its
    degrees of freedom."""
    language_, _ = case
    sentences = language_.sample(np.random.default_rng(12), 20000)
    seen = {}
    for sentence in sentences:
        tokens = sentence.words + (lm.END,)
        for t in range(len(tokens)):
            counts = seen.setdefault(sentence.words[:t], {})
            counts[tokens[t]] = counts.get(tokens[t], 0) + 1
    tested = 0
    for prefix, counts in seen.items():
        exact = language_.next_word_probabilities(prefix)
        assert set(counts) <= set(exact), (prefix, set(counts) - set(exact))
        n = sum(counts.values())
        if n < 200 or len(exact) < 2:
            continue
        statistic = sum((counts.get(w, 0) - n * p) ** 2 / (n * p) for w, p in exact.items())
        freedom = len(exact) - 1
        assert statistic < freedom + 6 * math.sqrt(2 * freedom), (prefix, statistic, freedom)
        tested += 1
    assert tested >= 20, tested


def test_sampled_sentences_have_their_probability_as_a_product(case):
    language_, sentences = case
    for sentence in sentences[:200]:
        log_p = language_.log_probabilities(sentence)
        assert log_p.shape == (len(sentence) + 1,) and np.all(log_p <= 1e-12)
        assert abs(log_p[-1]) < 1e-12    # the end is certain once the sentence is complete
        assert math.isclose(math.exp(log_p.sum()), language_.sentence_probability(sentence.words),
                            rel_tol=1e-9)
        assert language_.accepts(sentence.words) and language_.accepts(sentence.words + (lm.END,))
        assert language_.prefix_probability(sentence.words[:3]) >= language_.sentence_probability(
            sentence.words)


def test_the_floor_equals_a_monte_carlo_estimate(case):
    """The exact entropy per token, computed from the rules as the entropy of the choices, equals
    the mean of -ln P(sentence) (P computed from the words alone) over sampled sentences, per token:
    the grammar is unambiguous, and both sides describe the same distribution."""
    language_, sentences = case
    minus_log = np.array([-language_.log_probabilities(s).sum() for s in sentences])
    tokens = np.array([len(s) + 1 for s in sentences])
    standard_error = minus_log.std() / math.sqrt(len(sentences))
    assert abs(minus_log.mean() - language_.sentence_entropy()) < 4 * standard_error
    assert abs(tokens.mean() - 1 - language_.mean_length()) < 4 * tokens.std() / math.sqrt(len(tokens))
    ratio = minus_log.sum() / tokens.sum()
    assert abs(ratio - language_.entropy_per_token()) < 0.03, (ratio, language_.entropy_per_token())


@pytest.mark.parametrize("assignment", ID)
def test_the_floor_of_the_training_text(assignment):
    """Notebook 11's floor: about 1.54 nats per token, the mean entropy of the next token."""
    language_ = language.Language()
    assert 1.5 < language_.entropy_per_token() < 1.6
    sentences = language_.sample(np.random.default_rng(5), 300)
    batch = lm.make_batch(sentences)
    P = language_.next_word_matrix(sentences)
    entropy = language.entropy(P)
    assert abs(entropy[batch["real"]].mean() - language_.entropy_per_token()) < 0.05


@pytest.mark.parametrize("assignment", ID)
def test_next_word_matrix_lines_up_with_the_batch_targets(assignment):
    language_ = language.Language()
    sentences = language_.sample(np.random.default_rng(6), 50)
    batch = lm.make_batch(sentences)
    P = language_.next_word_matrix(sentences)
    assert P.shape == batch["targets"].shape + (lm.N_VOCAB,)
    assert np.allclose(P.sum(axis=-1), batch["real"])
    on_target = np.take_along_axis(P, batch["targets"][..., None], axis=-1)[..., 0]
    assert np.all(on_target[batch["real"]] > 0) and np.all(P[~batch["real"]] == 0)
    assert np.all(P[:, :, [lm.PAD_ID, lm.START_ID]] == 0)
    # the last real position of every sentence predicts the end, for sure
    last = batch["real"].sum(axis=1) - 1
    assert np.allclose(P[np.arange(len(sentences)), last, lm.END_ID], 1.0)


@pytest.mark.parametrize("assignment", ID)
def test_what_the_grammar_does_not_produce(assignment):
    language_ = language.Language()
    wrong_number = "the cat that chased the mice were hungry".split()
    assert language_.sentence_probability(wrong_number) == 0.0 and not language_.accepts(wrong_number)
    open_clause = "the cat that the mouse was hungry".split()
    assert not language_.accepts(open_clause)
    assert not language_.accepts("the cat that chased the mouse".split())   # not finished
    assert not language_.accepts("cat the".split())
    too_deep = grammar.nested_sentence(np.random.default_rng(0), 4)       # deeper than 0..3
    assert grammar.parse(too_deep.words) is not None and not language_.accepts(too_deep.words)
    with pytest.raises(ValueError):
        language_.next_word_probabilities("the the".split())
    with pytest.raises(ValueError):
        language_.next_word_probabilities(["the", lm.END, "cat"])
    with pytest.raises(ValueError):
        language.Language(depths=(1, 2), p_modifier=0.5)
    with pytest.raises(ValueError):
        language.Language(attractors="most")


@pytest.mark.parametrize("assignment", ID)
def test_the_probabilities_the_notebook_explains(assignment):
    language_ = language.Language()
    after_that = language_.next_word_probabilities("the cat that".split())
    assert math.isclose(after_that["the"], 0.30 / 0.65)
    assert math.isclose(sum(after_that.values()) - after_that["the"], 0.35 / 0.65)
    assert language_.next_word_probabilities(()) == {"the": 1.0}
    assert set(language_.next_word_probabilities("the cat that chased the mouse was".split())) == {
        "hungry", "tired", "happy"}


@pytest.mark.parametrize("assignment", ID)
def test_entropy_counts_zero_log_zero_as_zero(assignment):
    P = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    with np.errstate(all="raise"):
        assert np.allclose(language.entropy(P), [math.log(2), 0.0, 0.0])


def test_the_rules_of_every_symbol_are_a_distribution(case):
    """Every symbol reachable from a sentence rewrites with probabilities that sum to 1."""
    language_, _ = case
    todo, done = [("sentence",)], set()
    while todo:
        symbol = todo.pop()
        if symbol in done:
            continue
        done.add(symbol)
        rules = language_.rules(symbol)
        assert math.isclose(sum(p for p, _ in rules), 1.0, abs_tol=1e-12), symbol
        todo += [part for _, produced in rules for part in produced if not isinstance(part, str)]
    assert len(done) > 20
