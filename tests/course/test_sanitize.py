"""Learner text in markdown and HTML (autograder/course/sanitize.py): escaped text renders as
exactly its text, code spans read as their text, the course's own markdown is unchanged by the
sanitiser, and cleaning keeps markup while dropping what could act."""
from autograder.course import sanitize
from autograder.course.nbgrader_plugin import feedback_markdown
from autograder.engine import result as results
from support import ASSIGNMENTS, COURSE, html_of_markdown


def test_markdown_text_renders_as_exactly_its_text():
    """Escaped learner text renders as that text (up to how markdown spaces it), never markup."""
    import random
    import re
    from html import unescape
    generator = random.Random(0)
    alphabet = "ab <>&\"'`*_[]()!#|\\~-+.=:/\n$%{}^@;,?"
    samples = ["<img src=x onerror=alert(1)>", "| a | b |", "[x](javascript:alert(1))", "**bold**",
               "`code`", "a\\*b", "&lt;", "<!-- c -->", "# heading", "1. item", "- item"]
    samples += ["".join(generator.choice(alphabet) for _ in range(40)) for _ in range(300)]
    for sample in samples:
        rendered = html_of_markdown(sanitize.markdown_text(sample))
        assert "<img" not in rendered and "<a " not in rendered and "<script" not in rendered
        text = unescape(rendered.replace("<br />", "\n").replace("<br>", "\n")
                        .removeprefix("<p>").removesuffix("</p>\n"))
        def spaced(value):
            return re.sub(r"\s+", " ", value).strip()
        assert spaced(text) == spaced(sample), (sample, rendered)


def test_a_code_span_reads_as_its_text_in_a_file_and_renders_as_nothing_else():
    """The instructor's report.md gives learner-derived text (flags) as code spans: read as a
    plain file it carries no backslash escapes or entities, and rendered it is the text, never
    markup."""
    import random
    import re
    from html import unescape
    generator = random.Random(1)
    alphabet = "ab <>&\"'`*_[]()!#|\\~-+.=:/\n$%{}^@;,?"
    samples = ["the cell that defines `row_normalize` assigns numpy.allclose",
               "<img src=x onerror=alert(1)>", "``", "`", "[x](javascript:alert(1))", "**b**"]
    samples += ["".join(generator.choice(alphabet) for _ in range(40)) for _ in range(300)]
    for sample in samples:
        span = sanitize.code_span(sample)
        flat = " ".join(sample.split())
        if not flat:
            assert span == ""
            continue
        assert flat in span and "\\(" not in span.replace(flat, "")  # the text itself, unescaped
        rendered = html_of_markdown(span)
        assert "<img" not in rendered and "<a " not in rendered and "<em>" not in rendered
        inner = re.fullmatch(r"<p><code>(.*)</code></p>\n?", rendered, re.S)
        assert inner, (sample, rendered)
        assert unescape(inner.group(1)).strip() == flat.strip(), (sample, rendered)
    assert len(sanitize.code_span("x" * 10_000)) < 420


def test_the_course_own_markdown_renders_the_same_once_sanitised():
    """Every markdown cell of every released notebook (hints in <details>, tables, math) gives
    the same HTML with the sanitiser as without, but for headings' anchor ids."""
    import re
    import nbformat
    from nbconvert import HTMLExporter
    exporter = HTMLExporter()
    for assignment in ASSIGNMENTS:
        notebook = nbformat.read(COURSE.assignment(assignment).release, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                html = exporter.markdown2html({"cell": cell}, cell.source)
                assert sanitize.clean_html(html) == re.sub(r' id="[^"]*"', "", html)


def test_feedback_tables_of_honest_work_read_as_before():
    tests = [results.TestResult("row_normalize: rows sum to one", "row_normalize", 2.0, 2.0,
                                "passed", ""),
             results.TestResult("row_normalize: zero rows", "row_normalize", 0.0, 1.0, "failed",
                                "the output of row_normalize with zero rows is nan")]
    rendered = html_of_markdown(feedback_markdown("row_normalize", tests))
    assert "<code>row_normalize</code>" in rendered and "<table>" in rendered
    assert "rows sum to one" in rendered and "the output of row_normalize with zero rows is nan" \
        in rendered and "2 / 2" in rendered


def test_cleaning_keeps_markup_and_drops_what_could_act():
    html = ('<p class="x" id="notebook" style="position:fixed" title="t">a <b>b</b></p>'
            '<a href="https://example.org">ok</a><a href="data:text/html,x">no</a>'
            '<img src="data:image/png;base64,AAAA" alt="i"><img src="https://tracker.example/p.png">'
            '<details open><summary>s</summary>d</details><table><tr><td colspan="2">1</td></tr></table>')
    cleaned = sanitize.clean_html(html)
    assert '<p class="x" title="t">a <b>b</b></p>' in cleaned  # no id, no style
    assert '<a href="https://example.org">ok</a>' in cleaned and "<a>no</a>" in cleaned
    assert '<img src="data:image/png;base64,AAAA" alt="i">' in cleaned
    assert "tracker" not in cleaned  # no image is fetched from elsewhere when a page opens
    assert "<details open" in cleaned and '<td colspan="2">1</td>' in cleaned
