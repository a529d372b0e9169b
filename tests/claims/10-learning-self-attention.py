"""The prose claims of 10-learning-self-attention, each tied to a value its solution prints.

The trained layer fails a whole group at some seeds: what holds only at most seeds is a rate,
tuned on seeds 0 to 29."""
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
    Claim(quote="The untrained model, whose random logits are small, starts near the uniform guess",
          value="abs(untrained_loss - uniform_loss)", low=0.0, high=1.5, every_seed=True),
    Claim(quote="and above it at most seeds (printed in section 4)",
          value="untrained_loss - uniform_loss", low=0.0, rate=(0.6, 1.0)),
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
    # 1 · the splits
    Claim(quote="every sentence of every split is distinct; the cell below counts the test sentences the "
                "training set holds",
          value="test_in_training", low=0, high=0, every_seed=True),
    # 5 · agreement against the baselines (at some seeds the trained layer fails a whole group)
    Claim(quote="At most seeds the trained layer agrees in at least 85% of the sentences of every group",
          value=f"min({TRAINED}[g] for g in groups)", low=0.85, rate=(0.5, 1.0)),
    Claim(quote="At most seeds the trained layer agrees in at least 85% of the sentences of every group",
          value=f"min({TRAINED}[g] for g in groups)", low=0.85),
    Claim(quote="where the nearest-noun rule is wrong every time",
          value="max(results['nearest noun'][(c, 'opposite')] for c in (1, 2, 3))", low=0.0, high=0.0,
          every_seed=True),
    Claim(quote="(with `SEED = 9`, to 45% with three)",
          value=f"{TRAINED}[(3, 'opposite')]", low=0.44, high=0.46, setting="SEED = 9"),
    Claim(quote="it stays above the nearest-noun rule's 0% in every opposite-number group at every seed",
          value=f"min({TRAINED}[(c, 'opposite')] for c in (1, 2, 3))", low=0.25, every_seed=True),
    Claim(quote="The layer without positions also agrees in most sentences with no or one attractor",
          value=f"min({NO_POSITIONS}[(0, 'none')], {NO_POSITIONS}[(1, 'opposite')])", low=0.6,
          every_seed=True),
    Claim(quote="(at least 80% at most seeds)",
          value=f"min({NO_POSITIONS}[(0, 'none')], {NO_POSITIONS}[(1, 'opposite')])", low=0.8,
          rate=(0.6, 1.0)),
    Claim(quote="but falls as opposite-number attractors pile up, at every seed",
          value=f"{NO_POSITIONS}[(1, 'opposite')] - {NO_POSITIONS}[(3, 'opposite')]",
          low=0.05, every_seed=True),
    Claim(quote="The first-noun rule is perfect",
          value="min(results['first noun'].values())", low=1.0, high=1.0, every_seed=True),
    Claim(quote="a model could score 100% by position alone",
          value="min(results['first noun'].values())", low=1.0, high=1.0, every_seed=True),
    # 6 · where the verb looks
    Claim(quote="At most seeds, in every group the subject alone gets more of the row's weight than all "
                "the attractors together",
          value="subject_minus_attractors", low=1e-9, rate=(0.6, 1.0)),
    Claim(quote="at the default seed it is not *cat* but *chased* (0.33 against 0.26 for *cat*)",
          value="float(darkest_word == 'chased')", low=1.0, high=1.0),
    Claim(quote="at the default seed it is not *cat* but *chased* (0.33 against 0.26 for *cat*)",
          value="learned[0, verb_row].max()", low=0.325, high=0.335),
    Claim(quote="at the default seed it is not *cat* but *chased* (0.33 against 0.26 for *cat*)",
          value="learned[0, verb_row, 2]", low=0.255, high=0.265),
    # a rate's bounds hold at SEED = 0 too: the share of seeds at which a word other than the subject wins
    Claim(quote="which column wins in this one sentence depends on the seed (the subject at some seeds, "
                "*chased* or *that* at others)",
          value="float(darkest_word != 'cat')", low=1.0, rate=(0.2, 0.8)),
    Claim(quote="the row puts more weight on *cat* than on *mouse*, the nearer noun",
          value="learned[0, verb_row, 2] - learned[0, verb_row, 6]", low=1e-9, rate=(0.6, 1.0)),
    Claim(quote="at the default seed far from all of it",
          value="learned[0, verb_row, 2]", low=0.0, high=0.5),
    Claim(quote="At most seeds the subject's column is the darkest in more than half of the sentences of "
                "every group",
          value="darkest_subject", low=0.5, rate=(0.6, 1.0)),
    Claim(quote="and the nearest noun's in at most a tenth",
          value="darkest_nearest", low=0.0, high=0.1, rate=(0.6, 1.0)),
    Claim(quote="a column picked at random would be the subject's in a sixth of them or less",
          value="darkest_chance", low=0.0, high=1 / 6, every_seed=True),
    Claim(quote="(with `SEED = 9`, in 3% of the sentences with three)",
          value="darkest[3]['subject']", low=0.025, high=0.035, setting="SEED = 9"),
    # 7 · where it fails
    Claim(quote="at most seeds it agrees less often there than with three attractors",
          value=f"{TRAINED}[(3, 'opposite')] - {TRAINED}[{DEEPER}]", low=1e-9, rate=(0.5, 1.0)),
    Claim(quote="The layer without positions does worse there at every seed",
          value=f"{TRAINED}[{DEEPER}] - {NO_POSITIONS}[{DEEPER}]", low=0.02, every_seed=True),
    Claim(quote="puts less than half of the trained layer's weight on the subject, at every seed",
          value="on_subject['without depth'] / on_subject['trained layer']", low=0.0, high=0.5,
          every_seed=True),
    Claim(quote="better when the attractors share the subject's number than when they do not, at every "
                "count and every seed",
          value="same_minus_opposite", low=0.03, every_seed=True),
    Claim(quote="with opposite-number attractors it agrees in fewer than half of the sentences at most "
                "seeds",
          value=f"np.mean([{NO_DEPTH}[(c, 'opposite')] for c in (1, 2, 3)])", high=0.5, rate=(0.6, 1.0)),
    Claim(quote="well above the nearest-noun rule's 0%",
          value=f"min({NO_DEPTH}[(c, 'opposite')] for c in (1, 2, 3))", low=0.05, every_seed=True),
    Claim(quote="400 steps of next-word prediction did not find it, at any seed",
          value=f"np.mean([{NO_DEPTH}[(c, 'opposite')] for c in (1, 2, 3)])", low=0.0, high=0.75,
          every_seed=True),
    # 8 · the mask
    Claim(quote="Without the mask the training loss falls far below the causal layer's at every seed",
          value="maskless_train_loss / train_loss", low=0.0, high=0.3, every_seed=True),
    Claim(quote="to almost nothing at most seeds",
          value="maskless_train_loss", low=0.0, high=0.05, rate=(0.6, 1.0)),
    Claim(quote="which drives its training loss far below the causal layer's, close to 0",
          value="maskless_train_loss / train_loss", low=0.0, high=0.3, every_seed=True),
    Claim(quote="that column takes most of a row's weight on average",
          value="on_next", low=0.5, high=1.0, every_seed=True),
    Claim(quote="its loss when only the past is visible is worse than the uniform guess",
          value="maskless_causal_loss - uniform_loss", low=0.5, every_seed=True),
    Claim(quote="almost none of its sentences are grammatical",
          value="grammatical['maskless']", low=0.0, high=0.05, every_seed=True),
    Claim(quote="against a third or more of the causal layer's at every seed",
          value="grammatical['causal']", low=0.3, high=1.0, every_seed=True),
    Claim(quote="against a third or more of the causal layer's.",
          value="grammatical['causal']", low=0.3, high=1.0, every_seed=True),
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
