"""Checks specific to 08-learning-to-attend.

The hidden suite never looks inside the cache of attention_forward: it hands it back to the
learner's attention_backward. The catalogue's alternatives must keep the reference cache layout
(they are graded beside the reference's other function), so the freedom the suite promises is
proved here instead, with complete forward/backward pairs that lay out their caches differently.
Also: the trusted math agrees with central differences, helpers.recall is sound, and the
translator of section 7 passes a gradient check. What section 7's prose claims about its training
runs is checked by tests/claims/08-learning-to-attend.py, at five seeds.
"""
import numpy as np
import pytest

from autograder.engine import catalogue, grade, reference, suite
from autograder.engine.testing import central_differences as central
from helpers import recall
from support import COURSE

ASSIGNMENT = "08-learning-to-attend"
# Every test carries the assignment id so that `pytest -k 08-learning-to-attend` selects it.
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])


def graded_pair(assignment, source):
    namespace = catalogue.with_source(reference.namespace(COURSE.assignment(assignment)), source)
    return grade.grade_local(COURSE.assignment(assignment), namespace)


def feedback(result, exercise=None):
    return "\n".join(f"{t.name}: {t.feedback}" for t in result.tests
                     if not t.passed and exercise in (None, t.exercise))


PAIRS = {
    "dict cache holding the scores, weights recomputed in backward": '''
def attention_forward(Q, K, V):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    shifted = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    return weights @ V, {"q": Q, "k": K, "v": V, "scores": scores, "d_k": int(Q.shape[-1])}

def attention_backward(d_output, cache):
    s = cache["scores"]
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    d_w = np.einsum("...qv,...kv->...qk", d_output, cache["v"])
    d_s = w * (d_w - (w * d_w).sum(axis=-1, keepdims=True)) / np.sqrt(cache["d_k"])
    return (np.einsum("...qk,...kd->...qd", d_s, cache["k"]),
            np.einsum("...qk,...qd->...kd", d_s, cache["q"]),
            np.einsum("...qk,...qv->...kv", w, d_output))
''',
    "list cache of the inputs only, everything recomputed": '''
def attention_forward(Q, K, V):
    return _forward(Q, K, V)[0], [Q, K, V]

def _forward(Q, K, V):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    w = softmax(s, axis=-1)
    return w @ V, w

def attention_backward(d_output, cache):
    Q, K, V = cache
    _, w = _forward(Q, K, V)
    d_s = softmax_backward(w, d_output @ np.swapaxes(V, -1, -2)) / np.sqrt(K.shape[-1])
    return d_s @ K, np.swapaxes(d_s, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output
''',
    "nested tuple cache with a Python float scale and transposed copies": '''
def attention_forward(Q, K, V):
    scale = 1.0 / float(np.sqrt(Q.shape[-1]))
    Kt = np.swapaxes(K, -1, -2)
    w = softmax(Q @ Kt * scale)
    return w @ V, ((Q, Kt), (np.swapaxes(V, -1, -2), w), scale)

def attention_backward(d_output, cache):
    (Q, Kt), (Vt, w), scale = cache
    d_s = softmax_backward(w, d_output @ Vt) * scale
    return d_s @ np.swapaxes(Kt, -1, -2), np.swapaxes(d_s, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output
''',
}


@pytest.mark.parametrize("description", sorted(PAIRS))
def test_pairs_with_other_cache_layouts_keep_full_marks(assignment, description):
    result = graded_pair(assignment, PAIRS[description])
    assert result.score == result.max_score, feedback(result)


def test_a_closure_cache_loses_forward_and_backward_points_with_a_clear_message(assignment):
    result = graded_pair(assignment, '''
def attention_forward(Q, K, V):
    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    def backward(d_output):
        d_s = softmax_backward(w, d_output @ np.swapaxes(V, -1, -2)) / np.sqrt(Q.shape[-1])
        return d_s @ K, np.swapaxes(d_s, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output
    return w @ V, backward

def attention_backward(d_output, cache):
    return cache(d_output)
''')
    backward = result.exercises["attention_backward"]
    assert backward["score"] == 0
    assert result.exercises["attention_forward"]["score"] < result.exercises["attention_forward"]["max_score"]
    assert "must be plain data" in feedback(result, "attention_backward")


def test_a_backward_pass_that_reads_globals_is_caught(assignment):
    result = graded_pair(assignment, '''
def attention_forward(Q, K, V):
    global _saved
    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    _saved = (Q, K, V, w)
    return w @ V, ()

def attention_backward(d_output, cache):
    Q, K, V, w = _saved
    d_s = softmax_backward(w, d_output @ np.swapaxes(V, -1, -2)) / np.sqrt(Q.shape[-1])
    return d_s @ K, np.swapaxes(d_s, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output
''')
    failed = [t for t in result.tests if not t.passed]
    assert [t.name for t in failed] == [
        "attention_backward: uses only its cache: another forward pass in between changes nothing"]
    assert "not from global variables" in failed[0].feedback


def test_a_wrong_softmax_backward_is_named_in_attention_backward_feedback(assignment):
    namespace = catalogue.with_source(reference.namespace(COURSE.assignment(assignment)), '''
def softmax_backward(p, d_p):
    return p * (d_p - np.sum(d_p, axis=-1, keepdims=True))

def attention_backward(d_output, cache):
    Q, K, V, weights = cache
    d_scores = softmax_backward(weights, d_output @ np.swapaxes(V, -1, -2)) / np.sqrt(Q.shape[-1])
    return d_scores @ K, np.swapaxes(d_scores, -1, -2) @ Q, np.swapaxes(weights, -1, -2) @ d_output
''')
    found = COURSE.assignment(assignment)
    alone = grade.grade_local(found, dict(namespace), retry=False)
    assert "softmax_backward that would subtract the plain sum" in feedback(alone, "attention_backward")
    # graded, attention_backward is right but for the function it calls: it keeps its points and
    # names the function to fix
    result = grade.grade_local(found, namespace)
    assert result.exercises["attention_backward"]["score"] == \
        result.exercises["attention_backward"]["max_score"]
    kept = [t.feedback for t in result.tests_of("attention_backward") if t.feedback]
    assert kept and all("your `softmax_backward`, which fails its own tests" in f
                        or f == suite.KERNEL_WORD for f in kept), kept


def rel_error(a, b):
    return np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)))


def test_trusted_gradients_pass_a_gradient_check(assignment):
    ref = reference.namespace(COURSE.assignment(assignment))
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    G = rng.normal(size=(2, 3, 3))
    _, cache = ref["attention_forward"](Q, K, V)
    dQ, dK, dV = ref["attention_backward"](G, cache)
    loss = [lambda X: np.sum(ref["attention_forward"](X, K, V)[0] * G),
            lambda X: np.sum(ref["attention_forward"](Q, X, V)[0] * G),
            lambda X: np.sum(ref["attention_forward"](Q, K, X)[0] * G)]
    for analytic, f, x in zip((dQ, dK, dV), loss, (Q, K, V)):
        assert rel_error(analytic, central(f, x)) < 1e-7
    assert np.allclose(ref["numerical_gradient"](loss[0], Q), central(loss[0], Q), rtol=0, atol=0)


def test_recall_batches_are_well_formed(assignment):
    batch = recall.make_batch(50, 5, np.random.default_rng(1))
    context, queries, targets = batch["context"], batch["queries"], batch["targets"]
    assert context.shape == (50, 10) and queries.shape == targets.shape == (50, 5)
    keys = context[:, 0::2]
    assert (keys < recall.N_KEYS).all() and (context[:, 1::2] >= recall.N_KEYS).all()
    assert all(len(set(row)) == 5 for row in keys)
    answer_tokens = np.take_along_axis(context, batch["answer_at"], axis=1)
    key_tokens = np.take_along_axis(context, batch["answer_at"] - 1, axis=1)
    assert (answer_tokens == recall.N_KEYS + targets).all() and (key_tokens == queries).all()
    again = recall.make_batch(50, 5, np.random.default_rng(1))
    assert all((again[k] == batch[k]).all() for k in batch)
    tidy = recall.make_batch(2, 3, np.random.default_rng(2), shuffle=False)
    assert (tidy["answer_at"] == [1, 3, 5]).all()


def test_recall_features_and_cross_entropy(assignment):
    batch = recall.make_batch(3, 4, np.random.default_rng(3))
    X_q, X_c = recall.features(batch)
    assert X_q.shape == (3, 4, recall.D_IN) and X_c.shape == (3, 8, recall.D_IN)
    half = len(recall.VOCAB)
    assert (X_c[:, 1:, half:] == X_c[:, :-1, :half]).all() and not X_c[:, 0, half:].any()
    assert not recall.features(batch, previous=False)[1][..., half:].any()
    logits = np.random.default_rng(4).normal(size=(3, 4, recall.N_VALUES))
    loss, d_logits = recall.cross_entropy(logits, batch["targets"])
    numeric = central(lambda L: recall.cross_entropy(L, batch["targets"])[0], logits)
    assert rel_error(d_logits, numeric) < 1e-6
    assert np.isclose(recall.cross_entropy(np.zeros((2, 10)), np.array([0, 1]))[0], np.log(10))


def test_reference_model_learns_recall_quickly(assignment):
    ref = reference.namespace(COURSE.assignment(assignment))
    rng = np.random.default_rng(0)
    params = recall.init_params(rng)
    optimizer = recall.Adam(params, lr=0.01)

    def logits_of(params, batch):
        X_q, X_c = recall.features(batch)
        O, _ = ref["attention_forward"](X_q @ params["W_q"], X_c @ params["W_k"], X_c @ params["W_v"])
        return O @ params["W_o"]

    for _ in range(250):
        batch = recall.make_batch(32, 4, rng)
        X_q, X_c = recall.features(batch)
        O, cache = ref["attention_forward"](X_q @ params["W_q"], X_c @ params["W_k"],
                                            X_c @ params["W_v"])
        _, d_logits = recall.cross_entropy(O @ params["W_o"], batch["targets"])
        dQ, dK, dV = ref["attention_backward"](d_logits @ params["W_o"].T, cache)
        optimizer.step(params, {"W_q": recall.weight_grad(X_q, dQ), "W_k": recall.weight_grad(X_c, dK),
                                "W_v": recall.weight_grad(X_c, dV),
                                "W_o": recall.weight_grad(O, d_logits)})
    test = recall.make_batch(500, 4, np.random.default_rng(9))
    assert recall.accuracy(logits_of(params, test), test["targets"]) > 0.95


@pytest.fixture(scope="module")
def solution_run():
    """Every code cell of the solution notebook, run in order in one namespace (figures drawn
    off-screen): what a learner with correct functions sees."""
    import json

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    notebook = json.loads(COURSE.assignment(ASSIGNMENT).solution.read_text(encoding="utf-8"))
    namespace = {"__name__": "solution_run"}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"<cell {index}>", "exec"), namespace)
            plt.close("all")
    return namespace


@pytest.mark.slow
def test_translator_gradients_pass_a_gradient_check(assignment, solution_run):
    run = solution_run
    narrow, tiny = run["narrow"], run["tiny"]
    for scaled in (True, False):
        _, grads = run["translator_loss"](narrow, tiny, scaled=scaled)
        for name in ("W_q", "W_k", "W_v", "W_1"):
            def loss_of(W, name=name, scaled=scaled):
                logits, _ = run["translator_forward"]({**narrow, name: W}, tiny, scaled=scaled)
                return run["alignment"].cross_entropy(logits, tiny["target"])[0]
            numeric = central(loss_of, narrow[name])
            whole = np.linalg.norm(grads[name] - numeric) / (np.linalg.norm(grads[name]) + np.linalg.norm(numeric))
            assert whole < 1e-5, (name, scaled, whole)
