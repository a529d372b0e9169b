"""Claims of 08-learning-to-attend's prose, as the notebook states them before issue 20's fixes."""
from claims import Claim, Published

CLAIMS = [
    Claim(quote="climbs from a few percent to about 90%",
          value="attentive_history['alignment accuracy'][-1]", low=0.85, high=0.95),
    Claim(quote="in each noun phrase with adjectives, the row of the noun jumps ahead",
          value="np.mean((translator_weights(attentive, held_out).argmax(-1) == held_out['alignment'])"
                "[held_out['alignment'] - np.arange(14) == 2])", low=0.9, every_seed=True),
    Claim(quote="a bit more often than one time in four",
          value="test_accuracy(blind, test, previous=False)", low=0.25, high=0.33),
    Claim(quote="with 26 pairs it is still about 17 times a uniform share",
          value="weights_on_answer[-1] * 52", low=15, high=19),
    Claim(quote="while the attention decoder's does not",
          value="accuracy['attention decoder'][0] - accuracy['attention decoder'][-1]", high=0.02,
          every_seed=True),
    Claim(quote="after the same 100 steps its alignment accuracy is far below the scaled decoder's",
          value="attentive_history['alignment accuracy'][-1] - unscaled_history['alignment accuracy'][-1]",
          low=0.15, every_seed=True),
]
PUBLISHED = [
    Published(quote="it scored 26.75 BLEU against 17.82 for RNNencdec-50",
              source="Bahdanau, Cho & Bengio (2015), ICLR, Table 1"),
]
