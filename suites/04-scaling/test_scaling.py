"""Hidden suite of 04-scaling: dot_product_stats, softmax_entropy, softmax_jacobian, saturation_sweep.

Two of the four functions are random. Their tests never compare against exact numbers (a correct
implementation may draw its samples in any order); they compare against the distribution the
contract implies, with tolerances of five standard errors (a correct function fails such a check
less than once in a million runs), and they check reproducibility: the same seed gives the same
result, a different seed a different one.
"""
import weakref

import numpy as np
import pytest

from autograder.kit import (RNG, as_array, as_float, as_pair, check, computed_once, expect_close,
                            expect_shape, fail, matching_mistakes, mistakes, points)

from attention_kit import expect_clean_call, softmax

ASSIGNMENT = "04-scaling"
KEYS = ("max_weight", "entropy", "grad_norm")
Z = 5.0  # standard errors of slack in every statistical check


# ------------------------------------------------------------------ trusted helpers

def entropy(p, axis=-1):
    p = np.asarray(p, dtype=np.float64)
    return -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=axis)


def jacobian(p):
    p = np.asarray(p, dtype=np.float64)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def distributions(seed, shape, spread=2.0):
    """Random rows that sum to 1 along the last axis, some peaked, some flat."""
    return softmax(spread * np.random.default_rng(seed).standard_normal(shape))


def warning_hint(warning):
    """What usually causes a warning in these functions."""
    if "log" in warning:
        return ("log(0) warns even inside np.where(p > 0, p * np.log(p), 0), because numpy "
                "computes both branches before choosing; take the log of an array without zeros.")
    if "overflow" in warning:
        return "An overflow in exp usually means the maximum was not subtracted first."
    return None


CLEAN = {"hint": warning_hint,   # what expect_clean_call says about a warning or an in-place change
         "copy_hint": "for example `p = np.where(...)` rather than `p[...] = ...`"}


SECOND_SEED = 1000  # added to a test's seed for the second input a mistake must match on


def with_mistake(message, description):
    return message + (f" This is what you get when you {description}." if description else "")


# ------------------------------------------------------------------ dot_product_stats

N_SAMPLES = 20_000


def score_errors(d_k, n):
    """Standard errors of the sample mean and sample variance of q·k, q, k ~ N(0, I_{d_k}).

    Var(q·k) = d_k and E[(q·k)^4] = 3 d_k^2 + 6 d_k, so the sample variance has standard error
    sqrt((2 d_k^2 + 6 d_k) / n)."""
    return np.sqrt(d_k / n), np.sqrt((2 * d_k**2 + 6 * d_k) / n)


def stats_of(submission, d_k, n, seed):
    mean, var = as_pair(submission.dot_product_stats(d_k, n, RNG(seed)),
                        f"dot_product_stats({d_k}, {n}, rng)")
    return (as_float(mean, "the mean returned by dot_product_stats"),
            as_float(var, "the variance returned by dot_product_stats"))


def stats_are_right(mean, var, d_k, n):
    se_mean, se_var = score_errors(d_k, n)
    return abs(mean) <= Z * se_mean and abs(var - d_k) <= Z * se_var


def stats_mistake(submission, d_k, n, seed, mean, var):
    """Catalogued mistakes whose (mean, variance) are wrong in the way the learner's are: outside
    the truth's tolerance, and within sampling error of the learner's result, for this seed and for
    a second one."""
    def matcher(mean, var):
        def matches(value):
            m, v = (float(x) for x in value)
            scale = max(abs(v), abs(var), 1e-12)
            return (not stats_are_right(m, v, d_k, n)
                    and abs(m - mean) <= Z * np.sqrt(2 * scale / n) + 1e-9
                    and abs(v - var) <= Z * scale * np.sqrt(6.0 / n) + 1e-9)
        return matches
    try:
        second = stats_of(submission, d_k, n, seed + SECOND_SEED)
    except Exception:   # the learner's function fails on the second input: name nothing
        return None
    return matching_mistakes(ASSIGNMENT, "dot_product_stats", [
        ((d_k, n, RNG(seed)), {}, matcher(mean, var)),
        ((d_k, n, RNG(seed + SECOND_SEED)), {}, matcher(*second))])


@points(1, "dot_product_stats")
def test_stats_returns_two_numbers(submission):
    """returns a pair of numbers (mean, variance), with no warning and no printing"""
    mean, var = stats_of(submission, 3, 200, 0)
    check(np.isfinite(mean) and np.isfinite(var),
          f"dot_product_stats returned ({mean}, {var}); both should be finite numbers.")
    check(var >= 0, f"the variance returned by dot_product_stats is {var}; a variance is never "
                    f"negative. Is the pair in the order (mean, variance)?")
    expect_clean_call(submission, "dot_product_stats", **CLEAN)
    check(not submission.last.stdout, "dot_product_stats printed something; return the numbers "
                                      "instead of printing them.")


@points(1, "dot_product_stats")
def test_stats_mean_is_zero(submission):
    """the mean of q·k is 0 (within five standard errors), for several d_k"""
    for seed, d_k in enumerate([4, 64]):
        mean, var = stats_of(submission, d_k, N_SAMPLES, 10 + seed)
        se_mean, _ = score_errors(d_k, N_SAMPLES)
        if abs(mean) > Z * se_mean:
            fail(with_mistake(
                f"with d_k = {d_k} and {N_SAMPLES} samples the mean of q·k came out {mean:.4f}; "
                f"it should be 0 within ±{Z * se_mean:.3f} (five standard errors).",
                stats_mistake(submission, d_k, N_SAMPLES, 10 + seed, mean, var)))


@points(1, "dot_product_stats")
@pytest.mark.parametrize("d_k", [2, 16, 128])
def test_stats_variance_is_d_k(submission, d_k):
    """the variance of q·k equals d_k (within five standard errors)"""
    seed = 100 + d_k
    mean, var = stats_of(submission, d_k, N_SAMPLES, seed)
    _, se_var = score_errors(d_k, N_SAMPLES)
    if abs(var - d_k) > Z * se_var:
        fail(with_mistake(
            f"with d_k = {d_k} and {N_SAMPLES} samples the variance of q·k came out {var:.4f}; it "
            f"should be d_k = {d_k} within ±{Z * se_var:.3f} (five standard errors).",
            stats_mistake(submission, d_k, N_SAMPLES, seed, mean, var)))


@points(1, "dot_product_stats")
def test_stats_same_seed_same_result(submission):
    """the same seed gives the same result: all randomness comes from rng"""
    first = stats_of(submission, 8, 500, 7)
    second = stats_of(submission, 8, 500, 7)
    check(first == second,
          f"two calls with generators of the same seed gave {first} and then {second}. Draw every "
          f"random number from `rng` (rng.standard_normal(...)), not from np.random.* functions "
          f"or a generator created inside the function.")


@points(1, "dot_product_stats")
def test_stats_different_seeds_differ(submission):
    """different seeds give different samples: the function really uses rng"""
    results = {stats_of(submission, 8, 500, seed) for seed in (1, 2, 3)}
    check(len(results) == 3,
          "generators with different seeds gave identical results. Draw from the `rng` argument; "
          "a generator created inside the function (np.random.default_rng(0)) ignores it.")


# ------------------------------------------------------------------ softmax_entropy

@points(1, "softmax_entropy")
@pytest.mark.parametrize("shape", [(6,), (4, 5), (2, 3, 7)])
def test_entropy_values(submission, shape):
    """equals -sum p ln p along the last axis, for any batch shape"""
    p = distributions(sum(shape), shape)
    expect_close(submission.softmax_entropy(p), entropy(p), f"softmax_entropy of shape {shape}",
                 mistakes=mistakes(ASSIGNMENT, "softmax_entropy", p, learner=submission))


@points(1, "softmax_entropy")
def test_entropy_extremes(submission):
    """a uniform row has entropy ln n (nats); a one-hot row, or a single key, has entropy 0"""
    p = np.array([np.full(8, 1 / 8), np.eye(8)[3], np.full(8, 1 / 8)])
    expect_close(submission.softmax_entropy(p), [np.log(8), 0.0, np.log(8)],
                 "softmax_entropy of [uniform over 8, one-hot, uniform over 8]",
                 mistakes=mistakes(ASSIGNMENT, "softmax_entropy", p, learner=submission))
    single = np.ones((2, 1))
    expect_close(submission.softmax_entropy(single), [0.0, 0.0],
                 "softmax_entropy of rows with a single key, shape (2, 1)",
                 mistakes=mistakes(ASSIGNMENT, "softmax_entropy", single, learner=submission))


@points(1, "softmax_entropy")
def test_entropy_exact_zeros(submission):
    """exact zeros contribute 0 (0 ln 0 = 0): no nan and no warning"""
    p = np.array([[0.5, 0.0, 0.5, 0.0],
                  [0.0, 0.0, 1.0, 0.0],
                  [0.25, 0.25, 0.25, 0.25],
                  [0.0, 0.7, 0.0, 0.3]])
    expect_close(submission.softmax_entropy(p), entropy(p), "softmax_entropy of rows with exact zeros",
                 mistakes=mistakes(ASSIGNMENT, "softmax_entropy", p, learner=submission))
    expect_clean_call(submission, "softmax_entropy", **CLEAN)


@points(1, "softmax_entropy")
def test_entropy_axis(submission):
    """`axis` chooses which axis holds the distributions (axis=0, 1, -2)"""
    base = distributions(3, (3, 4, 5))                       # rows along the last axis
    for axis in (0, 1, -2):
        p = np.moveaxis(base, -1, axis)
        what = f"softmax_entropy(p, axis={axis}) for p of shape {p.shape}"
        expect_close(submission.softmax_entropy(p, axis=axis), entropy(p, axis=axis), what,
                     mistakes=mistakes(ASSIGNMENT, "softmax_entropy", p, axis=axis,
                                       learner=submission))


@points(1, "softmax_entropy")
def test_entropy_float32(submission):
    """works on float32 input"""
    p = distributions(4, (5, 9)).astype(np.float32)
    p[1, :] = 0.0
    p[1, 4] = 1.0
    expect_close(submission.softmax_entropy(p), entropy(p), "softmax_entropy of float32 input",
                 rtol=1e-4, atol=1e-5)
    expect_clean_call(submission, "softmax_entropy", **CLEAN)


@points(1, "softmax_entropy")
def test_entropy_tiny_probabilities(submission):
    """tiny (1e-300) and saturated weights, as from a softmax of huge scores"""
    p = softmax(np.array([[0.0, -690.0, -700.0, -745.0, -2000.0],
                                 [500.0, 0.0, -500.0, 499.0, 100.0]]))
    got = expect_close(submission.softmax_entropy(p), entropy(p),
                       "softmax_entropy of weights near 1e-300 and exact zeros")
    check(np.all(np.asarray(got) >= -1e-12), "an entropy came out negative; -p ln p is never "
                                             "negative for 0 <= p <= 1.")
    expect_clean_call(submission, "softmax_entropy", **CLEAN)


@points(1, "softmax_entropy")
def test_entropy_input_untouched(submission):
    """does not change its input in place"""
    p = np.array([[0.0, 0.2, 0.8], [1.0, 0.0, 0.0]])
    submission.softmax_entropy(p)
    last = submission.last
    check(not last.mutated, "softmax_entropy changed its input p in place (for example "
                            "p[p == 0] = 1); work on a copy such as np.where(p > 0, p, 1).")


# ------------------------------------------------------------------ softmax_jacobian

@points(1, "softmax_jacobian")
@pytest.mark.parametrize("n", [3, 7])
def test_jacobian_values(submission, n):
    """equals diag(p) - p p^T for a single row"""
    p = distributions(n, (n,))
    expect_close(submission.softmax_jacobian(p), jacobian(p), f"softmax_jacobian of a row of {n}",
                 mistakes=mistakes(ASSIGNMENT, "softmax_jacobian", p, learner=submission))


@points(1, "softmax_jacobian")
def test_jacobian_batch(submission):
    """leading batch dimensions: (..., n) -> (..., n, n), one matrix per row"""
    p = distributions(11, (2, 3, 5))
    J = as_array(submission.softmax_jacobian(p), "softmax_jacobian(p)")
    expect_shape(J, (2, 3, 5, 5), "softmax_jacobian of shape (2, 3, 5)")
    expect_close(J, jacobian(p), "softmax_jacobian of shape (2, 3, 5)",
                 mistakes=mistakes(ASSIGNMENT, "softmax_jacobian", p, learner=submission))


@points(1, "softmax_jacobian")
def test_jacobian_matches_finite_differences(submission):
    """is the derivative of softmax: matches central finite differences"""
    s = np.random.default_rng(5).standard_normal(6) * 1.5
    h = 1e-6
    numeric = np.stack([(softmax(s + h * e) - softmax(s - h * e)) / (2 * h)
                        for e in np.eye(6)], axis=1)
    p = softmax(s)
    expect_close(submission.softmax_jacobian(p), numeric,
                 "softmax_jacobian(softmax(s)) compared with finite differences of softmax at s",
                 rtol=1e-5, atol=1e-8, mistakes=mistakes(ASSIGNMENT, "softmax_jacobian", p,
                                                         learner=submission))


@points(1, "softmax_jacobian")
def test_jacobian_structure(submission):
    """every Jacobian is symmetric and its rows sum to 0"""
    p = distributions(12, (4, 6), spread=3.0)
    J = as_array(submission.softmax_jacobian(p), "softmax_jacobian(p)")
    expect_shape(J, (4, 6, 6), "softmax_jacobian of shape (4, 6)")
    expect_close(J.sum(axis=-1), np.zeros((4, 6)),
                 "the row sums of each Jacobian (they are 0: the weights always sum to 1)")
    expect_close(J, np.swapaxes(J, -1, -2), "each Jacobian compared with its transpose")


@points(1, "softmax_jacobian")
def test_jacobian_saturated_and_single(submission):
    """a one-hot row, or a single key, gives an all-zero Jacobian"""
    p = np.eye(5)[[2, 0]]
    expect_close(submission.softmax_jacobian(p), np.zeros((2, 5, 5)),
                 "softmax_jacobian of one-hot rows", mistakes=mistakes(ASSIGNMENT, "softmax_jacobian", p,
                                                                       learner=submission))
    one = np.ones((3, 1))
    expect_close(submission.softmax_jacobian(one), np.zeros((3, 1, 1)),
                 "softmax_jacobian of rows with a single key, shape (3, 1)",
                 mistakes=mistakes(ASSIGNMENT, "softmax_jacobian", one, learner=submission))


@points(1, "softmax_jacobian")
def test_jacobian_float32(submission):
    """works on float32 input"""
    p = distributions(13, (3, 4)).astype(np.float32)
    expect_close(submission.softmax_jacobian(p), jacobian(p), "softmax_jacobian of float32 input",
                 rtol=1e-4, atol=1e-6)


@points(1, "softmax_jacobian")
def test_jacobian_clean(submission):
    """does not change its input in place or emit warnings"""
    p = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    submission.softmax_jacobian(p)
    expect_clean_call(submission, "softmax_jacobian", **CLEAN)


# ------------------------------------------------------------------ saturation_sweep

SWEEP_D_KS = [1, 4, 16, 64, 256]
SWEEP_KEYS = 10
SWEEP_TRIALS = 1000


def expected_sweep(d_ks, n_keys, scaled, n=100_000, seed=2024):
    """Mean and per-trial standard deviation of each quantity, by a large trusted simulation.

    Given q, the scores K q of independent standard normal keys are independent N(0, |q|^2), and
    |q|^2 is chi-square with d_k degrees of freedom: that draws a trial in O(n_keys) time.
    Deterministic and independent of the submission, so it is computed once per grading process
    (the two sweeps the statistics' tests compare with were about half of the suite's CPU time
    for the reference, paid again for every submission)."""
    return _expected_sweep(tuple(int(d) for d in d_ks), int(n_keys), bool(scaled), int(n), int(seed))


@computed_once
def _expected_sweep(d_ks, n_keys, scaled, n, seed):
    rng = np.random.default_rng(seed)
    mean = {key: [] for key in KEYS}
    spread = {key: [] for key in KEYS}
    for d_k in d_ks:
        length = np.sqrt(rng.chisquare(d_k, size=(n, 1)))
        scores = length * rng.standard_normal((n, n_keys))
        if scaled:
            scores = scores / np.sqrt(d_k)
        alpha = softmax(scores)
        s2, s3 = (alpha**2).sum(-1), (alpha**3).sum(-1)
        values = {"max_weight": alpha.max(-1), "entropy": entropy(alpha),
                  "grad_norm": np.sqrt(np.maximum(s2 - 2 * s3 + s2**2, 0.0))}
        for key in KEYS:
            mean[key].append(values[key].mean())
            spread[key].append(values[key].std())
    return ({k: np.array(v) for k, v in mean.items()}, {k: np.array(v) for k, v in spread.items()})


# The learner's checked sweeps, by submission and call. A call with the same arguments and a
# generator of the same seed asks a correct function for the same result: the statistics' three
# tests of a setting (one per quantity) share one call instead of making three identical ones
# (a sweep of 1000 trials per d_k was most of the suite's time in the kernel, and with the
# course's stand-ins in place during a second chance, most of the grading's). Whether two calls
# agree is test_sweep_reproducible's to check, with calls of its own.
_sweeps = weakref.WeakKeyDictionary()


def sweep_of(submission, d_ks, n_keys, n_trials, seed, **kwargs):
    """The learner's result, checked to be a dict of arrays with one value per d_k."""
    call = (tuple(d_ks), n_keys, n_trials, seed, tuple(sorted(kwargs.items())))
    try:
        kept = _sweeps.setdefault(submission, {})
    except TypeError:  # a submission no weak reference can name: nothing is kept for it
        kept = {}
    if call not in kept:
        kept[call] = _checked_sweep(submission, d_ks, n_keys, n_trials, seed, **kwargs)
    return {key: value.copy() for key, value in kept[call].items()}


def _checked_sweep(submission, d_ks, n_keys, n_trials, seed, **kwargs):
    call = f"saturation_sweep({list(d_ks)}, n_keys={n_keys}, n_trials={n_trials}, rng" + "".join(
        f", {k}={v}" for k, v in kwargs.items()) + ")"
    result = submission.saturation_sweep(list(d_ks), n_keys, n_trials, RNG(seed), **kwargs)
    if not isinstance(result, dict):
        fail(f"{call} should return a dict with keys {', '.join(KEYS)}, but "
             f"{type(result).__name__ if result is not None else 'None'} came back.")
    out = {}
    for key in KEYS:
        check(key in result, f"the dict returned by {call} has no key {key!r} "
                             f"(it has {sorted(result)}).")
        value = as_array(result[key], f"{call}[{key!r}]").astype(float)
        expect_shape(value, (len(d_ks),), f"{call}[{key!r}] (one mean per d_k)")
        out[key] = value
    return out


def sweep_mistake(submission, args, result, expected, n_trials, **kwargs):
    """Catalogued mistakes whose sweep is wrong (outside the truth's tolerance) and within
    sampling error of the learner's result, for the seed of ``args`` and for a second one.
    ``expected`` is ``expected_sweep(...)`` of the call."""
    mean, spread = expected

    def matcher(result):
        def matches(value):
            try:
                value = {k: np.asarray(value[k], dtype=float).reshape(mean[k].shape) for k in KEYS}
            except Exception:
                return False
            wrong = any(np.any(np.abs(value[k] - mean[k]) > Z * spread[k] * np.sqrt(1.0 / n_trials)
                               + 1e-9) for k in KEYS)
            close = all(np.all(np.abs(value[k] - result[k])
                               <= Z * spread[k] * np.sqrt(2.0 / n_trials) + 1e-3) for k in KEYS)
            return wrong and close
        return matches
    d_ks, n_keys, _, rng = args
    second_args = (d_ks, n_keys, n_trials, RNG(rng.seed + SECOND_SEED))
    try:
        second = sweep_of(submission, d_ks, n_keys, n_trials, rng.seed + SECOND_SEED, **kwargs)
    except Exception:   # the learner's function fails on the second input: name nothing
        return None
    return matching_mistakes(ASSIGNMENT, "saturation_sweep", [(args, kwargs, matcher(result)),
                                                   (second_args, kwargs, matcher(second))])


def compare_sweep(submission, scaled, seed, key):
    d_ks, n_keys, n_trials = SWEEP_D_KS, SWEEP_KEYS, SWEEP_TRIALS
    result = sweep_of(submission, d_ks, n_keys, n_trials, seed, scaled=scaled)
    expected = mean, spread = expected_sweep(d_ks, n_keys, scaled)
    tolerance = Z * spread[key] * np.sqrt(1 / n_trials + 1 / 100_000) + 1e-9
    bad = np.flatnonzero(np.abs(result[key] - mean[key]) > tolerance)
    if bad.size:
        i = int(bad[0])
        message = (f"saturation_sweep(d_ks={d_ks}, n_keys={n_keys}, n_trials={n_trials}, rng, "
                   f"scaled={scaled})[{key!r}] at d_k = {d_ks[i]} is {result[key][i]:.4f}; a "
                   f"mean over {n_trials} trials should be {mean[key][i]:.4f} ± "
                   f"{tolerance[i]:.4f} (five standard errors).")
        if key != "max_weight":
            message += (f" (If softmax_{'entropy' if key == 'entropy' else 'jacobian'} fails "
                        f"its own tests, fix it first: saturation_sweep probably uses it.)")
        fail(with_mistake(message, sweep_mistake(submission, (d_ks, n_keys, n_trials, RNG(seed)),
                                                 result, expected, n_trials, scaled=scaled)))


@points(1, "saturation_sweep")
def test_sweep_returns_dict_of_arrays(submission):
    """returns a dict with max_weight, entropy and grad_norm, one finite value per d_k"""
    out = sweep_of(submission, [2, 8, 32], 6, 50, 0)
    for key in KEYS:
        check(np.isfinite(out[key]).all(), f"saturation_sweep(...)[{key!r}] contains "
                                           f"{out[key]}; every value should be finite.")
    sweep_of(submission, [5], 4, 20, 1)   # a single d_k still gives arrays of shape (1,)


@points(1, "saturation_sweep")
@pytest.mark.parametrize("key", KEYS)
def test_sweep_scaled_statistics(submission, key):
    """scaled: the means for d_k = 1..256 match the contract's distribution (5 standard errors)"""
    compare_sweep(submission, True, 31, key)


@points(1, "saturation_sweep")
@pytest.mark.parametrize("key", KEYS)
def test_sweep_unscaled_statistics(submission, key):
    """unscaled: the means for d_k = 1..256 match the contract's distribution (5 standard errors)"""
    compare_sweep(submission, False, 32, key)


@points(1, "saturation_sweep")
def test_sweep_scaled_stays_moderate(submission):
    """scaled: the largest weight and the entropy stay roughly constant as d_k grows"""
    d_ks = [2, 32, 512]
    out = sweep_of(submission, d_ks, 8, 600, 41)
    spread = float(np.ptp(out["max_weight"]))
    if spread >= 0.08:   # the mistakes are looked up only when the check fails
        fail(with_mistake(f"with scaled=True the mean largest weight went "
                          f"{np.round(out['max_weight'], 3)} for d_k = {d_ks}; dividing by √d_k "
                          f"should keep it roughly constant (it moved by {spread:.3f}).",
                          sweep_mistake(submission, (d_ks, 8, 600, RNG(41)), out,
                                        expected_sweep(d_ks, 8, True), 600)))
    check(float(np.min(out["entropy"])) > 0.7 * np.log(8),
          f"with scaled=True the mean entropy went {np.round(out['entropy'], 3)} for d_k = {d_ks}; "
          f"it should stay above {0.7 * np.log(8):.2f} nats (ln 8 = {np.log(8):.2f} is uniform).")


@points(1, "saturation_sweep")
def test_sweep_unscaled_saturates(submission):
    """unscaled: max weight climbs toward 1, entropy and gradient norm fall toward 0"""
    d_ks = [1, 16, 1024]
    out = sweep_of(submission, d_ks, 8, 400, 42, scaled=False)
    w, h, g = out["max_weight"], out["entropy"], out["grad_norm"]
    looks_scaled = np.ptp(w) < 0.1 and w[0] > 0.2   # flat at the right level: still divided
    check(w[0] < w[1] < w[2] and w[2] > 0.9,
          f"with scaled=False the mean largest weight went {np.round(w, 3)} for d_k = {d_ks}; it "
          f"should climb toward 1 (above 0.9 at d_k = 1024)."
          + (" It stays flat, as if the scores were still divided by √d_k: is `scaled=False` "
             "respected?" if looks_scaled else ""))
    check(h[0] > h[1] > h[2] and h[2] < 0.3,
          f"with scaled=False the mean entropy went {np.round(h, 3)} for d_k = {d_ks}; it should "
          f"fall toward 0 (below 0.3 nats at d_k = 1024).")
    check(g[2] < 0.4 * g[0],
          f"with scaled=False the mean gradient norm went {np.round(g, 3)} for d_k = {d_ks}; a "
          f"saturated softmax has a tiny Jacobian, so it should shrink well below its value at "
          f"d_k = 1.")


@points(1, "saturation_sweep")
def test_sweep_reproducible(submission):
    """the same seed gives the same result; different seeds give different results"""
    first = _checked_sweep(submission, [3, 40], 5, 100, 9)
    second = _checked_sweep(submission, [3, 40], 5, 100, 9)
    check(all(np.array_equal(first[k], second[k]) for k in KEYS),
          "two calls with generators of the same seed gave different results. Draw every random "
          "number from `rng`, not from np.random.* functions or a generator created inside.")
    third = _checked_sweep(submission, [3, 40], 5, 100, 10)
    check(not all(np.array_equal(first[k], third[k]) for k in KEYS),
          "generators with different seeds gave the same result: draw from the `rng` argument.")


@points(1, "saturation_sweep")
def test_sweep_scaled_by_default(submission):
    """scaled=True is the default"""
    default = submission.saturation_sweep([2, 64], 6, 200, RNG(12))
    explicit = sweep_of(submission, [2, 64], 6, 200, 12, scaled=True)
    check(isinstance(default, dict) and all(
        k in default and np.array_equal(np.asarray(default[k], dtype=float), explicit[k]) for k in KEYS),
        "saturation_sweep without the `scaled` argument should behave as scaled=True; keep the "
        "signature saturation_sweep(d_ks, n_keys, n_trials, rng, scaled=True).")


@points(1, "saturation_sweep")
def test_sweep_single_key(submission):
    """with one key the weight is 1: max weight 1, entropy 0, gradient norm 0"""
    for scaled in (True, False):
        out = sweep_of(submission, [1, 7, 100], 1, 10, 3, scaled=scaled)
        expect_close(np.stack([out[k] for k in KEYS]), [[1.0] * 3, [0.0] * 3, [0.0] * 3],
                     f"[max_weight, entropy, grad_norm] with n_keys=1, scaled={scaled}")


@points(1, "saturation_sweep")
def test_sweep_huge_scores_quiet(submission):
    """huge unscaled scores (d_k = 4096) give finite results and no warning"""
    out = sweep_of(submission, [1024, 4096], 8, 100, 13, scaled=False)
    for key in KEYS:
        check(np.isfinite(out[key]).all(), f"with d_k = 4096 unscaled, saturation_sweep(...)"
                                           f"[{key!r}] is {out[key]}; it should be finite.")
    expect_clean_call(submission, "saturation_sweep (or a function it calls)", **CLEAN)
    check(out["max_weight"][1] > 0.9, f"with d_k = 4096 unscaled the mean largest weight is "
                                      f"{out['max_weight'][1]:.3f}; it should be close to 1.")
