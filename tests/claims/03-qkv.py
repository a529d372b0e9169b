"""What the prose of 03-qkv says, and the values it rests on."""
from claims import Claim

BANANAS = "np.sort(K_words @ word_vector('bananas'))"
STEEP = "abs(slope(series['soft_lookup, τ = 0.02'], 30))"

CLAIMS = [
    # the fruit shop
    Claim(quote="whether the best score is 1.00 or 0.00",
          value="(K_words @ word_vector('banana')).max()", low=1 - 1e-12, high=1 + 1e-12),
    Claim(quote="whether the best score is 1.00 or 0.00", value="(K_words @ word_vector('kiwi')).max()",
          low=0, high=0),
    Claim(quote="`\"kiwi\"` ties with every key at score 0 and gets the apple's price",
          value="hard_lookup(word_vector('kiwi'), K_words, V_prices)[0]", low=3.0, high=3.0),
    # from a step to a slope
    Claim(quote="its slope is exactly 0 at both angles",
          value="abs(slope(series['hard_lookup'], 30)) + abs(slope(series['hard_lookup'], 44))", low=0,
          high=0),
    Claim(quote="at $\\tau = 0.02$ it is already 0.0000 at 30°", value=STEEP, high=5e-5),
    Claim(quote="(0.0000 at 30° for $\\tau = 0.02$)", value=STEEP, high=5e-5),
    # the temperature sweep
    Claim(quote="the best score, 0.87, and the runner-up, 0.24.", value=f"{BANANAS}[-1]", low=0.865,
          high=0.875),
    Claim(quote="the best score, 0.87, and the runner-up, 0.24.", value=f"{BANANAS}[-2]", low=0.235,
          high=0.245),
    Claim(quote="the difference is under a cent", value="np.abs(soft - hard)[temperatures <= 1 / 16].max()",
          high=0.01),
    Claim(quote="and the result tends to the plain mean of the values",
          value="abs(soft[-1] - mean) / abs(soft[0] - mean)", high=0.05),
    # masks
    Claim(quote="The rows are soft lookups to machine precision", value="gap", high=1e-12,
          every_seed=True),
    Claim(quote="row 3 is blank: no NaN has leaked into the output",
          value="np.abs(out_m[3]).max() + np.abs(W_m[3]).max()", low=0, high=0, every_seed=True),
    Claim(quote="Without a mask the pads soak up a real share of the weight",
          value="W_none[1, :2, 2:].sum(-1).max()", low=0.15, every_seed=True),
    Claim(quote="(at the default seed, 37% of `bark`'s, printed)", value="W_none[1, 1, 2:].sum()",
          low=0.36, high=0.37),
    Claim(quote="what sits at a pad position cannot change a real token's output",
          value="np.abs(after - before)[keep].max()", high=1e-12, every_seed=True),
    # kernel regression
    Claim(quote="The training error falls towards 0 as $\\sigma \\to 0$", value="train_error[0]",
          high=0.02, every_seed=True),
    Claim(quote="while the error against the truth rises", value="test_error[0] / min(test_error)", low=1.5,
          every_seed=True),
    Claim(quote="the largest weight drops from most of a row to under a quarter",
          value="maps[0].max()", low=0.75, every_seed=True),
    Claim(quote="the largest weight drops from most of a row to under a quarter",
          value="maps[1].max()", high=0.25, every_seed=True),
    Claim(quote="(0.99 and 0.17 at the default seed, in the titles)", value="maps[0].max()", low=0.985,
          high=0.995),
    Claim(quote="(0.99 and 0.17 at the default seed, in the titles)", value="maps[1].max()", low=0.165,
          high=0.175),
]
