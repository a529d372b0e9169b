"""The course in a real browser: JupyterLab on a loopback port, driven through Chromium.

A learner opens a notebook, writes the answer, runs everything, sees the visible check pass and
the heatmap render, and validates through nbgrader's extension; an instructor opens the formgrader
and sees a graded class. `make lab` itself starts the learners' lab, without the instructor's
tools, in which released notebooks open unmodified; `make instructor-lab` keeps those tools. Screenshots go to $AUTOGRADER_SCREENSHOTS (the README's come from
here) or to the test's temporary folder.
"""
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from autograder.tools import demo
from support import COURSE, REPO
from support.browser import (TOKEN, browser, dismiss_notifications, jupyterlab,  # noqa: F401
                             playwright)

pytestmark = pytest.mark.slow


def shots(tmp_path):
    folder = Path(os.environ.get("AUTOGRADER_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


WRITTEN_ANSWER = "The one with axis=1: on a batch of shape (B, n, m) it sums down the columns."
ANSWER = """def row_normalize(X):
    sums = X.sum(axis=-1, keepdims=True)
    return X / np.where(sums == 0, 1, sums)
"""


def test_learner_answers_runs_sees_the_check_and_validates(browser, tmp_path):
    assignment = "00-getting-started"
    workspace = tmp_path / "learner"
    workspace.mkdir()
    notebook = COURSE.assignment(assignment).release
    shutil.copy(notebook, workspace / notebook.name)
    folder = shots(tmp_path)
    with jupyterlab(workspace, workspace, tmp_path) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/lab/tree/{notebook.name}?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text(\"Idle\")", timeout=120_000)
        dismiss_notifications(page)

        answer = page.locator(".jp-CodeCell", has_text="YOUR CODE HERE").first
        write_cell(page, answer, ANSWER)
        page.keyboard.press("Escape")
        # the written question's answer cell (the last cell saying so: the instructions quote it)
        written = page.locator(".jp-MarkdownCell", has_text="YOUR ANSWER HERE").last
        written.dblclick()                      # validation wants every question answered
        write_cell(page, written, WRITTEN_ANSWER)
        page.keyboard.press("Shift+Enter")
        page.keyboard.press("Escape")
        # under load a keystroke can land before the editor has focus: check what the cells hold
        expect = playwright.expect
        expect(page.locator(".jp-MarkdownCell", has_text=WRITTEN_ANSWER)).to_have_count(1, timeout=60_000)
        expect(page.locator(".jp-CodeCell", has_text="YOUR CODE HERE")).to_have_count(0, timeout=60_000)

        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        check = page.locator(".jp-OutputArea-output", has_text="row_normalize: all visible checks pass")
        check.wait_for(timeout=180_000)
        # figures are HTML images carrying their description as alt text (helpers.plots)
        heatmap = page.locator(".jp-OutputArea-output img").first
        heatmap.wait_for(timeout=60_000)
        assert heatmap.evaluate("img => img.naturalWidth") > 100
        assert heatmap.get_attribute("alt").startswith("Figure")
        check.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / "learner-visible-check.png"))
        heatmap.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / "learner-heatmap.png"))
        assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text(\"Idle\")", timeout=120_000)

        # Validate saves the notebook itself, then runs nbgrader validate on the saved file
        page.locator(".jp-Toolbar").get_by_text("Validate").click()
        try:
            page.wait_for_selector("#validation-message", timeout=240_000)
        except playwright.Error:
            page.screenshot(path=str(folder / "learner-validate-failed.png"))
            dialogs = [d.inner_text() for d in page.locator(".jp-Dialog").all()]
            pytest.fail(f"no validation result; dialogs on screen: {dialogs}")
        message = page.locator("#validation-message")
        page.screenshot(path=str(folder / "learner-validate.png"))
        assert "validation-success" in (message.get_attribute("class") or ""), message.inner_text()
        assert "passes all the tests" in message.inner_text()


def write_cell(page, cell, text):
    """Replace a cell's source with text, once its editor really has the focus."""
    editor = cell.locator(".cm-content")
    editor.click()
    playwright.expect(cell.locator(".cm-editor.cm-focused")).to_have_count(1, timeout=60_000)
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)


def grade_cell_points(assignment):
    """The points of every grade cell of an assignment: visible checks and written answers."""
    import json
    cells = json.loads(COURSE.assignment(assignment).solution.read_text())["cells"]
    return sum(c["metadata"]["nbgrader"]["points"] for c in cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


@pytest.mark.xdist_group("wheelhouse")  # the worker that makes the offline demo (tests/conftest.py)
def test_instructor_sees_the_graded_class_in_the_formgrader(browser, offline_demo, tmp_path):
    """The class `make demo` graded, from a fresh clone with no package index (the wheelhouse's
    test checks that run), in the formgrader of the course's instructor lab."""
    ran = offline_demo.demo_run
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-2000:])
    summary = json.loads((offline_demo.output / "summary.json").read_text())
    # a copy: this test flags a submission, and the wheelhouse's test reads the class as graded
    state = tmp_path / "course"
    shutil.copytree(offline_demo.output / "course", state, symlinks=True)
    last = f"learner{len(summary['expected']):02d}"
    folder = shots(tmp_path)
    with jupyterlab(REPO, REPO, tmp_path, {"AUTOGRADER_STATE": str(state)}) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/formgrader/manage_students?token={TOKEN}")
        page.wait_for_selector("text=learner01", timeout=120_000)
        page.wait_for_selector(f"text={last}", timeout=60_000)
        table = page.inner_text("body")
        for learner, scores in summary["expected"].items():
            assert learner in table
        total = sum(summary["expected"]["learner01"].values())
        maximum = sum(grade_cell_points(a) for a in demo.assignments())  # written answers too
        assert f"{total:g} / {maximum:g}" in table or f"{total:.2f} / {maximum:.2f}" in table
        page.screenshot(path=str(folder / "instructor-formgrader.png"))
        written_answers_render_their_formulas(page, url, state, summary, folder)


def written_answers_render_their_formulas(page, url, state, summary, folder):
    """The formgrader's page of a submission, where written answers are graded by hand, with
    every request to another host refused: its formulas are MathML on screen (no MathJax from a
    CDN needed) and no TeX is left as text; nothing is asked of another host, nothing fails in
    the console, and the grading shortcuts work (Tab to the next score box, Ctrl-Shift-F flags
    the submission, Ctrl-. opens the next one)."""
    from nbgrader.api import Gradebook
    assignment = next(a for a in demo.assignments(COURSE)
                      if any(c["cell_type"] == "markdown" and "$" in "".join(c["source"])
                             for c in json.loads(
                                 COURSE.assignment(a).release.read_text())["cells"]))
    notebook = COURSE.assignment(assignment).release.stem

    def flagged():
        with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
            return book.find_submission_notebook_by_id(submission).flagged

    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        submission = book.find_submission_notebook(notebook, assignment, "learner01").id
    outside, errors = [], []

    def refuse_other_hosts(route):
        if route.request.url.startswith(url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", refuse_other_hosts)
    page.on("console", lambda message: errors.append(message.text) if message.type == "error"
            else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/formgrader/submissions/{submission}/?token={TOKEN}")
    page.wait_for_selector("math", timeout=60_000)
    sizes = page.evaluate("""() => [...document.querySelectorAll('math')].map(m => {
        const box = m.getBoundingClientRect(); return box.width * box.height; })""")
    assert len(sizes) > 5 and all(size > 0 for size in sizes)
    text = page.inner_text("body")
    assert not re.search(r"\$\\[a-zA-Z]+", text), "TeX is left as text in the formgrader"
    page.screenshot(path=str(folder / "instructor-formgrade-math.png"))

    # formgrade.js has set itself up (its shortcuts) and selected the first score box
    page.wait_for_function("window.formgrader && formgrader.loaded && MathJax.loaded === true",
                           timeout=60_000)
    page.wait_for_function("document.activeElement.classList.contains('tabbable')",
                           timeout=60_000)
    first = page.evaluate("[...document.querySelectorAll('.tabbable')]"
                          ".indexOf(document.activeElement)")
    page.keyboard.press("Tab")
    page.wait_for_function(f"[...document.querySelectorAll('.tabbable')]"
                           f".indexOf(document.activeElement) === {first + 1}", timeout=30_000)
    before = flagged()
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#statusmessage:has-text('Submission %s')"
                           % ("unflagged" if before else "flagged"), timeout=30_000)
    assert flagged() is (not before)
    page.keyboard.press("Control+.")
    page.wait_for_url(lambda address: f"/submissions/{submission}/" not in address
                      and "/formgrader/" in address, timeout=60_000)
    page.wait_for_load_state("load")
    assert outside == [], outside
    assert errors == [], errors


# nbgrader's JupyterLab extensions: an instructor's lab has them all, a learner's only these.
INSTRUCTOR_ONLY = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                   "@jupyter/nbgrader:course-list"}
INSTRUCTOR_MENU = ["Formgrader", "Formgrader (local)", "Create assignment", "Course List"]
LEARNER_MENU = ["Assignment List"]  # and Validate, in a notebook's toolbar


def lab_state(url):
    """What a lab's server says about nbgrader: the lab extensions its page turns off, and whether
    the formgrader's server extension answers."""
    import urllib.error
    import urllib.request
    page = urllib.request.urlopen(f"{url}/lab?token={TOKEN}", timeout=60).read().decode()
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">'
                                  r'(.*?)</script>', page, re.S).group(1))
    try:
        urllib.request.urlopen(f"{url}/formgrader/api/assignments?token={TOKEN}", timeout=60)
        formgrader = True
    except urllib.error.HTTPError as error:
        assert error.code == 404, error.code
        formgrader = False
    return set(config.get("disabledExtensions", [])), formgrader


def nbgrader_menu(page, url, path=""):
    """The items of the lab's Nbgrader menu, as a reader sees them."""
    page.goto(f"{url}/lab{path}?token={TOKEN}")
    page.wait_for_selector(".lm-MenuBar-item:has-text('Nbgrader')", timeout=120_000)
    dismiss_notifications(page)
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").first.click()
    items = page.locator(".lm-Menu .lm-Menu-itemLabel")
    items.first.wait_for(timeout=60_000)
    labels = [label.strip() for label in items.all_inner_texts() if label.strip()]  # shown ones
    page.keyboard.press("Escape")
    return labels


def test_make_lab_hides_the_instructors_tools_and_releases_open_clean(browser, tmp_path):
    """`make lab` serves the learners' lab: nbgrader's Assignment List and Validate, no formgrader
    (server or lab extension), Create Assignment or course list; each released notebook opens,
    starts the course's kernel and stays unmodified, and closes without asking to save."""
    workspace = tmp_path / "learner"
    for assignment in ("02-scoring", "08-learning-to-attend"):
        notebook = COURSE.assignment(assignment).release
        (workspace / assignment).mkdir(parents=True)
        shutil.copy(notebook, workspace / assignment / notebook.name)
    with jupyterlab(workspace, workspace, tmp_path, make_target="lab") as url:
        disabled, formgrader = lab_state(url)
        assert INSTRUCTOR_ONLY <= disabled and not formgrader
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        menu = nbgrader_menu(page, url)
        assert all(item in menu for item in LEARNER_MENU), menu
        assert not set(INSTRUCTOR_MENU) & set(menu), menu
        assert page.locator(".lm-TabBar-tab[title='Create Assignment'], "
                            "#jp-right-stack .lm-TabBar-tab:has-text('Create Assignment')").count() == 0
        for notebook in sorted(workspace.rglob("*.ipynb")):
            before = notebook.read_bytes()
            page.goto(f"{url}/lab/tree/{notebook.relative_to(workspace)}?token={TOKEN}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            page.wait_for_selector(".jp-StatusBar-TextItem:has-text(\"Idle\")", timeout=120_000)
            page.wait_for_timeout(3000)  # what the kernel's reply changes, it has changed by now
            tab = page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current")
            assert notebook.name in tab.inner_text()
            assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), (
                f"{notebook.name} opened modified")
            page.screenshot(path=str(tmp_path / f"learner-opens-{notebook.stem}.png"))
            tab.locator(".lm-TabBar-tabCloseIcon").click()
            page.wait_for_timeout(1000)
            assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").all_inner_texts()
            assert notebook.read_bytes() == before


def test_make_instructor_lab_keeps_the_instructors_tools(browser, tmp_path):
    with jupyterlab(REPO, REPO, tmp_path, make_target="instructor-lab") as url:
        disabled, formgrader = lab_state(url)
        assert not INSTRUCTOR_ONLY & disabled and formgrader
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        menu = nbgrader_menu(page, url)
        assert all(item in menu for item in LEARNER_MENU + INSTRUCTOR_MENU), menu
