"""Hidden suite of 03-qkv: hard_lookup, soft_lookup, scaled_dot_product_attention, padding_mask,
nadaraya_watson.

The expected values are computed here, in float64, by straightforward implementations of the
curriculum's contract; the learner's results cross back as plain arrays and are compared on this
side. Every test says which property it checks; ``mistakes`` names a catalogued mistake when the
learner's result matches it.
"""
import numpy as np
import pytest

from autograder.kit import (as_array, as_pair, call, check, expect_close, expect_shape,
                            expect_sums_to_one, fail, mistakes, points)

from attention_kit import batched_keys_hint, expect_clean_call, softmax

ASSIGNMENT = "03-qkv"
F32 = {"rtol": 1e-4, "atol": 1e-5}   # float32 carries about 7 significant digits


# ------------------------------------------------------------------ trusted float64 references

def ref_hard(query, keys, values):
    return np.asarray(values, dtype=np.float64)[int(np.argmax(keys @ query))]


def ref_soft(query, keys, values, temperature=1.0):
    return softmax(np.asarray(keys, np.float64) @ np.asarray(query, np.float64)
                          / temperature) @ np.asarray(values, np.float64)


def ref_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(K.shape[-1])
    weights = softmax(scores, mask=mask)
    return weights @ V, weights


def ref_padding(lengths, T):
    return np.array([[i < n for i in range(T)] for n in lengths], dtype=bool).reshape(len(lengths), T)


def ref_nw(x_query, x_keys, y_values, bandwidth):
    xq, xk = np.asarray(x_query, np.float64), np.asarray(x_keys, np.float64)
    scores = -((xq[:, None] - xk[None, :]) ** 2) / (2.0 * float(bandwidth) ** 2)
    return softmax(scores, axis=-1) @ np.asarray(y_values, np.float64)


# ------------------------------------------------------------------ helpers

WARNING_HINT = ("An overflow in exp usually means the maximum was not subtracted; an invalid value, "
                "a 0/0 or -inf minus -inf (for example a row where every key is masked).")


def lookup_data(seed, n, d, d_v):
    """A query, keys of very different lengths (so 'nearest' and 'largest dot product' differ),
    and values."""
    rng = np.random.default_rng(seed)
    keys = rng.normal(size=(n, d)) * rng.uniform(0.3, 3.0, size=(n, 1))
    return rng.normal(size=d), keys, rng.normal(size=(n, d_v))


def attention_data(seed, batch, T_q, T_k, d_k, d_v, scale=1.0):
    rng = np.random.default_rng(seed)
    return (scale * rng.normal(size=batch + (T_q, d_k)), scale * rng.normal(size=batch + (T_k, d_k)),
            rng.normal(size=batch + (T_k, d_v)))


def call_attention(submission, Q, K, V, **kwargs):
    """The learner's (output, weights), each checked to be a numeric array."""
    def hint(error):
        if "mask" in kwargs and error.cause == "boolean-index":
            return (f"The mask had shape {np.shape(kwargs['mask'])}: a mask only needs to "
                    f"broadcast to the scores' shape, so use np.where(mask, scores, ...) rather "
                    f"than boolean indexing scores[~mask].")
        return batched_keys_hint(error, K)
    result = call(submission, "scaled_dot_product_attention", Q, K, V, hint=hint, **kwargs)
    result = as_pair(result, "scaled_dot_product_attention(Q, K, V)")
    return (as_array(result[0], "the output (first returned value)"),
            as_array(result[1], "the weights (second returned value)"))


def attention_mistakes(submission, *args, **kwargs):
    """Catalogued mistakes of scaled_dot_product_attention: (outputs, weights)."""
    return (mistakes(ASSIGNMENT, "scaled_dot_product_attention", *args, pick=0, learner=submission,
                     **kwargs),
            mistakes(ASSIGNMENT, "scaled_dot_product_attention", *args, pick=1, learner=submission,
                     **kwargs))


def expect_attention(submission, what, Q, K, V, mask=None, tolerance=None):
    """Compare weights first (mistakes show there), then the output."""
    kwargs = {} if mask is None else {"mask": mask}
    out, weights = call_attention(submission, Q, K, V, **kwargs)
    ref_out, ref_weights = ref_attention(Q, K, V, mask)
    wrong_out, wrong_weights = attention_mistakes(submission, Q, K, V, **kwargs)
    tol = tolerance or {}
    expect_close(weights, ref_weights, f"the weights of {what}", mistakes=wrong_weights, **tol)
    expect_close(out, ref_out, f"the output of {what}", mistakes=wrong_out, **tol)
    return out, weights


# ------------------------------------------------------------------ hard_lookup

@points(1, "hard_lookup")
@pytest.mark.parametrize("n, d, d_v, seed", [(6, 3, 2, 0), (10, 5, 4, 1), (25, 8, 3, 2), (1, 4, 2, 3)],
                         ids=["n=6", "n=10", "n=25", "n=1"])
def test_hard_lookup_values(submission, n, d, d_v, seed):
    """returns the value of the key with the largest dot product"""
    query, keys, values = lookup_data(seed, n, d, d_v)
    expect_close(submission.hard_lookup(query, keys, values), ref_hard(query, keys, values),
                 f"hard_lookup with {n} keys of dimension {d} and values of dimension {d_v}",
                 mistakes=mistakes(ASSIGNMENT, "hard_lookup", query, keys, values,
                                   learner=submission))


@points(1, "hard_lookup")
def test_hard_lookup_first_on_ties(submission):
    """takes the first of several keys that share the largest dot product"""
    keys = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 0.0], [2.0, 1.0], [1.0, 3.0]])
    values = np.arange(10.0).reshape(5, 2)
    query = np.array([1.0, 0.5])          # scores 0.5, 2.5, 1, 2.5, 2.5: keys 1, 3 and 4 tie
    expect_close(submission.hard_lookup(query, keys, values), values[1],
                 "hard_lookup when keys 1, 3 and 4 tie for the largest score",
                 mistakes=mistakes(ASSIGNMENT, "hard_lookup", query, keys, values,
                                   learner=submission))


@points(1, "hard_lookup")
def test_hard_lookup_dot_product_not_distance(submission):
    """ranks keys by dot product, not by distance or by angle"""
    query = np.array([1.0, 0.0])
    keys = np.array([[0.9, 0.3],     # nearest to the query
                     [5.0, 0.1],     # smallest angle (largest cosine)
                     [8.0, 6.0],     # largest dot product
                     [-1.0, 2.0]])   # smallest dot product
    values = np.array([[1.0, -1.0], [2.0, -2.0], [3.0, -3.0], [4.0, -4.0]])
    expect_close(submission.hard_lookup(query, keys, values), values[2],
                 "hard_lookup where the nearest key, the best-aligned key and the key with the "
                 "largest dot product are three different keys",
                 mistakes=mistakes(ASSIGNMENT, "hard_lookup", query, keys, values,
                                   learner=submission))


@points(1, "hard_lookup")
def test_hard_lookup_clean(submission):
    """leaves its inputs unchanged, emits no warning and prints nothing"""
    query, keys, values = lookup_data(4, 7, 3, 2)
    submission.hard_lookup(query, keys, values)
    expect_clean_call(submission, "hard_lookup", hint=WARNING_HINT)


# ------------------------------------------------------------------ soft_lookup

@points(1, "soft_lookup")
@pytest.mark.parametrize("n, d, d_v, seed", [(5, 3, 2, 10), (12, 6, 4, 11)], ids=["n=5", "n=12"])
def test_soft_lookup_values(submission, n, d, d_v, seed):
    """equals softmax(keys @ query) @ values at the default temperature 1"""
    query, keys, values = lookup_data(seed, n, d, d_v)
    expect_close(submission.soft_lookup(query, keys, values), ref_soft(query, keys, values),
                 f"soft_lookup with {n} keys of dimension {d} (temperature 1)",
                 mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, values,
                                   learner=submission))


@points(1, "soft_lookup")
def test_soft_lookup_temperature(submission):
    """divides the scores by the temperature"""
    query, keys, values = lookup_data(12, 6, 4, 3)
    for temperature in (0.3, 2.5, 40.0):
        expect_close(submission.soft_lookup(query, keys, values, temperature=temperature),
                     ref_soft(query, keys, values, temperature),
                     f"soft_lookup with temperature={temperature}",
                     mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, values,
                                       temperature=temperature, learner=submission))


@points(1, "soft_lookup")
def test_soft_lookup_tiny_temperature(submission):
    """at a tiny temperature it becomes the hard lookup, without overflow or warnings"""
    query, keys, values = lookup_data(13, 8, 4, 3)
    result = submission.soft_lookup(query, keys, values, temperature=1e-3)
    expect_close(result, ref_soft(query, keys, values, 1e-3), "soft_lookup with temperature=0.001",
                 mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, values, temperature=1e-3,
                                   learner=submission))
    expect_clean_call(submission, "soft_lookup", hint=WARNING_HINT)


@points(1, "soft_lookup")
def test_soft_lookup_huge_temperature(submission):
    """at a huge temperature it becomes the plain mean of the values"""
    query, keys, values = lookup_data(14, 7, 3, 2)
    expect_close(submission.soft_lookup(query, keys, values, temperature=1e7), values.mean(axis=0),
                 "soft_lookup with temperature=1e7 (the mean of the values)", rtol=1e-5, atol=1e-6,
                 mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, values, temperature=1e7,
                                   learner=submission))


@points(1, "soft_lookup")
def test_soft_lookup_weights(submission):
    """with the identity as values it returns its weights: positive, summing to 1"""
    query, keys, _ = lookup_data(15, 6, 3, 1)
    weights = as_array(submission.soft_lookup(query, keys, np.eye(6), temperature=0.7),
                       "soft_lookup(query, keys, identity)")
    expect_shape(weights, (6,), "soft_lookup(query, keys, values) with values of shape (6, 6)")
    check(np.all(weights >= 0) and abs(weights.sum() - 1) < 1e-6,
          f"with the identity matrix as values, soft_lookup returns its weights; they should be "
          f"non-negative and sum to 1, but they sum to {weights.sum():.6g} (min {weights.min():.3g}).")
    expect_close(weights, ref_soft(query, keys, np.eye(6), 0.7), "the weights of soft_lookup",
                 mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, np.eye(6), temperature=0.7,
                                   learner=submission))


@points(1, "soft_lookup")
def test_soft_lookup_float32_and_clean(submission):
    """works on float32 input and leaves its inputs unchanged"""
    query, keys, values = (a.astype(np.float32) for a in lookup_data(16, 9, 5, 3))
    expect_close(submission.soft_lookup(query, keys, values, temperature=0.5),
                 ref_soft(query, keys, values, 0.5), "soft_lookup of float32 input", **F32,
                 mistakes=mistakes(ASSIGNMENT, "soft_lookup", query, keys, values, temperature=0.5,
                                   learner=submission))
    expect_clean_call(submission, "soft_lookup", hint=WARNING_HINT)


# ------------------------------------------------------------------ scaled_dot_product_attention

@points(1, "scaled_dot_product_attention")
@pytest.mark.parametrize("T_q, T_k, d_k, d_v, seed", [(3, 5, 4, 2, 20), (6, 4, 9, 3, 21)],
                         ids=["Tq=3,Tk=5,dk=4,dv=2", "Tq=6,Tk=4,dk=9,dv=3"])
def test_attention_values(submission, T_q, T_k, d_k, d_v, seed):
    """computes softmax(Q K^T / sqrt(d_k)) V and the weights, without a mask"""
    Q, K, V = attention_data(seed, (), T_q, T_k, d_k, d_v, scale=1.5)
    out, weights = expect_attention(submission, f"Q {Q.shape}, K {K.shape}, V {V.shape}", Q, K, V)
    expect_shape(out, (T_q, d_v), "the output")


@points(1, "scaled_dot_product_attention")
def test_attention_rows_sum_to_one(submission):
    """each row of weights is a distribution over the keys (non-negative, sums to 1)"""
    Q, K, V = attention_data(22, (), 5, 7, 6, 2, scale=2.0)
    _, weights = call_attention(submission, Q, K, V)
    expect_shape(weights, (5, 7), "the weights for 5 queries and 7 keys")
    check(np.all(weights >= 0), "the weights should be non-negative.")
    expect_sums_to_one(weights, "the weights (one row per query, one column per key)", axis=-1)


@points(1, "scaled_dot_product_attention")
def test_attention_batch_dimensions(submission):
    """leading batch dimensions: (2, 3, T, d) inputs are attended batch by batch"""
    Q, K, V = attention_data(23, (2, 3), 4, 5, 6, 3)
    out, weights = expect_attention(submission, "a batch of shape (2, 3)", Q, K, V)
    expect_shape(out, (2, 3, 4, 3), "the output of a batch")


@points(1, "scaled_dot_product_attention")
def test_attention_causal_mask(submission):
    """a (T, T) mask shared by the batch: masked keys get exactly zero weight"""
    Q, K, V = attention_data(24, (3,), 5, 5, 4, 2, scale=1.5)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    _, weights = expect_attention(submission, "a batch with a (5, 5) lower-triangular mask", Q, K, V, mask)
    check(np.all(np.abs(weights[..., ~mask]) < 1e-12),
          "weights of masked keys (mask False) should be exactly 0.")


@points(1, "scaled_dot_product_attention")
def test_attention_padding_mask(submission):
    """a (B, 1, T_k) padding mask broadcasts over the queries"""
    Q, K, V = attention_data(25, (3,), 4, 6, 5, 3)
    mask = (np.arange(6)[None, :] < np.array([6, 2, 4])[:, None])[:, None, :]   # (3, 1, 6)
    expect_attention(submission, "a batch with a (3, 1, 6) padding mask", Q, K, V, mask)


@points(1, "scaled_dot_product_attention")
def test_attention_fully_masked_rows(submission):
    """a query whose every key is masked gets zero weights and zero output, no NaN, no warning"""
    Q, K, V = attention_data(26, (2,), 4, 5, 3, 2)
    mask = np.random.default_rng(26).random((2, 4, 5)) < 0.6
    mask[0, 1] = False
    mask[0, 3] = False
    mask[1, 0] = False
    mask[1, 2, 4] = True
    out, weights = call_attention(submission, Q, K, V, mask=mask)
    empty = ~mask.any(axis=-1)
    expect_shape(weights, mask.shape, "the weights")
    expect_shape(out, (2, 4, 2), "the output")
    if not np.isfinite(weights[empty]).all() or not np.isfinite(out[empty]).all():
        fail("a query whose every key is masked should get all-zero weights and an all-zero output, "
             "but yours contain NaN or inf. With masked scores set to -inf, such a row is all -inf: "
             "softmax computes -inf - (-inf) = NaN. Treat rows without any allowed key separately "
             "(mask.any(axis=-1, keepdims=True) finds them).")
    expect_attention(submission, "a mask with fully masked rows (batch 0 rows 1 and 3, batch 1 row 0)",
                     Q, K, V, mask)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)
    everything_masked = np.zeros((2, 4, 5), dtype=bool)
    out, weights = expect_attention(submission, "a mask that is False everywhere", Q, K, V,
                                    everything_masked)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)


@points(1, "scaled_dot_product_attention")
def test_attention_huge_scores(submission):
    """huge scores (about 1e5) give one-hot weights without overflow or warnings"""
    Q, K, V = attention_data(27, (2,), 3, 6, 4, 2, scale=300.0)
    expect_attention(submission, "inputs whose scores are about 1e5", Q, K, V)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)
    mask = np.random.default_rng(27).random((3, 6)) < 0.5
    mask[:, 0] = True
    expect_attention(submission, "inputs whose scores are about 1e5, with a mask", Q, K, V, mask)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)


@points(1, "scaled_dot_product_attention")
def test_attention_float32(submission):
    """works on float32 input, with and without a mask"""
    Q, K, V = (a.astype(np.float32) for a in attention_data(28, (2,), 4, 5, 8, 3, scale=1.5))
    expect_attention(submission, "float32 input", Q, K, V, tolerance=F32)
    mask = np.tril(np.ones((4, 5), dtype=bool))
    mask[2] = False
    expect_attention(submission, "float32 input with a mask", Q, K, V, mask, tolerance=F32)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)


@points(1, "scaled_dot_product_attention")
def test_attention_single_key_and_query(submission):
    """T = 1: one query and one key (weight 1, or 0 when masked)"""
    Q, K, V = attention_data(29, (), 1, 1, 3, 2)
    out, weights = expect_attention(submission, "one query and one key", Q, K, V)
    expect_close(weights, [[1.0]], "the weight of a single key")
    Q2 = np.concatenate([Q, -Q])
    expect_attention(submission, "two queries and one key, masked for the second query", Q2, K, V,
                     np.array([[True], [False]]))
    Q, K, V = attention_data(30, (2,), 1, 4, 3, 2)
    expect_attention(submission, "a batch of single queries", Q, K, V)


@points(1, "scaled_dot_product_attention")
def test_attention_all_true_mask_and_clean(submission):
    """mask=None, an all-True mask and no mask agree; inputs are left unchanged"""
    Q, K, V = attention_data(31, (), 4, 6, 5, 2)
    plain, _ = expect_attention(submission, "mask=None", Q, K, V)
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)
    out, _ = call_attention(submission, Q, K, V, mask=None)
    expect_close(out, plain, "the output with mask=None passed explicitly")
    everything_allowed = np.ones((4, 6), dtype=bool)
    out, _ = call_attention(submission, Q, K, V, mask=everything_allowed)
    expect_close(out, plain, "the output with an all-True mask (it should equal no mask)",
                 mistakes=attention_mistakes(submission, Q, K, V, mask=everything_allowed)[0])
    expect_clean_call(submission, "scaled_dot_product_attention", hint=WARNING_HINT)


# ------------------------------------------------------------------ padding_mask

def expect_padding(submission, lengths, T):
    lengths = np.asarray(lengths)
    shown = (f"padding_mask({lengths.tolist()}, {T})" if len(lengths) <= 8
             else f"padding_mask(lengths of shape {lengths.shape}, T={T})")
    result = as_array(submission.padding_mask(lengths, T), shown, dtype_kind="biuf")
    expect_shape(result, (len(lengths), T), f"padding_mask(lengths of shape {lengths.shape}, T={T})")
    wrong = mistakes(ASSIGNMENT, "padding_mask", lengths, T, learner=submission).derive(
        lambda v: np.asarray(v).astype(float))
    expect_close(result.astype(float), ref_padding(lengths, T).astype(float),
                 f"{shown} (as 0/1)", mistakes=wrong)
    return result


@points(1, "padding_mask")
@pytest.mark.parametrize("lengths, T", [([3, 1, 4, 2], 5), ([7, 2, 5, 7, 1, 6], 8)],
                         ids=["B=4,T=5", "B=6,T=8"])
def test_padding_mask_values(submission, lengths, T):
    """True exactly at positions i < lengths[b]"""
    expect_padding(submission, lengths, T)


@points(1, "padding_mask")
def test_padding_mask_is_boolean(submission):
    """returns a boolean array of shape (B, T)"""
    result = expect_padding(submission, [2, 4, 1], 6)
    check(result.dtype == bool, f"padding_mask should return a boolean array (True = real token), "
                                f"but its dtype is {result.dtype}; a comparison such as `<` gives "
                                f"booleans directly.")


@points(1, "padding_mask")
def test_padding_mask_edges(submission):
    """lengths 0 (all False) and T (all True), and T = 1"""
    expect_padding(submission, [0, 5, 3, 0], 5)
    expect_padding(submission, [1, 0], 1)
    expect_padding(submission, [4], 4)


@points(1, "padding_mask")
def test_padding_mask_large_batch(submission):
    """a large batch of random lengths (B = 40, T = 30)"""
    lengths = np.random.default_rng(41).integers(0, 31, size=40)
    expect_padding(submission, lengths, 30)


@points(1, "padding_mask")
def test_padding_mask_clean(submission):
    """leaves its input unchanged, emits no warning and prints nothing"""
    lengths = np.array([3, 0, 2])
    submission.padding_mask(lengths, 4)
    expect_clean_call(submission, "padding_mask", hint=WARNING_HINT)


# ------------------------------------------------------------------ nadaraya_watson

def regression_data(seed, n, m):
    rng = np.random.default_rng(seed)
    x_keys = rng.uniform(-3.0, 3.0, size=n)
    return rng.uniform(-3.5, 3.5, size=m), x_keys, np.sin(x_keys) + 0.3 * rng.normal(size=n)


def expect_nw(submission, what, x_query, x_keys, y_values, bandwidth, tolerance=None):
    expected = ref_nw(x_query, x_keys, y_values, bandwidth)
    known = mistakes(ASSIGNMENT, "nadaraya_watson", x_query, x_keys, y_values, bandwidth,
                     learner=submission)
    result = expect_close(submission.nadaraya_watson(x_query, x_keys, y_values, bandwidth), expected,
                          what, mistakes=known, **(tolerance or {}))
    return result


@points(1, "nadaraya_watson")
@pytest.mark.parametrize("n, m, bandwidth, seed", [(20, 7, 0.5, 50), (40, 15, 1.3, 51)],
                         ids=["n=20,bandwidth=0.5", "n=40,bandwidth=1.3"])
def test_nadaraya_watson_values(submission, n, m, bandwidth, seed):
    """Gaussian-kernel weighted average exp(-(x_q - x_k)^2 / (2 bandwidth^2))"""
    x_query, x_keys, y_values = regression_data(seed, n, m)
    result = expect_nw(submission, f"nadaraya_watson with {m} queries, {n} keys, bandwidth "
                       f"{bandwidth}", x_query, x_keys, y_values, bandwidth)
    expect_shape(result, (m,), "the estimates")


@points(1, "nadaraya_watson")
def test_nadaraya_watson_tiny_bandwidth(submission):
    """a tiny bandwidth gives the nearest key's value, with no 0/0, NaN or warning"""
    x_query, x_keys, y_values = regression_data(52, 12, 9)
    expect_nw(submission, "nadaraya_watson with bandwidth 1e-4 (the nearest key's value)",
              x_query, x_keys, y_values, 1e-4)
    expect_clean_call(submission, "nadaraya_watson", hint=WARNING_HINT)
    far = np.array([-50.0, 60.0])      # every kernel value underflows to 0 here
    expect_nw(submission, "nadaraya_watson for queries far from every key, bandwidth 0.1",
              far, x_keys, y_values, 0.1)
    expect_clean_call(submission, "nadaraya_watson", hint=WARNING_HINT)


@points(1, "nadaraya_watson")
def test_nadaraya_watson_huge_bandwidth(submission):
    """a huge bandwidth gives the mean of the values for every query"""
    x_query, x_keys, y_values = regression_data(53, 15, 5)
    expect_nw(submission, "nadaraya_watson with bandwidth 1e5 (the mean of the values)",
              x_query, x_keys, y_values, 1e5)


@points(1, "nadaraya_watson")
def test_nadaraya_watson_float32(submission):
    """works on float32 input"""
    x_query, x_keys, y_values = (a.astype(np.float32) for a in regression_data(54, 25, 10))
    expect_nw(submission, "nadaraya_watson of float32 input (bandwidth 0.7)", x_query, x_keys,
              y_values, 0.7, tolerance=F32)


@points(1, "nadaraya_watson")
def test_nadaraya_watson_single_key_and_query(submission):
    """one key (every estimate is its value) and one query"""
    x_query, x_keys, y_values = regression_data(55, 8, 4)
    expect_nw(submission, "nadaraya_watson with a single key", x_query, x_keys[:1], y_values[:1], 0.5)
    expect_nw(submission, "nadaraya_watson with a single query", x_query[:1], x_keys, y_values, 0.5)


@points(1, "nadaraya_watson")
def test_nadaraya_watson_clean(submission):
    """leaves its inputs unchanged, emits no warning and prints nothing"""
    x_query, x_keys, y_values = regression_data(56, 10, 6)
    submission.nadaraya_watson(x_query, x_keys, y_values, 0.4)
    expect_clean_call(submission, "nadaraya_watson", hint=WARNING_HINT)
