"""helpers.language_model, the grammar of 05 as next-word prediction (10-learning-self-attention,
and 11 after it), and the grammar functions it rests on: sentences with exactly k attractors,
reading a sentence back, token ids, splits, padded batches, baselines, training and sampling."""
import numpy as np
import pytest
from helpers import grammar
from helpers import language_model as lm

ASSIGNMENT = "10-learning-self-attention"
# Every test carries the assignment id so that `pytest -k 10-learning-self-attention` selects it.
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])


@pytest.fixture(scope="module")
def splits():
    return lm.make_splits(np.random.default_rng(3), n_train=400, n_heldout=60, n_test=40)


# ---------------------------------------------------------------- the grammar's additions

@pytest.mark.parametrize("depth", [0, 1, 2, 3, 4, 6])
def test_nested_sentence_has_exactly_depth_attractors(assignment, depth):
    rng = np.random.default_rng(depth)
    for kind in ("any", "same", "opposite"):
        for _ in range(30):
            s = grammar.nested_sentence(rng, depth, attractors=kind)
            assert len(s.attractors) == depth == max(s.depth)
            assert s.pos[s.subject] == "noun" and s.depth[s.subject] == 0 == s.depth[s.verb]
            assert s.number[s.verb] == s.number[s.subject]
            numbers = {s.number[i] for i in s.attractors}
            if kind == "same":
                assert numbers <= {s.number[s.subject]}
            if kind == "opposite":
                assert s.number[s.subject] not in numbers
    with pytest.raises(ValueError):
        grammar.nested_sentence(rng, -1)


def test_parse_reads_back_every_generated_sentence_and_only_those(assignment):
    rng = np.random.default_rng(0)
    sentences = ([grammar.nested_sentence(rng, int(rng.integers(0, 6))) for _ in range(300)]
                 + grammar.generate_sentences(rng, 200, max_depth=3, p_modifier=0.7))
    for s in sentences:
        assert grammar.parse(str(s)) == s and grammar.parse(list(s.words)) == s
    s = grammar.example_sentence()
    assert grammar.parse(s.words) == s
    for broken in ["the cat that chased the mouse were hungry",     # the verb agrees with mouse
                   "the cat that chased the mouse",                 # no main verb
                   "the cat that the mouse was hungry",              # an open relative clause
                   "the cat sleeps hungry",                          # sleeps takes nothing after it
                   "the cat was hungry hungry", "cat was hungry", "", "the the cat was"]:
        assert grammar.parse(broken) is None, broken


def test_prefix_depths_are_the_depths_the_sentence_will_have(assignment):
    rng = np.random.default_rng(1)
    for _ in range(200):
        s = grammar.nested_sentence(rng, int(rng.integers(0, 5)))
        for k in range(len(s) + 1):
            assert grammar.prefix_depths(s.words[:k]) == list(s.depth[:k])
    assert grammar.prefix_depths("the cat that that owls".split()) == [0, 0, 1, 1, 1]
    assert grammar.prefix_depths(["owls", "the"]) == [0, 0]


# ---------------------------------------------------------------- ids and batches

def test_vocabulary_covers_the_grammar_once(assignment):
    assert len(set(lm.VOCAB)) == lm.N_VOCAB and lm.VOCAB[:3] == (lm.PAD, lm.START, lm.END)
    assert (lm.PAD_ID, lm.START_ID, lm.END_ID) == (0, 1, 2)
    for forms, after in grammar.MAIN_VERBS:
        assert lm.OTHER_FORM[lm.WORD_ID[forms[0]]] == lm.WORD_ID[forms[1]]
        assert lm.OTHER_FORM[lm.WORD_ID[forms[1]]] == lm.WORD_ID[forms[0]]
        assert all(word in lm.WORD_ID for word in after)
    words = [w for pair in grammar.NOUNS for w in pair] + list(grammar.ADJECTIVES + grammar.PREPOSITIONS
                                                                + grammar.CLAUSE_VERBS)
    assert all(word in lm.WORD_ID for word in words)


def test_batch_lines_up_inputs_targets_and_annotations(assignment, splits):
    sentences = splits["test"][2, "opposite"][:7] + splits["test"][0, "none"][:3]
    batch = lm.make_batch(sentences)
    B, T = batch["inputs"].shape
    assert (B, T) == (10, max(len(s) for s in sentences) + 1)
    for b, s in enumerate(sentences):
        n = len(s) + 1
        assert lm.words(batch["inputs"][b]) == [lm.START] + list(s.words)
        assert lm.words(batch["targets"][b]) == list(s.words) + [lm.END]
        assert batch["real"][b].sum() == n and not batch["real"][b, n:].any()
        assert (batch["targets"][b, n:] == lm.PAD_ID).all() and (batch["inputs"][b, n:] == lm.PAD_ID).all()
        assert list(batch["depth"][b, 1:n]) == [min(d, grammar.MAX_DEPTH) for d in s.depth]
        v = batch["verb"][b]
        assert batch["targets"][b, v] == batch["correct"][b] == lm.WORD_ID[s.words[s.verb]]
        assert batch["inputs"][b, v] == lm.WORD_ID[s.words[s.verb - 1]]   # the word before the verb
        assert lm.VOCAB[batch["inputs"][b, batch["subject"][b]]] == s.words[s.subject]
        assert batch["wrong"][b] == lm.OTHER_FORM[batch["correct"][b]]
        assert list(np.flatnonzero(batch["attractors"][b])) == [i + 1 for i in s.attractors]
    assert np.array_equal(lm.encode(sentences[0])[[0, -1]], [lm.START_ID, lm.END_ID])


def test_batches_visit_every_sentence_once_per_pass(assignment, splits):
    sentences = splits["heldout"]
    stream = lm.batches(sentences, 20, np.random.default_rng(0))
    seen = []
    for _ in range(len(sentences) // 20):
        batch = next(stream)
        assert batch["inputs"].shape[1] == batch["real"].sum(axis=1).max()   # trimmed
        seen += [" ".join(lm.words(row)[1:]) for row in batch["inputs"]]
    assert sorted(seen) == sorted(str(s) for s in sentences)


def test_splits_are_disjoint_and_split_as_promised(assignment, splits):
    texts = [str(s) for s in splits["train"] + splits["heldout"]]
    for (count, kind), sentences in splits["test"].items():
        texts += [str(s) for s in sentences]
        for s in sentences:
            assert len(s.attractors) == count
            numbers = {s.number[i] for i in s.attractors}
            assert kind == "none" if count == 0 else (
                numbers == {s.number[s.subject]} if kind == "same" else s.number[s.subject] not in numbers)
    for kind, sentences in splits["deeper"].items():
        texts += [str(s) for s in sentences]
        assert all(len(s.attractors) == lm.DEEPER > max(lm.TRAIN_DEPTHS) for s in sentences)
    assert len(texts) == len(set(texts)), "a sentence appears twice"
    assert set(splits["test"]) == {(0, "none")} | {(c, k) for c in (1, 2, 3) for k in ("same", "opposite")}
    depths = [len(s.attractors) for s in splits["train"]]
    assert set(depths) == set(lm.TRAIN_DEPTHS) and min(np.bincount(depths)) > len(depths) / 8
    again = lm.make_splits(np.random.default_rng(3), n_train=400, n_heldout=60, n_test=40)
    assert again["train"] == splits["train"] and again["deeper"] == splits["deeper"]
    tests_only = lm.make_splits(np.random.default_rng(3), n_train=0, n_heldout=0, n_test=5)
    assert tests_only["train"] == tests_only["heldout"] == [] and len(tests_only["test"][3, "same"]) == 5


def test_rules_agree_with_their_noun(assignment, splits):
    def agreement(logits, batch):
        rows = logits[np.arange(len(batch["verb"])), batch["verb"]]
        index = np.arange(len(rows))
        return np.mean(rows[index, batch["correct"]] > rows[index, batch["wrong"]])

    for (count, kind), sentences in splits["test"].items():
        batch = lm.make_batch(sentences)
        assert agreement(lm.rule_logits(batch, "first noun"), batch) == 1.0
        nearest = agreement(lm.rule_logits(batch, "nearest noun"), batch)
        assert nearest == (0.0 if kind == "opposite" else 1.0)
    with pytest.raises(ValueError, match="rule"):
        lm.rule_logits(batch, "last verb")


# ---------------------------------------------------------------- the model's pieces, training, sampling

def test_embed_and_its_backward(assignment, splits):
    params = lm.init_params(np.random.default_rng(0), d_model=6, d_k=3, depth=True)
    assert set(params) == {"E", "D", "W_q", "W_k", "W_v", "W_o", "b_o"}
    batch = lm.make_batch(splits["test"][1, "same"][:4])
    P = np.random.default_rng(1).normal(size=(40, 6))
    X = lm.embed(params, batch, P)
    T = batch["inputs"].shape[1]
    assert np.allclose(X, params["E"][batch["inputs"]] + P[:T] + params["D"][batch["depth"]])
    G = np.random.default_rng(2).normal(size=X.shape)
    grads = lm.embed_backward(params, batch, G)
    for name in ("E", "D"):       # the gradient of sum(G * X) over real positions, by finite differences
        expected = np.zeros_like(params[name])
        for index in np.ndindex(params[name].shape):
            bumped = {**params, name: params[name].copy()}
            bumped[name][index] += 1.0                      # X is linear in the tables
            expected[index] = np.sum((G * (lm.embed(bumped, batch, P) - X))[batch["real"]])
        assert np.allclose(grads[name], expected)
    assert "D" not in lm.embed_backward(lm.init_params(np.random.default_rng(0), 6, 3), batch, G)


def test_train_runs_adam_and_records(assignment):
    target = np.array([[1.0, -2.0], [0.5, 3.0]])
    params = {"W": np.zeros((2, 2))}
    loss_and_grads = lambda p, batch: (float(np.sum((p["W"] - target) ** 2)), {"W": 2 * (p["W"] - target)})
    calls = []
    history = lm.train(params, loss_and_grads, iter(lambda: None, 1), steps=300, lr=0.05,
                       record=lambda p: calls.append(1) or {"distance": float(np.abs(p["W"] - target).max())},
                       every=100)
    assert len(history["loss"]) == 300 and history["loss"][-1] < 1e-3 < history["loss"][0]
    assert history["step"] == [0, 100, 200, 300] == [100 * i for i in range(len(calls))]
    assert history["distance"][-1] < 0.05


def test_sample_writes_what_the_model_prefers_and_parse_judges_it(assignment):
    sentence = ["the", "cats", "that", "chased", "the", "dog", "are", "asleep"]
    script = [lm.WORD_ID[w] for w in sentence] + [lm.END_ID]

    def model(batch):                 # a model sure of the next word of `sentence`
        inputs = batch["inputs"]
        assert batch["real"].all() and batch["depth"].shape == inputs.shape
        logits = np.full(inputs.shape + (lm.N_VOCAB,), -30.0)
        logits[..., lm.PAD_ID] = logits[..., lm.START_ID] = 50.0   # never drawn, however likely
        for t in range(inputs.shape[1]):
            logits[:, t, script[min(t, len(script) - 1)]] = 30.0
        return logits

    written = lm.sample(model, np.random.default_rng(0), 5)
    assert written == [sentence] * 5 and lm.grammatical(written) == 1.0
    depths = lm.prefix_batch(np.array([[lm.START_ID] + script[:-1]]))["depth"][0]
    assert list(depths) == [0] + grammar.prefix_depths(sentence)
    assert lm.grammatical([sentence, sentence[:-2], ["the"]]) == pytest.approx(1 / 3)
    long = lm.sample(lambda batch: np.where(np.arange(lm.N_VOCAB) == lm.WORD_ID["the"], 50.0, 0.0)
                     * np.ones(batch["inputs"].shape + (1,)), np.random.default_rng(0), 3, max_length=6)
    assert all(len(words) == 6 for words in long)
