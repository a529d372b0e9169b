"""Associative recall for notebook 08: toy data and the non-attention parts of a tiny model.

The task follows Ba et al. (2016): a sequence of key-value pairs (letters and digits), then a query
key; the answer is the digit that followed that key, e.g. ``c9k8j3f1 ? c -> 9``. Graves et al. (2014)
posed the same kind of associative recall to the Neural Turing Machine.

Everything here is plain numpy and knows nothing about attention: the notebook's model calls the
learner's ``attention_forward`` / ``attention_backward`` between :func:`features` and the read-out,
so the only derivatives the learner must get right are those of attention itself.

Token ids: letters ``a..z`` are ``0..25`` (keys), digits ``0..9`` are ``26..35`` (values).
"""
import numpy as np

LETTERS = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
VOCAB = LETTERS + DIGITS
N_KEYS = len(LETTERS)
N_VALUES = len(DIGITS)
D_IN = 2 * len(VOCAB)  # one-hot of the token, then one-hot of the token before it


def make_batch(n_seq, n_pairs, rng, shuffle=True):
    """``n_seq`` recall problems with ``n_pairs`` key-value pairs each.

    Keys are distinct letters within a sequence; values are random digits (they may repeat).
    Every key of a sequence is asked once, so each sequence carries ``n_pairs`` queries; with
    ``shuffle=False`` they are asked in the order the keys appear (tidy pictures).

    Returns a dict of integer arrays:
      ``"context"`` ``(n_seq, 2 * n_pairs)`` token ids ``k1 v1 k2 v2 ...``,
      ``"queries"`` ``(n_seq, n_pairs)`` token ids of the asked keys,
      ``"targets"`` ``(n_seq, n_pairs)`` the answers as digits ``0..9``,
      ``"answer_at"`` ``(n_seq, n_pairs)`` the position in ``context`` of each answer's token.
    """
    if not 1 <= n_pairs <= N_KEYS:
        raise ValueError(f"n_pairs must be between 1 and {N_KEYS}, got {n_pairs}")
    keys = np.argsort(rng.random((n_seq, N_KEYS)), axis=1)[:, :n_pairs]
    values = rng.integers(0, N_VALUES, size=(n_seq, n_pairs))
    context = np.empty((n_seq, 2 * n_pairs), dtype=np.int64)
    context[:, 0::2] = keys
    context[:, 1::2] = N_KEYS + values
    if shuffle:
        order = np.argsort(rng.random((n_seq, n_pairs)), axis=1)
    else:
        order = np.broadcast_to(np.arange(n_pairs), (n_seq, n_pairs))
    return {"context": context,
            "queries": np.take_along_axis(keys, order, axis=1),
            "targets": np.take_along_axis(values, order, axis=1),
            "answer_at": 2 * order + 1}


def features(batch, previous=True):
    """Input vectors of the model: ``(X_q, X_c)``.

    Each context token ``t`` becomes ``x_t = [onehot(token_t), onehot(token_{t-1})]`` (zeros
    before the first token), shape ``(n_seq, 2 * n_pairs, D_IN)``. The second half is what a
    "previous-token head" would compute in a two-layer transformer; here it is handed in.
    Each query becomes ``[onehot(key), 0]``, shape ``(n_seq, n_queries, D_IN)``.
    ``previous=False`` leaves the second half at zero everywhere (the ablation).
    """
    eye = np.eye(len(VOCAB))
    current = eye[batch["context"]]
    before = np.zeros_like(current)
    if previous:
        before[:, 1:] = current[:, :-1]
    X_c = np.concatenate([current, before], axis=-1)
    asked = eye[batch["queries"]]
    X_q = np.concatenate([asked, np.zeros_like(asked)], axis=-1)
    return X_q, X_c


def init_params(rng, d_k=16, d_v=16, scale=0.1):
    """Small random weights of the tiny model: ``W_q, W_k (D_IN, d_k)``, ``W_v (D_IN, d_v)``,
    ``W_o (d_v, N_VALUES)``."""
    shapes = {"W_q": (D_IN, d_k), "W_k": (D_IN, d_k), "W_v": (D_IN, d_v), "W_o": (d_v, N_VALUES)}
    return {name: scale * rng.standard_normal(shape) for name, shape in shapes.items()}


def cross_entropy(logits, targets):
    """Mean cross-entropy of ``logits (..., N_VALUES)`` against integer ``targets (...)``.

    Returns ``(loss, d_logits)`` where ``d_logits`` is the gradient of the mean loss:
    ``(softmax(logits) - onehot(targets)) / number_of_predictions``.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    count = targets.size
    d_logits = np.exp(log_probs)
    d_logits[..., :] -= np.eye(logits.shape[-1])[targets]
    return float(-picked.mean()), d_logits / count


def accuracy(logits, targets):
    """Fraction of predictions whose largest logit is the target."""
    return float(np.mean(np.argmax(logits, axis=-1) == targets))


def weight_grad(X, d_Y):
    """Gradient of a shared weight matrix ``W`` in ``Y = X @ W``, summed over every batch position:
    ``X`` ``(..., d_in)`` and ``d_Y`` ``(..., d_out)`` give ``(d_in, d_out)``."""
    return X.reshape(-1, X.shape[-1]).T @ d_Y.reshape(-1, d_Y.shape[-1])


class Adam:
    """Adam (Kingma & Ba, 2015) on a dict of arrays, updated in place by :meth:`step`."""

    def __init__(self, params, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = {name: np.zeros_like(value) for name, value in params.items()}
        self.v = {name: np.zeros_like(value) for name, value in params.items()}
        self.t = 0

    def step(self, params, grads):
        self.t += 1
        for name in params:
            self.m[name] = self.beta1 * self.m[name] + (1 - self.beta1) * grads[name]
            self.v[name] = self.beta2 * self.v[name] + (1 - self.beta2) * grads[name] ** 2
            m_hat = self.m[name] / (1 - self.beta1 ** self.t)
            v_hat = self.v[name] / (1 - self.beta2 ** self.t)
            params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def tokens(ids):
    """The characters of a row of token ids."""
    return [VOCAB[int(i)] for i in np.ravel(ids)]


def describe(batch, index=0):
    """One problem as text, e.g. ``'c9k8j3f1  ? c -> 9   ? j -> 3 ...'``."""
    context = "".join(tokens(batch["context"][index]))
    asked = "   ".join(f"? {VOCAB[int(q)]} -> {int(t)}"
                       for q, t in zip(batch["queries"][index], batch["targets"][index]))
    return f"{context}   {asked}"
