"""The feedback page a learner receives renders anywhere: formulas as MathML (no network, no
script), a language, an index that names functions, no "Out[ ]" under a grade cell.

The page is made the way an instructor makes it (the course's autograde, then nbgrader's
``generate_feedback``) for a class of two on 02-scoring: the solution, and the release as handed
out (every function raising NotImplementedError). Then it is opened in Chromium with every
request refused, and the formulas are measured on screen.
"""
import html
import json
import os
import re

import pytest

from autograder.course import feedback_page, mathml, sanitize
from autograder.engine import grade
from autograder.engine.result import score_story
from autograder.engine import grade
from autograder.engine.options import Options
from support import COURSE
from support.pages import ON_THE_CLASS  # the tests that read the graded class's pages

ASSIGNMENT = "02-scoring"


# ------------------------------------------------------------------------------ formulas
def test_a_formula_becomes_mathml_and_the_rest_stays():
    page = ("<p>Weights $\\alpha_{t,i} &lt; 1$ cost $5 and $6.</p>"
            "<p>$$\\frac{a}{b}$$</p><pre>$x$</pre><p><code>a$b$</code></p>")
    made = mathml.render_math(page)
    assert made.count("<math") == 2 and 'display="block"' in made
    assert "cost $5 and $6." in made                      # money is not math
    assert "<pre>$x$</pre>" in made and "<code>a$b$</code>" in made
    assert "<mo>&#x0003C;</mo>" in made                   # the entity was read as the character


def test_a_learners_formula_cannot_carry_a_link_or_markup():
    made = mathml.render_math("<p>$\\href{javascript:alert(1)}{x}$ and $&lt;script&gt;$ "
                              "and $\\style{color:red}{y}$</p>")
    assert "href" not in made and "javascript" not in made and "<script" not in made
    assert "style" not in made.replace("\\style", "")
    assert made.count("<math") == 3


def test_a_formula_that_cannot_be_converted_stays_as_its_tex():
    made = mathml.render_math("<p>$\\notacommand{x}$</p>")
    assert "<math" not in made or "merror" not in made
    if "<math" not in made:
        assert '<code class="tex"' in made and "\\notacommand{x}" in made


def course_formulas():
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    for path in sorted(a.solution for a in COURSE.assignments()):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "markdown":
                page = markdown2html_mistune("".join(cell["source"]))
                # formulas in text only (heading anchors carry them URL-encoded in attributes)
                text = re.sub(r"<[^>]*>", " ", page)
                for start, end, _, _ in mathml.formulas(text):
                    yield path.parent.name, html.unescape(text[start:end])


def test_every_formula_of_the_course_renders_as_mathml():
    formulas = list(course_formulas())
    assert len(formulas) > 1000  # the course is written in formulas: this reads all of them
    failed = [(name, tex) for name, tex in formulas
              if "<math" not in mathml.render_math(html.escape(tex, quote=False))]
    assert failed == [], f"{len(failed)} of {len(formulas)} formulas did not convert: {failed[:5]}"


def test_the_markdown_filter_of_every_page_renders_math_after_cleaning():
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config
    config = Config()
    sanitize.configure(config)
    exporter = HTMLExporter(config=config)
    safe = exporter.environment.filters["markdown2html"]
    assert isinstance(safe, sanitize.SafeMarkdown)
    made = safe(exporter.environment.from_string("").new_context({"resources": {}}),
                "A weight $\\alpha$ and <img src=x onerror=alert(1)>")
    assert "<math" in made and "onerror" not in made


# ------------------------------------------------------------------------------ the page
def test_the_index_names_functions_and_written_answers():
    def cell(kind, grade_id):  # grade cells, as nbgrader marks them
        return {"cell_type": kind, "metadata": {"nbgrader": {"grade_id": grade_id, "grade": True,
                                                             "solution": kind == "markdown"}}}
    assert feedback_page.graded_part_name(cell("code", "check_align")) == "align"
    assert feedback_page.graded_part_name(cell("markdown", "q_max_subtraction")) == (
        "Written answer: max subtraction")


def text_outside_code(page):
    page = re.sub(r"<(code|pre|script|style|math)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]*>", " ", page))


@pytest.mark.slow
@ON_THE_CLASS
def test_the_feedback_page_needs_no_network_and_names_what_it_grades(feedback):
    functions = [c["metadata"]["nbgrader"]["grade_id"][len("check_"):]
                 for c in json.loads(COURSE.assignment(ASSIGNMENT).solution.read_text())["cells"]
                 if c["metadata"].get("nbgrader", {}).get("grade_id", "").startswith("check_")]
    for learner, path in feedback.items():
        page = path.read_text()
        assert re.search(r'<html lang="en"', page), learner
        assert not re.search(r"<(script|link|img)\b[^>]*\b(src|href)=[\"']?(https?:)?//", page,
                             re.IGNORECASE), f"{learner}: the page loads something from the network"
        assert "mathjax" not in page.lower()
        assert page.count("<math") > 20
        left = [text[start:end] for text in [text_outside_code(page)]
                for start, end, _, _ in mathml.formulas(text)]
        assert not left, f"{learner}: TeX left as text: {left[0]}"
        index = page.split('id="toc"', 1)[1].split("</nav>", 1)[0]
        for function in functions:
            assert f">{function}</a>" in index, (learner, function)
        assert "Test cell" not in index and "Written answer:" in index
        assert "Out[" not in page, f"{learner}: an output prompt is left on the page"
    # the grade as the course states it everywhere: the autograded part, the written part pending
    found = COURSE.assignment(ASSIGNMENT)
    written = found.written_points
    assert written > 0
    maximum = grade.zero_sheet("-", found, "none").max_score
    heading = {learner: html.unescape(re.search(r'<h1[^>]*id="top">(.*?)</h1>', p.read_text(),
                                                re.S).group(1)) for learner, p in feedback.items()}
    # nbgrader gives an unchanged written answer 0 itself: nothing is left for a person to grade
    assert heading["blank"].endswith(": " + score_story(0, maximum, written, 0)), heading
    assert heading["honest"].endswith(": " + score_story(maximum, maximum, written)), heading
    assert "Score: pending (graded by hand)" in feedback["honest"].read_text()


@pytest.mark.slow
@ON_THE_CLASS
def test_the_feedback_page_renders_its_formulas_in_a_browser_with_no_network(feedback):
    from support.browser import BROWSER_ARGS, CHROMIUM, playwright
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    asked = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page()

            def refuse(route):
                if not route.request.url.startswith("file:"):
                    asked.append(route.request.url)
                    return route.abort()
                return route.continue_()
            page.route("**/*", refuse)
            page.goto(feedback["honest"].as_uri())
            sizes = page.evaluate("""() => [...document.querySelectorAll('math')].map(m => {
                const box = m.getBoundingClientRect(); return [box.width, box.height]; })""")
            fraction = page.evaluate("""() => { const f = document.querySelector('mfrac');
                if (!f) return null; const [a, b] = f.children;
                return b.getBoundingClientRect().top - a.getBoundingClientRect().top; }""")
            figures = page.evaluate("""() => [...document.querySelectorAll('img')].map(i =>
                [i.getAttribute('src').slice(0, 22), i.complete && i.naturalWidth > 0, i.alt])""")
            heading = page.inner_text("h1#top")
        finally:
            browser.close()
    assert asked == [], f"the page asked the network for {asked}"
    assert len(sizes) > 20 and all(w > 0 and h > 0 for w, h in sizes)
    assert fraction is not None and fraction > 0  # a fraction's denominator sits below it
    # the learner's figures (drawn in the sandbox, or from their own submitted notebook where a
    # demonstration was not re-run): each shown, with its text alternative
    autograded = json.loads(next(feedback["honest"].parents[3].glob(
        f"autograded/honest/{ASSIGNMENT}/*.ipynb")).read_text())
    drawn = [o for c in autograded["cells"] for o in c.get("outputs", [])
             if "data:image/png" in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(drawn) >= 3 and len(figures) == len(drawn), (len(drawn), figures)
    assert all(src == "data:image/png;base64," and shown and alt for src, shown, alt in figures), \
        figures
    # and one score, as the course states it everywhere
    found = COURSE.assignment(ASSIGNMENT)
    maximum = grade.zero_sheet("-", found, "none").max_score
    assert " ".join(heading.split()).endswith(score_story(maximum, maximum, found.written_points)), \
        heading


@pytest.mark.slow
@ON_THE_CLASS
def test_a_blank_notebook_hears_once_per_function_that_it_is_not_written_yet(feedback):
    page = feedback["blank"].read_text()
    sections = page.split("Hidden tests of ")[1:]
    assert len(sections) >= 5
    for section in sections:
        function = re.match(r"<code>(\w+)</code>", section).group(1)
        said = section.count("is not implemented yet")
        assert said == 1, f"{function}: told {said} times that it is not implemented yet"
    honest = text_outside_code(feedback["honest"].read_text())
    assert "not implemented yet" not in honest and "passed" in honest


@pytest.mark.slow
@ON_THE_CLASS
def test_the_blank_pages_index_has_no_empty_comment_links_and_its_tables_have_columns(feedback):
    """nbgrader comments "No response." on every unanswered written answer: the index does not
    link to them. The tests' tables are drawn with cell padding and borders, so their column
    headers cannot run together ("pointswhat happened")."""
    for learner, path in feedback.items():
        page = path.read_text()
        index = page.split('id="toc"', 1)[1].split("</nav>", 1)[0]
        assert "Comment on" not in index, learner
        assert re.search(r"div\.output_markdown th[^{]*\{[^}]*padding", page), learner
        assert "<th>points</th>" in page.replace(' style="text-align: left"', "") or \
            re.search(r"<th[^>]*>points</th>\s*<th[^>]*>what happened</th>", page), learner


def restored(name, exercise, feedback, passed=True):
    from autograder.engine.result import TestResult
    return TestResult(name=f"{exercise}: {name}", exercise=exercise, score=1.0 if passed else 0,
                      max_score=1.0, status="passed" if passed else "failed", feedback=feedback)


def test_a_message_several_tests_share_is_said_once_and_names_show_as_code():
    """The second chance's sentence ("`align` is right: it lost these points only because it
    uses your `softmax`...") is the same for every test it restored: said once, as a note the
    rows point to; the names it quotes render as code, not as backticks."""
    from autograder.course.nbgrader_plugin import feedback_markdown
    from autograder.engine import dependencies, suite
    said = dependencies.restored_feedback("align", ["softmax", "attend"], True)
    tests = [restored(f"test {i}", "align", said) for i in range(6)]
    tests += [restored("kernel", "align", suite.KERNEL_WORD), restored("k2", "align", suite.KERNEL_WORD),
              restored("a wrong one <b>", "align", "Wrong value: `x` is 3 <script>", passed=False)]
    text = feedback_markdown("align", tests)
    page = html_of(text)
    assert html.unescape(page).count("is right: it lost these points") == 1, page
    assert text.count("see note 1 below") == 6 and text.count("see note 2 below") == 2
    assert "<code>align</code> is right" in page and "<code>softmax</code>" in page, page
    assert "`" not in re.sub(r"<code>.*?</code>", "", page), page  # no raw backticks shown
    assert "<script" not in page and "<b>" not in page
    # a learner's own text cannot open a code span wider than a name
    assert sanitize.markdown_text_with_names("`a b` `x<y` `ok`") == r"\`a b\` \`x&lt;y\` `ok`"


def html_of(markdown_text):
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    return markdown2html_mistune(markdown_text)


# ------------------------------------------------------------------------------ messages
def test_a_cell_is_named_as_a_learner_finds_it():
    from autograder.engine.notebook import cell_label
    notebook = {"cells": [
        {"cell_type": "markdown", "source": "## Step 2 · Attend ##\ntext"},
        {"cell_type": "code", "source": "x = 1"},
        {"cell_type": "code", "source": ["def attend(s, H):\n", "    raise NotImplementedError\n"]},
        {"cell_type": "code", "source": "check()",
         "metadata": {"nbgrader": {"grade_id": "check_attend", "grade": True}}},
        {"cell_type": "code", "source": "y = 2"}]}
    assert cell_label(notebook, 2) == "a cell under 'Step 2 · Attend'"
    assert cell_label(notebook, 3) == "the cell that defines `attend`"
    assert cell_label(notebook, 4) == "the check of `attend`"
    # nothing above names it: its first line does (JupyterLab shows no numbers)
    assert cell_label({"cells": notebook["cells"][1:]}, 1) == "the cell beginning 'x = 1'"
    long = {"cells": [{"cell_type": "code", "source": "\n\n  " + "z" * 100 + "\nmore"}]}
    assert cell_label(long, 1) == "the cell beginning '" + "z" * 60 + "...'"
    # only an empty cell, which cannot raise anything, is left with its number
    assert cell_label({"cells": [{"cell_type": "code", "source": ""}]}, 1) == "code cell 1"


@pytest.mark.slow
def test_a_blank_notebooks_errors_name_functions_not_cell_numbers(tmp_path):
    path = COURSE.assignment(ASSIGNMENT).release
    # every cell run, the experiments too: their errors are named by the section they are in
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT),
                                Options(sandbox="auto", demonstrations="run"))
    assert result.errors, "a blank notebook's cells raise NotImplementedError"
    assert not [e for e in result.errors if re.match(r"cell \d", e)], result.errors
    assert any(e.startswith("the check of `softmax`") for e in result.errors), result.errors
    assert any(e.startswith("a cell under 'Step 1") for e in result.errors), result.errors
