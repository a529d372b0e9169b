"""Checks specific to 07-explanations: the toy classifier keeps the model contract the notebook and
the hidden suite rely on, the toy data shows what the notebook says it shows, and the reference
equivalent_attention reaches a corner of the valid weights."""
import functools

import numpy as np
import pytest

from autograder.engine import reference
from helpers import explain
from support import COURSE

ASSIGNMENT = "07-explanations"
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])


def suite_classifier_source():
    """The CLASSIFIER model source of the hidden suite (read, not imported)."""
    import ast
    path = COURSE.assignment(ASSIGNMENT).suite / "test_explanations.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "CLASSIFIER":
            return ast.literal_eval(node.value)
    raise LookupError("the suite defines no CLASSIFIER")


def test_toy_model_keeps_the_contract(assignment):
    for mix in (0.0, 0.9):
        model = explain.toy_model(mix)
        for tokens in (["great"], "the film was great . avoid .".split()):
            x = explain.embed(tokens)
            before = x.copy()
            prediction, weights = model(x)
            assert prediction.shape == (2,) and np.isclose(prediction.sum(), 1)
            assert weights.shape == (len(tokens),) and np.isclose(weights.sum(), 1)
            override = np.full(len(tokens), 1 / len(tokens))
            again, returned = model(x, weights=override)
            assert np.array_equal(returned, override)
            assert np.array_equal(x, before)
            same, _ = model(x, weights=weights)
            assert np.allclose(same, prediction, rtol=0, atol=1e-15)


def test_suite_classifier_is_the_notebook_classifier(assignment):
    """The suite's Lambda model computes what helpers.explain.attention_classifier computes."""
    rng = np.random.default_rng(0)
    params = dict(w_score=rng.normal(size=3), W_v=rng.normal(size=(3, 2)),
                  W_out=rng.normal(size=(2, 3)), mix=0.4)
    local = functools.partial(eval(suite_classifier_source(), {"np": np}), **params)
    helper = functools.partial(explain.attention_classifier, b_out=np.zeros(3), **params)
    x = rng.normal(size=(6, 3))
    for weights in (None, rng.dirichlet(np.ones(6))):
        a, b = local(x, weights=weights), helper(x, weights=weights)
        assert np.allclose(a[0], b[0]) and np.allclose(a[1], b[1])


def test_toy_data_shows_what_the_notebook_says(assignment):
    ns = reference.namespace(COURSE.assignment(assignment))
    model = explain.toy_model()
    tokens = "the film was great . avoid .".split()
    x = explain.embed(tokens)
    prediction, alpha = model(x)
    importance = ns["leave_one_out_importance"](model, x)
    assert tokens[int(np.argmax(alpha))] == "." and tokens[int(np.argmax(importance))] == "avoid"
    assert np.argmax(prediction) == 0 and prediction[0] > 0.9
    reviews = explain.toy_reviews(120, np.random.default_rng(7))
    assert reviews == explain.toy_reviews(120, np.random.default_rng(7))
    for review in reviews:
        x = explain.embed(review)
        same_attention = explain.toy_model(0.0)(x)[1], explain.toy_model(0.9)(x)[1]
        assert np.array_equal(*same_attention)
        weights = same_attention[0]
        importance = ns["leave_one_out_importance"](model, x)
        assert not np.isclose(importance[np.argmax(weights)], importance.max())


@pytest.mark.parametrize("T, d_v", [(6, 1), (9, 2), (12, 4), (20, 3)])
def test_reference_equivalent_attention_reaches_a_corner(assignment, T, d_v):
    equivalent = reference.namespace(COURSE.assignment(assignment))["equivalent_attention"]
    rng = np.random.default_rng(T * 10 + d_v)
    weights = rng.dirichlet(np.ones(T), size=5)
    V = rng.normal(size=(T, d_v))
    new = equivalent(weights, V, np.random.default_rng(1))
    assert np.allclose(new @ V, weights @ V, rtol=0, atol=1e-10)
    assert new.min() >= 0 and np.allclose(new.sum(-1), 1, rtol=0, atol=1e-12)
    assert np.all((new > 0).sum(-1) <= d_v + 1)
