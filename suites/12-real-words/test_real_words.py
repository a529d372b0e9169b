"""Hidden suite of 12-real-words: edit_distance, error_rates, cross_attention,
cross_attention_backward, cached_attention_step, beam_search.

Expected values come from the oracles below, written from the definitions: the edit distance by
its recursion over prefixes (memoised), attention one head at a time with the kit's softmax,
gradients by central differences of that oracle, and beam search step by step as the notebook
states it, checked against an exhaustive search where a beam is wide enough to keep everything.
"""
import functools
import itertools
import math

import numpy as np
import pytest

from autograder.kit import (as_array, as_float, as_pair, call, central_differences, check,
                            computed_once, expect_close, expect_plain_cache, expect_shape, fail,
                            forward_for_backward, mistakes, points, suite_function)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "12-real-words"
F32 = {"rtol": 1e-4, "atol": 1e-5}
GRAD = {"rtol": 1e-5, "atol": 1e-7}


def named(submission, exercise, *args, pick=None, **kwargs):
    return mistakes(ASSIGNMENT, exercise, *args, pick=pick, learner=submission, **kwargs)


def normal(seed, shape, scale=1.0, dtype=np.float64):
    return (np.random.default_rng(seed).normal(size=shape) * scale).astype(dtype)


def weights(seed, d_model, count=4, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [(2.0 * rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)).astype(dtype)
            for _ in range(count)]


# ================================================================== edit_distance

def oracle_distance(a, b):
    a, b = tuple(a), tuple(b)

    @functools.lru_cache(maxsize=None)
    def d(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return d(len(a), len(b))


def distance_of(submission, a, b):
    value = call(submission, "edit_distance", a, b)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        fail(f"edit_distance({a!r}, {b!r}) should return a number (an int), but "
             f"{type(value).__name__} came back.")
    return value


def check_distances(submission, pairs):
    for a, b in pairs:
        found, expected = distance_of(submission, a, b), oracle_distance(a, b)
        if found != expected:
            hint = ""
            if found > expected and len(a) and len(b):
                hint = (" It is larger than it should be: does a substitution cost 2 (a deletion "
                        "plus an insertion) in your table, or does a match cost something?")
            if 0 in (len(a), len(b)):
                hint = " Row 0 and column 0 of the table count the edits to and from the empty prefix."
            fail(f"edit_distance({a!r}, {b!r}) should be {expected}, not {found}.{hint}")


def random_words(seed, count, alphabet="abcde", longest=8):
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list(alphabet), size=rng.integers(1, longest + 1))) for _ in range(count)]


@points(1, "edit_distance")
def test_edit_distance_classic_pairs(submission):
    """classic pairs: kitten/sitting, flaw/lawn, a word and itself"""
    check_distances(submission, [("kitten", "sitting"), ("flaw", "lawn"), ("intention", "execution"),
                                 ("knight", "knight"), ("ab", "ba")])


@points(1, "edit_distance")
def test_edit_distance_empty(submission):
    """an empty sequence: the distance is the other one's length"""
    check_distances(submission, [("", "yacht"), ("yacht", ""), ("", ""), ((), ("N", "AY", "T"))])


@points(1, "edit_distance")
def test_edit_distance_phonemes(submission):
    """sequences of phonemes (tuples and lists of strings), not only strings"""
    check_distances(submission, [(("K", "N", "AY", "T"), ("N", "AY", "T")),
                                 (["Y", "AE", "K", "T"], ["Y", "AA", "T"]),
                                 (("S", "AY", "K", "IH", "K"), ("P", "S", "IH", "K", "IH", "K")),
                                 (("AA",), ("AE",))])


@points(1, "edit_distance")
def test_edit_distance_random_pairs(submission):
    """random words over a small alphabet, of different lengths"""
    words = random_words(10, 24)
    check_distances(submission, list(zip(words[::2], words[1::2])))


@points(1, "edit_distance")
def test_edit_distance_is_a_distance(submission):
    """symmetric, and no more than the longer length; the last symbols count"""
    check_distances(submission, [("abcdef", "abcdeg"), ("abcdeg", "abcdef"), ("xabc", "abc"),
                                 ("abc", "abcx"), ("a", "b")])
    for a, b in zip(random_words(11, 10), random_words(12, 10)):
        one, other = distance_of(submission, a, b), distance_of(submission, b, a)
        check(one == other, f"edit_distance({a!r}, {b!r}) = {one} but edit_distance({b!r}, {a!r}) = "
                            f"{other}: a distance must not depend on the order.")


@points(1, "edit_distance")
def test_edit_distance_clean(submission):
    """an int; changes nothing in place, prints nothing"""
    a, b = ["N", "AY", "T"], ["K", "N", "IH", "T"]
    value = distance_of(submission, a, b)
    check(value == 2, f"edit_distance({a}, {b}) should be 2, not {value}.")
    check(float(value).is_integer(), f"edit_distance should return a whole number, not {value!r}.")
    expect_clean_call(submission, "edit_distance", copy_hint="for example `a, b = list(a), list(b)`")


# ================================================================== error_rates

def oracle_rates(hypotheses, references):
    errors = length = wrong = 0
    for hypothesis, accepted in zip(hypotheses, references):
        distances = [oracle_distance(hypothesis, r) for r in accepted]
        best = distances.index(min(distances))
        errors += distances[best]
        length += len(accepted[best])
        wrong += distances[best] > 0
    return errors / length, wrong / len(hypotheses)


PHONES = ("AA", "AE", "AH", "B", "D", "IY", "K", "N", "S", "T")


def random_lexicon(seed, count):
    rng = np.random.default_rng(seed)
    references, hypotheses = [], []
    for _ in range(count):
        accepted = [tuple(rng.choice(PHONES, size=rng.integers(2, 7))) for _ in range(rng.integers(1, 4))]
        references.append(accepted)
        base = list(accepted[rng.integers(len(accepted))])
        for _ in range(rng.integers(0, 3)):          # 0 to 2 random edits
            kind, where = rng.integers(3), rng.integers(len(base) + 1)
            if kind == 0 and base:
                base.pop(min(where, len(base) - 1))
            elif kind == 1:
                base.insert(where, str(rng.choice(PHONES)))
            elif base:
                base[min(where, len(base) - 1)] = str(rng.choice(PHONES))
        hypotheses.append(tuple(base))
    return hypotheses, references


def check_rates(submission, hypotheses, references, what):
    result = as_pair(call(submission, "error_rates", hypotheses, references), "error_rates")
    per_found, wer_found = (as_float(v, f"the {name} from error_rates") for v, name in zip(result, ("PER", "WER")))
    per_expected, wer_expected = oracle_rates(hypotheses, references)
    found = named(submission, "error_rates", hypotheses, references)
    expect_close(wer_found, wer_expected, f"the WER {what}", mistakes=found.derive(lambda v: v[1]))
    expect_close(per_found, per_expected, f"the PER {what}", mistakes=found.derive(lambda v: v[0]))


@points(1, "error_rates")
def test_error_rates_one_pronunciation(submission):
    """words with one pronunciation each: PER as a ratio of sums, WER as a share of words"""
    hypotheses, references = random_lexicon(20, 12)
    references = [r[:1] for r in references]
    check_rates(submission, hypotheses, references, "of 12 words with one pronunciation each")


@points(1, "error_rates")
def test_error_rates_any_pronunciation(submission):
    """a word is right when it matches any of its accepted pronunciations"""
    hypotheses, references = random_lexicon(21, 15)
    check_rates(submission, hypotheses, references, "of 15 words with one to three pronunciations")


@points(1, "error_rates")
def test_error_rates_closest_reference(submission):
    """the closest reference's length counts, the first listed on a tie"""
    hypotheses = [("AA", "B"), ("K", "AE", "T"), ("S", "IY")]
    references = [[("AA", "B", "D"), ("AA",)], [("K", "AA", "T", "S", "IY"), ("K", "AH", "T")],
                  [("S", "IY", "N", "T"), ("S", "IY")]]
    check_rates(submission, hypotheses, references, "when two references are equally close")


@points(1, "error_rates")
def test_error_rates_clean(submission):
    """all right gives (0, 0); changes nothing in place, prints nothing"""
    hypotheses, references = random_lexicon(22, 8)
    right = [r[-1] for r in references]
    result = as_pair(call(submission, "error_rates", right, references), "error_rates")
    check(abs(float(result[0])) < 1e-12 and abs(float(result[1])) < 1e-12,
          f"error_rates of outputs that each match an accepted pronunciation should be (0, 0), not "
          f"({float(result[0]):.4g}, {float(result[1]):.4g}).")
    expect_clean_call(submission, "error_rates")


# ================================================================== cross_attention

def oracle_cross(X, M, W_q, W_k, W_v, W_o, n_heads, mask=None):
    X, M = np.asarray(X, np.float64), np.asarray(M, np.float64)
    W_q, W_k, W_v, W_o = (np.asarray(W, np.float64) for W in (W_q, W_k, W_v, W_o))
    d_k = X.shape[-1] // n_heads
    allowed = None if mask is None else np.asarray(mask, dtype=bool)
    heads, maps = [], []
    for j in range(n_heads):
        cols = slice(j * d_k, (j + 1) * d_k)
        scores = (X @ W_q[:, cols]) @ np.swapaxes(M @ W_k[:, cols], -1, -2) / math.sqrt(d_k)
        p = softmax(scores, mask=allowed)
        heads.append(p @ (M @ W_v[:, cols]))
        maps.append(p)
    return np.concatenate(heads, axis=-1) @ W_o, np.stack(maps, axis=-3)


def padding(lengths, T_k):
    """(B, 1, T_k): True at the real letters of each word."""
    return (np.arange(T_k)[None, :] < np.asarray(lengths)[:, None])[:, None, :]


def run_cross(submission, X, M, W, n_heads, mask=None):
    args = (X, M, *W, n_heads) + (() if mask is None else (mask,))
    result = call(submission, "cross_attention", *args)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail("cross_attention should return three values, (output, weights, cache).")
    output, weights_found, cache = result
    return (as_array(output, "the output of cross_attention"),
            as_array(weights_found, "the weights of cross_attention"), cache)


def check_cross(submission, X, M, W, n_heads, mask=None, what="", tol=None):
    output, weights_found, cache = run_cross(submission, X, M, W, n_heads, mask)
    expected_output, expected_weights = oracle_cross(X, M, *W, n_heads, mask)
    kwargs = {} if mask is None else {"mask": mask}
    found = named(submission, "cross_attention", X, M, *W, n_heads, **kwargs)
    expect_shape(weights_found, expected_weights.shape, f"the weights of cross_attention {what} "
                                                        f"(one T_q x T_k map per head)")
    expect_close(weights_found, expected_weights, f"the weights of cross_attention {what}",
                 mistakes=found.derive(lambda v: v[1]), **(tol or {}))
    expect_close(output, expected_output, f"the output of cross_attention {what}",
                 mistakes=found.derive(lambda v: v[0]), **(tol or {}))
    return cache


@points(1, "cross_attention")
def test_cross_attention_values(submission):
    """queries from X, keys and values from M, with T_q != T_k"""
    check_cross(submission, normal(30, (3, 8)), normal(31, (5, 8)), weights(32, 8), 2,
                what="for X (3, 8) and M (5, 8), 2 heads")


@points(1, "cross_attention")
def test_cross_attention_padding(submission):
    """a padding mask (B, 1, T_k): padded letters get weight 0, and every output step may read
    every real letter"""
    check_cross(submission, normal(33, (3, 4, 8)), normal(34, (3, 6, 8)), weights(35, 8), 2,
                padding([6, 3, 1], 6), what="with words of 6, 3 and 1 letters padded to 6")


@points(1, "cross_attention")
def test_cross_attention_heads(submission):
    """one map per head, for 4 heads"""
    check_cross(submission, normal(36, (2, 3, 8)), normal(37, (2, 7, 8)), weights(38, 8), 4,
                padding([7, 5], 7), what="with 4 heads")


@points(1, "cross_attention")
def test_cross_attention_batch_and_one_key(submission):
    """leading batch axes (2, 3); a memory of a single row"""
    check_cross(submission, normal(39, (2, 3, 4, 6)), normal(40, (2, 3, 5, 6)), weights(41, 6), 3,
                what="for X (2, 3, 4, 6) and M (2, 3, 5, 6)")
    check_cross(submission, normal(42, (2, 4, 6)), normal(43, (2, 1, 6)), weights(44, 6), 2,
                what="for a memory M of one row per item, (2, 1, 6)")


@points(1, "cross_attention")
def test_cross_attention_float32(submission):
    """works on float32"""
    check_cross(submission, normal(45, (2, 3, 8), dtype=np.float32), normal(46, (2, 5, 8), dtype=np.float32),
                weights(47, 8, dtype=np.float32), 2, padding([5, 2], 5), what="for float32 inputs", tol=F32)


@points(1, "cross_attention")
def test_cross_attention_clean(submission):
    """a cache of plain data; changes nothing in place, prints nothing, no warning"""
    cache = check_cross(submission, normal(48, (2, 3, 6)), normal(49, (2, 4, 6)), weights(50, 6), 2,
                        padding([4, 2], 4))
    expect_clean_call(submission, "cross_attention",
                      hint="A warning in attention usually means exp of scores whose maximum was "
                           "not subtracted, or a row whose every key is masked divided by 0.")
    expect_plain_cache(cache, "cross_attention", "cross_attention_backward")


# ================================================================== cross_attention_backward

NAMES = ("d_X", "d_M", "d_W_q", "d_W_k", "d_W_v", "d_W_o")


def reference_cache(X, M, W, n_heads, mask=None):
    """The cache laid out as the reference's, (X, M, W_q, W_k, W_v, W_o, Q, K, V, weights,
    merged): what the catalogue's mistakes read."""
    X, M = np.asarray(X, np.float64), np.asarray(M, np.float64)
    W_q, W_k, W_v, W_o = (np.asarray(w, np.float64) for w in W)
    d_k = X.shape[-1] // n_heads

    def heads(Z):
        return np.stack([Z[..., j * d_k:(j + 1) * d_k] for j in range(n_heads)], axis=-3)
    Q, K, V = heads(X @ W_q), heads(M @ W_k), heads(M @ W_v)
    allowed = None if mask is None else np.expand_dims(np.asarray(mask, bool), -3)
    p = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k), mask=allowed)
    merged = np.concatenate([(p @ V)[..., j, :, :] for j in range(n_heads)], axis=-1)
    return (X, M, W_q, W_k, W_v, W_o, Q, K, V, p, merged)


@computed_once  # central differences on the suite's own inputs, once per grading process
def expected_gradients(X, M, W, n_heads, d_out, mask, which):
    inputs = [np.asarray(a, np.float64) for a in (X, M, *W)]
    d_out = np.asarray(d_out, np.float64)
    found = {}
    for index in which:
        def loss(value, index=index):
            args = [value if k == index else a for k, a in enumerate(inputs)]
            return float(np.sum(oracle_cross(*args, n_heads, mask)[0] * d_out))
        found[index] = central_differences(loss, inputs[index])
    return found


def check_cross_backward(submission, X, M, W, n_heads, mask=None, which=range(6), what="", tol=None):
    d_out = normal(int(abs(X.sum()) * 1000) % 997, X.shape[:-1] + (W[3].shape[1],), dtype=X.dtype)

    def forward():
        _, _, cache = run_cross(submission, X, M, W, n_heads, mask)
        return cache
    cache = forward_for_backward(submission, "cross_attention", "cross_attention_backward", forward, d_out)
    expect_plain_cache(cache, "cross_attention", "cross_attention_backward")
    output, _, _ = run_cross(submission, X, M, W, n_heads, mask)
    check(output.shape == X.shape and np.allclose(output, oracle_cross(X, M, *W, n_heads, mask)[0], **(tol or GRAD)),
          "cross_attention_backward is tested through the cache your cross_attention returns, and "
          "cross_attention is not right yet on this input: fix cross_attention first.")
    result = call(submission, "cross_attention_backward", d_out, cache)
    if not isinstance(result, (tuple, list)) or len(result) != 6:
        fail("cross_attention_backward should return six arrays, (d_X, d_M, d_W_q, d_W_k, d_W_v, d_W_o).")
    result = [as_array(v, f"{name} from cross_attention_backward") for v, name in zip(result, NAMES)]
    expected = expected_gradients(X, M, W, n_heads, d_out, mask, which)
    found = mistakes(ASSIGNMENT, "cross_attention_backward", d_out, reference_cache(X, M, W, n_heads, mask))
    for index in which:
        hint = " (M reaches the output through the keys and through the values: two paths)" if index == 1 else ""
        expect_close(result[index], expected[index], f"{NAMES[index]} {what}{hint}",
                     mistakes=found.derive(lambda v, index=index: v[index]), **(tol or GRAD))


@points(2, "cross_attention_backward")
def test_cross_attention_backward_inputs(submission):
    """d_X through the queries only; d_M through the keys and the values"""
    check_cross_backward(submission, normal(60, (3, 6)), normal(61, (4, 6)), weights(62, 6), 2,
                         which=(0, 1), what="for X (3, 6) and M (4, 6)")


@points(2, "cross_attention_backward")
def test_cross_attention_backward_weights(submission):
    """the four weight gradients, each pairing its projection's input with its gradient"""
    check_cross_backward(submission, normal(63, (4, 6)), normal(64, (3, 6)), weights(65, 6), 3,
                         which=(2, 3, 4, 5), what="for X (4, 6) and M (3, 6), 3 heads")


@points(1, "cross_attention_backward")
def test_cross_attention_backward_padding(submission):
    """with a padding mask: padded letters get no gradient"""
    check_cross_backward(submission, normal(66, (2, 3, 4)), normal(67, (2, 5, 4)), weights(68, 4), 2,
                         padding([5, 2], 5), what="with words of 5 and 2 letters padded to 5")


@points(1, "cross_attention_backward")
def test_cross_attention_backward_batch(submission):
    """leading batch axes: weight gradients summed over every position of every item"""
    check_cross_backward(submission, normal(69, (2, 2, 3, 4)), normal(70, (2, 2, 2, 4)), weights(71, 4), 2,
                         what="for X (2, 2, 3, 4) and M (2, 2, 2, 4)")


@points(1, "cross_attention_backward")
def test_cross_attention_backward_float32(submission):
    """works on float32"""
    check_cross_backward(submission, normal(72, (2, 3, 4), dtype=np.float32),
                         normal(73, (2, 4, 4), dtype=np.float32), weights(74, 4, dtype=np.float32), 2,
                         padding([4, 3], 4), which=(0, 1, 3), what="for float32 inputs", tol=F32)


@points(1, "cross_attention_backward")
def test_cross_attention_backward_uses_only_its_cache(submission):
    """uses only its cache: another forward pass in between changes nothing; no warning"""
    X, M, W = normal(75, (3, 4)), normal(76, (5, 4)), weights(77, 4)
    d_out = normal(78, (3, 4))
    cache = forward_for_backward(submission, "cross_attention", "cross_attention_backward",
                                 lambda: run_cross(submission, X, M, W, 2)[2], d_out)
    run_cross(submission, normal(79, (2, 4)), normal(80, (6, 4)), weights(81, 4), 2)
    result = call(submission, "cross_attention_backward", d_out, cache)
    if not isinstance(result, (tuple, list)) or len(result) != 6:
        fail("cross_attention_backward should return six arrays, (d_X, d_M, d_W_q, d_W_k, d_W_v, d_W_o).")
    expected = expected_gradients(X, M, W, 2, d_out, None, (1, 4))
    for index in (1, 4):
        got = as_array(result[index], NAMES[index])
        check(got.shape == expected[index].shape and np.allclose(got, expected[index], **GRAD),
              f"{NAMES[index]} is wrong when another cross_attention ran between the forward pass and "
              f"cross_attention_backward: the backward pass must take everything it needs from its "
              f"cache, not from global variables.")
    expect_clean_call(submission, "cross_attention_backward")


# ================================================================== cached_attention_step

def full_causal(X, W, n_heads):
    """Rows of causal multi-head self-attention, from the definition."""
    T = X.shape[-2]
    return oracle_cross(X, X, *W, n_heads, np.tril(np.ones((T, T), bool)))[0]


def empty_cache(lead, n_heads, d_k, dtype=np.float64):
    return {"K": np.zeros(lead + (n_heads, 0, d_k), dtype), "V": np.zeros(lead + (n_heads, 0, d_k), dtype)}


def cache_of(X, W, n_heads):
    """The keys and values of the rows of X, in the cache's layout (..., n_heads, T, d_k)."""
    d_k = X.shape[-1] // n_heads

    def heads(Z):
        return np.stack([Z[..., j * d_k:(j + 1) * d_k] for j in range(n_heads)], axis=-3)
    return {"K": heads(X @ W[1]), "V": heads(X @ W[2])}


def run_step(submission, x, cache, W, n_heads):
    result = call(submission, "cached_attention_step", x, cache, *W, n_heads)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail("cached_attention_step should return two values, (y, new_cache).")
    y, new_cache = result
    if not isinstance(new_cache, dict) or "K" not in new_cache or "V" not in new_cache:
        fail("the new cache from cached_attention_step should be a dict with 'K' and 'V'.")
    return as_array(y, "y from cached_attention_step"), {k: as_array(new_cache[k], f"new_cache[{k!r}]")
                                                         for k in ("K", "V")}


def check_steps(submission, X, W, n_heads, what, tol=None, start=0):
    """Write X's rows from position `start` on, from the cache of the rows before it; each output
    must equal full causal attention's row."""
    expected = full_causal(X, W, n_heads)
    d_k = X.shape[-1] // n_heads
    lead = X.shape[:-2]
    cache = cache_of(X[..., :start, :], W, n_heads) if start else empty_cache(lead, n_heads, d_k, X.dtype)
    for t in range(start, X.shape[-2]):
        found = named(submission, "cached_attention_step", X[..., t, :], cache, *W, n_heads)
        y, new_cache = run_step(submission, X[..., t, :], cache, W, n_heads)
        expect_shape(new_cache["K"], lead + (n_heads, t + 1, d_k),
                     f"the new cache's keys after position {t} (one more position than it was given)")
        expect_close(y, expected[..., t, :], f"the output at position {t} {what}",
                     mistakes=found.derive(lambda v: v[0]), **(tol or {"rtol": 1e-9, "atol": 1e-12}))
        cache = new_cache
    return cache


@points(2, "cached_attention_step")
def test_cached_attention_step_from_empty(submission):
    """from an empty cache, each step equals full causal attention's row (to 1e-12)"""
    check_steps(submission, normal(90, (6, 8)), weights(91, 8), 2, "from an empty cache, 2 heads")


@points(1, "cached_attention_step")
def test_cached_attention_step_from_a_filled_cache(submission):
    """from a cache of the first rows, with 4 heads and a batch"""
    check_steps(submission, normal(92, (3, 7, 8)), weights(93, 8), 4, "from a cache of 4 rows, 4 heads",
                start=4)


@points(1, "cached_attention_step")
def test_cached_attention_step_new_cache(submission):
    """the new cache holds the old keys and values, then the new position's"""
    X, W = normal(94, (2, 5, 6)), weights(95, 6)
    cache = cache_of(X[..., :4, :], W, 3)
    _, new_cache = run_step(submission, X[..., 4, :], cache, W, 3)
    expected = cache_of(X, W, 3)
    for key in ("K", "V"):
        expect_close(new_cache[key], expected[key], f"new_cache[{key!r}] after a fifth position",
                     rtol=1e-9, atol=1e-12)


@points(1, "cached_attention_step")
def test_cached_attention_step_float32(submission):
    """works on float32"""
    check_steps(submission, normal(96, (2, 4, 8), dtype=np.float32), weights(97, 8, dtype=np.float32), 2,
                "for float32 inputs", tol=F32)


@points(1, "cached_attention_step")
def test_cached_attention_step_clean(submission):
    """the cache it is given does not change; nothing printed, no warning"""
    X, W = normal(98, (2, 4, 8)), weights(99, 8)
    cache = cache_of(X[..., :3, :], W, 2)
    before = {k: v.copy() for k, v in cache.items()}
    run_step(submission, X[..., 3, :], cache, W, 2)
    expect_clean_call(submission, "cached_attention_step",
                      copy_hint="build the new keys with np.concatenate, which makes a new array, "
                                "and return a new dict")
    check(all(np.array_equal(cache[k], before[k]) for k in cache), "the cache given to "
          "cached_attention_step changed: return a new dict with new arrays.")


# ================================================================== beam_search

MARKOV = ("lambda prefixes, table: table[np.asarray(prefixes)[:, -1]]")
HISTORY = ("lambda prefixes, A, B: (lambda z: z - np.log(np.exp(z - z.max(-1, keepdims=True))"
           ".sum(-1, keepdims=True)) - z.max(-1, keepdims=True))("
           "A[np.asarray(prefixes)[:, -1]] + B[np.asarray(prefixes).sum(axis=1) % len(B)])")


def log_table(seed, n_vocab, end_boost=0.0, sharp=2.0):
    """Random next-token log-probabilities after each token: the start (0) never comes next."""
    rng = np.random.default_rng(seed)
    z = sharp * rng.normal(size=(n_vocab, n_vocab))
    z[:, 0] = -np.inf
    z[:, 1] += end_boost
    z = z - z[:, 1:].max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def oracle_beam(step, start_id, end_id, beam_size, max_length):
    """Beam search as the notebook states it: (tokens, score)."""
    beam, totals, finished = [[start_id]], [0.0], []
    for _ in range(max_length):
        log_probs = np.asarray(step(np.array(beam)), dtype=np.float64)
        ranked = sorted(((totals[r] + log_probs[r, v], r, v) for r in range(len(beam))
                         for v in range(log_probs.shape[1])), key=lambda c: -c[0])[:beam_size]
        next_beam, next_totals = [], []
        for total, r, v in ranked:
            hypothesis = beam[r] + [int(v)]
            if v == end_id:
                finished.append((total / (len(hypothesis) - 1), hypothesis[1:]))
            else:
                next_beam.append(hypothesis)
                next_totals.append(total)
        beam, totals = next_beam, next_totals
        if not beam:
            break
    finished += [(total / (len(h) - 1), h[1:]) for h, total in zip(beam, totals)]
    score, tokens = max(finished, key=lambda found: found[0])
    return tokens, score


def exhaustive(step, start_id, end_id, n_vocab, max_length):
    """The best length-normalised output over every output of at most max_length tokens."""
    best = (-np.inf, None)
    for length in range(1, max_length + 1):
        for body in itertools.product(range(1, n_vocab), repeat=length):
            if end_id in body[:-1]:
                continue
            if body[-1] != end_id and length < max_length:
                continue
            total = sum(float(step(np.array([[start_id] + list(body[:k])]))[0, body[k]]) for k in range(length))
            if total / length > best[0]:
                best = (total / length, list(body))
    return best[1], best[0]


def run_beam(submission, wire, *args):
    result = call(submission, "beam_search", wire, *args)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail("beam_search should return two values, (tokens, score).")
    tokens, score = result
    try:
        tokens = [int(t) for t in np.ravel(np.asarray(tokens))]
    except (TypeError, ValueError):
        fail("the tokens from beam_search should be a list of ints.")
    return tokens, as_float(score, "the score from beam_search")


def check_beam(submission, source, params, args, what):
    wire, local = suite_function(source, **params)
    tokens, score = run_beam(submission, wire, *args)
    expected_tokens, expected_score = oracle_beam(local, *args)
    found = named(submission, "beam_search", wire, *args)
    if tokens != expected_tokens:
        fail(f"beam_search {what} should return the tokens {expected_tokens} (score "
             f"{expected_score:.4f}), not {tokens} (score {score:.4f}). Are the kept candidates "
             f"the best ones over every hypothesis together, and does a finished hypothesis leave "
             f"the beam?")
    expect_close(score, expected_score, f"the score of the best output {what}",
                 mistakes=found.derive(lambda v: v[1]))
    return tokens


@points(1, "beam_search")
def test_beam_search_of_one_is_greedy(submission):
    """beam_size=1 is greedy decoding"""
    for seed in (100, 101, 102):
        check_beam(submission, MARKOV, {"table": log_table(seed, 6, end_boost=-0.5)}, (0, 1, 1, 8),
                   f"with beam_size=1 (table {seed - 99})")


@points(2, "beam_search")
def test_beam_search_keeps_the_best(submission):
    """beams of 2 and 3: the best candidates over all hypotheses are kept"""
    for seed, beam in ((103, 2), (104, 3), (105, 3), (106, 2)):
        check_beam(submission, MARKOV, {"table": log_table(seed, 7, end_boost=-0.5)}, (0, 1, beam, 7),
                   f"with a beam of {beam} (table {seed - 102})")


@points(1, "beam_search")
def test_beam_search_wide_beam_is_exhaustive(submission):
    """a beam wide enough to keep everything finds the best length-normalised output"""
    table = log_table(107, 4, end_boost=-1.0, sharp=1.0)
    wire, local = suite_function(MARKOV, table=table)
    tokens, score = run_beam(submission, wire, 0, 1, 40, 4)
    best_tokens, best_score = exhaustive(local, 0, 1, 4, 4)
    check(tokens == best_tokens, f"with a beam of 40 over 3 tokens and at most 4 steps nothing is "
                                 f"pruned, so beam search should find the best output by total "
                                 f"log-probability per token, {best_tokens}, not {tokens}.")
    expect_close(score, best_score, "the score of the exhaustive best output")


@points(1, "beam_search")
def test_beam_search_normalises_by_length(submission):
    """finished outputs are ranked by total log-probability divided by their length"""
    P = np.array([[0.0, 0.0, 0.55, 0.45], [1.0, 0.0, 0.0, 0.0], [0.0, 0.04, 0.9, 0.06],
                  [0.0, 0.9, 0.05, 0.05]])
    with np.errstate(divide="ignore"):
        table = np.log(P)
    tokens = check_beam(submission, MARKOV, {"table": table}, (0, 1, 3, 6),
                        "when a short output has the higher total but a long one the higher mean")
    check(tokens == [2] * 6, f"expected [2, 2, 2, 2, 2, 2], got {tokens}")


@points(1, "beam_search")
def test_beam_search_whole_prefix(submission):
    """a model whose next token depends on the whole prefix; outputs stop at the end token"""
    rng = np.random.default_rng(108)
    A, B = 1.5 * rng.normal(size=(6, 6)), 1.5 * rng.normal(size=(5, 6))
    A[:, 0] = B[:, 0] = -1e9
    for beam in (2, 4):
        tokens = check_beam(submission, HISTORY, {"A": A, "B": B}, (0, 1, beam, 6),
                            f"with a beam of {beam}, when the next token depends on the whole prefix")
        check(1 not in tokens[:-1], f"the output {tokens} goes on after the end token (1): a "
                                    f"finished hypothesis must leave the beam.")


@points(1, "beam_search")
def test_beam_search_max_length(submission):
    """when nothing finishes within max_length, the best unfinished hypothesis is returned"""
    table = log_table(109, 5, end_boost=-8.0)
    tokens = check_beam(submission, MARKOV, {"table": table}, (0, 1, 3, 4),
                        "when the end token is unlikely and max_length is 4")
    check(len(tokens) <= 4, f"beam_search returned {len(tokens)} tokens; max_length is 4.")


@points(1, "beam_search")
def test_beam_search_clean(submission):
    """returns (list of ints, float); prints nothing, no warning"""
    table = log_table(110, 5)
    wire, _ = suite_function(MARKOV, table=table)
    run_beam(submission, wire, 0, 1, 2, 5)
    expect_clean_call(submission, "beam_search")
