"""The prose claims of 10-learning-self-attention, each tied to a value its solution prints."""
from claims import Claim, Published

TRAINED = 'results["trained layer"]'
NO_POSITIONS = 'results["without positions"]'
NO_DEPTH = 'results["without depth"]'
DEEPER = "(language_model.DEEPER, 'opposite')"

CLAIMS = [
    # 2 · the loss
    Claim(quote="A uniform guess costs $\\log 46 \\approx 3.83$ nats per token",
          value="uniform_loss", low=3.82, high=3.84),
    Claim(quote="Knowing only which tokens are frequent (*the*, nouns, the end token) lowers the loss, "
                "but not by much",
          value="uniform_loss - unigram_loss", low=0.2, high=1.0, every_seed=True),
    Claim(quote="The untrained model, whose random logits are small, starts a little above the uniform "
                "guess",
          value="untrained_loss - uniform_loss", low=0.05, high=0.8, every_seed=True),
    # 3 · the gradient check of the whole model
    Claim(quote="the largest relative error printed above is below $10^{-6}$",
          value="max(errors.values())", low=0.0, high=1e-6, every_seed=True),
    # 4 · training
    Claim(quote="The loss falls quickly below the unigram model's",
          value="unigram_loss - model_loss", low=1.0, every_seed=True),
    Claim(quote="the held-out loss lands close to the training loss",
          value="abs(model_loss - train_loss)", low=0.0, high=0.05, every_seed=True),
    Claim(quote="the causal layer's stays around 1.6 nats",
          value="train_loss", low=1.55, high=1.7, every_seed=True),
    # 5 · agreement against the baselines
    Claim(quote="The trained layer agrees in at least 85% of the sentences of every group",
          value=f"min({TRAINED}[g] for g in groups)", low=0.85, every_seed=True),
    Claim(quote="where the nearest-noun rule is wrong every time",
          value="max(results['nearest noun'][(c, 'opposite')] for c in (1, 2, 3))", low=0.0, high=0.0,
          every_seed=True),
    Claim(quote="The layer without positions also starts near 100% with no or one attractor",
          value=f"min({NO_POSITIONS}[(0, 'none')], {NO_POSITIONS}[(1, 'opposite')])", low=0.9,
          every_seed=True),
    Claim(quote="but falls as opposite-number attractors pile up",
          value=f"{NO_POSITIONS}[(1, 'opposite')] - {NO_POSITIONS}[(3, 'opposite')]",
          low=0.1, every_seed=True),
    Claim(quote="The first-noun rule is perfect",
          value="min(results['first noun'].values())", low=1.0, high=1.0, every_seed=True),
    Claim(quote="a model could score 100% by position alone",
          value="min(results['first noun'].values())", low=1.0, high=1.0, every_seed=True),
    # 6 · where the verb looks
    Claim(quote="In every group the subject alone gets more of the row's weight than all the attractors "
                "together",
          value="subject_minus_attractors", low=0.1, every_seed=True),
    Claim(quote="The row that decides *was* puts more weight on *cat* than on *mouse*",
          value="learned[0, verb_row, 2] - learned[0, verb_row, 6]", low=0.05, every_seed=True),
    Claim(quote="though far from all of it: the rest is spread over other words",
          value="learned[0, verb_row, 2]", low=0.0, high=0.8, every_seed=True),
    # 7 · where it fails
    Claim(quote="it still agrees in more than 80% of the sentences",
          value=f"{TRAINED}[{DEEPER}]", low=0.8, every_seed=True),
    Claim(quote="close to its score with three attractors",
          value=f"abs({TRAINED}[(3, 'opposite')] - {TRAINED}[{DEEPER}])", low=0.0, high=0.15,
          every_seed=True),
    Claim(quote="The layer without positions does far worse there",
          value=f"{TRAINED}[{DEEPER}] - {NO_POSITIONS}[{DEEPER}]", low=0.25, every_seed=True),
    Claim(quote="The verb-predicting row then puts less than a third of the trained layer's weight on "
                "the subject",
          value="on_subject['without depth'] / on_subject['trained layer']", low=0.0, high=1 / 3,
          every_seed=True),
    Claim(quote="better when the attractors share the subject's number than when they do not, at every "
                "count",
          value="same_minus_opposite", low=0.05, every_seed=True),
    Claim(quote="the first-noun rule would have been perfect, but 400 steps of next-word prediction did "
                "not find it",
          value=f"max({NO_DEPTH}[(c, 'opposite')] for c in (1, 2, 3))", low=0.0, high=0.75,
          every_seed=True),
    # 8 · the mask
    Claim(quote="Without the mask the training loss falls to almost nothing, far below the causal "
                "layer's",
          value="maskless_train_loss / train_loss", low=0.0, high=0.05, every_seed=True),
    Claim(quote="that column takes most of a row's weight on average",
          value="on_next", low=0.5, high=1.0, every_seed=True),
    Claim(quote="its loss when only the past is visible is worse than the uniform guess",
          value="maskless_causal_loss - uniform_loss", low=0.5, every_seed=True),
    Claim(quote="almost none of its sentences are grammatical",
          value="grammatical['maskless']", low=0.0, high=0.05, every_seed=True),
    Claim(quote="against roughly half or more of the causal layer's",
          value="grammatical['causal']", low=0.45, high=1.0, every_seed=True),
    Claim(quote="The causal layer reports exactly 0 at every $t$",
          value="causal_leak", low=0.0, high=0.0, every_seed=True),
    Claim(quote="The maskless layer changes at every $t$ before the last",
          value="maskless_leak", low=0.01, every_seed=True),
]

PUBLISHED = [
    Published(quote="the LSTM erred on less than 1% of the verbs overall",
              source="Linzen, Dupoux & Goldberg (2016), TACL 4, abstract: \"very high overall accuracy "
                     "(less than 1% errors)\" in the strongly supervised settings"),
]
