"""What this course's hidden suites share beyond the engine's kit (``autograder.kit``): the trusted
softmax expected values are computed with, the hints about its own functions, and
``expect_clean_call`` with this course's default hint.

A module at the top of a course's suites folder is importable by every suite of that course
(``from attention_kit import softmax``): the engine puts the folder on the import path while a
suite runs, counts its files in the cache key, and ships them in a Gradescope zip.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autograder.kit import SubmissionError
from autograder.kit import expect_clean_call as kit_expect_clean_call

#: What usually makes a function of this course warn: ``exp`` of large logits.
WARNING_HINT = "An overflow in exp usually means the maximum was not subtracted first."


def expect_clean_call(submission: Any, name: str,
                      hint: str | Callable[[str], str | None] | None = WARNING_HINT,
                      **kwargs: Any) -> None:
    """The kit's :func:`autograder.kit.expect_clean_call`, a warning explained by default as an
    overflow in ``exp`` (this course's functions exponentiate; ``hint=None`` says nothing)."""
    kit_expect_clean_call(submission, name, hint=hint, **kwargs)


def batched_keys_hint(error: SubmissionError, K: Any) -> str | None:
    """For a matrix product that failed on keys with batch dimensions: the usual cause."""
    if np.ndim(K) > 2 and error.cause == "matmul":
        return (f"It was called with batch dimensions, K of shape {np.shape(K)}: `K.T` reverses "
                f"every axis of a batch, `np.swapaxes(K, -1, -2)` swaps only the last two.")
    return None


def softmax(z: Any, axis: int = -1, mask: Any = None) -> np.ndarray:
    """The trusted softmax suites compute expected values with, in float64.

    ``mask`` (True = may be attended to, broadcast against ``z``) gives the other entries weight 0.
    A slice with nothing to attend to (every entry masked or -inf) gives zeros, not nan, and no
    warning."""
    z = np.asarray(z, dtype=np.float64)
    if mask is not None:
        z = np.where(np.asarray(mask, dtype=bool), z, -np.inf)
    top = z.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(z - top)
    total = e.sum(axis=axis, keepdims=True)
    weights: np.ndarray = e / np.where(total > 0, total, 1.0)
    return weights
