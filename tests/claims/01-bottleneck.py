"""What the prose of 01-bottleneck says, and the values it rests on.

Every direction holds at every seed, with margin at seeds 0 to 69: the text's bounds sit outside
what those seeds gave ("95% or more": at least 98%; "fewer than 15 steps": 11 at most; "between
0.3 and 0.6": from 0.37 to 0.51)."""
from claims import Claim, Published

TABLE_1 = "Bahdanau, Cho & Bengio (2015), ICLR, Table 1 (BLEU on the test set, all sentences)"
FACTORS = "factors"   # the factor per step over the first 10 steps, printed, for each rho
HELD = "[max(v) for v in tokens_held.values()]"
ABOVE_CHANCE_32 = "np.sum(by_position['T = 32'][:32] > chance + 0.1)"

CLAIMS = [
    # how long a token echoes
    Claim(quote="the first token's trace decays **geometrically**, by a roughly constant factor per step "
                "that grows with $\\rho$", value=f"float(np.all(np.diff({FACTORS}) > 0))", low=1, high=1,
          every_seed=True),
    Claim(quote="0.44 at the default seed and between 0.3 and 0.6 at any seed", value=f"{FACTORS}[0]",
          low=0.3, high=0.6, every_seed=True),
    Claim(quote="0.44 at the default seed and between 0.3 and 0.6 at any seed", value=f"{FACTORS}[0]",
          low=0.435, high=0.445),
    # the final state is a recency buffer
    Claim(quote="The last two tokens are recalled almost perfectly, whatever $T$ (95% or more)",
          value="min(min(a[T - 2:T]) for T, a in zip((8, 16, 32), by_position.values()))", low=0.95,
          every_seed=True),
    Claim(quote="the curve then falls to chance fewer than 15 steps before the end, whatever $T$",
          value=ABOVE_CHANCE_32, low=3, high=14, every_seed=True),
    Claim(quote="the curve then falls to chance fewer than 15 steps before the end, whatever $T$",
          value="np.sum(by_position['T = 16'][:16] > chance + 0.1)", low=3, high=14, every_seed=True),
    Claim(quote="for $T = 32$, most positions are at chance",
          value="np.mean(by_position['T = 32'][:32] < chance + 0.1)", low=0.5, every_seed=True),
    # how many tokens it holds
    Claim(quote="The count **stops growing**: it saturates at a few tokens, set by $d_h$ and not by $T$",
          value="max(abs(v[-1] - v[-2]) for v in tokens_held.values())", high=1.0, every_seed=True),
    Claim(quote="Doubling $d_h$ raises the ceiling", value=f"float(np.all(np.diff({HELD}) > 1))", low=1,
          high=1, every_seed=True),
    Claim(quote="The measured counts (printed above) are of that order",
          value=f"max(max(h / (d / 7), (d / 7) / h) for h, d in zip({HELD}, (16, 32, 64)))", high=2,
          every_seed=True),
    # keep every state
    Claim(quote="The targeted read recalls **every** position perfectly",
          value="min(by_read['targeted state h_i'])", low=0.99, every_seed=True),
    Claim(quote="The mean of the states does no better overall",
          value="np.mean(by_read['mean of the states']) - np.mean(by_read['final state h_T'])", high=0.02,
          every_seed=True),
    Claim(quote="in both panels the gap widens with length",
          value="float(np.all(np.diff(np.array([targeted[:T].mean() for T in lengths]) "
                "- np.array(final_accuracy[32])) >= -0.01))", low=1, high=1, every_seed=True),
]

PUBLISHED = [
    Published(quote="| RNNencdec-30 | 13.93 |", source=TABLE_1),
    Published(quote="| RNNsearch-30 | 21.50 |", source=TABLE_1),
    Published(quote="| RNNencdec-50 | 17.82 |", source=TABLE_1),
    Published(quote="| RNNsearch-50 | 26.75 |", source=TABLE_1),
    Published(quote="RNNencdec-50 17.82 vs RNNsearch-50 26.75", source=TABLE_1),
    Published(quote="**read off their figure by eye** (to within about 2 BLEU)",
              source="Bahdanau, Cho & Bengio (2015), ICLR, Figure 2, read by eye: helpers/bottleneck.py "
                     "keeps the values read, which the notebook plots"),
]
