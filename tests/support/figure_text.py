"""What the figures' test asks of the figures of one run of a solution notebook
(tests/seed_zero.py): tests/assignments/test_figures.py asks it of the run as committed, and
``make claims`` of each optional run (tests/assignments/test_claims.py)."""
import html
import re

from helpers.plots import plain

IMAGE = re.compile(r'^<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">$')


def shown_figures(notebook):
    """Every figure output: the alt text of its image, or the output itself when it is not one."""
    shown = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "<img" in data.get("text/html", ""):
                match = IMAGE.match(data.get("text/html", ""))
                shown.append(html.unescape(match.group(1)) if match else {
                    key: value[:80] for key, value in data.items()})
    return shown


def check(name, run):
    """Every figure ``run`` shows has a text alternative naming its titles, and no two named
    series of a panel are told apart by colour alone (``name`` says which run, in failures)."""
    shown = shown_figures(run.notebook)
    assert shown, f"{name} shows no figure: is the probe still finding them?"
    bare = [item for item in shown if not isinstance(item, str)]
    assert not bare, f"{name}: figures shown without a text alternative: {bare}"
    assert len(shown) == len(run.probe), (f"{name}: {len(shown)} figures shown, "
                                          f"{len(run.probe)} drawn")
    for number, (text, figure) in enumerate(zip(shown, run.probe), 1):
        missing = [title for title in figure["titles"] if plain(title) not in text]
        assert not missing, f"{name}, figure {number}: its text leaves out {missing}: {text}"
    alike = [(number, labels) for number, figure in enumerate(run.probe, 1)
             for labels in figure["alike"]]
    assert not alike, (f"{name}: series told apart by colour alone (figure number, "
                       f"labels): {alike}")
