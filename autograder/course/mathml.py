"""Math as MathML, so that a page renders its formulas with no network and no script.

nbconvert's pages load MathJax from a public CDN; on a server with no internet access (a locked-
down JupyterHub, an exam room) learners then read raw ``$\\alpha_{t,i}$``. Browsers render MathML
themselves (Chromium since version 109, Firefox and Safari for longer), so the course turns each
formula of a rendered page into MathML when the page is made (with latex2mathml, a small pure-
Python package from PyPI) instead of bundling a MathJax copy into every feedback file: the page
stays a single file that renders anywhere, opened from disk or served, and runs no script.

:func:`render_math` works on HTML that markdown made: it finds ``$$...$$``, ``$...$`` (the opening
``$`` followed by no space, the closing one preceded by none and followed by no digit, as
nbconvert's markdown reads them) and ``\\begin{env}...\\end{env}`` in text, never inside ``code``,
``pre``, ``script`` or ``style``, and puts MathML in their place. What it makes is cleaned with
:data:`TAGS` and :data:`ATTRIBUTES`, MathML's presentation elements with no link, style or event
handler, because the TeX can be a learner's. A formula that cannot be converted stays as its TeX,
in a ``<code>`` with a title saying so; nothing is lost.
"""
import html
import re

import bleach
from latex2mathml.converter import convert

TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup",
        "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd",
        "mstyle", "mpadded", "mphantom", "menclose", "merror", "semantics", "annotation"}
ATTRIBUTES = {"display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
              "columnalign", "columnspacing", "rowspacing", "displaystyle", "scriptlevel",
              "accent", "accentunder", "movablelimits", "linethickness", "width", "height",
              "depth", "minsize", "maxsize", "symmetric", "notation", "encoding", "form"}
SKIPPED = {"code", "pre", "script", "style", "math", "textarea"}
MATH = re.compile(r"\$\$(?P<display>.+?)\$\$"
                  r"|(?<![\\$\w])\$(?P<inline>[^\s$](?:[^$]*?[^\s$\\])?)\$(?!\d)"
                  r"|(?P<environment>\\begin\{(?P<name>[a-z]+\*?)\}.+?\\end\{(?P=name)\})",
                  re.DOTALL)
PRIMES = re.compile(r"'+")  # latex2mathml does not read primes
TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")


def to_mathml(tex, display):
    """``tex`` (plain text, not HTML) as a cleaned ``<math>`` element, or None if it cannot be
    converted."""
    tex = PRIMES.sub(lambda m: "^{" + r"\prime" * len(m.group(0)) + "}", tex)  # f'' -> f^{..}
    try:
        made = convert(tex, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds on TeX it does not know
        return None
    made = made.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    return clean_mathml(made)


def clean_mathml(markup):
    """``markup`` with only MathML's presentation elements and their layout attributes; any other
    element is escaped to text and any other attribute dropped."""
    return bleach.clean(markup, tags=TAGS, attributes=lambda tag, name, value: name in ATTRIBUTES,
                        protocols=set(), strip=False, strip_comments=True)


def _replace(match):
    if match.group("display") is not None:
        tex, display = match.group("display"), True
    elif match.group("inline") is not None:
        tex, display = match.group("inline"), False
    else:
        tex, display = match.group("environment"), True
    made = to_mathml(html.unescape(tex), display)
    if made is None:
        return (f'<code class="tex" title="a formula the page could not render">'
                f'{match.group(0)}</code>')
    return made


def render_math(markup):
    """``markup`` (HTML) with every formula in its text as MathML (see the module's text)."""
    out, depth, position = [], 0, 0
    for tag in TAG.finditer(markup):
        text = markup[position:tag.start()]
        out.append(text if depth else MATH.sub(_replace, text))
        name = tag.group(2).lower()
        if name in SKIPPED and not tag.group(3):
            depth = max(0, depth + (-1 if tag.group(1) else 1))
        out.append(tag.group(0))
        position = tag.end()
    rest = markup[position:]
    out.append(rest if depth else MATH.sub(_replace, rest))
    return "".join(out)

