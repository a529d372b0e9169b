"""What the prose of 02-scoring says, and the values it rests on.

The toy translation (« chat ») and the costs involve no random draw: their claims hold at every seed
with the default seed's bounds, which the sweep shows. The directions of the scale experiment hold
at every seed, with margin at seeds 0 to 69."""
from claims import Claim, Published

COSTS = "score_cost(50, 256, 256, 256)"

CLAIMS = [
    # general with W = 3I and W = -I, on the decoder state of « chat »
    Claim(quote="the same word, *cat*, gets the most weight, and the weights are sharper",
          value="float(chat_weights['W = 3I'].argmax() == 2 and chat_weights['W = 3I'].max() > chat_weights['W = I'].max())",
          low=1, high=1, every_seed=True),
    Claim(quote="the state *least* like the query gets the most weight, and *cat* gets almost none",
          value="float(chat_weights['W = -I'].argmax() == chat_scores.argmin() and chat_weights['W = -I'][2] < 0.01)",
          low=1, high=1, every_seed=True),
    # the scale of the states, over many draws
    Claim(quote="the weights snap to one-hot: past $\\lambda = 4$ nearly every draw puts all the weight on one position",
          value="spread['dot'][0][6]", low=0.95, every_seed=True),
    Claim(quote="the scores stop changing, and so do the weights",   # from λ = 16 to 32, draw by draw
          value="np.median(np.abs(largest['additive'][-1] - largest['additive'][-2]))", high=0.01,
          every_seed=True),
    Claim(quote="(a median largest weight about one half)", value="median['additive'][-1]", low=0.35,
          high=0.6, every_seed=True),
    Claim(quote="only a few draws end up nearly one-hot", value="np.mean(largest['additive'][-1] > 0.9)",
          high=0.15, every_seed=True),
    # « chat »
    Claim(quote="*cat* gets about four fifths of the weight, not all of it", value="weight_on_cat",
          low=0.75, high=0.87, every_seed=True),
    Claim(quote="Its score is about 2.8 above those of *black* and *saw*",
          value="chat_scores[2] - max(chat_scores[1], chat_scores[3])", low=2.7, high=2.9,
          every_seed=True),
    Claim(quote="together the other seven words still take about a sixth", value="1 - weight_on_cat",
          low=0.14, high=0.2, every_seed=True),
    # what each score costs
    Claim(quote="`additive` needs about 260 times the FLOPs of",
          value=f"{COSTS}['additive'][0] / {COSTS}['dot'][0]", low=250, high=270, every_seed=True),
    Claim(quote="and `general` about 6 times", value=f"{COSTS}['general'][0] / {COSTS}['dot'][0]",
          low=5.5, high=6.5, every_seed=True),
    Claim(quote="the additive score alone has three million parameters",
          value="score_cost(50, 1000, 2000, 1000)['additive'][1] / 1e6", low=2.9, high=3.1,
          every_seed=True),
]

PUBLISHED = [
    Published(quote="it took their model from 17.82 BLEU",
              source="Bahdanau, Cho & Bengio (2015), ICLR, Table 1 (RNNencdec-50)"),
    Published(quote="to 26.75 with attention",
              source="Bahdanau, Cho & Bengio (2015), ICLR, Table 1 (RNNsearch-50)"),
]
