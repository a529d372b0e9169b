"""Learner text in a browser: escaped where the course writes markdown from it, sanitised where
nbconvert renders a learner's notebook for the formgrader or a feedback page.

A learner's text reaches an instructor's browser (and, through feedback, the learner's) three ways:

- the feedback table of each check cell, markdown the course writes from test names and failure
  messages, which quote what the learner's code raised: every piece goes through
  :func:`markdown_text`, which makes it literal text in any markdown renderer;
- the learner's own outputs (HTML, markdown, images, scripts, widgets): the formgrader and
  ``nbgrader generate_feedback`` render them with nbconvert's HTML exporter, which the course
  configures (:func:`configure`) with :class:`SafeOutputs`: only text, HTML (cleaned), markdown,
  LaTeX and images are kept, anything else is named and left out;
- markdown cells (written answers, predictions, any cell the learner edited) and markdown
  outputs: :class:`SafeMarkdown` takes the place of the exporter's ``markdown2html`` filter,
  which nbgrader's own templates call, and cleans the HTML it makes.

Cleaning (:func:`clean_html`, with bleach, which nbconvert's own sanitiser uses) keeps what
markdown and ordinary outputs are made of (paragraphs, headings, lists, tables, code, links,
``<details>``, embedded images) and escapes every other tag, so an attack shows as text; it keeps
no event handler, no style, no ``id`` (which could stand in for the formgrader's own elements), and
no URL but http(s), mailto and page links, and ``data:`` images.

Rendering is bounded (docs/guarantees.md, "Rendering learner text"): every pattern run over a
learner's text reads it in one pass; a markdown cell longer than :data:`CELL_CHARACTERS`, whose
HTML has more than :data:`CELL_TAGS` tags (or :data:`FORMATTING_TAGS` formatting tags) or nests
deeper than :data:`HTML_DEPTH`, or that comes after its page's time or elements
(:class:`autograder.course.mathml.Budget`) is shown as its text; only the first
:data:`HIGHLIGHTED` characters of a code cell (or of fenced code in markdown) are highlighted,
the rest shown plain; an image naming an attachment the cell does not hold shows its text.
"""
from __future__ import annotations

import html
import re
import threading
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

import bleach
from jinja2 import pass_context
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from traitlets.config import Config, LoggingConfigurable

if TYPE_CHECKING:
    from jinja2.runtime import Context
    from nbconvert.exporters import HTMLExporter
    from nbformat import NotebookNode

from . import mathml

TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
        "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
        "ins", "kbd", "li", "mark", "ol", "p", "pre", "s", "samp", "small", "span", "strong",
        "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
        "var"}
ATTRIBUTES = {"*": {"class", "title"}, "a": {"href"}, "img": {"src", "alt", "width", "height"},
              "td": {"colspan", "rowspan", "align"}, "th": {"colspan", "rowspan", "align"},
              "ol": {"start"}, "details": {"open"}}
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*\Z")
IMAGE_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z")
# MIME types of an output that may be shown; text/html is cleaned, text/markdown is cleaned after
# rendering (SafeMarkdown), the rest is escaped by nbconvert's templates or checked here
SHOWN = {"text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg",
         "image/svg+xml"}

CELL_CHARACTERS = 50_000   # a markdown cell rendered; the course's longest has 6,214
CELL_TAGS = 2000           # tags in one cell's HTML (cleaning nested tags grows with their square);
FORMATTING_TAGS = 400      # of them formatting tags (b, i, a...), the square's worst; course's: 40
HTML_DEPTH = 100           # levels of elements in one cell's HTML, formulas included
HIGHLIGHTED = 20_000       # characters of a code cell highlighted, cut at a line's end
KEPT_CHARACTERS = 8_000_000  # of cells rendered, kept by each filter for the pages that share them
TAG_START = re.compile(r"</?[A-Za-z]")
ELEMENT = re.compile(r"<[A-Za-z]")
FORMATTING = re.compile(r"<(?:a|b|big|code|em|font|i|nobr|s|small|strike|strong|tt|u)[\s/>]",
                        re.IGNORECASE)
# formulas and the openings of nbconvert's math patterns, held out of markdown (see protect)
HELD = re.compile("(?:\uE000|&#57344;|&#x[eE]000;)([0-9]+)(?:\uE001|&#57345;|&#x[eE]001;)"
                  "|%EE%80%80([0-9]+)%EE%80%81")  # as written, as an entity, in a URL
OPENINGS = re.compile(r"\\begin|\\\\\[|\\\\\(")
BUDGET = "autograder_math_budget"


def allowed_attribute(tag: str, name: str, value: str) -> bool:
    if name not in ATTRIBUTES["*"] | ATTRIBUTES.get(tag, set()):
        return False
    if name == "src":
        return bool(IMAGE_URL.match(value.strip()))
    if name == "href":
        return not value.strip().lower().startswith("data:")
    return True


def clean_html(html: str) -> str:
    """``html`` with only :data:`TAGS`, their harmless attributes and safe URLs; any other tag
    is escaped (shown as text), comments are dropped."""
    cleaned: str = bleach.clean(html, tags=TAGS, attributes=allowed_attribute,
                                protocols={"http", "https", "mailto", "data"}, strip=False,
                                strip_comments=True)
    return cleaned


PUNCTUATION = set("!#$%'()*+,-./:;=?@[\\]^_`{|}~")
ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def markdown_text(text: object) -> str:
    """``text`` as markdown that renders as exactly that text: HTML's special characters become
    entities, markdown's punctuation is escaped with a backslash, line breaks become ``<br>``
    (the text can sit in a table cell)."""
    out: list[str] = []
    for character in str(text):
        if character in ENTITIES:
            out.append(ENTITIES[character])
        elif character in PUNCTUATION:
            out.append("\\" + character)
        elif character == "\n":
            out.append("<br>")
        elif character == "\r" or not (character.isprintable() or character == "\t"):
            out.append(" ")
        else:
            out.append(character)
    return "".join(out)


ESCAPED_NAME = re.compile(r"\\`((?:[A-Za-z]|\\_)(?:[A-Za-z0-9]|\\[_.])*)\\`")  # linear


def markdown_text_with_names(text: object) -> str:
    """:func:`markdown_text`, but a name quoted in backticks (`` `attend` ``, ``np.exp``) is
    shown as code: only letters, digits, underscores and dots between the backticks, so a code
    span can hold nothing but a name, whoever wrote the text."""
    return ESCAPED_NAME.sub(lambda m: "`" + m.group(1).replace("\\", "") + "`",
                            markdown_text(text))


def code_span(text: object, limit: int = 400) -> str:
    """``text`` as a Markdown code span: what it says, readable as plain text in a ``.md`` file
    and rendered literally by any Markdown renderer (no HTML, no emphasis, no links). Line breaks
    become spaces; at most ``limit`` characters are kept; the fence is one backtick longer than
    the longest run of backticks inside."""
    flat = " ".join(str(text)[:limit].split())
    if len(str(text)) > limit:
        flat += " ..."
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or longest else ""
    return f"{fence}{pad}{flat}{pad}{fence}" if flat else ""


def protect(source: str) -> tuple[str, list[str]]:
    """``source`` (markdown) with each formula, and each opening of a formula of nbconvert's
    patterns that is left (``\\begin``, ``\\\\[``, ``\\\\(``), replaced by a mark markdown
    leaves alone, and the texts they stand for: nbconvert's patterns rescan the rest of the text
    from every opening without its end, so none reaches them, and markdown does not read a
    formula's ``_`` or ``*`` as emphasis."""
    source = source.replace("\uE000", "\uFFFD").replace("\uE001", "\uFFFD")
    held: list[str] = []
    out: list[str] = []
    position = 0

    def hold(text: str) -> str:
        held.append(text)
        return f"\uE000{len(held) - 1}\uE001"

    def text(part: str) -> str:
        return OPENINGS.sub(lambda match: hold(match.group(0)), part)

    for start, end, _, _ in mathml.formulas(source):
        out += [text(source[position:start]), hold(source[start:end])]
        position = end
    out.append(text(source[position:]))
    return "".join(out), held


def restore(markup: str, held: list[str]) -> str:
    """``markup`` with each mark of :func:`protect` back as the text it stands for, escaped."""
    def back(match: re.Match[str]) -> str:
        index = int(match.group(1) or match.group(2))
        if index >= len(held):
            return ""
        return html.escape(held[index]) if match.group(1) else quote(held[index], safe="$/")
    return HELD.sub(back, markup)


def too_many_tags(markup: str) -> bool:
    """Whether ``markup`` has more tags than :data:`CELL_TAGS`, or formatting tags than
    :data:`FORMATTING_TAGS`, for cleaning it to take little time (an upper bound: each tag
    html5lib reads starts with one of these)."""
    return (len(TAG_START.findall(markup)) > CELL_TAGS
            or len(FORMATTING.findall(markup)) > FORMATTING_TAGS)


def as_text(source: str, reason: str) -> str:
    """A learner's cell shown as the text it is, with why."""
    return f'<pre class="learner-text" title="{html.escape(reason)}">{html.escape(source)}</pre>'


class Attachments(dict[str, dict[str, str]]):
    """A cell's attachments as nbconvert's markdown renderer reads them: an image naming one the
    cell does not hold (or holds as something other than text by type) gets no data, so it shows
    its text, where the renderer would stop the page."""

    def __init__(self, attachments: object) -> None:
        super().__init__()
        for name, data in (attachments.items() if isinstance(attachments, dict) else ()):
            if isinstance(data, dict):
                kept = {mime: "".join(value) if isinstance(value, list) else value
                        for mime, value in data.items() if isinstance(mime, str)}
                kept = {mime: value for mime, value in kept.items() if isinstance(value, str)}
                if kept:
                    self[name] = kept

    def __contains__(self, name: object) -> bool:
        return True

    def __missing__(self, name: str) -> dict[str, str]:
        return {"text/plain": ""}


def page_budget(context: Context) -> mathml.Budget:
    """The math budget of the page being made (kept in its resources, which each page has its
    own of), or a new one."""
    resources = context.get("resources")
    if not isinstance(resources, dict):
        return mathml.Budget()
    budget = resources.get(BUDGET)
    if not isinstance(budget, mathml.Budget):
        budget = resources[BUDGET] = mathml.Budget()
    return budget


class Kept:
    """What a filter made of a text, kept for the texts it meets again (a class's pages share their
    locked cells): at most :data:`KEPT_CHARACTERS` of keys and values in all, the oldest let go
    first; a text longer than a tenth of that is not kept."""

    def __init__(self) -> None:
        self.items: dict[Any, str] = {}
        self.characters = 0
        self.lock = threading.Lock()  # the formgrader renders pages in threads

    @staticmethod
    def _size(key: Any, value: str) -> int:
        return sum(len(part) for part in key if isinstance(part, str)) + len(value)

    def get(self, key: Any) -> str | None:
        with self.lock:
            return self.items.get(key)

    def put(self, key: Any, value: str) -> None:
        size = self._size(key, value)
        with self.lock:
            if size > KEPT_CHARACTERS // 10 or key in self.items:
                return
            while self.items and self.characters + size > KEPT_CHARACTERS:
                oldest = next(iter(self.items))
                self.characters -= self._size(oldest, self.items.pop(oldest))
            self.items[key] = value
            self.characters += size


def page_path(context: Context) -> str:
    """The folder of the notebook a page is made of (nbconvert's resources), for relative links."""
    resources = context.get("resources")
    metadata = resources.get("metadata") if isinstance(resources, dict) else None
    path = metadata.get("path", "") if isinstance(metadata, dict) else ""
    return path if isinstance(path, str) else str(path)


@pass_context  # marks the class, so its instances too: Jinja passes them the template's context
class SafeMarkdown(LoggingConfigurable):
    """The exporter's ``markdown2html`` filter, then :func:`clean_html` on the HTML it made, then
    its formulas as MathML (:func:`autograder.course.mathml.render_math`), which needs no network,
    within the bounds of the module's text.

    Registered in its place by name (``HTMLExporter.filters``), it is made with the exporter as
    its parent, whose settings it renders with and whose context Jinja passes."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rendered = Kept()  # a cell's cleaned HTML, before its formulas

    def __call__(self, context: Context, source: str | list[str]) -> str:
        source = "".join(source) if isinstance(source, list) else str(source)
        budget = page_budget(context)
        if len(source) > CELL_CHARACTERS:
            return as_text(source, "a cell longer than the page renders")
        if budget.out_of_time():
            return as_text(source, "a cell past the time its page renders in")
        protected, held = protect(source)
        cell = context.get("cell") or {}
        # a cell without attachments renders the same on every page this exporter makes: a
        # class's pages share their locked cells, rendered once
        key = None if cell.get("attachments") else (protected, page_path(context))
        cleaned = self.rendered.get(key) if key else None
        if cleaned is None:
            try:
                made = self.markdown(context, protected)
            except Exception:  # nbconvert's heading anchors recurse once per level of a heading's
                return as_text(source, "a cell the page could not render")  # tags, and more
            if too_many_tags(made):
                return as_text(source, "a cell with more tags than the page renders")
            cleaned = clean_html(made)
            if key:
                self.rendered.put(key, cleaned)
        made = mathml.render_math(restore(cleaned, held), budget)
        if mathml.markup_depth(made) > HTML_DEPTH:
            return as_text(source, "a cell nested deeper than the page renders")
        if not budget.take_tags(len(ELEMENT.findall(made))):
            return as_text(source, "a cell past what its page renders")
        return made

    def markdown(self, context: Context, source: str) -> str:
        """HTML of ``source`` as the exporter's own filter makes it, with the cell's
        :class:`Attachments`."""
        exporter = cast("HTMLExporter", self.parent)  # the exporter whose filter this is
        cell = context.get("cell") or {}
        renderer = BoundedRenderer(
            escape=False, attachments=Attachments(cell.get("attachments")),
            embed_images=exporter.embed_images, path=page_path(context),
            anchor_link_text=exporter.anchor_link_text,
            exclude_anchor_links=exporter.exclude_anchor_links, **exporter.lexer_options)
        return MarkdownWithMath(renderer=renderer).render(source)


class BoundedRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, whose fenced code longer than :data:`HIGHLIGHTED` is shown
    plain rather than highlighted."""

    def block_code(self, code: str, info: str | None = None) -> str:
        if len(code) > HIGHLIGHTED:
            return f"<pre><code>{html.escape(code)}</code></pre>\n"
        return super().block_code(code, info)


class SafeHighlight(Highlight2HTML):
    """nbconvert's ``highlight_code`` filter on a code cell's first :data:`HIGHLIGHTED`
    characters (to a line's end), the rest shown plain in the same block."""

    highlighted = Kept()  # for the process: the exporter makes this filter anew for each page

    def __call__(self, source: str | list[str], language: str | None = None,
                 metadata: dict[str, Any] | None = None) -> str:
        source = "".join(source) if isinstance(source, list) else str(source)
        magics = metadata.get("magics_language") if isinstance(metadata, dict) else None
        key = None if not isinstance(magics, (str, type(None))) else (
            source, language or self.pygments_lexer, magics,
            repr(sorted(self.extra_formatter_options.items())))
        made = self.highlighted.get(key) if key else None
        if made is None:
            made = self._highlight(source, language, metadata)
            if key:
                self.highlighted.put(key, made)
        return made

    def _highlight(self, source: str, language: str | None,
                   metadata: dict[str, Any] | None) -> str:
        if len(source) <= HIGHLIGHTED:
            # nbconvert's filter is unannotated
            highlighted: str = super().__call__(source, language, metadata)  # type: ignore[no-untyped-call]
            return highlighted
        cut = source.rfind("\n", 0, HIGHLIGHTED) + 1 or HIGHLIGHTED
        made: str = super().__call__(source[:cut], language, metadata)  # type: ignore[no-untyped-call]
        end = made.rfind("</pre>")
        end = len(made) if end < 0 else end
        return (made[:end] + '<span class="plain" title="code past what the page highlights">'
                + html.escape(source[cut:]) + "</span>" + made[end:])


FILES_URL = re.compile(r'(src|href)=([\'"]?)/?files/')
FILES_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\(/?files/([^()\n]*)\)")


def strip_files_prefix(text: str) -> str:
    """nbconvert's filter of that name (``files/`` taken off links) with patterns that read the
    text once: a link's text holds no bracket, its address no parenthesis."""
    return FILES_LINK.sub(r"\1[\2](\3)", FILES_URL.sub(r"\1=\2", text))


def _text(value: object) -> object:
    return "".join(value) if isinstance(value, list) else value




class SafeOutputs(Preprocessor):
    """Code cells' outputs as a page may show them: text and error streams, and of each display
    only :data:`SHOWN` types (HTML cleaned, images checked, SVG only as nbconvert encodes it into
    an image), with image sizes as numbers; whatever is left out is named in a line of text."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict[str, Any],
                        index: int) -> tuple[NotebookNode, dict[str, Any]]:
        if cell.cell_type == "code":
            cell.outputs = [kept for kept in map(self.safe_output, cell.get("outputs", []))
                            if kept is not None]
        return cell, resources

    def safe_output(self, output: NotebookNode) -> NotebookNode | None:
        kind = output.get("output_type")
        if kind == "stream":
            text = _text(output.get("text"))
            if output.get("name") in ("stdout", "stderr") and isinstance(text, str):
                output.text = text
                return output
            return None
        if kind == "error":
            traceback = output.get("traceback")
            if isinstance(traceback, list) and all(isinstance(line, str) for line in traceback):
                return output
            return None
        if kind not in ("display_data", "execute_result"):
            return None
        data = output.get("data", {})
        kept: dict[str, str] = {}
        left_out: list[str] = []
        inline_svg = getattr(self.parent, "skip_svg_encoding", False)
        for mime, value in data.items():
            value = _text(value)
            if mime not in SHOWN or not isinstance(value, str) or \
                    (mime == "image/svg+xml" and inline_svg) or \
                    (mime in ("image/png", "image/jpeg") and not BASE64.match(value)):
                left_out.append(mime)
            elif mime == "text/html":
                made = None if too_many_tags(value) else clean_html(value)
                if made is None or mathml.markup_depth(made) > HTML_DEPTH:
                    left_out.append(mime)
                else:
                    kept[mime] = made
            else:
                kept[mime] = value
        if left_out and "text/plain" not in kept:
            kept["text/plain"] = (f"[an output of type {', '.join(left_out)} is not shown here: "
                                  f"pages of learners' work show text, cleaned HTML and images]")
        metadata: dict[str, dict[str, Any]] = {}
        for mime in ("image/png", "image/jpeg", "image/svg+xml"):
            sizes = output.get("metadata", {}).get(mime, {})
            if mime in kept and isinstance(sizes, dict):
                metadata[mime] = {key: sizes[key] for key in ("width", "height")
                                  if type(sizes.get(key)) in (int, float)}
        output.data, output.metadata = kept, metadata
        return output


def configure(c: Config) -> None:
    """Make every nbconvert HTML page nbgrader renders (formgrader, feedback) sanitise learner
    content; a site's own preprocessors and filters stay, before these."""
    c.HTMLExporter.preprocessors.append("autograder.course.sanitize.SafeOutputs")
    c.HTMLExporter.filters.update({
        "markdown2html": "autograder.course.sanitize.SafeMarkdown",
        "highlight_code": "autograder.course.sanitize.SafeHighlight",
        "strip_files_prefix": "autograder.course.sanitize.strip_files_prefix"})
