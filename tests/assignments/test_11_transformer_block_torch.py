"""Cross-check the reference pre-LN block of 11-transformer-block against PyTorch: outputs, attention
weights and every gradient, in float64, to 1e-6.

The learner's code and the hidden suite are numpy only; these are the project's own checks that the
reference the suite trusts agrees with an independent, widely used implementation: ``nn.LayerNorm``,
``nn.MultiheadAttention`` and ``nn.Linear`` with copied weights, differentiated by autograd.

Conventions bridged here (as in tests/assignments/test_06_multi_head_torch.py):
- torch's linear layers compute ``y = x W^T + b``; the course computes ``X @ W + b``, so torch gets
  the transposed matrices, and its gradients come back transposed;
- ``nn.MultiheadAttention``'s boolean ``attn_mask`` means True = may NOT attend: it gets ``~mask``.
"""
import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed: the PyTorch cross-checks of the reference block need "
                    "it (the course itself does not)")

from autograder.engine import reference  # noqa: E402
from support import COURSE, suite_module  # noqa: E402

ASSIGNMENT = "11-transformer-block"
TOL = dict(rtol=1e-6, atol=1e-6)
NAMES = ("gamma_1", "beta_1", "W_q", "W_k", "W_v", "W_o", "gamma_2", "beta_2", "W_1", "b_1",
         "W_2", "b_2")


@pytest.fixture(scope="module", params=[ASSIGNMENT])
def ns(request):
    """The reference namespace of 11-transformer-block (the id puts the assignment in every test
    name)."""
    return reference.namespace(COURSE.assignment(request.param))


def t64(array, grad=False):
    return torch.tensor(np.ascontiguousarray(array, dtype=np.float64), requires_grad=grad)


def random_params(seed, d_model, d_ff):
    """The hidden suite's own random block parameters (scores large enough to matter)."""
    return suite_module(ASSIGNMENT).block_params(seed, d_model, d_ff)


class TorchBlock(torch.nn.Module):
    """The pre-LN block from torch's own layers, with the course's weights copied in."""

    def __init__(self, params, n_heads):
        super().__init__()
        d_model, d_ff = params["W_1"].shape
        kw = dict(dtype=torch.float64)
        self.norm_1 = torch.nn.LayerNorm(d_model, eps=1e-5, **kw)
        self.norm_2 = torch.nn.LayerNorm(d_model, eps=1e-5, **kw)
        self.attention = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True, **kw)
        self.linear_1 = torch.nn.Linear(d_model, d_ff, **kw)
        self.linear_2 = torch.nn.Linear(d_ff, d_model, **kw)
        with torch.no_grad():
            self.norm_1.weight.copy_(t64(params["gamma_1"]))
            self.norm_1.bias.copy_(t64(params["beta_1"]))
            self.norm_2.weight.copy_(t64(params["gamma_2"]))
            self.norm_2.bias.copy_(t64(params["beta_2"]))
            self.attention.in_proj_weight.copy_(
                t64(np.concatenate([params["W_q"].T, params["W_k"].T, params["W_v"].T])))
            self.attention.out_proj.weight.copy_(t64(params["W_o"].T))
            self.linear_1.weight.copy_(t64(params["W_1"].T))
            self.linear_1.bias.copy_(t64(params["b_1"]))
            self.linear_2.weight.copy_(t64(params["W_2"].T))
            self.linear_2.bias.copy_(t64(params["b_2"]))

    def forward(self, X, mask=None):
        normed = self.norm_1(X)
        attn_mask = None if mask is None else torch.from_numpy(~mask)
        A, weights = self.attention(normed, normed, normed, attn_mask=attn_mask, need_weights=True,
                                    average_attn_weights=False)
        H = X + A
        return H + self.linear_2(torch.relu(self.linear_1(self.norm_2(H)))), weights

    def gradients(self):
        """The parameters' gradients, in the course's names and layout (transposed back)."""
        d_in = self.attention.in_proj_weight.grad.numpy()
        d_q, d_k, d_v = np.split(d_in, 3)
        return {"gamma_1": self.norm_1.weight.grad.numpy(), "beta_1": self.norm_1.bias.grad.numpy(),
                "W_q": d_q.T, "W_k": d_k.T, "W_v": d_v.T,
                "W_o": self.attention.out_proj.weight.grad.numpy().T,
                "gamma_2": self.norm_2.weight.grad.numpy(), "beta_2": self.norm_2.bias.grad.numpy(),
                "W_1": self.linear_1.weight.grad.numpy().T, "b_1": self.linear_1.bias.grad.numpy(),
                "W_2": self.linear_2.weight.grad.numpy().T, "b_2": self.linear_2.bias.grad.numpy()}


CASES = [("no mask, 2 heads", (3, 5, 8), 2, 12, None),
         ("causal mask, 4 heads", (2, 6, 8), 4, 16, "causal"),
         ("causal mask, 1 head", (2, 4, 6), 1, 10, "causal")]


@pytest.mark.parametrize("name, shape, n_heads, d_ff, mask", CASES, ids=[c[0] for c in CASES])
def test_block_forward_and_gradients_match_torch(ns, name, shape, n_heads, d_ff, mask):
    rng = np.random.default_rng(sum(shape) + n_heads)
    X, G = rng.normal(size=shape), rng.normal(size=shape)
    params = random_params(d_ff, shape[-1], d_ff)
    mask = None if mask is None else np.tril(np.ones((shape[1], shape[1]), dtype=bool))
    Y, weights, cache = ns["transformer_block"](X, params, n_heads, mask)
    d_X, grads = ns["transformer_block_backward"](G, cache)

    block = TorchBlock(params, n_heads)
    X_t = t64(X, grad=True)
    Y_t, weights_t = block(X_t, mask)
    (Y_t * t64(G)).sum().backward()
    np.testing.assert_allclose(Y, Y_t.detach().numpy(), **TOL, err_msg=f"Y, {name}")
    np.testing.assert_allclose(weights, weights_t.detach().numpy(), **TOL, err_msg=f"weights, {name}")
    np.testing.assert_allclose(d_X, X_t.grad.numpy(), **TOL, err_msg=f"d_X, {name}")
    expected = block.gradients()
    for key in NAMES:
        np.testing.assert_allclose(grads[key], expected[key], **TOL, err_msg=f"grads[{key}], {name}")


def test_two_blocks_in_a_row_match_torch(ns):
    """Gradients pass through a block into the one below it exactly as autograd says."""
    rng = np.random.default_rng(7)
    X, G = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 8))
    mask = np.tril(np.ones((5, 5), dtype=bool))
    lower, upper = random_params(1, 8, 12), random_params(2, 8, 12)
    H, _, lower_cache = ns["transformer_block"](X, lower, 2, mask)
    _, _, upper_cache = ns["transformer_block"](H, upper, 2, mask)
    d_H, upper_grads = ns["transformer_block_backward"](G, upper_cache)
    d_X, lower_grads = ns["transformer_block_backward"](d_H, lower_cache)

    first, second = TorchBlock(lower, 2), TorchBlock(upper, 2)
    X_t = t64(X, grad=True)
    Y_t, _ = second(first(X_t, mask)[0], mask)
    (Y_t * t64(G)).sum().backward()
    np.testing.assert_allclose(d_X, X_t.grad.numpy(), **TOL)
    for computed, block in ((lower_grads, first), (upper_grads, second)):
        expected = block.gradients()
        for key in NAMES:
            np.testing.assert_allclose(computed[key], expected[key], **TOL, err_msg=key)


def test_layer_norm_and_its_backward_match_torch(ns):
    rng = np.random.default_rng(3)
    X, G = rng.normal(size=(2, 3, 7)) * 3 + 1, rng.normal(size=(2, 3, 7))
    gamma, beta = 1 + rng.normal(size=7) * 0.3, rng.normal(size=7)
    X[1, 2] = 4.0                                       # a constant row
    X_t, gamma_t, beta_t = t64(X, True), t64(gamma, True), t64(beta, True)
    Y_t = torch.nn.functional.layer_norm(X_t, (7,), gamma_t, beta_t, eps=1e-5)
    (Y_t * t64(G)).sum().backward()
    np.testing.assert_allclose(ns["layer_norm"](X, gamma, beta), Y_t.detach().numpy(), **TOL)
    d_X, d_gamma, d_beta = ns["layer_norm_backward"](G, X, gamma)
    np.testing.assert_allclose(d_X, X_t.grad.numpy(), **TOL)
    np.testing.assert_allclose(d_gamma, gamma_t.grad.numpy(), **TOL)
    np.testing.assert_allclose(d_beta, beta_t.grad.numpy(), **TOL)


def test_nats_above_floor_is_torch_kl_divergence(ns):
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(3, 5, 9)) * 4
    P = rng.random((3, 5, 9)) ** 3 * (rng.random((3, 5, 9)) > 0.4)
    P[..., 0] += 0.01
    P /= P.sum(axis=-1, keepdims=True)
    mask = np.arange(5)[None, :] < np.array([5, 3, 1])[:, None]
    log_q = torch.log_softmax(t64(logits), dim=-1)
    per_position = torch.nn.functional.kl_div(log_q, t64(P), reduction="none").sum(-1).numpy()
    assert np.isclose(ns["nats_above_floor"](logits, P, mask), per_position[mask].mean(), **TOL)
    assert np.isclose(ns["nats_above_floor"](logits, P), per_position.mean(), **TOL)
