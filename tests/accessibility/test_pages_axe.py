"""axe-core, in Debian's Chromium, on the pages the course writes itself: the feedback page a
learner receives (for full marks and for a blank notebook) and the instructor's class report.

Each page is opened from disk with every request refused, as on a server with no internet access;
axe-core (the version tests/accessibility/package-lock.json pins) finds no critical or serious
violation of any of its rules. Every violation, of any impact, is printed.
"""
import json
import os

import pytest

from support import COURSE
from support.browser import BROWSER_ARGS, CHROMIUM, axe_source, playwright  # noqa: F401
from support.pages import ON_THE_CLASS  # the tests that read the graded class's pages

pytestmark = pytest.mark.slow
SEVERE = ("critical", "serious")


def violations(path, axe):
    """axe's violations on the page at ``path``: (rule, impact, how many nodes, an example)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url.startswith("file:") else route.abort())
            page.goto(path.as_uri())
            page.add_script_tag(content=axe)
            found = page.evaluate("""async () => (await axe.run(document,
                {resultTypes: ['violations']})).violations.map(v =>
                [v.id, v.impact, v.nodes.length, v.nodes[0].html.slice(0, 160)])""")
        finally:
            browser.close()
    for rule, impact, count, example in found:
        print(f"[axe] {path.name}: {rule} ({impact}, {count} nodes), e.g. {example}")
    return found


@ON_THE_CLASS
@pytest.mark.parametrize("learner", ["honest", "blank"])
def test_the_feedback_page_has_no_serious_violation(feedback, axe_source, learner):  # noqa: F811
    severe = [v for v in violations(feedback[learner], axe_source) if v[1] in SEVERE]
    assert severe == [], json.dumps(severe, indent=1)


def small_report(folder):
    """The class report of three learners of 00-getting-started (the reference and two
    catalogued mistakes), as ``report.html``."""
    from autograder.engine import catalogue, grade, reference
    from autograder.tools.report import write_report
    assignment = COURSE.assignment("00-getting-started")
    namespaces = {"learner01": reference.namespace(assignment),
                  **{f"learner0{n}": m.namespace()
                     for n, m in enumerate(catalogue.mutants(assignment)[:2], start=2)}}
    results = {learner: {assignment.name: grade.grade_local(assignment, namespace)}
               for learner, namespace in namespaces.items()}
    markdown = write_report(results, {learner: {} for learner in results}, folder, COURSE)
    return markdown.with_suffix(".html")


def test_the_class_report_has_no_serious_violation(tmp_path, axe_source):  # noqa: F811
    page = small_report(tmp_path)
    assert page.exists() and 'lang="en"' in page.read_text()
    severe = [v for v in violations(page, axe_source) if v[1] in SEVERE]
    assert severe == [], json.dumps(severe, indent=1)
