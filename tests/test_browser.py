"""The course in a real browser: JupyterLab on a loopback port, driven through Chromium.

A learner opens a notebook, writes the answer, runs everything, sees the visible check pass and
the heatmap render, and validates through nbgrader's extension; an instructor opens the formgrader
and sees a graded class. Screenshots go to $ATTENTION_COURSE_SCREENSHOTS (the README's come from
here) or to the test's temporary folder.
"""
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import demo, reference
from support import REPO

pytestmark = pytest.mark.slow
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                 "(make test installs it from requirements-dev.lock)")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "attention-course-test"


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run must install it")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(root, cwd, logs, env_extra=None):
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", **(env_extra or {}))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    log = open(Path(logs) / f"jupyterlab-{port}.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
         f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            assert server.poll() is None, "JupyterLab exited at start"
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=20)
        if server.poll() is None:
            server.kill()
        log.close()


def shots(tmp_path):
    folder = Path(os.environ.get("ATTENTION_COURSE_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def dismiss_notifications(page):
    """Answer JupyterLab's news prompt, which would otherwise cover part of the screenshots."""
    with contextlib.suppress(Exception):
        page.get_by_role("button", name="No", exact=True).click(timeout=5000)


WRITTEN_ANSWER = "The one with axis=1: on a batch of shape (B, n, m) it sums down the columns."
ANSWER = """def row_normalize(X):
    sums = X.sum(axis=-1, keepdims=True)
    return X / np.where(sums == 0, 1, sums)
"""


def test_learner_answers_runs_sees_the_check_and_validates(browser, tmp_path):
    assignment = "00-getting-started"
    workspace = tmp_path / "learner"
    workspace.mkdir()
    notebook = reference.release_notebook(assignment)
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
        heatmap = page.locator(".jp-RenderedImage img").first
        heatmap.wait_for(timeout=60_000)
        assert heatmap.evaluate("img => img.naturalWidth") > 100
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
    cells = json.loads(reference.solution_notebook(assignment).read_text())["cells"]
    return sum(c["metadata"]["nbgrader"]["points"] for c in cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


def test_instructor_sees_the_graded_class_in_the_formgrader(browser, tmp_path):
    output = tmp_path / "demo"
    summary = demo.run(output=output, size=8, quiet=True)
    state = output / "course"
    folder = shots(tmp_path)
    with jupyterlab(REPO, REPO, tmp_path, {"ATTENTION_COURSE_STATE": str(state)}) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/formgrader/manage_students?token={TOKEN}")
        page.wait_for_selector("text=learner01", timeout=120_000)
        page.wait_for_selector("text=learner08", timeout=60_000)
        table = page.inner_text("body")
        for learner, scores in summary["expected"].items():
            assert learner in table
        total = sum(summary["expected"]["learner01"].values())
        maximum = sum(grade_cell_points(a) for a in demo.assignments())  # written answers too
        assert f"{total:g} / {maximum:g}" in table or f"{total:.2f} / {maximum:.2f}" in table
        page.screenshot(path=str(folder / "instructor-formgrader.png"))
        written_answers_render_their_formulas(page, url, state, summary, folder)


def written_answers_render_their_formulas(page, url, state, summary, folder):
    """The formgrader's page of a submission, where written answers are graded by hand: its
    formulas are MathML on screen (no MathJax from a CDN needed) and no TeX is left as text."""
    from nbgrader.api import Gradebook
    assignment = next(a for a in demo.assignments()
                      if any(c["cell_type"] == "markdown" and "$" in "".join(c["source"])
                             for c in json.loads(
                                 reference.release_notebook(a).read_text())["cells"]))
    notebook = reference.release_notebook(assignment).stem
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        submission = book.find_submission_notebook(notebook, assignment, "learner01").id
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(url)
               else route.continue_())
    page.goto(f"{url}/formgrader/submissions/{submission}/?token={TOKEN}")
    page.wait_for_selector("math", timeout=60_000)
    sizes = page.evaluate("""() => [...document.querySelectorAll('math')].map(m => {
        const box = m.getBoundingClientRect(); return box.width * box.height; })""")
    assert len(sizes) > 5 and all(size > 0 for size in sizes)
    text = page.inner_text("body")
    assert not re.search(r"\$\\[a-zA-Z]+", text), "TeX is left as text in the formgrader"
    page.screenshot(path=str(folder / "instructor-formgrade-math.png"))
