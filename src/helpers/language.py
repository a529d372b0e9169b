"""The grammar of :mod:`helpers.grammar` as a probability distribution over word sequences.

The grammar's sentences are drawn by random choices: how deep the subject's chain of modifiers
goes, the subject's number, an adjective or none, a noun, which kind of modifier, which verb. Each
choice has a known probability, so the probability of any sentence, and of any next word after any
prefix, can be computed exactly. :class:`Language` does that, with the words and the token
vocabulary of :mod:`helpers.language_model`::

    language = Language()                                     # the sentences notebooks 10 and 11 train on
    language.next_word_probabilities(("the", "cat", "that"))  # {'the': 0.46..., 'chased': 0.107..., ...}

A sentence ends with :data:`END`, a token of its own: predicting where a sentence stops is part of
predicting it.

That gives the lowest loss any language model can reach on this language. A model that predicts
each next token with probabilities ``q`` has, on average over sentences, a cross-entropy of
``H + KL(p || q)`` per token, where ``p`` are the grammar's exact probabilities and ``H`` the
conditional entropy of the next token: ``H`` is the floor, and ``KL(p || q) >= 0`` is how far above
it the model is. :meth:`Language.entropy_per_token` gives ``H`` exactly;
:meth:`Language.next_word_matrix` gives ``p`` at every position of a batch of sentences.

How it works: the grammar is written below as rules (a symbol becomes a sequence of words and
symbols, with a probability), mirroring ``helpers.grammar``'s sentence builder choice for choice. A
*state* is the sequence of symbols still to be produced. After a prefix, the possible states and
their probabilities are known; the next-word probabilities are what those states produce first.
"""
import functools
import math

import numpy as np

from . import grammar
from .language_model import END, TRAIN_DEPTHS, VOCAB

# Probabilities of the sentence builder's choices (helpers/grammar.py, _Builder).
P_ADJECTIVE = 0.3
P_PREPOSITION_MODIFIER = 0.35   # near the owl
P_SUBJECT_RELATIVE = 0.35       # that chased the mouse
P_OBJECT_RELATIVE = 0.30        # that the mouse chased

NUMBERS = ("singular", "plural")


class Language:
    """The distribution of the sentences of :mod:`helpers.grammar`.

    depths: the possible depths of the subject's chain of modifiers, each as likely.
    p_modifier: the chance that a noun inside a modifier gets a modifier of its own, up to the
    depth drawn. nouns: (singular, plural) pairs. attractors: "any", "same" or "opposite".

    ``Language()`` is the training distribution of notebooks 10 and 11:
    ``grammar.nested_sentence(rng, depth)`` with the depth drawn uniformly from
    ``TRAIN_DEPTHS``, so every noun in a modifier has one until the depth is reached.
    ``Language(depths=(d,), p_modifier=p)`` is ``grammar.make_sentence(rng, max_depth=d,
    p_modifier=p)``. (A mixture of depths with ``p_modifier < 1`` could produce one sentence in
    two ways; it is not offered.)
    """

    def __init__(self, depths=TRAIN_DEPTHS, p_modifier=1.0, nouns=grammar.NOUNS, attractors="any"):
        depths = tuple(int(d) for d in depths)
        if not depths or min(depths) < 0:
            raise ValueError(f"depths must be one or more depths >= 0, got {depths}")
        if not 0.0 <= p_modifier <= 1.0:
            raise ValueError(f"p_modifier must be a probability, got {p_modifier}")
        if len(depths) > 1 and p_modifier < 1.0:
            raise ValueError("a mixture of depths needs p_modifier = 1 (with p_modifier < 1, "
                             "two depths could produce the same sentence)")
        if attractors not in ("any", "same", "opposite"):
            raise ValueError(f"attractors must be 'any', 'same' or 'opposite', got {attractors!r}")
        self.depths, self.p_modifier = depths, float(p_modifier)
        self.nouns, self.attractors = tuple(tuple(pair) for pair in nouns), attractors
        self._expand = functools.lru_cache(maxsize=None)(self._expand_uncached)
        self._states = functools.lru_cache(maxsize=65536)(self._states_uncached)
        self._next = functools.lru_cache(maxsize=65536)(self._next_uncached)

    def sample(self, rng, n):
        """``n`` sentences drawn independently from this distribution (``grammar.Sentence``
        objects; the same sentence may come up more than once, as short sentences do)."""
        if self.p_modifier == 1.0:
            return [grammar.nested_sentence(rng, int(rng.choice(self.depths)), self.nouns,
                                            self.attractors) for _ in range(n)]
        return grammar.generate_sentences(rng, n, self.nouns, self.depths[0], self.p_modifier,
                                          self.attractors)

    # ------------------------------------------------------------ the rules

    def rules(self, symbol):
        """The ways a symbol can be rewritten: a list of (probability, tuple of words and symbols).

        A symbol is a tuple whose first entry names it; a word is a string. ``context`` is the
        pair (subject's number, deepest depth allowed)."""
        kind = symbol[0]
        if kind == "sentence":
            each = 0.5 / len(self.depths)
            return [(each, (("noun phrase", 0, number, True, (number, deepest)),
                            ("main verb", number)))
                    for deepest in self.depths for number in NUMBERS]
        if kind == "noun phrase":
            _, depth, number, force, context = symbol
            return [(1.0, ("the", ("adjective?",), ("noun", number),
                           ("modifier?", depth, force, context)))]
        if kind == "adjective?":
            each = P_ADJECTIVE / len(grammar.ADJECTIVES)
            return [(1.0 - P_ADJECTIVE, ())] + [(each, (word,)) for word in grammar.ADJECTIVES]
        if kind == "noun":
            form = NUMBERS.index(symbol[1])
            return [(1.0 / len(self.nouns), (pair[form],)) for pair in self.nouns]
        if kind == "modifier?":
            _, depth, force, context = symbol
            if depth >= context[1]:
                return [(1.0, ())]
            modifier = ("modifier", depth + 1, context)
            if force or self.p_modifier == 1.0:
                return [(1.0, (modifier,))]
            return [(1.0 - self.p_modifier, ()), (self.p_modifier, (modifier,))]
        if kind == "modifier":
            _, depth, context = symbol
            found = []
            for number, p_number in self._attractor_numbers(context[0]):
                phrase = ("noun phrase", depth, number, False, context)
                found += [(P_PREPOSITION_MODIFIER * p_number,
                           (("pick", grammar.PREPOSITIONS), phrase)),
                          (P_SUBJECT_RELATIVE * p_number,
                           ("that", ("pick", grammar.CLAUSE_VERBS), phrase)),
                          (P_OBJECT_RELATIVE * p_number,
                           ("that", phrase, ("pick", grammar.CLAUSE_VERBS)))]
            return found
        if kind == "pick":
            return [(1.0 / len(symbol[1]), (word,)) for word in symbol[1]]
        if kind == "main verb":
            form = NUMBERS.index(symbol[1])
            found = []
            for forms, complements in grammar.MAIN_VERBS:
                each = 1.0 / len(grammar.MAIN_VERBS)
                if complements:
                    found += [(each / len(complements), (forms[form], word)) for word in complements]
                else:
                    found.append((each, (forms[form],)))
            return found
        raise ValueError(f"unknown symbol {symbol!r}")

    def _attractor_numbers(self, subject):
        if self.attractors == "same":
            return [(subject, 1.0)]
        if self.attractors == "opposite":
            return [(NUMBERS[1 - NUMBERS.index(subject)], 1.0)]
        return [(number, 0.5) for number in NUMBERS]

    # ------------------------------------------------------------ states after a prefix

    def _expand_uncached(self, state):
        """What a state produces first: a tuple of (probability, word, state after the word);
        the word is END, with state (), when nothing is left to produce."""
        if not state:
            return ((1.0, END, ()),)
        head, rest = state[0], state[1:]
        if isinstance(head, str):
            return ((1.0, head, rest),)
        found = {}
        for p_rule, produced in self.rules(head):
            if p_rule == 0.0:
                continue
            for p_next, word, after in self._expand(tuple(produced) + rest):
                key = (word, after)
                found[key] = found.get(key, 0.0) + p_rule * p_next
        return tuple((p, word, after) for (word, after), p in found.items())

    def _states_uncached(self, prefix):
        """The states after ``prefix`` (a tuple of words), with their joint probability with it."""
        if not prefix:
            return {(("sentence",),): 1.0}
        states = {}
        for state, p_state in self._states(prefix[:-1]).items():
            for p_next, word, after in self._expand(state):
                if word == prefix[-1]:
                    states[after] = states.get(after, 0.0) + p_state * p_next
        return states

    def _checked(self, words):
        words = tuple(str(w) for w in getattr(words, "words", words))
        if END in words[:-1]:
            raise ValueError(f"{END} can only be the last token of a sentence")
        return words

    # ------------------------------------------------------------ probabilities

    def prefix_probability(self, prefix):
        """The probability that a sentence starts with these words (1 for the empty prefix)."""
        prefix = self._checked(prefix)
        if prefix and prefix[-1] == END:
            return self.sentence_probability(prefix)
        return float(sum(self._states(prefix).values()))

    def _next_uncached(self, prefix):
        states = self._states(prefix)
        total = sum(states.values())
        if total == 0.0:
            return None
        found = {}
        for state, p_state in states.items():
            for p_next, word, _ in self._expand(state):
                found[word] = found.get(word, 0.0) + p_state * p_next / total
        return tuple(found.items())

    def next_word_probabilities(self, prefix):
        """The exact distribution of the token after ``prefix`` (a sequence of words, or a
        ``Sentence``): a dict token -> probability, END for the end of the sentence, tokens of
        probability 0 left out. Raises ValueError if the grammar never produces ``prefix``."""
        prefix = self._checked(prefix)
        found = None if prefix and prefix[-1] == END else self._next(prefix)
        if found is None:
            raise ValueError(f"the grammar never produces a sentence starting "
                             f"{' '.join(prefix)!r}")
        return dict(found)

    def sentence_probability(self, words):
        """The probability that the grammar produces exactly this sentence (with or without a
        final END)."""
        words = self._checked(words)
        if words and words[-1] == END:
            words = words[:-1]
        return float(sum(p for state, p in self._states(words).items() if not state))

    def accepts(self, words):
        """Whether ``words`` (with or without a final END) is a complete sentence of the grammar."""
        try:
            return self.sentence_probability(words) > 0.0
        except ValueError:
            return False

    def log_probabilities(self, words):
        """ln p(token t | tokens before it) for every word of a sentence and for the END after
        it, shape (len(words) + 1,). Raises ValueError if the grammar never produces the sentence."""
        words = self._checked(words)
        if words and words[-1] == END:
            words = words[:-1]
        out = []
        for t, word in enumerate(words + (END,)):
            p = self.next_word_probabilities(words[:t]).get(word, 0.0)
            if p == 0.0:
                raise ValueError(f"the grammar never produces {word!r} after "
                                 f"{' '.join(words[:t])!r}")
            out.append(math.log(p))
        return np.array(out)

    def next_word_matrix(self, sentences, vocabulary=VOCAB):
        """The grammar's next-token distribution at every input position of a batch.

        sentences: a list of ``Sentence`` objects (or word sequences, without END), as given to
        ``language_model.make_batch``. vocabulary: the tokens whose order gives the columns (the
        course's ``VOCAB`` by default). Returns P, shape (len(sentences), T, len(vocabulary)) with
        T = longest sentence + 1, aligned with the batch's ``"targets"``: row t of sentence i is
        the distribution of target t (word t, or END after the last word) given the words before
        it. Rows at padding are all zero.
        """
        column = {token: j for j, token in enumerate(vocabulary)}
        word_lists = [self._checked(s) for s in sentences]
        T = max(len(words) for words in word_lists) + 1
        P = np.zeros((len(word_lists), T, len(column)))
        for i, words in enumerate(word_lists):
            for t in range(len(words) + 1):
                for word, p in self.next_word_probabilities(words[:t]).items():
                    if word not in column:
                        raise ValueError(f"the vocabulary has no column for {word!r}")
                    P[i, t, column[word]] = p
        return P

    # ------------------------------------------------------------ exact expectations

    @functools.cached_property
    def _moments(self):
        """(expected entropy of the choices that build a sentence, in nats; expected number of
        words of a sentence)."""
        memo = {}

        def visit(symbol):
            if isinstance(symbol, str):
                return 0.0, 1.0
            if symbol not in memo:
                entropy = length = 0.0
                for p, produced in self.rules(symbol):
                    if p == 0.0:
                        continue
                    entropy -= p * math.log(p)
                    for part in produced:
                        h, n = visit(part)
                        entropy += p * h
                        length += p * n
                memo[symbol] = (entropy, length)
            return memo[symbol]

        return visit(("sentence",))

    def sentence_entropy(self):
        """The entropy of a whole sentence, in nats: the expected -ln P(sentence).

        Computed from the rules as the expected entropy of the choices that build a sentence.
        That equals the entropy of the sentence because different choices never produce the same
        words (a test checks this against a Monte Carlo estimate of -ln P(sentence), with P
        computed from the words alone)."""
        return self._moments[0]

    def mean_length(self):
        """The expected number of words of a sentence (END not counted)."""
        return self._moments[1]

    def entropy_per_token(self):
        """The conditional entropy of the next token, in nats per token, over a long text of
        sentences: the floor of any model's cross-entropy on this language. Every word and the
        END of each sentence count as tokens (the END costs nothing to predict: the grammar always
        knows whether a sentence is complete)."""
        return self.sentence_entropy() / (self.mean_length() + 1.0)


def entropy(P, axis=-1):
    """The entropy in nats of each distribution along ``axis`` of P, with 0 ln 0 = 0 (a row of
    zeros, such as padding, has entropy 0)."""
    P = np.asarray(P, dtype=np.float64)
    return -np.sum(np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0), axis=axis)
