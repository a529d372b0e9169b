"""Hidden suite of 09-attention-at-scale: online_softmax, blockwise_attention.

Expected values are computed here, in float64, by plain three-pass softmax and naive attention
written independently of the solution notebook; the learner's results cross back as arrays and are
compared on this side.

Tolerances. In float64 both functions must equal the naive computation to 1e-10 (relative), far
above the rounding of either algorithm (about 1e-15 per operation, amplified at most by the size of
the logits: a logit of size 1e4 is itself only known to 1e4 * 2**-52 ~ 2e-12). In float32 the
inputs carry about 7 significant digits, hence rtol 1e-4.

"Never holds the full (T_q, T_k) matrix" is a property of memory, which the hidden suite cannot
observe from outside the learner's kernel. It is measured inside it, with the notebook's own locked
`peak_memory` (tracemalloc), on inputs where one float64 (T_q, T_k) matrix takes 16 MiB: the peak
must stay below half of that, so any implementation that holds one full float64 matrix fails, and
everything of size O(T_k d) or O(T_q B) fits easily (d = 4 keeps even copies of K and V at 0.5 MiB;
a full boolean mask is 2 MiB). The same tool run on the notebook's locked naive attention must see
at least one full matrix, which proves the measurement works before it is trusted. T_q is smaller
than the block size so that tiling the queries alone, with every key of a query block at once,
still shows up as the full matrix. A learner who redefines `peak_memory` in their own cells could
fool this test (it runs in their kernel); everything else in the suite is judged outside it.
"""
import numpy as np
import pytest

from autograder.kit import (Function, SubmissionError, as_array, as_float, call, check,
                            expect_close, expect_shape, fail, mistakes, points)

from attention_kit import batched_keys_hint, expect_clean_call, softmax

ASSIGNMENT = "09-attention-at-scale"
EXACT = {"rtol": 1e-10, "atol": 1e-13}       # float64 against float64 softmax weights in [0, 1]
EXACT_OUT = {"rtol": 1e-10, "atol": 1e-11}   # float64 attention outputs of size about 1
F32 = {"rtol": 1e-4, "atol": 1e-5}
MIB = 2 ** 20


# ------------------------------------------------------------------ trusted float64 references

def expected_attention(Q, K, V, mask=None):
    """Naive attention in float64 (einsum, the kit's softmax); a query with no allowed key gets
    zeros."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    return np.einsum("...qk,...kv->...qv", softmax(scores, mask=mask), V)


# ------------------------------------------------------------------ helpers

# What expect_clean_call says about a warning or an in-place change in these functions.
CLEAN = {"hint": "An overflow in exp means a shift by the running maximum is missing; an invalid "
                 "value is a -inf - (-inf) (a running maximum that is still -inf because every "
                 "entry so far was -inf or masked) or a 0 / 0 (a row with no allowed key, or every "
                 "exponential underflowing to 0).",
         "copy_hint": "for example `Q = Q * s` rather than `Q *= s`"}


def call_online(submission, z, block_size):
    p = submission.online_softmax(z, block_size)
    return as_array(p, f"online_softmax(z, {block_size})")


def expect_online(submission, z, block_size, what, tolerance=EXACT, quiet=True):
    p = call_online(submission, z, block_size)
    known = mistakes(ASSIGNMENT, "online_softmax", z, block_size)
    if quiet:
        expect_clean_call(submission, "online_softmax", value=p, mistakes=known, **CLEAN)
    expect_close(p, softmax(z), what, **tolerance, mistakes=known)
    return p


def call_blockwise(submission, Q, K, V, block_size, mask=None):
    kwargs = {} if mask is None else {"mask": mask}

    def hint(error):
        if mask is not None and error.cause in ("boolean-index", "broadcast"):
            return (f"The mask had shape {np.shape(mask)}, for scores of shape "
                    f"{np.shape(Q)[:-1] + (np.shape(K)[-2],)}: a mask only needs to broadcast to "
                    f"them. np.broadcast_to(mask, ...) before the loop, and "
                    f"np.where(mask_block, scores, -np.inf) rather than boolean indexing, handle "
                    f"every such shape.")
        return batched_keys_hint(error, K)
    out = call(submission, "blockwise_attention", Q, K, V, block_size, hint=hint, **kwargs)
    if isinstance(out, tuple):
        fail(f"blockwise_attention should return only the output array, but a tuple of "
             f"{len(out)} values came back. Returning the weights would mean building the full "
             f"(T_q, T_k) matrix this function exists to avoid.")
    return as_array(out, f"blockwise_attention(Q, K, V, {block_size})")


def expect_blockwise(submission, Q, K, V, block_size, what, mask=None, tolerance=EXACT_OUT,
                     quiet=True):
    out = call_blockwise(submission, Q, K, V, block_size, mask)
    kwargs = {} if mask is None else {"mask": mask}
    known = mistakes(ASSIGNMENT, "blockwise_attention", Q, K, V, block_size, **kwargs)
    if quiet:
        expect_clean_call(submission, "blockwise_attention", value=out, mistakes=known, **CLEAN)
    expect_close(out, expected_attention(Q, K, V, mask), what, **tolerance, mistakes=known)
    return out


def attention_data(seed, batch, T_q, T_k, d_k, d_v, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return tuple(a.astype(dtype) for a in (scale * rng.normal(size=batch + (T_q, d_k)),
                                           scale * rng.normal(size=batch + (T_k, d_k)),
                                           rng.normal(size=batch + (T_k, d_v))))


# ------------------------------------------------------------------ online_softmax

@points(1, "online_softmax")
def test_online_equals_softmax(submission):
    """equals softmax(z) on vectors, for block sizes that divide the length and that do not"""
    rng = np.random.default_rng(900)
    for n, block_size in [(12, 4), (10, 3), (7, 1), (13, 5)]:
        z = 3.0 * rng.normal(size=n)
        expect_online(submission, z, block_size,
                      f"online_softmax(z, {block_size}) for a vector of {n} logits")


@points(1, "online_softmax")
def test_online_every_block_size(submission):
    """gives the same weights for every block size, 1 to beyond the length"""
    z = 2.0 * np.random.default_rng(901).normal(size=9)
    for block_size in range(1, 13):
        expect_online(submission, z, block_size,
                      f"online_softmax(z, {block_size}) for a vector of 9 logits"
                      + (" (a block larger than the vector: one block)" if block_size > 9 else ""))


@points(1, "online_softmax")
def test_online_batch_dimensions(submission):
    """works along the last axis for any leading batch dimensions, each row on its own"""
    rng = np.random.default_rng(902)
    for shape, block_size in [((2, 3, 11), 4), ((5, 8), 3), ((1, 1, 6), 6)]:
        z = 2.0 * rng.normal(size=shape) + rng.normal(size=shape[:-1] + (1,)) * 5.0
        expect_online(submission, z, block_size,
                      f"online_softmax of logits of shape {shape} with blocks of {block_size}")


@points(1, "online_softmax")
def test_online_max_moves(submission):
    """rescales the running sum whenever the maximum moves to a later block"""
    z = np.linspace(-6.0, 9.0, 16)                      # a new maximum in every block
    expect_online(submission, z, 3, "online_softmax(z, 3) of increasing logits (-6 to 9)")
    z = np.array([0.5, 1.0, 0.2, -0.3, 0.8, 0.1, 0.9, 12.0])   # the maximum only in the last block
    expect_online(submission, z, 3, "online_softmax(z, 3) when the largest logit is the last one")


@points(1, "online_softmax")
def test_online_huge_logits(submission):
    """logits in the thousands, with the maximum late: no overflow, no warning"""
    rng = np.random.default_rng(903)
    z = 5000.0 * rng.normal(size=(3, 14))
    z[0, -1] = 40000.0
    expect_online(submission, z, 4, "online_softmax of logits of size about 5000, blocks of 4")
    z = np.array([[800.0, 799.0, 1e4, 9999.5, -1e4, 0.0]])
    expect_online(submission, z, 2, "online_softmax of [800, 799, 1e4, 9999.5, -1e4, 0]")


@points(1, "online_softmax")
def test_online_very_negative_logits(submission):
    """logits all far below 0 (near -1000) still give a distribution"""
    rng = np.random.default_rng(904)
    z = -1000.0 + 3.0 * rng.normal(size=(2, 9))
    p = expect_online(submission, z, 4, "online_softmax of logits near -1000, blocks of 4")
    check(np.allclose(p.sum(axis=-1), 1.0), "the weights of each row should sum to 1.")


@points(1, "online_softmax")
def test_online_minus_infinity(submission):
    """-inf entries get weight 0, also when the first blocks hold only -inf; no NaN, no warning"""
    z = np.array([[-np.inf, -np.inf, -np.inf, -np.inf, 1.0, 3.0, -np.inf, 2.0],
                  [0.5, -np.inf, 4.0, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
                  [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf, 7.0]])
    for block_size in (1, 2, 3):
        expect_online(submission, z, block_size,
                      f"online_softmax(z, {block_size}) of logits holding -inf (row 0 starts with "
                      f"four -inf, row 2 has a single finite logit at the end)")


@points(1, "online_softmax")
def test_online_float32(submission):
    """works on float32 logits"""
    z = (3.0 * np.random.default_rng(905).normal(size=(4, 10))).astype(np.float32)
    expect_online(submission, z, 3, "online_softmax of float32 logits, blocks of 3", tolerance=F32)


@points(1, "online_softmax")
def test_online_single_entry_and_clean(submission):
    """a single logit gets weight 1; the input is unchanged and nothing is printed"""
    expect_online(submission, np.array([3.7]), 1, "online_softmax of one logit, blocks of 1")
    expect_online(submission, np.array([[-2.0], [5.0]]), 4,
                  "online_softmax of a (2, 1) batch of single logits, blocks of 4")
    z = np.random.default_rng(906).normal(size=(3, 7))
    expect_online(submission, z, 2, "online_softmax(z, 2) of a (3, 7) batch")


# ------------------------------------------------------------------ blockwise_attention

@points(1, "blockwise_attention")
def test_blockwise_equals_naive(submission):
    """equals naive attention to 1e-10 in float64, T_q != T_k, d_k != d_v"""
    cases = [(7, 11, 5, 3, 4), (16, 16, 8, 8, 4), (13, 5, 3, 6, 2), (4, 20, 6, 2, 7)]
    for seed, (T_q, T_k, d_k, d_v, block_size) in enumerate(cases):
        Q, K, V = attention_data(910 + seed, (), T_q, T_k, d_k, d_v)
        expect_blockwise(submission, Q, K, V, block_size,
                         f"blockwise_attention with T_q = {T_q}, T_k = {T_k}, d_k = {d_k}, "
                         f"d_v = {d_v} and blocks of {block_size}")


@points(1, "blockwise_attention")
def test_blockwise_every_block_size(submission):
    """gives the same output for every block size, 1 to beyond T_k"""
    Q, K, V = attention_data(915, (), 5, 9, 4, 3, scale=1.5)
    for block_size in range(1, 12):
        expect_blockwise(submission, Q, K, V, block_size,
                         f"blockwise_attention(Q, K, V, {block_size}) with T_k = 9"
                         + (" (a block larger than T_k: one block)" if block_size > 9 else ""))


@points(1, "blockwise_attention")
def test_blockwise_batch_dimensions(submission):
    """leading batch dimensions: every sequence (and head) attends on its own"""
    Q, K, V = attention_data(916, (2, 3), 6, 10, 4, 5)
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention of a (2, 3) batch, blocks of 4")
    Q, K, V = attention_data(917, (4,), 3, 7, 2, 2)
    expect_blockwise(submission, Q, K, V, 3, "blockwise_attention of a batch of 4, blocks of 3")


@points(1, "blockwise_attention")
def test_blockwise_masks_broadcast(submission):
    """boolean masks (True = may attend) of shape (T_q, T_k) or broadcastable to it"""
    rng = np.random.default_rng(918)
    Q, K, V = attention_data(919, (), 6, 10, 4, 3)
    mask = rng.random((6, 10)) < 0.6
    mask[:, 0] = True
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention with a random (6, 10) mask",
                     mask=mask)
    Q, K, V = attention_data(920, (2, 3), 5, 9, 4, 3)
    mask = rng.random((5, 9)) < 0.7
    mask[:, 4] = True
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention of a (2, 3) batch with one (5, 9) "
                     "mask shared by the whole batch", mask=mask)
    padding = np.arange(9) < np.array([9, 4])[:, None, None, None]      # (2, 1, 1, 9)
    expect_blockwise(submission, Q, K, V, 2, "blockwise_attention of a (2, 3) batch with a padding "
                     "mask of shape (2, 1, 1, 9) (lengths 9 and 4)", mask=padding)
    expect_blockwise(submission, Q, K, V, 3, "blockwise_attention with a padding mask of shape "
                     "(1, 9) for every query", mask=np.arange(9)[None, :] < 7)


@points(1, "blockwise_attention")
def test_blockwise_causal_mask(submission):
    """a causal mask: query t sees keys 1..t only, for block sizes that do not divide T"""
    T = 11
    causal = np.tril(np.ones((T, T), dtype=bool))
    Q, K, V = attention_data(921, (2,), T, T, 4, 3)
    for block_size in (3, 4, 11):
        expect_blockwise(submission, Q, K, V, block_size,
                         f"blockwise_attention with a causal (11, 11) mask, blocks of {block_size}",
                         mask=causal)


@points(1, "blockwise_attention")
def test_blockwise_fully_masked_rows(submission):
    """a query with no allowed key gets an all-zero output, with no NaN and no warning"""
    rng = np.random.default_rng(922)
    Q, K, V = attention_data(923, (2,), 6, 8, 4, 3)
    mask = rng.random((2, 6, 8)) < 0.6
    mask[0, 1] = False
    mask[1, [0, 5]] = False
    out = expect_blockwise(submission, Q, K, V, 3, "blockwise_attention with fully masked rows "
                           "(sequence 0 row 1, sequence 1 rows 0 and 5)", mask=mask)
    check(np.all(out[0, 1] == 0) and np.all(out[1, [0, 5]] == 0),
          "a query with no allowed key should get an output of exact zeros.")
    everything_masked = np.zeros((6, 8), dtype=bool)
    out = expect_blockwise(submission, Q, K, V, 3, "blockwise_attention when every key is masked",
                           mask=everything_masked)
    check(np.all(out == 0), "when every key is masked, every output should be exactly zero.")


@points(1, "blockwise_attention")
def test_blockwise_first_blocks_masked(submission):
    """rows whose first blocks are entirely masked (left padding): no NaN, no warning"""
    Q, K, V = attention_data(924, (), 5, 12, 4, 3)
    mask = np.ones((5, 12), dtype=bool)
    mask[0, :11] = False                 # only the last key
    mask[1, :7] = False                  # the last five keys
    mask[2, 3:] = False                  # only the first three keys: later blocks fully masked
    mask[3, :] = False                   # nothing
    mask[3, 6] = True                    # ... except one key in the middle
    for block_size in (1, 2, 3, 5):
        expect_blockwise(submission, Q, K, V, block_size,
                         f"blockwise_attention, blocks of {block_size}, when the first blocks of "
                         f"some rows are fully masked (row 0 may see only the last key)", mask=mask)


@points(1, "blockwise_attention")
def test_blockwise_masked_key_with_largest_score(submission):
    """a masked key gets no weight even when its score is by far the largest"""
    Q, K, V = attention_data(925, (), 4, 9, 3, 2)
    Q = np.abs(Q) + 0.5
    K[2] = 400.0                           # score about 400 * sum(q) / sqrt(3) >> the others
    K[7] = 300.0
    allowed = np.ones(9, dtype=bool)
    allowed[[2, 7]] = False
    expect_blockwise(submission, Q, K, V, 3, "blockwise_attention when the masked keys 2 and 7 have "
                     "scores hundreds of times larger than the allowed ones",
                     mask=np.broadcast_to(allowed, (4, 9)).copy())


@points(1, "blockwise_attention")
def test_blockwise_huge_scores(submission):
    """scores in the thousands, the largest in a late block: no overflow, no warning"""
    Q, K, V = attention_data(926, (2,), 6, 13, 4, 3, scale=40.0)
    K[:, -1] = 3.0 * K[:, -1]
    # A score of size 1e4 is itself known only to about 1e4 * 2**-52: allow for that.
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention with scores of size about 1e3 "
                     "to 1e4, blocks of 4", tolerance={"rtol": 1e-9, "atol": 1e-9})


@points(1, "blockwise_attention")
def test_blockwise_very_negative_scores(submission):
    """every score far below 0 (near -1000) still gives a weighted average of the values"""
    rng = np.random.default_rng(927)
    direction = rng.normal(size=8)
    direction /= np.linalg.norm(direction)
    Q = 40.0 * direction + 0.05 * rng.normal(size=(5, 8))
    K = -70.0 * direction + 0.05 * rng.normal(size=(11, 8))     # q . k / sqrt(8) ~ -990
    V = rng.normal(size=(11, 3))
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention when every score is near -1000",
                     tolerance={"rtol": 1e-9, "atol": 1e-10})


@points(1, "blockwise_attention")
def test_blockwise_float32(submission):
    """works on float32 queries, keys and values (and masks)"""
    Q, K, V = attention_data(928, (3,), 7, 10, 4, 5, dtype=np.float32)
    expect_blockwise(submission, Q, K, V, 4, "blockwise_attention of float32 inputs, blocks of 4",
                     tolerance=F32)
    mask = np.tril(np.ones((7, 10), dtype=bool), k=2)
    mask[4] = False
    expect_blockwise(submission, Q, K, V, 3, "blockwise_attention of float32 inputs with a mask "
                     "and a fully masked row, blocks of 3", mask=mask, tolerance=F32)


@points(1, "blockwise_attention")
def test_blockwise_single_query_or_key(submission):
    """T_q = 1 or T_k = 1 (and d_k = 1): shapes (..., T_q, d_v), inputs unchanged"""
    Q, K, V = attention_data(929, (), 1, 6, 3, 2)
    out = expect_blockwise(submission, Q, K, V, 4, "blockwise_attention of one query (T_q = 1)")
    expect_shape(out, (1, 2), "blockwise_attention of one query")
    Q, K, V = attention_data(930, (2,), 5, 1, 1, 4)
    out = expect_blockwise(submission, Q, K, V, 3, "blockwise_attention with a single key (T_k = 1, "
                           "d_k = 1): every query returns that key's value")
    expect_shape(out, (2, 5, 4), "blockwise_attention with a single key")
    Q, K, V = attention_data(931, (), 1, 1, 2, 3)
    expect_blockwise(submission, Q, K, V, 1, "blockwise_attention with T_q = T_k = 1")


# ------------------------------------------------------------------ memory

def memory_problem(masked):
    """T_q = 128 queries, T_k = 16384 keys, d = 4: one float64 (T_q, T_k) matrix is 16 MiB."""
    rng = np.random.default_rng(932)
    T_q, T_k, d = 128, 16384, 4
    Q, K, V = rng.normal(size=(T_q, d)), rng.normal(size=(T_k, d)), rng.normal(size=(T_k, d))
    mask = (np.arange(T_k) < T_k - 1500)[None, :] if masked else None    # a padding row, (1, T_k)
    return Q, K, V, mask


def expected_large(Q, K, V, mask):
    """Naive attention computed in slices of 32 queries, to keep the grader's own memory small."""
    return np.concatenate([expected_attention(Q[s:s + 32], K, V, mask)
                           for s in range(0, Q.shape[0], 32)])


@points(2, "blockwise_attention")
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "padding-mask"])
def test_blockwise_never_holds_full_matrix(submission, masked):
    """never holds the full (T_q, T_k) score matrix: peak memory far below one such matrix"""
    Q, K, V, mask = memory_problem(masked)
    block_size = 256
    kwargs = {} if mask is None else {"mask": mask}
    T_q, T_k = Q.shape[0], K.shape[0]
    full = 8 * T_q * T_k
    out = call_blockwise(submission, Q, K, V, block_size, mask)
    # Memory only counts for a function that computes attention: first the values on this input.
    expect_close(out, expected_large(Q, K, V, mask),
                 f"blockwise_attention with T_q = {T_q}, T_k = {T_k} and blocks of {block_size} "
                 f"(its memory is measured only once its output is right)", **EXACT_OUT)
    try:
        naive = as_float(submission.peak_memory(Function("scaled_dot_product_attention"), Q, K, V,
                                                **kwargs), "peak_memory(...)")
        peak = as_float(submission.peak_memory(Function("blockwise_attention"), Q, K, V,
                                               block_size, **kwargs), "peak_memory(...)")
    except SubmissionError as error:
        fail(f"The peak memory of blockwise_attention could not be measured with the notebook's "
             f"locked `peak_memory` ({error}). Run the notebook's setup cells unchanged, and do "
             f"not redefine `peak_memory` or `scaled_dot_product_attention`.")
    check(naive >= 0.5 * full,
          f"the notebook's `peak_memory` saw only {naive / MIB:.1f} MiB for the naive attention, "
          f"which builds {full / MIB:.0f} MiB matrices: the measurement does not work in this "
          f"notebook. Do not redefine `peak_memory` or `scaled_dot_product_attention`.")
    if peak >= full / 2:
        fail(f"blockwise_attention(Q, K, V, {block_size}) with T_q = {T_q} and T_k = {T_k}"
             f"{' and a padding mask' if masked else ''} allocated {peak / MIB:.1f} MiB at its "
             f"peak; one full (T_q, T_k) float64 matrix takes {full / MIB:.0f} MiB (the naive "
             f"function needed {naive / MIB:.0f} MiB). It should hold one (T_q, block_size) block "
             f"of scores at a time ({8 * T_q * block_size / MIB:.2f} MiB), never all of them: "
             f"compute the scores inside the loop over key blocks, not before it (tiling the "
             f"queries alone is not enough, each query block would still see every key).")
