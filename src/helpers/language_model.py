"""The grammar of notebook 05 as a language model sees it, and the training loop of notebooks 10
and 11.

A language model reads a sentence one word at a time and, at every position, predicts the next
word. Each sentence of :mod:`helpers.grammar` becomes a row of token ids framed by a start and an
end token::

    inputs   <s>  the  cat  that  chased  the  mouse  was     hungry
    targets  the  cat  that chased the    mouse was   hungry  </s>

Input position ``p`` holds word ``p - 1`` (position 0 the start token) and its target is word
``p``: the main verb (word ``v``) is the target of input position ``v``, which holds the word just
before it. Rows of a batch are padded with :data:`PAD_ID` to the longest sentence; padded targets
are :data:`PAD_ID` too, and a loss must skip them.

Splits (:func:`make_splits`): training sentences nest 0 to ``MAX_DEPTH`` modifiers deep, so they
carry 0 to 3 attractors (:func:`helpers.grammar.nested_sentence`); every evaluation sentence is
different from every training sentence. The test set is split by attractor count and by whether
the attractors share the subject's number; the deeper set nests one level more than any training
sentence.

Everything here is plain numpy and knows nothing about attention: the notebooks' models call the
learner's functions between :func:`embed` and the read-out, and :func:`train` runs Adam on
whatever loss and gradients they return.
"""
import numpy as np

from . import grammar
from .recall import Adam, weight_grad  # noqa: F401  (the notebooks use them from here)

PAD, START, END = "<pad>", "<s>", "</s>"
_NOUN_FORMS = tuple(word for pair in grammar.NOUNS for word in pair)
_VERB_FORMS = tuple(word for forms, _ in grammar.MAIN_VERBS for word in forms)
_COMPLEMENTS = tuple(dict.fromkeys(word for _, after in grammar.MAIN_VERBS for word in after
                                   if word not in grammar.ADJECTIVES))
#: Every token, in a fixed order: the three special tokens, then the grammar's words.
VOCAB = ((PAD, START, END, "the", "that") + grammar.ADJECTIVES + _NOUN_FORMS + grammar.PREPOSITIONS
         + grammar.CLAUSE_VERBS + _VERB_FORMS + _COMPLEMENTS)
N_VOCAB = len(VOCAB)
WORD_ID = {word: index for index, word in enumerate(VOCAB)}
PAD_ID, START_ID, END_ID = WORD_ID[PAD], WORD_ID[START], WORD_ID[END]
#: Whether each noun form is plural, by token id.
_PLURAL = {WORD_ID[word]: k % 2 == 1 for k, word in enumerate(_NOUN_FORMS)}
#: The other form of each main verb: ``OTHER_FORM[WORD_ID["was"]] == WORD_ID["were"]``.
OTHER_FORM = {WORD_ID[a]: WORD_ID[b] for forms, _ in grammar.MAIN_VERBS
              for a, b in (forms, forms[::-1])}
#: Depth values the depth feature tells apart (0 to MAX_DEPTH; deeper words share the last).
N_DEPTHS = grammar.MAX_DEPTH + 1
#: Attractor counts of the training sentences, and the nesting of the deeper test set.
TRAIN_DEPTHS = tuple(range(grammar.MAX_DEPTH + 1))
DEEPER = grammar.MAX_DEPTH + 1


# ---------------------------------------------------------------- sentences as token ids

def encode(sentence):
    """Token ids of a sentence framed by start and end: shape ``(len(sentence) + 2,)``."""
    return np.array([START_ID] + [WORD_ID[w] for w in sentence.words] + [END_ID], dtype=np.int64)


def words(ids):
    """The tokens of a row of ids, padding left out."""
    return [VOCAB[int(i)] for i in np.ravel(ids) if int(i) != PAD_ID]


def make_batch(sentences):
    """Arrays for a list of sentences, padded to the longest (``T = longest + 1`` positions).

    Returns a dict of arrays, ``B = len(sentences)``:

    - ``"inputs"`` ``(B, T)`` int: the start token then the words, then :data:`PAD_ID`;
    - ``"targets"`` ``(B, T)`` int: the words then the end token (the next token of each input
      position), then :data:`PAD_ID`;
    - ``"real"`` ``(B, T)`` bool: True at the positions that hold a token (not padding);
    - ``"depth"`` ``(B, T)`` int: nesting depth of each input token, clipped at ``MAX_DEPTH``
      (0 for the start token and for padding);
    - ``"subject"`` ``(B,)``: the input position of the subject's head noun;
    - ``"verb"`` ``(B,)``: the input position whose target is the main verb (it holds the word
      just before the verb);
    - ``"attractors"`` ``(B, T)`` bool: True at the input positions of the nouns between the
      subject and the verb;
    - ``"correct"``, ``"wrong"`` ``(B,)``: the token ids of the verb form that agrees with the
      subject and of the other form.
    """
    sentences = list(sentences)
    if not sentences:
        raise ValueError("make_batch needs at least one sentence")
    B, T = len(sentences), max(len(s) for s in sentences) + 1
    batch = {"inputs": np.full((B, T), PAD_ID), "targets": np.full((B, T), PAD_ID),
             "real": np.zeros((B, T), dtype=bool), "depth": np.zeros((B, T), dtype=np.int64),
             "attractors": np.zeros((B, T), dtype=bool)}
    for b, sentence in enumerate(sentences):
        ids, n = encode(sentence), len(sentence) + 1
        batch["inputs"][b, :n] = ids[:-1]
        batch["targets"][b, :n] = ids[1:]
        batch["real"][b, :n] = True
        batch["depth"][b, 1:n] = np.minimum(sentence.depth, grammar.MAX_DEPTH)
        batch["attractors"][b, [i + 1 for i in sentence.attractors]] = True
    batch["subject"] = np.array([s.subject + 1 for s in sentences])
    batch["verb"] = np.array([s.verb for s in sentences])
    batch["correct"] = np.array([WORD_ID[s.words[s.verb]] for s in sentences])
    batch["wrong"] = np.array([OTHER_FORM[c] for c in batch["correct"]])
    return batch


def batches(sentences, batch_size, rng):
    """Endless minibatches of ``batch_size`` sentences (as :func:`make_batch`): the sentences in
    a random order, reshuffled after every pass; each batch is padded to its own longest
    sentence."""
    whole = make_batch(sentences)
    lengths = whole["real"].sum(axis=1)
    while True:
        order = rng.permutation(len(lengths))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            rows = order[start:start + batch_size]
            T = lengths[rows].max()
            yield {key: value[rows, :T] if value.ndim == 2 else value[rows]
                   for key, value in whole.items()}


# ---------------------------------------------------------------- splits

def _sentences(rng, n, depths, attractors, exclude):
    """``n`` distinct sentences with depths drawn from ``depths``, none of whose text is in
    ``exclude`` (which then holds theirs too)."""
    found = []
    for _ in range(200 * n):
        if len(found) == n:
            break
        sentence = grammar.nested_sentence(rng, int(rng.choice(depths)), attractors=attractors)
        if str(sentence) not in exclude:
            exclude.add(str(sentence))
            found.append(sentence)
    if len(found) < n:
        raise ValueError(f"could not find {n} new sentences of depth {depths} ({attractors})")
    return found


def make_splits(rng, n_train=3000, n_heldout=300, n_test=200):
    """Training and evaluation sentences, no sentence in two places.

    Returns a dict:

    - ``"train"``: ``n_train`` sentences, each nesting 0 to ``MAX_DEPTH`` modifiers deep,
      attractors of either number. Each draw takes its depth uniformly, but a sentence drawn
      again is drawn anew, so short sentences are rarer than that: only 720 sentences without a
      modifier exist, and at the defaults about one training sentence in nine has none;
    - ``"heldout"``: ``n_heldout`` sentences drawn the same way, never seen in training;
    - ``"test"``: a dict ``(attractor count, kind) -> n_test sentences``: count 0 with kind
      ``"none"``, counts 1 to ``MAX_DEPTH`` with kind ``"same"`` (every attractor has the
      subject's number) or ``"opposite"`` (every attractor has the other number);
    - ``"deeper"``: a dict ``kind -> n_test sentences`` nesting ``DEEPER`` levels, one more than
      any training sentence, for kinds ``"same"`` and ``"opposite"``.

    Sentences are distinct within and across all splits.
    """
    seen = set()
    splits = {"train": _sentences(rng, n_train, TRAIN_DEPTHS, "any", seen),
              "heldout": _sentences(rng, n_heldout, TRAIN_DEPTHS, "any", seen),
              "test": {(0, "none"): _sentences(rng, n_test, (0,), "any", seen)}}
    for count in TRAIN_DEPTHS[1:]:
        for kind in ("same", "opposite"):
            splits["test"][count, kind] = _sentences(rng, n_test, (count,), kind, seen)
    splits["deeper"] = {kind: _sentences(rng, n_test, (DEEPER,), kind, seen)
                        for kind in ("same", "opposite")}
    return splits


def prefix_batch(inputs):
    """The batch of :func:`make_batch` for rows of token ids being written (the start token, then
    the tokens so far, no padding): ``"inputs"``, ``"real"`` (all True) and ``"depth"`` (from
    :func:`helpers.grammar.prefix_depths`, clipped at ``MAX_DEPTH``)."""
    inputs = np.asarray(inputs)
    depth = np.zeros(inputs.shape, dtype=np.int64)
    for b, row in enumerate(inputs):
        depth[b, 1:] = np.minimum(grammar.prefix_depths([VOCAB[i] for i in row[1:]]), grammar.MAX_DEPTH)
    return {"inputs": inputs, "real": np.ones(inputs.shape, dtype=bool), "depth": depth}


def sample(model, rng, n, max_length=40):
    """``n`` sentences written one token at a time, each token drawn from the model's softmax.

    ``model(batch)`` maps a batch of :func:`prefix_batch` (the start token, then the tokens
    written so far, ``(n, t)``) to logits ``(n, t, N_VOCAB)``; the last position's logits give the
    next token. A sentence ends at the end token or after ``max_length`` words. Returns a list of
    ``n`` lists of words (the end token left out).
    """
    inputs = np.full((n, 1), START_ID)
    done = np.zeros(n, dtype=bool)
    for _ in range(max_length + 1):                    # max_length words, then the end token
        logits = np.array(model(prefix_batch(inputs))[:, -1], dtype=float)
        logits[:, [PAD_ID, START_ID]] = -np.inf         # never written
        # the Gumbel-max trick: argmax(logits + Gumbel noise) is a draw from softmax(logits)
        token = np.argmax(logits - np.log(-np.log(rng.random(logits.shape))), axis=-1)
        token = np.where(done, PAD_ID, token)
        done |= token == END_ID
        inputs = np.concatenate([inputs, token[:, None]], axis=1)
        if done.all():
            break
    return [[VOCAB[i] for i in row[1:max_length + 1] if i not in (PAD_ID, END_ID)] for row in inputs]


def grammatical(sentences):
    """The fraction of sentences (lists of words) that :func:`helpers.grammar.parse` accepts."""
    return float(np.mean([grammar.parse(words) is not None for words in sentences]))


# ---------------------------------------------------------------- baselines

def rule_logits(batch, rule):
    """Logits ``(B, T, N_VOCAB)`` of a rule that never learns: at each row's verb position it
    prefers (logit 1, every other token 0) the verb form that agrees with one noun, elsewhere all
    zeros. ``rule``: ``"first noun"`` (the first noun of the sentence) or ``"nearest noun"`` (the
    last noun before the verb)."""
    if rule not in ("first noun", "nearest noun"):
        raise ValueError(f"rule must be 'first noun' or 'nearest noun', got {rule!r}")
    B, T = batch["inputs"].shape
    logits = np.zeros((B, T, N_VOCAB))
    for b in range(B):
        v, row = batch["verb"][b], batch["inputs"][b]
        nouns = [p for p in range(1, v + 1) if int(row[p]) in _PLURAL]
        noun = nouns[0] if rule == "first noun" else nouns[-1]
        agrees = _PLURAL[int(row[noun])] == _PLURAL[int(row[batch["subject"][b]])]
        logits[b, v, batch["correct"][b] if agrees else batch["wrong"][b]] = 1.0
    return logits


# ---------------------------------------------------------------- the one-layer model's pieces

def init_params(rng, d_model=32, d_k=16, depth=False):
    """Random starting weights of a one-layer language model.

    ``E (N_VOCAB, d_model)`` token embeddings; ``D (N_DEPTHS, d_model)`` depth embeddings, only
    with ``depth=True``; ``W_q``, ``W_k`` ``(d_model, d_k)`` and ``W_v`` ``(d_model, d_model)`` of
    the attention layer; ``W_o (d_model, N_VOCAB)`` and ``b_o (N_VOCAB,)`` of the read-out.
    Embeddings have entries of variance 1 / d_model; the matrices variance 1 / (number of inputs).
    """
    def fan_in(n_in, n_out):
        return rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)

    params = {"E": rng.standard_normal((N_VOCAB, d_model)) / np.sqrt(d_model),
              "W_q": fan_in(d_model, d_k), "W_k": fan_in(d_model, d_k),
              "W_v": fan_in(d_model, d_model), "W_o": fan_in(d_model, N_VOCAB),
              "b_o": np.zeros(N_VOCAB)}
    if depth:
        params["D"] = rng.standard_normal((N_DEPTHS, d_model)) / np.sqrt(d_model)
    return params


def embed(params, batch, P=None):
    """The layer's input ``X (B, T, d_model)``: the embedding of each token, plus ``P[:T]`` (a
    ``(T_max, d_model)`` position code, or None for none), plus the depth embedding of each token
    when ``params`` has ``"D"``."""
    X = params["E"][batch["inputs"]]
    if P is not None:
        X = X + P[: X.shape[-2]]
    if "D" in params:
        X = X + params["D"][batch["depth"]]
    return X


def embed_backward(params, batch, d_X):
    """Gradients of the embedding tables from ``d_X (B, T, d_model)``: a dict with ``"E"`` (and
    ``"D"`` when ``params`` has it). Each row collects the gradient of every position where its
    token (or depth) occurs; padding positions pass nothing back."""
    d_X = np.where(batch["real"][..., None], d_X, 0.0).reshape(-1, d_X.shape[-1])
    # one-hot rows times d_X: row w of the result sums d_X over the positions of token w
    grads = {"E": np.eye(len(params["E"]))[batch["inputs"].ravel()].T @ d_X}
    if "D" in params:
        grads["D"] = np.eye(len(params["D"]))[batch["depth"].ravel()].T @ d_X
    return grads


# ---------------------------------------------------------------- training

def train(params, loss_and_grads, batches, steps, lr=0.01, record=None, every=50):
    """Adam (Kingma & Ba, 2015) on ``params`` (a dict of arrays, updated in place).

    ``loss_and_grads(params, batch)`` returns ``(loss, grads)``, ``grads`` a dict with an array
    for every entry of ``params``; ``batches`` is an iterator of batches (:func:`batches`), one
    per step. ``record(params)``, if given, is called before the first step, every ``every``
    steps and after the last, and returns a dict of numbers to keep.

    Returns the history: ``"loss"``, the loss of every step, and, with ``record``, ``"step"``
    (the steps at which it was called) and one list per key it returns.
    """
    optimizer = Adam(params, lr=lr)
    history = {"loss": []}

    def keep(step):
        history.setdefault("step", []).append(step)
        for key, value in record(params).items():
            history.setdefault(key, []).append(value)

    for step in range(steps):
        if record is not None and step % every == 0:
            keep(step)
        loss, grads = loss_and_grads(params, next(batches))
        optimizer.step(params, grads)
        history["loss"].append(float(loss))
    if record is not None:
        keep(steps)
    return history
