"""Checks specific to 03-qkv: its helpers (helpers.qkv) and the claims its narrative makes.

Every test is parametrized by the assignment id, so `pytest -k 03-qkv` selects this file too.
"""
import json
import re
import warnings

import numpy as np
import pytest

from autograder.engine import reference
from helpers.checks import CheckFailed
from helpers.qkv import WORD_DIM, call_cleanly, toy_regression, true_function, word_vector, word_vectors
from support import COURSE

pytestmark = pytest.mark.parametrize("assignment", ["03-qkv"])


def markdown(assignment):
    notebook = json.loads(COURSE.assignment(assignment).solution.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")


def test_word_vectors_are_unit_vectors_that_compare_spellings(assignment):
    fruits = ["apple", "banana", "cherry", "grape", "lemon", "mango"]
    K = word_vectors(fruits)
    assert K.shape == (6, WORD_DIM)
    assert np.allclose(np.linalg.norm(K, axis=1), 1.0)
    assert np.allclose(K @ word_vector("Banana!"), K @ word_vector("banana"))
    scores = K @ word_vector("bananas")
    assert fruits[int(np.argmax(scores))] == "banana" and 0.8 < scores.max() < 1.0
    assert np.all(K @ word_vector("kiwi") == 0.0), "the notebook's 'kiwi' example needs all-zero scores"


def test_toy_regression_is_reproducible_and_sorted(assignment):
    x1, y1 = toy_regression(50, np.random.default_rng(7))
    x2, y2 = toy_regression(50, np.random.default_rng(7))
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert x1.shape == y1.shape == (50,) and np.all(np.diff(x1) >= 0)
    assert 0.0 <= x1.min() and x1.max() <= 5.0
    assert np.std(y1 - true_function(x1)) == pytest.approx(0.3, rel=0.35)


def test_call_cleanly_flags_warnings_mutation_and_prints_but_not_underflow(assignment):
    assert call_cleanly(lambda z: np.exp(z - z.max()), np.array([-1e4, 0.0]))[0] == 0.0  # underflow
    with pytest.raises(CheckFailed, match="warning"):
        call_cleanly(lambda z: np.exp(z), np.array([1e4]))
    with pytest.raises(CheckFailed, match="in place"):
        call_cleanly(lambda z: z.__imul__(2), np.array([1.0, 2.0]))
    with pytest.raises(CheckFailed, match="printed"):
        call_cleanly(print, "debugging")
    z = np.array([1.0, 2.0])
    assert call_cleanly(lambda a, b=None: a * 2, z, b=z).tolist() == [2.0, 4.0]


def test_given_softmax_is_stable_and_silent(assignment):
    softmax = reference.namespace(COURSE.assignment(assignment))["softmax"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", under="ignore"):
            p = softmax(np.array([[1e4, 0.0, -1e4], [3.0, 3.0, 3.0]], dtype=np.float32))
    assert p.dtype == np.float32
    assert np.allclose(p, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_attention_rows_are_soft_lookups_and_nadaraya_watson_is_one(assignment):
    """The two identities the notebook measures hold for the reference solution."""
    ns = reference.namespace(COURSE.assignment(assignment))
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(4, 9)), rng.normal(size=(6, 9)), rng.normal(size=(6, 2))
    out, _ = ns["scaled_dot_product_attention"](Q, K, V)
    for t in range(4):
        assert np.allclose(out[t], ns["soft_lookup"](Q[t], K, V, temperature=3.0), atol=1e-12)
    x, y = np.sort(rng.uniform(0, 5, 30)), rng.normal(size=30)
    lifted = np.stack([x, -x ** 2 / 2], axis=1)
    grid = np.linspace(0, 5, 11)
    direct = ns["nadaraya_watson"](grid, x, y, 0.4)
    via_lookup = [ns["soft_lookup"](np.array([g, 1.0]), lifted, y[:, None], 0.4 ** 2)[0] for g in grid]
    assert np.allclose(direct, via_lookup, atol=1e-10)


def test_temperature_limits_the_notebook_states(assignment):
    """Soft lookup tends to the hard lookup as T -> 0 and to the mean as T -> infinity."""
    ns = reference.namespace(COURSE.assignment(assignment))
    rng = np.random.default_rng(2)
    q, K, V = rng.normal(size=5), rng.normal(size=(8, 5)), rng.normal(size=(8, 3))
    assert np.allclose(ns["soft_lookup"](q, K, V, 1e-4), ns["hard_lookup"](q, K, V))
    assert np.allclose(ns["soft_lookup"](q, K, V, 1e8), V.mean(axis=0), atol=1e-7)


def test_notebook_cites_the_papers_of_its_brief(assignment):
    text = markdown(assignment)
    for pattern in [r"Nadaraya.*1964", r"Watson.*1964", r"Bahdanau.*2015", r"Vaswani.*2017",
                    r"Graves.*2014.*Neural Turing Machines"]:
        assert re.search(pattern, text), f"no citation matching {pattern!r}"
    assert "Predict, then run" in text
    assert text.count("<summary>Hint") >= 10, "each of the five graded functions needs 2-3 hints"
