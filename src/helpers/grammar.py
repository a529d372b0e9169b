"""A toy English grammar for the subject-verb exercise of notebook 05 (self-attention).

Sentences have a subject noun phrase, one or more modifiers that put other nouns between the
subject and its verb, and a main verb that agrees with the subject in number::

    the cat that chased the mouse was hungry
    the keys near the old cabinet that the farmers saw are small
    the dogs that the fox near the owls followed sleep

The nouns between the subject and the verb are *attractors* (Linzen et al., 2016): a model that
links the verb to the nearest noun gets these sentences wrong.

Every word of a sentence becomes a vector of ``D_MODEL`` named features (:data:`FEATURES`):

- part of speech, one-hot: ``det``, ``adj``, ``noun``, ``rel`` (the word *that*), ``verb``, ``prep``;
- nesting depth, one-hot ``depth0`` ... ``depth3``: how many modifiers (relative clauses *that ...*
  and prepositional phrases *near the ...*) enclose the word. The subject, the main verb and the
  words around them have depth 0; every attractor sits at depth 1 or more;
- number: ``singular`` or ``plural`` for nouns and the main verb (0 for other words);
- ``lex0`` ... ``lex5``: a fixed pseudo-random code for the word itself, standing in for its
  meaning (the same word always gets the same code, a new word gets a new one).

The depth feature is given, not learned: it is the structural information a trained model has to
build for itself in its lower layers, handed over here so that one attention layer can use it.

Use :func:`generate_sentences` for data (:func:`nested_sentence` for exactly k attractors),
:func:`embed` for the matrix ``X`` of a sentence, :func:`verb_weights` and :func:`score_weights`
to see how a pair ``(W_q, W_k)`` does.
"""
import dataclasses
import functools
import zlib

import numpy as np

POS_TAGS = ("det", "adj", "noun", "rel", "verb", "prep")
MAX_DEPTH = 3
LEX_DIMS = 6
FEATURES = (POS_TAGS + tuple(f"depth{d}" for d in range(MAX_DEPTH + 1)) + ("singular", "plural")
            + tuple(f"lex{i}" for i in range(LEX_DIMS)))
D_MODEL = len(FEATURES)

#: Nouns as (singular, plural) pairs.
NOUNS = (("cat", "cats"), ("mouse", "mice"), ("dog", "dogs"), ("fox", "foxes"), ("owl", "owls"),
         ("farmer", "farmers"), ("key", "keys"), ("cabinet", "cabinets"))
ADJECTIVES = ("old", "small", "grey", "clever")
PREPOSITIONS = ("near", "behind", "beside", "with")
#: Verbs of relative clauses, in the past tense: they carry no number.
CLAUSE_VERBS = ("chased", "saw", "followed", "liked", "fed")
#: Main verbs as (singular, plural), each with the words that may follow it.
MAIN_VERBS = ((("was", "were"), ("hungry", "tired", "happy")),
              (("is", "are"), ("hungry", "asleep", "small")),
              (("sleeps", "sleep"), ()),
              (("seems", "seem"), ("happy", "tired")))


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One sentence with its annotations, one entry per word.

    ``pos`` holds part-of-speech tags (:data:`POS_TAGS`), ``depth`` nesting depths, ``number``
    ``"singular"``, ``"plural"`` or ``""``; ``subject`` and ``verb`` are the indices of the
    subject's head noun and of the main verb.
    """
    words: tuple
    pos: tuple
    depth: tuple
    number: tuple
    subject: int
    verb: int

    def __len__(self):
        return len(self.words)

    def __str__(self):
        return " ".join(self.words)

    @property
    def attractors(self):
        """Indices of the nouns between the subject and the main verb."""
        return tuple(i for i in range(self.subject + 1, self.verb) if self.pos[i] == "noun")


def feature(name):
    """The index of a feature by name, e.g. ``feature("noun")`` or ``feature("depth0")``."""
    try:
        return FEATURES.index(name)
    except ValueError:
        raise KeyError(f"no feature {name!r}; the features are {', '.join(FEATURES)}") from None


def lexical_code(word):
    """The fixed code of a word: LEX_DIMS numbers drawn from a generator seeded by the word."""
    return _lexical_code(word).copy()


@functools.lru_cache(maxsize=4096)
def _lexical_code(word):
    return np.random.default_rng(zlib.crc32(word.encode("utf-8"))).normal(0.0, 0.5, LEX_DIMS)


def embed(sentence):
    """The matrix X, shape (len(sentence), D_MODEL), whose row i is the feature vector of word i."""
    return _embedded(sentence).copy()


def _embedded(sentence):
    """embed(sentence), computed once per sentence: the result is shared, never to be written."""
    try:
        return _embedded_cached(sentence)
    except TypeError:  # a sentence built from lists cannot be a cache key: computed each time
        return _embed(sentence)


def _embed(sentence):
    X = np.zeros((len(sentence), D_MODEL))
    for i, word in enumerate(sentence.words):
        X[i, feature(sentence.pos[i])] = 1.0
        X[i, feature(f"depth{min(sentence.depth[i], MAX_DEPTH)}")] = 1.0
        if sentence.number[i]:
            X[i, feature(sentence.number[i])] = 1.0
        X[i, feature("lex0"):] = _lexical_code(word)
    return X


@functools.lru_cache(maxsize=4096)
def _embedded_cached(sentence):
    X = _embed(sentence)
    X.flags.writeable = False  # shared by every caller
    return X


def feature_table(sentence):
    """A small text table of a sentence's words and their structural features."""
    rows = [f"{'i':>2}  {'word':<10}{'pos':<6}{'depth':<7}number"]
    for i, word in enumerate(sentence.words):
        mark = "   <- subject" if i == sentence.subject else "   <- main verb" if i == sentence.verb else ""
        rows.append(f"{i:>2}  {word:<10}{sentence.pos[i]:<6}{sentence.depth[i]:<7}"
                    f"{sentence.number[i] or '-'}{mark}")
    return "\n".join(rows)


# ---------------------------------------------------------------- generating sentences

class _Builder:
    def __init__(self, rng, nouns, max_depth, p_modifier, attractors, subject_number):
        self.rng, self.nouns, self.max_depth = rng, tuple(nouns), max_depth
        self.p_modifier, self.attractors = p_modifier, attractors
        self.subject_number = subject_number
        self.words, self.pos, self.depth, self.number = [], [], [], []

    def add(self, word, pos, depth, number=""):
        self.words.append(word)
        self.pos.append(pos)
        self.depth.append(depth)
        self.number.append(number)
        return len(self.words) - 1

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def noun_number(self):
        if self.attractors == "same":
            return self.subject_number
        if self.attractors == "opposite":
            return "plural" if self.subject_number == "singular" else "singular"
        return self.pick(("singular", "plural"))

    def noun_phrase(self, depth, number, force_modifier=False):
        self.add("the", "det", depth)
        if self.rng.random() < 0.3:
            self.add(self.pick(ADJECTIVES), "adj", depth)
        singular, plural = self.pick(self.nouns)
        head = self.add(singular if number == "singular" else plural, "noun", depth, number)
        if depth < self.max_depth and (force_modifier or self.rng.random() < self.p_modifier):
            self.modifier(depth + 1)
        return head

    def modifier(self, depth):
        kind = self.rng.random()
        if kind < 0.35:                                     # near the owl
            self.add(self.pick(PREPOSITIONS), "prep", depth)
            self.noun_phrase(depth, self.noun_number())
        elif kind < 0.7:                                    # that chased the mouse
            self.add("that", "rel", depth)
            self.add(self.pick(CLAUSE_VERBS), "verb", depth)
            self.noun_phrase(depth, self.noun_number())
        else:                                               # that the mouse chased
            self.add("that", "rel", depth)
            self.noun_phrase(depth, self.noun_number())
            self.add(self.pick(CLAUSE_VERBS), "verb", depth)


def make_sentence(rng, nouns=NOUNS, max_depth=2, p_modifier=0.5, attractors="any"):
    """One random sentence whose subject carries at least one modifier (so at least one attractor).

    rng: numpy Generator. nouns: (singular, plural) pairs to draw from. max_depth: deepest
    nesting, 1 to 3. p_modifier: chance that a noun inside a modifier gets a modifier of its own.
    attractors: "any", "same" (every other noun has the subject's number) or "opposite".
    """
    if not 1 <= max_depth <= MAX_DEPTH:
        raise ValueError(f"max_depth must be between 1 and {MAX_DEPTH}, got {max_depth}")
    return _sentence(rng, nouns, max_depth, p_modifier, attractors)


def nested_sentence(rng, depth, nouns=NOUNS, attractors="any"):
    """One random sentence whose subject carries a chain of exactly ``depth`` nested modifiers.

    Each modifier holds one noun, so the sentence has exactly ``depth`` attractors; ``depth=0``
    gives a sentence without any (*the cat was hungry*). Any ``depth >= 0`` is allowed, deeper
    than :data:`MAX_DEPTH` too (:func:`embed` then clips the depth feature at ``MAX_DEPTH``).
    rng, nouns and attractors as in :func:`make_sentence`.
    """
    if depth < 0:
        raise ValueError(f"depth must be 0 or more, got {depth}")
    return _sentence(rng, nouns, depth, 1.0, attractors)


def _sentence(rng, nouns, max_depth, p_modifier, attractors):
    """A sentence whose subject gets a modifier when max_depth >= 1 (the rest as make_sentence)."""
    if attractors not in ("any", "same", "opposite"):
        raise ValueError(f"attractors must be 'any', 'same' or 'opposite', got {attractors!r}")
    number = ("singular", "plural")[int(rng.integers(2))]
    b = _Builder(rng, nouns, max_depth, p_modifier, attractors, number)
    subject = b.noun_phrase(0, number, force_modifier=True)
    (forms, complements) = b.pick(MAIN_VERBS)
    verb = b.add(forms[0] if number == "singular" else forms[1], "verb", 0, number)
    if complements:
        b.add(b.pick(complements), "adj", 0)
    return Sentence(tuple(b.words), tuple(b.pos), tuple(b.depth), tuple(b.number), subject, verb)


def generate_sentences(rng, n, nouns=NOUNS, max_depth=2, p_modifier=0.5, attractors="any"):
    """A list of ``n`` sentences from :func:`make_sentence` (same arguments)."""
    return [make_sentence(rng, nouns, max_depth, p_modifier, attractors) for _ in range(n)]


# ---------------------------------------------------------------- reading a sentence back

_NOUN_NUMBER = {word: number for pair in NOUNS for word, number in zip(pair, ("singular", "plural"))}
_MAIN_VERB = {word: (number, after) for forms, after in MAIN_VERBS
              for word, number in zip(forms, ("singular", "plural"))}


class _Parser:
    """Recursive descent over the grammar of :func:`make_sentence`. A modifier always belongs to
    the noun right before it, so one word of lookahead decides every step."""

    def __init__(self, words):
        self.words, self.i = list(words), 0
        self.pos, self.depth, self.number = [], [], []

    def peek(self):
        return self.words[self.i] if self.i < len(self.words) else None

    def take(self, allowed, pos, depth, number=""):
        word = self.peek()
        if word is None or word not in allowed:
            raise ValueError
        self.pos.append(pos)
        self.depth.append(depth)
        self.number.append(number or (_NOUN_NUMBER.get(word, "") if pos == "noun" else ""))
        self.i += 1
        return self.i - 1

    def noun_phrase(self, depth):
        self.take(("the",), "det", depth)
        if self.peek() in ADJECTIVES:
            self.take(ADJECTIVES, "adj", depth)
        head = self.take(_NOUN_NUMBER, "noun", depth)
        if self.peek() in PREPOSITIONS:
            self.take(PREPOSITIONS, "prep", depth + 1)
            self.noun_phrase(depth + 1)
        elif self.peek() == "that":
            self.take(("that",), "rel", depth + 1)
            if self.peek() in CLAUSE_VERBS:
                self.take(CLAUSE_VERBS, "verb", depth + 1)
                self.noun_phrase(depth + 1)
            else:
                self.noun_phrase(depth + 1)
                self.take(CLAUSE_VERBS, "verb", depth + 1)
        return head

    def sentence(self):
        subject = self.noun_phrase(0)
        number = self.number[subject]
        verb = self.take([w for w, (n, _) in _MAIN_VERB.items() if n == number], "verb", 0, number)
        after = _MAIN_VERB[self.words[verb]][1]
        if self.peek() is not None:
            self.take(after, "adj", 0)
        if self.peek() is not None:
            raise ValueError
        return Sentence(tuple(self.words), tuple(self.pos), tuple(self.depth), tuple(self.number),
                        subject, verb)


def parse(words):
    """The :class:`Sentence` of a list of words (or a string) if the grammar generates it, at any
    depth of nesting and with any number of modifiers on the subject (none included); None if it
    does not, for instance when the main verb disagrees with its subject or a clause is left open.
    """
    if isinstance(words, str):
        words = words.split()
    try:
        return _Parser(words).sentence()
    except (ValueError, IndexError):
        return None


def prefix_depths(words):
    """The nesting depth of each word of a sentence being written, as far as the grammar can tell
    from the words so far: for the start of a sentence the grammar generates, the depths that
    sentence will have. From the first word that does not fit the grammar on, every word gets the
    depth of the last word that did (0 if none did). Returns a list as long as ``words``."""
    parser = _Parser(words)
    try:
        parser.sentence()
    except (ValueError, IndexError):
        pass
    depths = parser.depth[: len(parser.words)]
    return depths + [depths[-1] if depths else 0] * (len(parser.words) - len(depths))


def example_sentence():
    """The sentence of the course's picture: *the cat that chased the mouse was hungry*."""
    return Sentence(words=("the", "cat", "that", "chased", "the", "mouse", "was", "hungry"),
                    pos=("det", "noun", "rel", "verb", "det", "noun", "verb", "adj"),
                    depth=(0, 0, 1, 1, 1, 1, 0, 0),
                    number=("", "singular", "", "", "", "singular", "singular", ""),
                    subject=1, verb=6)


# ---------------------------------------------------------------- scoring a design

def _check_weights(W_q, W_k):
    W_q = np.asarray(W_q, dtype=float)
    W_k = np.asarray(W_k, dtype=float)
    for name, W in (("W_q", W_q), ("W_k", W_k)):
        if W.ndim != 2 or W.shape[0] != D_MODEL:
            raise ValueError(f"{name} should have shape (D_MODEL, d_k) = ({D_MODEL}, d_k), "
                             f"but it has shape {W.shape}")
        if not np.isfinite(W).all():
            raise ValueError(f"{name} contains NaN or inf")
    if W_q.shape != W_k.shape:
        raise ValueError(f"W_q and W_k should have the same shape (D_MODEL, d_k), but they have "
                         f"shapes {W_q.shape} and {W_k.shape}")
    return W_q, W_k


def verb_weights(W_q, W_k, sentence):
    """The main verb's attention weights over the sentence, shape (len(sentence),).

    Scores are ``(x_verb W_q) . (x_j W_k) / sqrt(d_k)`` for every word j up to and including the
    verb (a causal mask hides the words after it, whose weights are 0); a softmax turns them
    into weights.
    """
    W_q, W_k = _check_weights(W_q, W_k)
    X = _embedded(sentence)  # read only: no copy needed
    v = sentence.verb
    scores = (X[v] @ W_q) @ (X[: v + 1] @ W_k).T / np.sqrt(W_q.shape[1])
    e = np.exp(scores - scores.max())
    weights = np.zeros(len(sentence))
    weights[: v + 1] = e / e.sum()
    return weights


MARGIN = 1e-6  # the subject must beat every other word by at least this much weight


def finds_subject(weights, sentence):
    """True when the subject's weight beats every other word's by more than MARGIN."""
    others = np.delete(weights, sentence.subject)
    return bool(weights[sentence.subject] > others.max() + MARGIN)


def score_weights(W_q, W_k, sentences):
    """How well ``(W_q, W_k)`` links each main verb to its subject.

    Returns a dict: ``accuracy`` (fraction of sentences whose verb gives its subject strictly
    the largest weight), ``mean_subject_weight`` and ``min_subject_weight`` (the weight on the
    subject), and ``failures``, one tuple (sentence text, subject index, rival index) per failed
    sentence, the rival being the word that got as much weight as the subject, or more.
    """
    found, on_subject, failures = [], [], []
    for sentence in sentences:
        w = verb_weights(W_q, W_k, sentence)
        ok = finds_subject(w, sentence)
        found.append(ok)
        on_subject.append(w[sentence.subject])
        if not ok:
            others = w.copy()
            others[sentence.subject] = -1.0
            failures.append((str(sentence), sentence.subject, int(np.argmax(others))))
    return {"accuracy": float(np.mean(found)), "mean_subject_weight": float(np.mean(on_subject)),
            "min_subject_weight": float(np.min(on_subject)), "failures": failures}
