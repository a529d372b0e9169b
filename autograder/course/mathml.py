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

The TeX and the HTML are a learner's, so reading them is bounded (docs/guarantees.md, "Rendering
learner text"): formulas and tags are found by scanners that read each character a bounded number
of times (:func:`formulas`, :func:`tags`; the lazy patterns they replace rescanned the rest of the
text from every unclosed ``\\begin``); a formula longer than :data:`FORMULA_CHARACTERS` or
deeper than :data:`FORMULA_DEPTH` (TeX) or :data:`MATHML_DEPTH` (MathML) stays as its TeX; and a
page's :class:`Budget` of formulas, characters and time, once spent, leaves the rest as text.
"""
from __future__ import annotations

import bisect
import functools
import html
import re
import time
from collections.abc import Iterator

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
# elements with no end tag: they open no level of nesting
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr", "mspace"}

# Limits (docs/guarantees.md, "Rendering learner text"): a formula longer or deeper than these, or
# one past its page's budget, is shown as its TeX text
FORMULA_CHARACTERS = 4000   # the course's longest formula has 300
FORMULA_DEPTH = 32          # levels of groups, \\left and environments in its TeX
MATHML_DEPTH = 2 * FORMULA_DEPTH + 4  # levels of elements of its MathML; the course's most is 9
PAGE_FORMULAS = 3000        # formulas read on one page; a course notebook has at most 320
PAGE_TAGS = 25_000          # elements its markdown cells make on one page; the course's most: 3,080
PAGE_CHARACTERS = 20_000    # characters of TeX converted on one page; the course's most is 4,690
PAGE_SECONDS = 10.0         # time rendering markdown and math on one page; the course's < 1

PRIMES = re.compile(r"'+")  # latex2mathml does not read primes
NAME = re.compile(r"[a-z]+\*?\}")
SPACE = re.compile(r"\s")
NOT_OPENING_AFTER = re.compile(r"[\\$\w]")
DIGIT = re.compile(r"\d")
TOO_LONG = "a formula longer than the page renders"
TOO_DEEP = "a formula nested deeper than the page renders"
OVER_BUDGET = "a formula past what one page renders"
NOT_CONVERTED = "a formula the page could not render"


def now() -> float:
    return time.monotonic()


class Budget:
    """What is left of one page's markdown and math: formulas, characters of TeX, elements and
    time (:data:`PAGE_FORMULAS`, :data:`PAGE_CHARACTERS`, :data:`PAGE_TAGS`,
    :data:`PAGE_SECONDS`); the time starts with the page's first markdown cell or formula."""

    def __init__(self) -> None:
        self.formulas, self.characters, self.seconds = PAGE_FORMULAS, PAGE_CHARACTERS, PAGE_SECONDS
        self.tags = PAGE_TAGS
        self.deadline: float | None = None

    def take_tags(self, count: int) -> bool:
        """Whether a cell of ``count`` elements may still be shown as rendered (and count it)."""
        if count > self.tags:
            self.tags = 0
            return False
        self.tags -= count
        return True

    def out_of_time(self) -> bool:
        """Whether the page's time is spent (and it starts now if it had not)."""
        moment = now()
        if self.deadline is None:
            self.deadline = moment + self.seconds
        return moment > self.deadline

    def take(self, tex: str) -> bool:
        """Whether the formula ``tex`` may still be read on this page (and count it if so): each
        counts as one formula, and as its characters if it is short enough to be converted."""
        characters = len(tex) if len(tex) <= FORMULA_CHARACTERS else 0
        if self.formulas < 1 or self.characters < characters or self.out_of_time():
            self.formulas = 0  # once over, every later formula of the page stays TeX
            return False
        self.formulas -= 1
        self.characters -= characters
        return True


def tex_depth(tex: str) -> int:
    """The deepest nesting of groups, ``\\left``/``\\right`` and environments in ``tex``, in one
    pass."""
    depth = deepest = 0
    for match in re.finditer(r"[{}]|\\(?:left|right|begin|end)(?![a-zA-Z])", tex):
        token = match.group(0)
        depth += 1 if token in ("{", "\\left", "\\begin") else -1
        deepest = max(deepest, depth)
    return deepest


class _Next:
    """Where ``character`` next occurs in ``text`` at or after a position that only grows: every
    character of ``text`` is looked at once, however often it is asked."""

    def __init__(self, text: str, character: str) -> None:
        self.text, self.character, self.found = text, character, -1

    def at(self, position: int) -> int:
        if self.found < position and self.found != len(self.text):
            self.found = self.text.find(self.character, position)
            if self.found < 0:
                self.found = len(self.text)
        return self.found


def tags(markup: str) -> Iterator[tuple[int, int, bool, str, bool]]:
    """Each tag of ``markup`` as ``(start, end, closing, name, self_closing)``, in one pass: a tag
    is ``<`` and a letter (or ``</`` and a letter) up to the first ``>`` outside double quotes (as
    bleach writes attributes); comments are skipped; a ``<`` that starts no tag is text, and an
    unterminated tag ends the tags."""
    length, position = len(markup), 0
    less, greater, quote = _Next(markup, "<"), _Next(markup, ">"), _Next(markup, '"')
    while True:
        start = less.at(position)
        if start + 1 >= length:
            return
        if markup.startswith("<!--", start):
            end = markup.find("-->", start + 4)
            if end < 0:
                return
            position = end + 3
            continue
        closing = markup[start + 1] == "/"
        name_start = name_end = start + 2 if closing else start + 1
        while name_end < length and markup[name_end].isascii() and markup[name_end].isalnum():
            name_end += 1
        if name_end == name_start or not markup[name_start].isalpha():
            position = start + 1
            continue
        cursor = name_end
        while True:
            end, opening = greater.at(cursor), quote.at(cursor)
            if opening < end:
                cursor = quote.at(opening + 1) + 1
                continue
            break
        if end >= length:
            return
        yield (start, end + 1, closing, markup[name_start:name_end].lower(),
               markup[end - 1] == "/" and not closing)
        position = end + 1


def markup_depth(markup: str) -> int:
    """The deepest nesting of elements in ``markup`` (HTML or MathML), in one pass."""
    open_names: list[str] = []
    deepest = 0
    for _, _, closing, name, self_closing in tags(markup):
        if self_closing or name in VOID:
            continue
        if not closing:
            open_names.append(name)
            deepest = max(deepest, len(open_names))
        elif open_names:
            open_names.pop()
    return deepest


CANDIDATE = re.compile(r"\$|\\begin\{")
END = re.compile(r"\\end\{([a-z]+\*?)\}")


def formulas(text: str) -> Iterator[tuple[int, int, str, bool]]:
    """Each formula in ``text`` as ``(start, end, tex, display)``, in one pass (no pattern that
    looks back over what it has read): ``$$...$$``; ``$...$``, the opening ``$`` after no ``\\``,
    ``$`` or word character and followed by no space, the closing one (the next ``$``) preceded by
    no space or ``\\`` and followed by no digit, as nbconvert's markdown reads them; and
    ``\\begin{env}...\\end{env}``. Leftmost first, as a regular expression would find them."""
    length, position = len(text), 0
    no_display = False
    ends: dict[str, list[int]] | None = None
    while True:
        found = CANDIDATE.search(text, position)
        if found is None:
            return
        start = found.start()
        if text[start] == "$":
            if text.startswith("$$", start):
                close = -1 if no_display else text.find("$$", start + 3)
                if close >= 0:
                    yield start, close + 2, text[start + 2:close], True
                    position = close + 2
                    continue
                no_display = True
            elif (start + 1 < length and not SPACE.match(text[start + 1])
                  and (start == 0 or not NOT_OPENING_AFTER.match(text[start - 1]))):
                close = text.find("$", start + 2)
                if close >= 0 and (close == start + 2 or not (
                        SPACE.match(text[close - 1]) or text[close - 1] == "\\")) \
                        and not (close + 1 < length and DIGIT.match(text[close + 1])):
                    yield start, close + 1, text[start + 1:close], False
                    position = close + 1
                    continue
        else:
            name = NAME.match(text, start + 7)
            if name is not None:
                if ends is None:  # where each environment ends, read once
                    ends = {}
                    for end in END.finditer(text):
                        ends.setdefault(end.group(1), []).append(end.start())
                after = name.end() + 1  # an environment holds at least one character
                closes = ends.get(name.group(0)[:-1], [])
                index = bisect.bisect_left(closes, after)
                if index < len(closes):
                    finish = closes[index] + len(name.group(0)) + 5
                    yield start, finish, text[start:finish], True
                    position = finish
                    continue
        position = start + 1


def to_mathml(tex: str, display: bool,
              budget: Budget | None = None) -> tuple[str, None] | tuple[None, str]:
    """``tex`` (plain text, not HTML) as a cleaned ``<math>`` element and None, or None and the
    reason it stays TeX: longer than :data:`FORMULA_CHARACTERS`, deeper than
    :data:`FORMULA_DEPTH` as TeX or :data:`MATHML_DEPTH` as MathML, past the page's ``budget``,
    or not TeX that latex2mathml reads."""
    if budget is not None and not budget.take(tex):
        return None, OVER_BUDGET
    if len(tex) > FORMULA_CHARACTERS:
        return None, TOO_LONG
    # a class's pages share most formulas: the short ones are converted once per process
    convert_once = _kept_conversion if len(tex) <= KEPT_CHARACTERS else _converted
    return convert_once(tex, display)


KEPT_CHARACTERS = 600  # a formula converted once per process, of at most this many characters,
KEPT_FORMULAS = 2048   # and this many, the last used (some megabytes at most)


def _converted(tex: str, display: bool) -> tuple[str, None] | tuple[None, str]:
    """:func:`to_mathml` once the page's budget allows ``tex``: a function of its arguments alone."""
    if tex_depth(tex) > FORMULA_DEPTH:
        return None, TOO_DEEP
    tex = PRIMES.sub(lambda m: "^{" + r"\prime" * len(m.group(0)) + "}", tex)  # f'' -> f^{..}
    try:
        made = convert(tex, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds on TeX it does not know, and
        return None, NOT_CONVERTED  # RecursionError on what nests deeper than its stack
    if markup_depth(made) > MATHML_DEPTH:
        return None, TOO_DEEP
    made = made.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    return clean_mathml(made), None


_kept_conversion = functools.lru_cache(maxsize=KEPT_FORMULAS)(_converted)


def clean_mathml(markup: str) -> str:
    """``markup`` with only MathML's presentation elements and their layout attributes; any other
    element is escaped to text and any other attribute dropped."""
    cleaned: str = bleach.clean(markup, tags=TAGS,
                                attributes=lambda tag, name, value: name in ATTRIBUTES,
                                protocols=set(), strip=False, strip_comments=True)
    return cleaned


def as_tex(markup: str, reason: str) -> str:
    """A formula's text (``markup``, already HTML) shown as it was written."""
    return f'<code class="tex" title="{reason}">{markup}</code>'


def _math_in(text: str, budget: Budget | None) -> str:
    out: list[str] = []
    position = 0
    for start, end, tex, display in formulas(text):
        converted = to_mathml(html.unescape(tex), display, budget)
        if converted[0] is None:  # past the budget, a formula is left as the text it is: no element
            reason = converted[1]
            made = text[start:end] if reason == OVER_BUDGET else as_tex(text[start:end], reason)
        else:
            made = converted[0]
        out += [text[position:start], made]
        position = end
    out.append(text[position:])
    return "".join(out)


def render_math(markup: str, budget: Budget | None = None) -> str:
    """``markup`` (HTML) with every formula in its text as MathML (see the module's text), in
    time linear in its length; ``budget`` (a :class:`Budget`) is what is left of its page's."""
    out: list[str] = []
    depth = position = 0
    for start, end, closing, name, self_closing in tags(markup):
        text = markup[position:start]
        out.append(text if depth else _math_in(text, budget))
        if name in SKIPPED and not self_closing:
            depth = max(0, depth + (-1 if closing else 1))
        out.append(markup[start:end])
        position = end
    rest = markup[position:]
    out.append(rest if depth else _math_in(rest, budget))
    return "".join(out)
