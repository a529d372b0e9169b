"""helpers.plots: the options of the attention-map grid."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from helpers import plots  # noqa: E402


def colorbars(fig):
    return [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def test_heatmap_grid_draws_one_shared_colorbar_only_when_asked():
    maps = [np.full((3, 4), 0.25), np.eye(3, 4)]
    plain = plots.heatmap_grid(maps, titles=["uniform", "one-hot"])
    assert colorbars(plain) == []
    shared = plots.heatmap_grid(maps + [np.eye(3, 4)], ncols=2, colorbar=True)
    assert len(colorbars(shared)) == 1
    images = [ax.images[0] for ax in shared.axes if ax.images]
    assert len(images) == 3 and all(image.get_clim() == (0.0, 1.0) for image in images)
    assert colorbars(shared)[0].get_ylabel() == "attention weight"


def test_heatmap_grid_annotates_only_when_asked():
    maps = [np.full((2, 2), 0.5)] * 2
    silent = plots.heatmap_grid(maps)
    assert all(len(ax.texts) == 0 for ax in silent.axes)
    written = plots.heatmap_grid(maps, annotate=True)
    assert [len(ax.texts) for ax in written.axes] == [4, 4]


def test_heatmap_grid_can_annotate_only_the_small_maps():
    maps = [np.full((8, 8), 1 / 8), np.full((9, 9), 1 / 9), np.full((4, 8), 1 / 8)]
    fig = plots.heatmap_grid(maps, annotate=None)
    assert [len(ax.texts) for ax in fig.axes] == [64, 0, 32]
