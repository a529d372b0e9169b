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
"""
import re

import bleach
from jinja2 import pass_context
from nbconvert.preprocessors import Preprocessor
from traitlets.config import LoggingConfigurable

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


def allowed_attribute(tag, name, value):
    if name not in ATTRIBUTES["*"] | ATTRIBUTES.get(tag, set()):
        return False
    if name == "src":
        return bool(IMAGE_URL.match(value.strip()))
    if name == "href":
        return not value.strip().lower().startswith("data:")
    return True


def clean_html(html):
    """``html`` with only :data:`TAGS`, their harmless attributes and safe URLs; any other tag
    is escaped (shown as text), comments are dropped."""
    return bleach.clean(html, tags=TAGS, attributes=allowed_attribute,
                        protocols={"http", "https", "mailto", "data"}, strip=False,
                        strip_comments=True)


PUNCTUATION = set("!#$%'()*+,-./:;=?@[\\]^_`{|}~")
ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def markdown_text(text):
    """``text`` as markdown that renders as exactly that text: HTML's special characters become
    entities, markdown's punctuation is escaped with a backslash, line breaks become ``<br>``
    (the text can sit in a table cell)."""
    out = []
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


def markdown_text_with_names(text):
    """:func:`markdown_text`, but a name quoted in backticks (`` `attend` ``, ``np.exp``) is
    shown as code: only letters, digits, underscores and dots between the backticks, so a code
    span can hold nothing but a name, whoever wrote the text."""
    return ESCAPED_NAME.sub(lambda m: "`" + m.group(1).replace("\\", "") + "`",
                            markdown_text(text))


def code_span(text, limit=400):
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


@pass_context  # marks the class, so its instances too: Jinja passes them the template's context
class SafeMarkdown(LoggingConfigurable):
    """The exporter's ``markdown2html`` filter, then :func:`clean_html` on the HTML it made, then
    its formulas as MathML (:func:`autograder.course.mathml.render_math`), which needs no network.

    Registered in its place by name (``HTMLExporter.filters``), it is made with the exporter as
    its parent, whose own filter it calls with the context Jinja passes."""

    def __call__(self, context, source):
        return mathml.render_math(clean_html(self.parent.markdown2html(context, source)))


def _text(value):
    return "".join(value) if isinstance(value, list) else value




class SafeOutputs(Preprocessor):
    """Code cells' outputs as a page may show them: text and error streams, and of each display
    only :data:`SHOWN` types (HTML cleaned, images checked, SVG only as nbconvert encodes it into
    an image), with image sizes as numbers; whatever is left out is named in a line of text."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.outputs = [kept for kept in map(self.safe_output, cell.get("outputs", []))
                            if kept is not None]
        return cell, resources

    def safe_output(self, output):
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
        data, kept, left_out = output.get("data", {}), {}, []
        inline_svg = getattr(self.parent, "skip_svg_encoding", False)
        for mime, value in data.items():
            value = _text(value)
            if mime not in SHOWN or not isinstance(value, str) or \
                    (mime == "image/svg+xml" and inline_svg) or \
                    (mime in ("image/png", "image/jpeg") and not BASE64.match(value)):
                left_out.append(mime)
            elif mime == "text/html":
                kept[mime] = clean_html(value)
            else:
                kept[mime] = value
        if left_out and "text/plain" not in kept:
            kept["text/plain"] = (f"[an output of type {', '.join(left_out)} is not shown here: "
                                  f"pages of learners' work show text, cleaned HTML and images]")
        metadata = {}
        for mime in ("image/png", "image/jpeg", "image/svg+xml"):
            sizes = output.get("metadata", {}).get(mime, {})
            if mime in kept and isinstance(sizes, dict):
                metadata[mime] = {key: sizes[key] for key in ("width", "height")
                                  if type(sizes.get(key)) in (int, float)}
        output.data, output.metadata = kept, metadata
        return output


def configure(c):
    """Make every nbconvert HTML page nbgrader renders (formgrader, feedback) sanitise learner
    content; a site's own preprocessors and filters stay, before these."""
    c.HTMLExporter.preprocessors.append("autograder.course.sanitize.SafeOutputs")
    c.HTMLExporter.filters.update({"markdown2html": "autograder.course.sanitize.SafeMarkdown"})
