"""Attacks on rendering a learner's text (issue 32, mechanisms 3 and 4), and the bounds that hold
them: every pattern over a learner's text reads it once; a formula has a size and a depth limit
and a page a budget of formulas, characters and time, past which a formula is shown as its TeX;
a cell too long, too tagged or too deep is shown as its text; a submission's page always renders.

Pages are made as the formgrader's submission handler and ``nbgrader generate_feedback`` make
them: nbconvert's HTML exporter with the course's nbgrader configuration and the ``formgrade`` or
``feedback`` template. Linear time is checked as a ratio in one run (4 times the input may cost at
most 6 times the time: the patterns these replace cost 14 to 25 times), never as seconds.
"""
import gc
import html
import re
import time
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbgrader.server_extensions.formgrader import handlers
from traitlets.config import Config

from autograder.course import feedback_page, mathml, sanitize
from autograder.course.nbgrader_plugin import configure

TEMPLATES = ("formgrade", "feedback")
RESOURCES = {"assignment_id": "a", "notebook_id": "n", "submission_id": "s", "index": 0,
             "total": 1, "base_url": "", "student": "s", "last_name": None, "first_name": None,
             "notebook_path": "n.ipynb", "nbgrader": {"notebook": "n", "late_penalty": 0}}


def exporter(template):
    config = Config()
    configure(config)  # what nbgrader_config.py applies for the formgrader and for feedback
    config.HTMLExporter.template_name = template
    if template == "formgrade":  # what the formgrader's extension sets
        config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    else:  # what nbgrader's GenerateFeedback adds: bootstrap's stylesheet, which it inlines
        config.HTMLExporter.extra_template_paths = [str(
            Path(handlers.__file__).parent / "static" / "node_modules" / "bootstrap" / "dist" /
            "css")]
    return HTMLExporter(config=config)


def answer(source, **extra):
    """A written answer, as nbgrader marks one."""
    cell = nbformat.v4.new_markdown_cell(source, **extra)
    cell.metadata["nbgrader"] = {"grade_id": "q_answer", "grade": True, "solution": True,
                                 "points": 2, "schema_version": 3, "score": None,
                                 "pending": True}
    return cell


def page(cells, template="formgrade"):
    """The page of a notebook of ``cells`` (markdown sources or cells), as HTML."""
    cells = [answer(c) if isinstance(c, str) else c for c in cells]
    made, _ = exporter(template).from_notebook_node(nbformat.v4.new_notebook(cells=cells),
                                                    resources=dict(RESOURCES))
    return made


def both(cells):
    return {template: page(cells, template) for template in TEMPLATES}


def renderer(make, n):
    """A function rendering the markdown cell ``make(n)`` with the pages' markdown filter (what
    both templates call for each cell), on a page of its own; the cell is checked to be rendered
    (not shown as text for a limit) and within the page's budget."""
    environment = exporter("formgrade").environment
    render = environment.filters["markdown2html"]
    assert isinstance(render, sanitize.SafeMarkdown)
    source = make(n)
    assert len(source) <= sanitize.CELL_CHARACTERS

    def once():  # rendered afresh each time: what is kept of a text met before is not measured
        render.rendered = sanitize.Kept()
        mathml._kept_conversion.cache_clear()
        context = environment.from_string("").new_context({"resources": {}, "cell": {}})
        return render(context, source)
    made = once()
    assert 'class="learner-text"' not in made and mathml.OVER_BUDGET not in made, made[:200]
    return once


def seconds(once):
    """The mean time of as many renderings as take a tenth of a second."""
    gc.collect()
    count, started = 0, time.perf_counter()
    while not count or time.perf_counter() - started < 0.1:
        once()
        count += 1
    return (time.perf_counter() - started) / count


def assert_linear(make, n):
    """Four times the input costs at most eight times the time (a quadratic step costs sixteen):
    the fastest of five measures of each size, taken in turn, since a busy moment of a shared
    machine only ever adds time."""
    small, large = renderer(make, n), renderer(make, 4 * n)
    times = [(seconds(small), seconds(large)) for _ in range(5)]
    small, large = (min(t) for t in zip(*times))
    print(f"[linear] {len(make(n))} and {len(make(4 * n))} characters: {small:.4f} s and "
          f"{large:.4f} s, {large / small:.1f} times")
    assert large <= 8 * small, f"4 times the input took {large / small:.1f} times as long"


def valid(made):
    """``made`` is a whole page that parses as HTML, and its elements nest no deeper than a page
    that bs4 (which nbconvert reads every page with) and a browser read."""
    soup = BeautifulSoup(made, features="html.parser")
    assert soup.find("html") is not None and soup.find("body") is not None
    assert str(soup.find("body")).count("</div>") > 3
    assert mathml.markup_depth(made) < 200
    return made


def shown_as_tex(made, tex, reason):
    """Whether the formula ``tex`` (with its delimiters, or an environment) is on the page as its
    TeX, with ``reason``."""
    codes = [html.unescape(c) for c in re.findall(
        r'<code class="tex" title="' + re.escape(reason) + r'">(.*?)</code>', made, re.S)]
    return any(tex in (c, c.strip("$")) for c in codes)


# --------------------------------------------------------------------- the two attacks of issue 32
@pytest.mark.parametrize("wrapped", [True, False], ids=["in-a-div", "in-markdown"])
def test_unclosed_environments_render_in_linear_time(wrapped):
    """Attack 3: a written answer repeating ``\\begin{a}x `` (264 KB took 33-39 s, 4 times the
    input 14-23 times the time); without the ``<div>`` nbconvert's own patterns were slower."""
    def make(n):
        text = "\\begin{a}x " * n
        return f"<div>{text}</div>" if wrapped else text
    assert_linear(make, 1100)  # 12 KB and 48 KB, under the cell's limit
    made = valid(page([make(2000)]))
    assert made.count("\\begin{a}x") == 2000 and "<math" not in made
    # the attack's own 264 KB is over a cell's limit: shown as its text
    made = valid(page([make(24_000)]))
    assert "a cell longer than the page renders" in made


@pytest.mark.parametrize("template", TEMPLATES)
def test_150_nested_fractions_render_as_their_tex(template):
    """Attack 4: one 3 KB formula of 150 nested ``\\frac`` stopped the page with a RecursionError
    in nbconvert's pass over the nested MathML. The page renders, the formula shown as TeX."""
    tex = "\\frac{" * 150 + "x" + "}{y}" * 150
    made = valid(page([f"Here: ${tex}$ and $\\alpha$."], template))
    assert shown_as_tex(made, tex, mathml.TOO_DEEP)
    assert made.count("<math") == 1  # the other formula of the answer still renders


# --------------------------------------------------------------------------- limits of one formula
def test_the_depth_limit_just_under_and_just_over():
    for depth, converted in ((mathml.FORMULA_DEPTH, True), (mathml.FORMULA_DEPTH + 1, False)):
        fractions = "\\frac{" * depth + "x" + "}{y}" * depth
        groups = "{" * depth + "x" + "}" * depth
        for tex in (fractions, groups):
            made = page([f"${tex}$"])
            assert ("<mfrac" in made or "<mi>x</mi>" in made) == converted, (depth, tex[:20])
            assert shown_as_tex(made, tex, mathml.TOO_DEEP) != converted


def test_depth_without_braces_is_measured_on_the_mathml():
    """``\\sqrt\\sqrt...`` nests with no brace: the MathML it makes is measured."""
    under = "\\sqrt" * (mathml.MATHML_DEPTH - 6) + " x"
    over = "\\sqrt" * (mathml.MATHML_DEPTH + 1) + " x"
    made = valid(page([f"${under}$ and ${over}$"]))
    assert made.count("<math") == 1 and shown_as_tex(made, over, mathml.TOO_DEEP)


def test_the_size_limit_just_under_and_just_over():
    def formula(length):
        tex = "x+" * (length // 2)
        return (tex + "y" * (length - len(tex)))[:length]
    at, over = formula(mathml.FORMULA_CHARACTERS), formula(mathml.FORMULA_CHARACTERS + 1)
    assert (len(at), len(over)) == (mathml.FORMULA_CHARACTERS, mathml.FORMULA_CHARACTERS + 1)
    made = page([f"$${at}$$", f"$${over}$$"])
    assert made.count("<math") == 1 and shown_as_tex(made, over, mathml.TOO_LONG)
    assert not shown_as_tex(made, at, mathml.TOO_LONG)


# ------------------------------------------------------------------------------ a page's budget
def test_thousands_of_small_formulas_stop_at_the_pages_budget():
    """Past the page's formulas, a formula is left as its text, with no element of its own."""
    per_cell = 1000
    cells = [" ".join(f"$x{i}$" for i in range(per_cell))
             for _ in range(mathml.PAGE_FORMULAS // per_cell + 1)]
    made = valid(page(cells))
    assert made.count("<math") == mathml.PAGE_FORMULAS
    last = made.split("$x0$", 1)[1]
    assert "<math" not in last and last.count("$x") == per_cell - 1 and "<code" not in last


def test_long_formulas_stop_at_the_pages_characters():
    tex = "x+" * (mathml.FORMULA_CHARACTERS // 2 - 1) + "y"
    fit = mathml.PAGE_CHARACTERS // len(tex)
    made = page([f"$${tex}$$"] * (fit + 3))
    assert made.count("<math") == fit
    assert made.count(f"$${tex}$$") == 3


def test_a_page_stops_rendering_cells_past_its_elements():
    """Each cell's elements count against the page's (bs4 then reads every one of them)."""
    cell = "<div>" + "<p>a</p>" * 999 + "</div>"  # 1,000 elements
    made = valid(page([cell] * (mathml.PAGE_TAGS // 1000 + 2)))
    assert made.count("a cell past what its page renders") == 2


def test_a_page_past_its_time_shows_the_rest_as_text(monkeypatch):
    """The time limit per page, with a clock that moves a second each time it is read."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(mathml, "now", lambda: float(next(ticks)))
    cells = [f"Answer {i}: $\\alpha_{i}$ and <b>bold</b>" for i in range(60)]
    for template in TEMPLATES:
        made = valid(page(cells, template))
        converted, late = made.count("<math"), made.count("past the time its page renders in")
        assert 0 < converted < 60 and late > 0  # the first cells render, then text is shown
        assert converted + late >= 59  # (one cell's formula may be the first one past the time)
        assert "Answer 59: $\\alpha_59$ and &lt;b&gt;bold&lt;/b&gt;" in made


def test_the_budget_is_the_pages_own():
    """Two pages made by one exporter (the formgrader keeps one) each have the whole budget."""
    one = exporter("formgrade")
    cells = [answer(" ".join(f"$y{i}$" for i in range(mathml.PAGE_FORMULAS)))]
    for _ in range(2):
        made, _ = one.from_notebook_node(nbformat.v4.new_notebook(cells=cells),
                                         resources=dict(RESOURCES))
        assert made.count("<math") == mathml.PAGE_FORMULAS


# ---------------------------------------------------------------------------- mixed attacks
MIXED = {  # the TeX, and whether it must be shown as TeX (None: as TeX or MathML, as it converts)
    "nested environments": ("$$" + "\\begin{matrix}" * 40 + "x" + "\\end{matrix}" * 40 + "$$",
                            True),
    "a \\left\\right chain": ("$" + "\\left(" * 40 + "x" + "\\right)" * 40 + "$", True),
    "unbalanced \\left": ("$" + "\\left(" * 500 + "x$", True),
    "a huge \\text": ("$\\text{" + "a" * 20_000 + "}$", True),
    "unclosed braces": ("$" + "{" * 2000 + "x$", True),
    "closing braces": ("$x" + "}" * 2000 + "$", None),
    "primes": ("$f" + "'" * 5000 + "$", True),
    "deep superscripts": ("$" + "a^{" * 100 + "x" + "}" * 100 + "$", True),
    "an environment in a formula in an environment": (
        "\\begin{align}" + "$\\begin{align}" * 300 + "x", None),
}


@pytest.mark.parametrize("name", MIXED)
def test_mixed_attacks_render_and_show_their_tex(name):
    source, as_tex = MIXED[name]
    for template, made in both([source, "Then $\\beta$."]).items():
        valid(made)
        assert "<math" in made  # the honest formula after it still renders
        if as_tex:
            assert "<code class=\"tex\"" in made, (name, template)
            assert html.escape(source[1:40], quote=False) in made, (name, template)


@pytest.mark.parametrize("make", [
    lambda n: "\\\\(" * n,                                 # nbconvert's inline \\( pattern
    lambda n: "\\\\[ x " * n,                              # and its display \\[ pattern
    lambda n: "x \\begin{a}" * n + "\n\n\\end{a}",         # an end outside the paragraph
    lambda n: "".join(f"\\begin{{e{i % 26 * 'a'}}}" for i in range(n)),  # many names
    lambda n: "$$x " * n,
    lambda n: "<div>" + "[a]" * n + "</div>",               # nbconvert's files/ link pattern
    lambda n: "<div>" + "$x \\" * n + "</div>",
    lambda n: "<div>" + '<span title="a>' + "$x$ >" * n + '">y</span> ' * 100 + "</div>",
    lambda n: "*a _b " * n,                                 # markdown's own emphasis
    lambda n: "[a](" * n,                                   # and its links
], ids=["inline-paren", "display-bracket", "end-elsewhere", "many-names", "dollars",
        "brackets", "escaped-closings", "quoted-attributes", "emphasis", "links"])
def test_other_floods_render_in_linear_time(make):
    n = 1
    while len(make(8 * n)) <= sanitize.CELL_CHARACTERS:
        n *= 2  # the largest that keeps 4 times the input under the cell's limit
    assert_linear(make, n)


def test_a_formula_is_never_rendered_inside_an_attribute():
    title = 'a>$x$ $\\text{ onclick=alert(1) }$'
    made = page([f'<span title="{title}">t</span>'])
    [span] = [s for s in BeautifulSoup(made, features="html.parser").find_all("span")
              if s.get_text() == "t"]
    assert span.attrs == {"title": title}


# ------------------------------------------------------------------ cells too large to render
def test_deep_html_is_shown_as_text():
    made = valid(page(["<div>" * 300 + "deep" + "</div>" * 300, "$\\gamma$"]))
    assert "a cell nested deeper than the page renders" in made and "<math" in made


def test_nested_tags_past_the_cells_limit_are_shown_as_text_in_linear_time():
    """html5lib's cleaning of unclosed formatting tags grows with their square: a cell of more
    than CELL_TAGS tags is shown as its text, before it is cleaned."""
    def make(n):
        return "".join(f'<b title="{i}">' for i in range(n)) + "<p>x</p>" * 50
    assert_linear(lambda n: "".join(f'<b title="{i}">x</b>' for i in range(n)), 90)
    made = valid(page([make(sanitize.FORMATTING_TAGS + 1)]))
    assert "a cell with more tags than the page renders" in made


def test_formatting_tags_past_their_limit_are_shown_as_text():
    under = "<b>x</b> " * sanitize.FORMATTING_TAGS
    over = "<i>y</i> " * (sanitize.FORMATTING_TAGS + 1)
    made = valid(page([under, over]))
    assert made.count("<b>x</b>") == sanitize.FORMATTING_TAGS
    assert "a cell with more tags than the page renders" in made and "<i>y</i>" not in made


def test_a_cell_too_long_is_shown_as_its_text():
    made = valid(page(["$x$ " * (sanitize.CELL_CHARACTERS // 4 + 1)]))
    assert "a cell longer than the page renders" in made and "<math" not in made


def test_a_deep_heading_does_not_stop_the_page():
    """nbconvert makes a heading's anchor by a recursion over its tags."""
    made = valid(page(["# " + "<b>" * 1500 + "x" + "</b>" * 1500]))
    assert "x" in made


# ------------------------------------------------------------------------------ code and images
def test_a_huge_code_cell_is_highlighted_to_a_limit_and_shown_whole():
    source = "x = 1  # a comment\n" * 200_000  # 3.8 MB
    cell = nbformat.v4.new_code_cell(source)
    for template, made in both([cell]).items():
        plain = made.split('<span class="plain"', 1)
        assert len(plain) == 2, template
        head = html.unescape(re.sub(r"<[^>]*>", "", plain[0]))
        assert head.count("x = 1") * len("x = 1  # a comment\n") <= sanitize.HIGHLIGHTED
        assert html.unescape(plain[1]).count("x = 1  # a comment") + head.count("x = 1") \
            == 200_000


def test_fenced_code_in_markdown_is_highlighted_to_a_limit():
    short = "```python\nx = 1\n```"
    long = "```python\n" + "y = 2\n" * (sanitize.HIGHLIGHTED // 6 + 1) + "```"
    made = valid(page([short]))
    assert 'class="highlight' in made
    made = page([long])
    assert 'class="highlight' not in made.split("rendered_html", 1)[1].split("</pre>", 1)[0]
    assert made.count("y = 2") == sanitize.HIGHLIGHTED // 6 + 1


def test_a_missing_attachment_does_not_stop_the_page():
    cells = [answer("![a figure](attachment:nowhere.png) and $\\delta$"),
             answer("![odd](attachment:odd.png)", attachments={"odd.png": {"text/plain": "c29tZQ=="}}),
             answer("![kept](attachment:k.png)",
                    attachments={"k.png": {"image/png": "iVBORw0KGgo="}})]
    for template, made in both(cells).items():
        valid(made)
        assert 'alt="a figure"' in made and 'alt="odd"' in made and "<math" in made
        assert 'src="data:image/png;base64,iVBORw0KGgo="' in made


def test_a_cell_met_again_renders_as_it_did_the_first_time_and_counts_against_its_page():
    """A class's pages share their locked cells, so a filter keeps what it made of a cell for the
    next page that holds it: the same HTML as a fresh exporter makes, each page's budget still
    counted for it, and never the rendering of a cell whose attachments differ."""
    one = exporter("formgrade")
    cells = [answer("A figure: ![x](attachment:x.png) and $\\beta_1$",
                    attachments={"x.png": {"image/png": "iVBORw0KGgo="}}),
             answer("A figure: ![x](attachment:x.png) and $\\beta_1$",
                    attachments={"x.png": {"image/png": "R0lGODlh"}}),
             answer("Weights $\\alpha_{t,i}$ and <b>bold</b>, `code`"),
             nbformat.v4.new_code_cell("def f(x):\n    return x @ x.T  # kept\n")]
    fresh = page(cells)
    for _ in range(2):
        again, _ = one.from_notebook_node(nbformat.v4.new_notebook(cells=cells),
                                          resources=dict(RESOURCES))
        assert again == fresh
    assert 'base64,iVBORw0KGgo=' in fresh and 'base64,R0lGODlh' in fresh
    assert one.environment.filters["markdown2html"].rendered.items  # kept, and served
    # a page of the same cell many times: each still counts its elements against the page's
    cell = "<div>" + "<p>a</p>" * 999 + "</div>"
    for _ in range(2):
        made, _ = one.from_notebook_node(nbformat.v4.new_notebook(
            cells=[answer(cell)] * (mathml.PAGE_TAGS // 1000 + 2)), resources=dict(RESOURCES))
        assert made.count("a cell past what its page renders") == 2


def test_what_a_filter_keeps_is_bounded():
    kept = sanitize.Kept()
    big = "x" * (sanitize.KEPT_CHARACTERS // 10 + 1)
    kept.put((big, ""), "made")
    assert kept.get((big, "")) is None  # too long to keep
    piece = "y" * (sanitize.KEPT_CHARACTERS // 50)
    for n in range(200):
        kept.put((f"{n}", ""), piece)
        assert kept.characters <= sanitize.KEPT_CHARACTERS
    assert kept.get(("199", "")) == piece and kept.get(("0", "")) is None  # the oldest let go
    assert kept.characters == sum(len(k[0]) + len(v) for k, v in kept.items.items())


def test_a_deep_html_output_is_named_not_shown():
    cell = nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": "<div>" * 500 + "deep" + "</div>" * 500})])
    made = valid(page([cell]))
    assert "an output of type text/html is not shown here" in made


# -------------------------------------------------------------------- honest text is unchanged
def test_the_course_own_formulas_in_markdown_still_render():
    made = page(["The weights $\\alpha_{t,i} = \\frac{e^{s_i}}{\\sum_j e^{s_j}}$, a_b * c_d.",
                 "$$\\begin{bmatrix} a & b \\\\ c & d \\end{bmatrix}$$",
                 "\\begin{align} x_1 * y_2 &= z \\\\ w &= v \\end{align}",
                 "Money: \\$5 and \\$6; code `$x$` and a [link](https://example.org)."])
    assert made.count("<math") == 3 and "<code>$x$</code>" in made
    assert "$5 and $6" in made and "<em>" not in made


# ------------------------------------------------------- the formgrader as nbgrader_config.py sets it
def test_the_formgraders_own_configuration_renders_every_attack(tmp_path):
    """The formgrader's page made in a process of its own from the course's nbgrader_config.py,
    as the formgrader's handler makes it: a submission holding each attack above renders."""
    from support import formgrader_pages
    cells = [answer(source) for source, _ in MIXED.values()]
    cells += [answer("$" + "\\frac{" * 150 + "x" + "}{y}" * 150 + "$"),
              answer("<div>" + "\\begin{a}x " * 24_000 + "</div>"),
              answer("\\\\(" * 16_000), answer("![gone](attachment:gone.png)"),
              answer("<div>" * 300 + "deep" + "</div>" * 300),
              nbformat.v4.new_code_cell("x = 1\n" * 100_000)]
    path = tmp_path / "attacks.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))
    [(seconds, characters)] = formgrader_pages([path]).values()
    print(f"[formgrader] the page of every attack: {seconds:.1f} s")
    assert characters > 600_000  # the page, with the code cell whole
