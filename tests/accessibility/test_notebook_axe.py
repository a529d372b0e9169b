"""axe-core, in Debian's Chromium, on a course notebook run in the learners' JupyterLab.

The solution of 08 runs top to bottom in the lab `make lab` starts, in the course's kernel, from
its Run menu, as a learner runs it. 08 shows the most figures of the course (nine), drawn both ways
the notebooks draw them: matplotlib's own subplots and the course's maps (helpers.plots); in every
notebook a figure gets its text from the same place, the course's display of figures
(helpers.plots.show_figures_in_words), and tests/assignments/test_figures.py reads that text for
every notebook's figures in IPython's stock kernel. axe-core,
the version tests/accessibility/package-lock.json pins (`make test` installs it with npm), checks
the page. Every figure the notebook shows is in the page as an image with the figure in words as
its alt text, and axe finds no violation of its rules for text alternatives of images. Violations
of the other rules are printed (JupyterLab's own interface has some, which the course cannot
change); those inside the course's content (its markdown and the cells' outputs) of critical or
serious impact fail.
"""
import html
import json
import re
import shutil
from pathlib import Path

import pytest

import seed_zero
from support import COURSE
from support.browser import (TOKEN, axe_source, browser, dismiss_notifications,  # noqa: F401
                             jupyterlab)

pytestmark = pytest.mark.slow
AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
# axe's rules for text alternatives of images (https://dequeuniversity.com/rules/axe/4.14)
IMAGE_RULES = ["image-alt", "role-img-alt", "svg-img-alt", "input-image-alt", "object-alt",
               "area-alt"]
SEVERE = ("critical", "serious")
CONTENT = ".jp-RenderedMarkdown, .jp-OutputArea-output"
IN_CONTENT = """violations => violations.flatMap(violation => violation.nodes
    .filter(node => node.target.length === 1
            && document.querySelector(node.target[0])?.closest(%r))
    .map(node => [violation.id, violation.impact, node.html]))""" % CONTENT


def figure_count(notebook):
    return sum(1 for cell in notebook.cells for output in cell.get("outputs", [])
               if "image/png" in output.get("data", {}) or "<img" in output.get("data", {}).get(
                   "text/html", ""))


def figure_alts(notebook):
    """The alt text of each figure the notebook shows, in order (None for one with none)."""
    alts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            if "<img" in page:
                found = re.search(r' alt="([^"]*)"', page)
                alts.append(html.unescape(found.group(1)) if found else None)
            elif "image/png" in output.get("data", {}):
                alts.append(None)
    assert all(alt and alt.startswith("Figure") for alt in alts), alts
    return alts


RUNNING = "[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(p => p.textContent.includes('*'))"


@pytest.mark.parametrize("assignment", [pytest.param(a, marks=seed_zero.group(a)) for a in
                                        ("08-learning-to-attend",)])
def test_a_notebook_run_in_the_learners_lab(assignment, browser, axe_source, tmp_path,  # noqa: F811
                                             monkeypatch):
    """The solution runs top to bottom in the lab `make lab` starts, in the course's kernel, as a
    learner's *Run All Cells*: every figure is an image whose alt text is the figure in words, the
    same as IPython's stock kernel gives once the notebook imports helpers (nbclient, as the
    grader and the other tests run notebooks: the run at SEED = 0 that the claims and figures
    tests read, tests/seed_zero.py), and axe finds no image without its text."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.setenv(name, "1")
    source = COURSE.assignment(assignment).solution
    stock = seed_zero.run(assignment).notebook  # as committed: no optional run, as in the lab
    figures = figure_count(stock)
    assert figures >= {"08-learning-to-attend": 9}.get(assignment, 3), (
        f"{assignment} shows {figures} figures")
    alts = figure_alts(stock)
    workspace = tmp_path / "learner"
    workspace.mkdir()
    shutil.copy(source, workspace / source.name)        # as committed: no outputs

    with jupyterlab(workspace, workspace, tmp_path, make_target="lab") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/lab/tree/{source.name}?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text(\"Idle\")", timeout=120_000)
        dismiss_notifications(page)
        assert page.locator(".jp-OutputArea-output img").count() == 0
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        images = page.locator(".jp-OutputArea-output img")
        page.wait_for_function(f"document.querySelectorAll('.jp-OutputArea-output img').length "
                               f">= {figures} && !{RUNNING}", timeout=600_000, polling=1000)
        errors = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']").all_inner_texts()
        assert not [e for e in errors if "Traceback" in e or "Error" in e], errors
        assert images.count() == figures
        # what a screen reader reads for each: the figure in words, as the stock kernel gives it
        shown = images.evaluate_all("images => images.map(image => image.alt)")
        assert shown == alts, shown
        page.add_script_tag(content=axe_source)
        results = page.evaluate("axe.run(document)")
        # the violations inside the course's own content: its markdown and the cells' outputs
        in_content = page.evaluate(IN_CONTENT, [v for v in results["violations"]
                                                if v["impact"] in SEVERE or v["id"] in IMAGE_RULES])

    violations = results["violations"]
    for violation in violations:
        print(f"axe {violation['impact']}: {violation['id']} ({len(violation['nodes'])} nodes): "
              f"{violation['help']}")
    images_without_text = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
                           for v in violations if v["id"] in IMAGE_RULES]
    assert not images_without_text, images_without_text
    checked = sum(len(p["nodes"]) for p in results["passes"] if p["id"] == "image-alt")
    assert checked >= figures, f"axe checked {checked} images for alt text, {figures} shown"

    # In the course's own content, nothing critical or serious at all.
    assert not in_content, json.dumps(in_content, indent=1)[:4000]
