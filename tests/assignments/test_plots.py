"""helpers.plots: the options of the attention-map grid."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from helpers import plots  # noqa: E402


def colorbars(fig):
    return [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def test_heatmap_grid_draws_one_shared_colorbar_unless_told_not_to():
    maps = [np.full((3, 4), 0.25), np.eye(3, 4), np.eye(3, 4)]
    shared = plots.heatmap_grid(maps, ncols=2)
    assert len(colorbars(shared)) == 1
    images = [ax.images[0] for ax in shared.axes if ax.images]
    assert len(images) == 3 and all(image.get_clim() == (0.0, 1.0) for image in images)
    assert colorbars(plots.heatmap_grid(maps, colorbar=False)) == []


def test_heatmap_grid_annotates_the_small_maps_unless_told_otherwise():
    maps = [np.full((8, 8), 1 / 8), np.full((9, 9), 1 / 9), np.full((4, 8), 1 / 8)]
    fig = plots.heatmap_grid(maps, colorbar=False)
    assert [len(ax.texts) for ax in fig.axes] == [64, 0, 32]
    silent = plots.heatmap_grid(maps[:1], annotate=False, colorbar=False)
    assert all(len(ax.texts) == 0 for ax in silent.axes)


def test_curves_shade_a_band_in_the_colour_of_its_series():
    ax = plots.curves([1, 2, 3], {"median": [0.2, 0.5, 0.9], "other": [0.1, 0.1, 0.1]}, "x", "y",
                      bands={"median": ([0.1, 0.3, 0.8], [0.3, 0.7, 1.0])})
    assert len(ax.collections) == 1
    band, line = ax.collections[0], ax.lines[0]
    assert np.allclose(band.get_facecolor()[0][:3], matplotlib.colors.to_rgb(line.get_color()))
