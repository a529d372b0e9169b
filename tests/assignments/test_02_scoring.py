"""Checks specific to 02-scoring: its helper module and the teaching conventions of its notebook."""
import re

import numpy as np
import pytest

from helpers import scoring
from support import cell_source as source, solution_cells as cells

ASSIGNMENT = "02-scoring"
pytestmark = pytest.mark.parametrize("assignment", [ASSIGNMENT])


def softmax_rows(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_toy_translation_is_deterministic_and_aligned(assignment):
    toy = scoring.toy_translation()
    again = scoring.toy_translation()
    assert np.array_equal(toy["H"], again["H"]) and np.array_equal(toy["S"], again["S"])
    assert toy["H"].shape == (len(scoring.SOURCE), 16)
    assert toy["S"].shape == (len(scoring.TARGET), 16)
    weights = softmax_rows(toy["S"] @ toy["H"].T)
    # the dot-score map puts most weight on the intended English word, for every French word
    assert list(weights.argmax(axis=1)) == list(scoring.ALIGNMENT)
    assert weights.max(axis=1).min() > 0.6
    # sharpness scales the decoder states, so it sharpens the map
    sharp = softmax_rows(scoring.toy_translation(sharpness=12.0)["S"] @ toy["H"].T)
    flat = softmax_rows(scoring.toy_translation(sharpness=0.5)["S"] @ toy["H"].T)
    assert sharp.max(axis=1).min() > 0.95 and flat.max(axis=1).max() < 0.3


def test_toy_translation_needs_room_for_every_word(assignment):
    with pytest.raises(ValueError):
        scoring.toy_translation(d=4)


def test_other_feature_space_is_undone_by_the_pseudo_inverse(assignment):
    toy = scoring.toy_translation()
    S_other, R = scoring.other_feature_space(toy["S"], d_s=24)
    assert S_other.shape == (len(scoring.TARGET), 24) and R.shape == (24, 16)
    W = np.linalg.pinv(R.T)
    np.testing.assert_allclose(S_other @ W @ toy["H"].T, toy["S"] @ toy["H"].T, atol=1e-10)


def test_score_cost_counts(assignment):
    costs = scoring.score_cost(T=10, d_s=4, d_h=4, d_a=3)
    assert costs["dot"] == (2 * 10 * 4, 0)
    assert costs["general"] == (2 * 4 * 4 + 2 * 10 * 4, 16)
    assert costs["additive"] == (2 * 3 * 4 + 2 * 10 * 3 * 4 + 4 * 10 * 3, 3 * (4 + 4 + 1))
    assert scoring.score_cost(T=10, d_s=4, d_h=5, d_a=3)["dot"] is None


def test_alignment_links_draws_and_checks_its_shape(assignment):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    toy = scoring.toy_translation()
    weights = softmax_rows(toy["S"] @ toy["H"].T)
    ax = scoring.alignment_links(weights, toy["source"], toy["target"], title="links")
    assert len(ax.lines) >= len(scoring.TARGET)
    with pytest.raises(ValueError):
        scoring.alignment_links(weights.T, toy["source"], toy["target"])
    plt.close("all")


def test_notebook_cites_its_papers_and_prompts_predictions(assignment):
    markdown = "\n".join(source(c) for c in cells(assignment) if c["cell_type"] == "markdown")
    assert "Bahdanau et al. (2015)" in markdown and "Luong et al. (2015)" in markdown
    assert len(re.findall(r"Predict, then run", markdown)) >= 5


def test_attention_maps_go_through_the_shared_helpers(assignment):
    code = "\n".join(source(c) for c in cells(assignment) if c["cell_type"] == "code")
    assert "imshow" not in code and "matshow" not in code
    assert "attention_heatmap(" in code and "heatmap_grid(" in code
