"""Checks specific to 04-scaling: the statistics its random tests rely on, and its figures.

The hidden suite judges two random functions against a trusted simulation and standard errors
worked out by hand. These tests make sure that simulation and those formulas are right, and that
the notebook's visible check quotes the same numbers as the suite.
"""
import ast
import json

import numpy as np
import pytest

from autograder.engine import reference
from support import COURSE, suite_module

ASSIGNMENT = "04-scaling"
ID = [ASSIGNMENT]  # test ids carry the assignment, so `-k 04-scaling` selects them




@pytest.mark.parametrize("assignment", ID)
def test_trusted_sweep_simulation_matches_brute_force(assignment):
    """The suite draws |q| from a chi-square instead of drawing q and K; both must agree."""
    suite = suite_module(ASSIGNMENT)
    d_ks, n_keys, n = [1, 8, 128], 6, 20_000
    rng = np.random.default_rng(0)
    for scaled in (True, False):
        mean, spread = suite.expected_sweep(d_ks, n_keys, scaled, n=200_000)
        for i, d_k in enumerate(d_ks):
            Q = rng.standard_normal((n, d_k))
            K = rng.standard_normal((n, n_keys, d_k))
            s = np.einsum("td,tkd->tk", Q, K) / (np.sqrt(d_k) if scaled else 1.0)
            alpha = suite.softmax(s)
            brute = {"max_weight": alpha.max(-1), "entropy": suite.entropy(alpha),
                     "grad_norm": np.linalg.norm(suite.jacobian(alpha), axis=(-2, -1))}
            for key, values in brute.items():
                se = values.std() * np.sqrt(1 / n + 1 / 200_000)
                assert abs(values.mean() - mean[key][i]) < 5 * se, (scaled, d_k, key)
                assert abs(values.std() - spread[key][i]) < 0.05 * spread[key][i] + 1e-3


@pytest.mark.parametrize("assignment", ID)
def test_standard_error_of_the_score_variance(assignment):
    """E[(q·k)^4] = 3 d_k^2 + 6 d_k, the fourth moment behind the suite's tolerance."""
    rng = np.random.default_rng(1)
    for d_k in (1, 4, 32):
        s = np.einsum("nd,nd->n", rng.standard_normal((200_000, d_k)),
                      rng.standard_normal((200_000, d_k)))
        assert np.mean(s**4) == pytest.approx(3 * d_k**2 + 6 * d_k, rel=0.05)


@pytest.mark.parametrize("assignment", ID)
def test_visible_check_quotes_the_suite_numbers(assignment):
    """The notebook's table of expected sweep values agrees with the suite's simulation."""
    notebook = json.loads(COURSE.assignment(assignment).solution.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "check_saturation_sweep")
    tree = ast.parse("".join(cell["source"]))
    table = next(ast.literal_eval(node.value) for node in ast.walk(tree)
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "table")
    suite = suite_module(ASSIGNMENT)
    expected = {flag: suite.expected_sweep([1, 64], 10, flag, n=400_000) for flag in (True, False)}
    for key, flag, d_k, value, slack in table:
        mean, spread = expected[flag]
        i = [1, 64].index(d_k)
        assert abs(mean[key][i] - value) < 0.003, (key, flag, d_k)
        five_se = 5 * spread[key][i] / np.sqrt(2000)
        assert five_se <= slack <= 1.2 * five_se + 0.002, (key, flag, d_k, slack, five_se)


@pytest.mark.parametrize("assignment", ID)
def test_figures_build(assignment):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from helpers import scaling

    namespace = reference.namespace(COURSE.assignment(assignment))
    rows = [namespace["softmax"](np.array([2.0, 1.0, 0.0, -1.0])),
            namespace["softmax"](np.array([40.0, 1.0, 0.0, -1.0]))]
    jacobians = [namespace["softmax_jacobian"](r) for r in rows]
    assert all(np.abs(J).max() <= scaling.JACOBIAN_LIMIT for J in jacobians)
    figure = scaling.rows_and_jacobians(rows, jacobians, ["healthy", "saturated"])
    bars = [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 2      # one for the weights, one for the Jacobians
    sweep = namespace["saturation_sweep"]([1, 4], 4, 10, np.random.default_rng(0))
    figure = scaling.sweep_panels([1, 4], {"scaled": sweep}, 4)
    assert figure.axes[2].get_yscale() == "log"
    norms = {"unscaled": [np.array([0.3, 0.2, 1e-6, 1e-9]), np.array([1e-5, 1e-8, 2e-4, 0.1])]}
    figure = scaling.gradient_panels([1, 4], norms, threshold=1e-3)
    left, right = figure.axes
    assert left.get_yscale() == "log"
    assert np.allclose(left.get_lines()[0].get_ydata(), [np.median(v) for v in norms["unscaled"]])
    assert np.allclose(right.get_lines()[0].get_ydata(), [0.5, 0.75])
    scaling.variance_plot([1, 2, 4], [1.1, 2.0, 3.9])
    scaling.score_histograms({"a": np.arange(10.0)})
    plt.close("all")
