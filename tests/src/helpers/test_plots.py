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


# ---------------------------------------------------------------- legible in greyscale

def look(line):
    """What tells a line apart without colour: its dash pattern and its marker."""
    marker = line.get_marker()
    return str(line._unscaled_dash_pattern), None if marker in (None, "", " ", "None", "none") else marker


@pytest.mark.parametrize("marker, count", [("o", 12), (None, 6)])
def test_every_series_of_a_line_plot_differs_without_colour(marker, count):
    series = {f"series {k}": np.arange(5.0) + k for k in range(count)}
    ax = plots.curves(np.arange(5), series, "x", "y", marker=marker)
    looks = [look(line) for line in ax.get_lines()]
    assert len(looks) == count and len(set(looks)) == count, looks
    assert all((m is None) == (marker is None) for _, m in looks)


def test_bars_and_overlaid_histograms_differ_in_hatching():
    from helpers import explain
    ax = explain.compare_bars(["a", "b"], {"one": [1, 2], "two": [2, 1], "three": [1, 1]})
    assert len({c.patches[0].get_hatch() for c in ax.containers}) == 3
    ax = explain.histograms({"one": np.arange(10.0), "two": np.arange(10.0) + 3}, "x")
    assert len({c.patches[0].get_hatch() for c in ax.containers}) == 2


# ---------------------------------------------------------------- figures in words

def test_mathtext_reads_as_plain_text():
    assert plots.plain(r"Var$(q\cdot k/\sqrt{d_k})$") == "Var(q·k/√d_k)"
    assert plots.plain(r"mean $\|J\|_F$ (gradient norm)") == "mean ‖J‖_F (gradient norm)"
    assert plots.plain(r"$\text{pos}_t$ and $\alpha_{t,i}$") == "pos_t and α_t,i"


def test_a_small_attention_map_is_read_out_value_by_value():
    weights = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]])
    ax = plots.attention_heatmap(weights, keys=["le", "chat", "noir"], queries=["the", "cat"],
                                 title="one map")
    text = plots.describe_figure(ax.figure)
    assert text.startswith("Figure. one map: a map of 2 rows (query (attending): the, cat) by "
                           "3 columns (key (attended to): le, chat, noir), shaded from 0 to 1")
    assert "row the: le 0.70, chat 0.20, noir 0.10; row cat: le 0.00, chat 0.50, noir 0.50" in text


def test_a_large_map_gives_the_largest_value_of_each_row():
    weights = np.eye(20)[::-1]
    text = plots.describe_figure(plots.attention_heatmap(weights).figure)
    assert "Largest value of each row: 0 at 19 (1); 1 at 18 (1);" in text
    assert "15 at 4 (1); rows after the first 16 not listed" in text


def test_a_grid_of_maps_is_read_panel_by_panel_with_its_colour_scale():
    fig = plots.heatmap_grid([np.eye(2), np.full((2, 2), 0.5)], titles=["first", "second"])
    fig.suptitle("two maps")
    text = plots.describe_figure(fig)
    assert text.startswith("Figure: two maps. 2 panels. Panel 1, first: a map of 2 rows")
    assert "Panel 2, second: a map" in text and "colour scale: weight" in text
    assert text.count("Panel") == 2   # the colour bar is not a panel


def test_curves_are_read_as_series_with_their_trends_axes_and_references():
    ax = plots.curves([1, 2, 4, 8], {"up": [0.1, 0.9, 0.5, 0.2], "flat": [1, 1, 1, 1]},
                      "length T", "accuracy", title="recall", logx=True,
                      reference={"chance": 0.25})
    text = plots.describe_figure(ax.figure)
    assert ("recall: lines: up, from 0.1 at 1 to 0.2 at 8, highest 0.9 at 2; flat, from 1 at 1 "
            "to 1 at 8. a horizontal line at 0.25. x: length T (log scale), y: accuracy. "
            "text on it: chance.") in text


def test_bars_and_histograms_are_read_out():
    ax = plots.bars(["a", "b"], [3.0, 1.5], "count", title="two bars")
    assert "two bars: bars: a 3, b 1.5" in plots.describe_figure(ax.figure)
    from helpers import explain
    ax = explain.histograms({"sample": np.r_[np.zeros(5), np.ones(20)]}, "value", bins=20)
    assert "histogram sample (median 1) of 20 bins from 0 to 1, tallest 20 at 0.975" in \
        plots.describe_figure(ax.figure)


def test_in_a_kernel_a_figure_shows_as_an_image_with_its_description():
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    try:
        shell.display_pub = CapturingDisplayPublisher()
        assert not plots.show_figures_in_words(shell)     # no kernel: a terminal, left alone
        shell.kernel = object()
        assert plots.show_figures_in_words(shell)
        ax = plots.bars(["a", "b"], [3.0, 1.5], "count", title="two bars")
        assert shell.display_formatter.format(ax.figure) == ({}, {})   # shown, nothing else
        [shown] = shell.display_pub.outputs
        text = plots.describe_figure(ax.figure)
        assert shown["data"]["text/plain"] == text
        assert shown["data"]["text/html"].startswith('<img src="data:image/png;base64,iVBOR')
        assert shown["data"]["text/html"].endswith(f' alt="{text}">')
        assert "image/png" not in shown["data"]
    finally:
        InteractiveShell.clear_instance()


FIGURE_CELL = """
import matplotlib.figure
from IPython.display import display
shown = get_ipython().display_formatter.ipython_display_formatter.lookup_by_type(
    matplotlib.figure.Figure)
print(type(get_ipython().kernel).__module__, shown.__module__ + "." + shown.__qualname__)
figure = matplotlib.figure.Figure()
figure.add_subplot().plot([1, 2, 3], [3, 1, 2])
figure.axes[0].set_title("three points")
display(figure)
"""


def run_in_kernel(kernel_name, code):
    """What a kernel of this name (found through JUPYTER_PATH) prints and displays for ``code``."""
    from jupyter_client.manager import start_new_kernel
    manager, client = start_new_kernel(kernel_name=kernel_name, startup_timeout=120)
    outputs = []
    try:
        reply = client.execute_interactive(code, timeout=120, output_hook=outputs.append)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    printed = "".join(o["content"]["text"] for o in outputs if o["msg_type"] == "stream")
    shown = [o["content"]["data"] for o in outputs if o["msg_type"] == "display_data"]
    return printed, shown


@pytest.mark.parametrize("kernel", ["course", "stock"])
def test_a_kernel_shows_figures_in_words_from_its_first_cell(kernel, monkeypatch):
    """The course's kernel (learner/jupyter, as `make lab` and the hub find it) shows figures with
    their description before the notebook imports anything: it imports ``helpers`` itself before
    its shell exists, so that import alone would register nothing. IPython's stock kernel (nbclient,
    a hub without the course's kernel) does it once the notebook imports ``helpers``."""
    from support import REPO
    if kernel == "course":
        monkeypatch.setenv("JUPYTER_PATH", str(REPO / "learner" / "jupyter"))
        code = FIGURE_CELL
    else:
        monkeypatch.delenv("JUPYTER_PATH", raising=False)
        code = "import helpers\n" + FIGURE_CELL
    printed, [shown] = run_in_kernel("python3", code)
    module = "helpers.kernel" if kernel == "course" else "ipykernel.ipkernel"
    assert printed.split() == [module, "helpers.plots._show_figure"]
    assert shown["text/plain"] == "Figure. three points: 1 unlabelled line.", shown["text/plain"]
    assert shown["text/html"].startswith('<img src="data:image/png;base64,iVBOR')
    assert shown["text/html"].endswith(' alt="Figure. three points: 1 unlabelled line.">')
    assert "image/png" not in shown


def test_attention_heatmap_says_when_its_labels_do_not_fit_the_map():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with pytest.raises(ValueError, match=r"8 labels for the keys \(columns\) of a map of shape "
                                         r"\(9, 16\)"):
        plots.attention_heatmap(np.zeros((9, 16)), keys=list("abcdefgh"))
    plt.close("all")


def test_attention_heatmap_draws_labels_and_annotations():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = plots.attention_heatmap(np.full((2, 3), 1 / 3), keys=["a", "b", "c"], queries=["x", "y"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert len(ax.texts) == 6
    assert len(plots.attention_heatmap(np.full((8, 8), 1 / 8)).texts) == 64     # 8 x 8: annotated
    assert len(plots.attention_heatmap(np.full((9, 4), 1 / 4)).texts) == 0      # 9 rows: not
    with pytest.raises(ValueError, match="one 2-D map"):
        plots.attention_heatmap(np.zeros((2, 2, 2)))
    plt.close("all")


def test_heatmap_grid_has_one_colour_scale_and_one_colour_bar():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    small, large = np.full((3, 3), 1 / 3), np.full((10, 10), 0.1)
    figure = plots.heatmap_grid([small, large, small], titles=["a", "b", "c"], ncols=2)
    images = [ax.images[0] for ax in figure.axes if ax.images]
    assert len(images) == 3 and {image.get_clim() for image in images} == {(0.0, 1.0)}
    colour_bars = [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert len(colour_bars) == 1
    panels = [ax for ax in figure.axes if ax.images]
    assert [len(ax.texts) for ax in panels] == [9, 0, 9]   # small maps annotated, large not
    # the old call of notebooks 08 and 09 still works: annotate given, no colour bar asked for
    figure = plots.heatmap_grid([small, small], annotate=False, colorbar=False)
    assert not [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert plots.heatmap_grid([2 * small], vmax=None).axes[0].images[0].get_clim() == (0.0, 2 / 3)
    plt.close("all")
