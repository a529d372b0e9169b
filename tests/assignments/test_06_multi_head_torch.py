"""Cross-check the reference attention of 06-multi-head (and 03-qkv) against PyTorch.

The learner's code is numpy only; these are the project's own checks that the references the hidden
suites trust agree with an independent, widely used implementation: torch's
``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` with copied weights, in float64,
to 1e-6, with and without boolean masks, outputs and per-head weights.

Conventions bridged here:
- torch's linear layers compute ``y = x W^T``; the course computes ``X @ W``. So torch's
  ``in_proj_weight`` is ``[W_q^T; W_k^T; W_v^T]`` and ``out_proj.weight`` is ``W_o^T``.
- A boolean ``attn_mask`` means True = may attend for ``F.scaled_dot_product_attention`` (as in the
  course) but True = may NOT attend for ``nn.MultiheadAttention``: that one gets ``~mask``.
- ``nn.MultiheadAttention`` returns nan for a query whose every key is masked, where the course
  returns zeros; those rows are compared with zeros separately.
"""
import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed: the PyTorch cross-checks of the reference attention "
                    "need it (the course itself does not)")
F = torch.nn.functional

from autograder.engine import reference  # noqa: E402
from support import COURSE

ASSIGNMENT = "06-multi-head"
TOL = dict(rtol=1e-6, atol=1e-6)


@pytest.fixture(params=[ASSIGNMENT])
def ns(request):
    """The reference namespace of 06-multi-head (the id puts the assignment in every test name)."""
    return reference.namespace(COURSE.assignment(request.param))


def t64(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))


def torch_mha(W_q, W_k, W_v, W_o, n_heads):
    d_model = W_q.shape[0]
    layer = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True,
                                        dtype=torch.float64)
    with torch.no_grad():
        layer.in_proj_weight.copy_(t64(np.concatenate([W_q.T, W_k.T, W_v.T], axis=0)))
        layer.out_proj.weight.copy_(t64(W_o.T))
    return layer.eval()


def weights_of(seed, d_model):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(d_model, d_model)) * 1.5 / np.sqrt(d_model) for _ in range(4))


def causal_with_empty_row(T, empty=2):
    mask = np.tril(np.ones((T, T), dtype=bool))
    mask[empty] = False          # one query that may attend nothing
    return mask


# ------------------------------------------------------------------ F.scaled_dot_product_attention

def sdpa_cases():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(2, 3, 5, 4)) * 2
    K = rng.normal(size=(2, 3, 7, 4)) * 2
    V = rng.normal(size=(2, 3, 7, 6))
    random_mask = rng.random((2, 1, 5, 7)) < 0.6
    random_mask[0, 0, 3] = False                       # a fully masked query
    yield "no mask", Q, K, V, None
    yield "random mask with a fully masked query", Q, K, V, random_mask
    yield "key padding mask", Q, K, V, np.arange(7) < 4


def check_against_torch_sdpa(attention):
    for name, Q, K, V, mask in sdpa_cases():
        out, weights = attention(Q, K, V, mask)
        # torch wants the mask at least 2-D: broadcast it to (..., T_q, T_k) explicitly.
        torch_mask = None if mask is None else torch.from_numpy(
            np.ascontiguousarray(np.broadcast_to(mask, Q.shape[:-1] + K.shape[-2:-1])))
        expected = F.scaled_dot_product_attention(t64(Q), t64(K), t64(V), attn_mask=torch_mask)
        # torch does not return the weights: attending over the identity matrix gives them.
        identity = t64(np.broadcast_to(np.eye(K.shape[-2]), Q.shape[:-2] + (K.shape[-2],) * 2))
        expected_w = F.scaled_dot_product_attention(t64(Q), t64(K), identity, attn_mask=torch_mask)
        np.testing.assert_allclose(out, expected.numpy(), **TOL, err_msg=f"output, {name}")
        np.testing.assert_allclose(weights, expected_w.numpy(), **TOL, err_msg=f"weights, {name}")


def test_given_sdpa_matches_torch(ns):
    """The scaled_dot_product_attention given (locked) in 06 equals torch's."""
    check_against_torch_sdpa(ns["scaled_dot_product_attention"])


def test_qkv_reference_sdpa_matches_torch(ns):
    """The 03-qkv reference solution equals torch's (skipped until 03-qkv exists)."""
    try:
        qkv = reference.namespace(COURSE.assignment("03-qkv"))
    except LookupError:
        pytest.skip("solutions/03-qkv has no solution notebook yet, so there is no 03 reference "
                    "scaled_dot_product_attention to cross-check")
    if "scaled_dot_product_attention" not in qkv:
        pytest.skip("the 03-qkv solution notebook does not define scaled_dot_product_attention yet")
    check_against_torch_sdpa(qkv["scaled_dot_product_attention"])


def test_split_heads_then_torch_sdpa_is_multi_head_attention(ns):
    """split_heads / merge_heads around torch's attention give the reference multi_head_attention."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 6, 12))
    W_q, W_k, W_v, W_o = weights_of(2, 12)
    mask = causal_with_empty_row(6)
    for m in (None, mask):
        Q, K, V = (t64(ns["split_heads"](X @ W, 3)) for W in (W_q, W_k, W_v))
        heads = F.scaled_dot_product_attention(
            Q, K, V, attn_mask=None if m is None else torch.from_numpy(m)).numpy()
        expected = ns["merge_heads"](heads) @ W_o
        out, _ = ns["multi_head_attention"](X, W_q, W_k, W_v, W_o, 3, m)
        np.testing.assert_allclose(out, expected, **TOL)


# ------------------------------------------------------------------ nn.MultiheadAttention

@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_multi_head_attention_matches_torch_without_mask(ns, n_heads):
    rng = np.random.default_rng(n_heads)
    X = rng.normal(size=(3, 5, 8))
    W = weights_of(10 + n_heads, 8)
    out, weights = ns["multi_head_attention"](X, *W, n_heads)
    expected, expected_w = torch_mha(*W, n_heads)(t64(X), t64(X), t64(X), need_weights=True,
                                                  average_attn_weights=False)
    np.testing.assert_allclose(out, expected.detach().numpy(), **TOL)
    np.testing.assert_allclose(weights, expected_w.detach().numpy(), **TOL)
    _, averaged = torch_mha(*W, n_heads)(t64(X), t64(X), t64(X), need_weights=True)
    np.testing.assert_allclose(weights.mean(axis=-3), averaged.detach().numpy(), **TOL)


def compare_masked(ns, X, W, n_heads, mask, torch_kwargs):
    out, weights = ns["multi_head_attention"](X, *W, n_heads, mask)
    expected, expected_w = torch_mha(*W, n_heads)(t64(X), t64(X), t64(X), need_weights=True,
                                                  average_attn_weights=False, **torch_kwargs)
    expected, expected_w = expected.detach().numpy(), expected_w.detach().numpy()
    T = X.shape[-2]
    allowed = np.broadcast_to(mask, X.shape[:-2] + (T, T))
    live = allowed.any(axis=-1)                        # (B, T): queries with at least one key
    np.testing.assert_allclose(out[live], expected[live], **TOL)
    np.testing.assert_allclose(np.moveaxis(weights, 1, 0)[:, live],
                               np.moveaxis(expected_w, 1, 0)[:, live], **TOL)
    # torch gives nan where the course promises zeros: a query with no key to attend to.
    assert np.all(out[~live] == 0) and np.all(np.moveaxis(weights, 1, 0)[:, ~live] == 0)
    assert np.isfinite(out).all() and np.isfinite(weights).all()


def test_multi_head_attention_matches_torch_with_shared_mask(ns):
    """A (T, T) boolean mask: torch's attn_mask is its negation (True = not allowed)."""
    X = np.random.default_rng(3).normal(size=(2, 6, 12))
    W = weights_of(4, 12)
    mask = causal_with_empty_row(6)
    compare_masked(ns, X, W, 3, mask, {"attn_mask": torch.from_numpy(~mask)})


def test_multi_head_attention_matches_torch_with_per_sequence_masks(ns):
    """A (B, T, T) mask: torch wants one mask per (sequence, head), shape (B * H, T, T)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3, 5, 8))
    W = weights_of(6, 8)
    mask = rng.random((3, 5, 5)) < 0.5
    mask[..., 0] = True
    mask[1, 4] = False                                  # a fully masked query in sequence 1
    per_head = np.repeat(~mask, 2, axis=0)              # sequence-major, as torch expects
    compare_masked(ns, X, W, 2, mask, {"attn_mask": torch.from_numpy(per_head)})


def test_multi_head_attention_matches_torch_with_padding(ns):
    """A (B, 1, T) padding mask is torch's key_padding_mask (True = padding), negated."""
    X = np.random.default_rng(7).normal(size=(3, 5, 8))
    W = weights_of(8, 8)
    real = np.arange(5)[None, :] < np.array([5, 3, 1])[:, None]          # (B, T)
    compare_masked(ns, X, W, 4, real[:, None, :], {"key_padding_mask": torch.from_numpy(~real)})


def test_float32_reference_stays_close_to_torch_float64(ns):
    """float32 input: the reference agrees with torch's float64 result to float32 precision."""
    X = np.random.default_rng(9).normal(size=(2, 6, 12))
    W = weights_of(10, 12)
    out, weights = ns["multi_head_attention"](X.astype(np.float32), *(A.astype(np.float32) for A in W), 3)
    expected, expected_w = torch_mha(*W, 3)(t64(X), t64(X), t64(X), need_weights=True,
                                            average_attn_weights=False)
    np.testing.assert_allclose(out, expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(weights, expected_w.detach().numpy(), rtol=1e-4, atol=1e-5)
