"""A notebook claims only what it computes.

For every assignment with a ``tests/claims/<id>.py`` (see ``tests/claims/__init__.py`` and
docs/authoring.md, "Claims"):

- each claim's quote is in the solution notebook's prose, word for word;
- every number the prose presents as a result (a percentage, a decimal, a factor, a duration, a
  size in bytes, "about N") is covered by a claim's quote or by a published number with its source;
- the solution notebook, run top to bottom in a fresh kernel, computes each claim's value within its
  bounds at ``SEED = 0`` (in the run the figures' test reads too: tests/seed_zero.py), and the
  directions (``every_seed=True``) at the other seeds of ``claims.TEST_SEEDS`` as well: the test
  replaces the notebook's one ``SEED = 0`` line, from which every generator of its experiments
  derives;
- with ``CLAIM_SWEEP=1`` (``make claims``, which ``make bench`` runs), only what takes more runs
  than the notebook as committed: every direction at every seed of ``claims.sweep_seeds()`` (ten
  or more; ``CLAIM_SEEDS`` picks others) and every rate over them, one test per assignment and
  setting; and each optional run (``LONGER_RUN = True``) at ``SEED = 0``, its claims and the
  figures it draws.
"""
import os
import math
import re

import pytest

import claims
import seed_zero
from support import (ASSIGNMENTS, COURSE, cell_source as source, execute, figure_text,
                     solution_cells as notebook_cells)

WITH_CLAIMS = [a for a in ASSIGNMENTS if claims.load(a) is not None]
SWEEP = os.environ.get("CLAIM_SWEEP") == "1"
# outside `make claims` the sweep is deselected (tests/conftest.py), not collected as skipped
sweep_only = pytest.mark.claim_sweep
not_in_sweep = pytest.mark.skipif(SWEEP, reason="`make claims` runs the seed sweep only")
SEED_LINE = re.compile(r"^SEED = 0[ \t]*$", re.M)


def normal(text):
    return re.sub(r"\s+", " ", text).strip()


def markdown(assignment):
    return [normal(source(c)) for c in notebook_cells(assignment) if c["cell_type"] == "markdown"]


def runs():
    """(assignment, seed, setting): one execution of a solution notebook each (the optional
    runs are ``make claims``'s: :func:`optional_runs`)."""
    for assignment in WITH_CLAIMS:
        found = set()
        for claim in claims.load(assignment).CLAIMS:
            if claim.optional_run:
                continue
            for seed in claims.TEST_SEEDS if claim.every_seed else claims.TEST_SEEDS[:1]:
                found.add((seed, claim.setting))
        for seed, setting in sorted(found):
            name = f"{assignment}-seed{seed}" + (f"-{setting.split(' = ')[0]}" if setting else "")
            shared = seed == 0 and not setting  # the run the figures' test reads too
            yield pytest.param(assignment, seed, setting, id=name,
                               marks=seed_zero.group(assignment) if shared else ())


def optional_runs():
    """(assignment, setting): the optional runs a claim is about, at ``SEED = 0``."""
    for assignment in WITH_CLAIMS:
        for setting in sorted({c.setting for c in claims.load(assignment).CLAIMS
                               if c.optional_run}):
            yield pytest.param(assignment, setting, id=f"{assignment}-{setting.split(' = ')[0]}")


# ---------------------------------------------------------------- the prose

@pytest.mark.parametrize("assignment", WITH_CLAIMS)
def test_every_quote_is_in_the_prose(assignment):
    cells = markdown(assignment)
    module = claims.load(assignment)
    missing = [entry.quote for entry in module.CLAIMS + module.PUBLISHED
               if not any(normal(entry.quote) in cell for cell in cells)]
    assert not missing, (f"{assignment}: these quotes are not in any markdown cell of the solution "
                         f"notebook (word for word, up to whitespace): {missing}")


# What the coverage rule leaves out: equations, code, hints, HTML, citations with their year,
# references to notebooks, sections, figures, tables, questions, hints and points, and the
# "Going further" list. Questions (sentences ending in "?") are left out too: they state nothing.
NOT_PROSE = re.compile("|".join(f"(?:{pattern})" for pattern in [
    r"\$\$.*?\$\$", r"(?<![\\$])\$(?:\\\$|[^$])+?\$",
    r"```.*?```", r"`[^`]*`",
    r"<details>.*?</details>", r"<[^>]+>",
    r"\([^()]*\b(?:19\d\d|20[0-4]\d)[a-z]?\b[^()]*\)",
    r"\b(?:[Nn]otebooks?|[Ss]ections?|[Ss]teps?|[Pp]arts?|Questions?|Hints?|Fig(?:ure|\.)|Tables?|"
    r"Eq(?:uation|\.)|[Cc]hapters?)\s+\d+(?:\.\d+)*(?:\s*(?:,|and|or|to|-|–)\s*\d+)*",
    r"\b\d+(?:\.\d+)? points?\b",
]), re.S)


def number(text):
    """The value of the first number written in ``text``."""
    return float(re.search(r"\d+(?:,\d{3})*(?:\.\d+)?", text).group(0).replace(",", ""))


def literals(code):
    """The values of the number literals of a piece of Python."""
    import io
    import tokenize
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return set()
    found = set()
    for token in tokens:
        if token.type == tokenize.NUMBER:
            try:
                found.add(float(token.string.replace("_", "")))
            except ValueError:
                pass
    return found


def questions(text):
    """The spans of the sentences of ``text`` that end in a question mark."""
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", text)]
    return [(max([0] + [e for e in ends if e <= q.start()]), q.end()) for q in re.finditer(r"\?", text)]
# A number presented as a result: a percentage, a decimal, a factor, a duration, a size in bytes,
# or any number after "about", "roughly", "nearly", "almost", "around", "~" or "≈".
RESULT = re.compile(
    r"(?:(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?\s*(?:%|×(?!\s*\d)|x\b(?!\s*\d)|times\b|-fold|s\b|ms\b|µs\b|seconds?\b|"
    r"minutes?\b|[KMG]i?B\b))"
    r"|(?:(?<![\w.,])\d+\.\d+)"
    r"|(?:(?:\b(?:about|roughly|nearly|almost|around)|[~≈])\s+\d+(?:[.,]\d+)*)")


def uncovered_numbers(text, quotes, given=()):
    """The result-like numbers of one markdown cell that no quote covers, each with its context.
    ``given``: the numbers written in the code cells just before and after, which the prose
    announces or describes (a setting, an input worked out by hand), not results."""
    text = text.split("## Going further")[0]
    text = normal(re.sub(r"^#+ .*$", " ", text, flags=re.M))   # headings state nothing
    text = re.sub(r"\*\*Rubric.*", "", text)                   # points, not claims
    skipped = [m.span() for m in NOT_PROSE.finditer(text)] + questions(text)
    covered = [(m.start(), m.start() + len(q)) for q in quotes for m in re.finditer(re.escape(q), text)]
    found = []
    for match in RESULT.finditer(text):
        start, end = match.span()
        if any(a <= start < b for a, b in skipped) or number(match.group(0)) in given:
            continue
        if not any(a <= start and end <= b for a, b in covered):
            found.append(f"{match.group(0)!r} in ...{text[max(0, start - 60):end + 40]}...")
    return found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_number_stated_as_a_result_is_a_claim_or_published(assignment):
    module = claims.load(assignment)
    quotes = [normal(e.quote) for e in (module.CLAIMS + module.PUBLISHED if module else [])]
    cells = notebook_cells(assignment)
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            after = next((source(c) for c in cells[index + 1:] if c["cell_type"] == "code"), "")
            before = next((source(c) for c in cells[:index][::-1] if c["cell_type"] == "code"), "")
            found += uncovered_numbers(source(cell), quotes, literals(after) | literals(before))
    assert not found, (
        f"{assignment}: the prose states these numbers, but no claim in tests/claims/{assignment}.py "
        f"covers them (a Claim tied to the value the notebook computes, or a Published number with "
        f"its source):\n  " + "\n  ".join(found))


# ---------------------------------------------------------------- the seed

def experiment_cells(assignment):
    """Ordinary code cells: neither answers, nor checks, nor locked given code."""
    for cell in notebook_cells(assignment):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and not (meta.get("solution") or meta.get("grade")
                                               or meta.get("locked")):
            yield source(cell)


@pytest.mark.parametrize("assignment", WITH_CLAIMS)
def test_experiments_derive_every_generator_from_one_seed(assignment):
    cells = list(experiment_cells(assignment))
    seed_lines = sum(len(SEED_LINE.findall(text)) for text in cells)
    module = claims.load(assignment)
    if any(c.across_seeds for c in module.CLAIMS):
        assert seed_lines == 1, (f"{assignment}: claims hold at every seed, so the notebook needs "
                                 f"exactly one line `SEED = 0` in an ordinary code cell "
                                 f"(found {seed_lines})")
    if seed_lines:
        fixed = [m.group(0) for text in cells
                 for m in re.finditer(r"default_rng\(\s*(?:\d+\s*)?\)", text)]
        assert not fixed, (f"{assignment}: experiments must derive their generators from SEED "
                           f"(np.random.default_rng(SEED + k)), not {fixed}")


# ---------------------------------------------------------------- the numbers

def executed_values(assignment, seed, setting, expressions):
    """Run the solution notebook with ``SEED = seed`` (and the ``setting`` line, if any) in a fresh
    kernel; the value of each expression in its namespace at the end (a float, or the error it
    raised, as text)."""
    import nbformat
    path = COURSE.assignment(assignment).solution
    notebook = nbformat.read(path, as_version=4)
    if seed != 0:
        seed_zero.replace_line(notebook, SEED_LINE, f"SEED = {seed}", "`SEED = 0`")
    if setting:
        seed_zero.apply_setting(notebook, setting)
    notebook.cells.append(nbformat.v4.new_code_cell(seed_zero.readout(expressions)))
    with seed_zero.environment({**seed_zero.ONE_THREAD, "MPLBACKEND": "agg"}):
        execute(notebook, path.parent)
    return seed_zero.read_values(notebook.cells[-1])


@not_in_sweep
@pytest.mark.slow
@pytest.mark.parametrize("assignment, seed, setting", list(runs()))
def test_claims_hold(assignment, seed, setting):
    # a rate holds at some seeds only, which need not include this one: the sweep checks it
    entries = [c for c in claims.load(assignment).CLAIMS
               if ((seed == 0 and c.rate is None) or c.every_seed) and c.setting == setting]
    if not entries:
        return
    if seed == 0 and not setting:
        values = seed_zero.run(assignment).values
    else:
        values = executed_values(assignment, seed, setting, [c.value for c in entries])
    wrong = outside_bounds(entries, values)
    assert not wrong, f"{assignment} at SEED = {seed} {setting}:\n  " + "\n  ".join(wrong)


def outside_bounds(entries, values):
    """The claims of ``entries`` whose value in ``values`` is an error or out of bounds, said."""
    wrong = []
    for claim in entries:
        value = values[claim.value]
        if isinstance(value, str) or not claim.holds(value):
            shown = value if isinstance(value, str) else f"{value:.4g}"
            wrong.append(f"{claim.quote!r}: {claim.value} = {shown}, should be {claim.bounds()}")
    return wrong


@sweep_only
@pytest.mark.slow
@pytest.mark.parametrize("assignment, setting", list(optional_runs()))
def test_an_optional_run_computes_its_claims_and_draws_readable_figures(assignment, setting):
    """The notebook with its optional run switched on (``LONGER_RUN = True``), at ``SEED = 0``:
    the claims about that run hold, and every figure the run shows passes the figures' test."""
    run = seed_zero.run(assignment, setting)
    # a rate about the optional run holds at some seeds only: the sweep checks it, as any rate
    entries = [c for c in seed_zero.claims_of(assignment, setting) if c.rate is None]
    wrong = outside_bounds(entries, run.values)
    assert not wrong, f"{assignment} at SEED = 0 with {setting}:\n  " + "\n  ".join(wrong)
    figure_text.check(f"{assignment} with {setting}", run)


def sweeps():
    """(assignment, setting): the claims about more seeds than 0, one sweep each."""
    for assignment in WITH_CLAIMS:
        settings = sorted({c.setting for c in claims.load(assignment).CLAIMS if c.across_seeds})
        for setting in settings:
            name = assignment + (f"-{setting.split(' = ')[0]}" if setting else "")
            yield pytest.param(assignment, setting, id=name)


@sweep_only
@pytest.mark.slow
@pytest.mark.parametrize("assignment, setting", list(sweeps()))
def test_claims_hold_across_the_seed_sweep(assignment, setting):
    entries = [c for c in claims.load(assignment).CLAIMS
               if c.across_seeds and c.setting == setting]
    seeds = claims.sweep_seeds()
    values = {seed: executed_values(assignment, seed, setting, [c.value for c in entries])
              for seed in seeds}
    wrong = []
    for claim in entries:
        found = [values[seed][claim.value] for seed in seeds]
        numbers = [v for v in found if not isinstance(v, str)]
        if len(numbers) < len(found):
            wrong.append(f"{claim.quote!r}: {claim.value} raised "
                         f"{next(v for v in found if isinstance(v, str))}")
            continue
        # the margins, for the author (pytest -rP shows them): where the values lie across seeds
        print(f"{claim.quote[:60]!r} ({claim.bounds()}"
              + (f", at {claim.rate[0]:.0%} to {claim.rate[1]:.0%} of the seeds" if claim.rate else "")
              + f"): min {min(numbers):.4g}, median {sorted(numbers)[len(numbers) // 2]:.4g}, "
                f"max {max(numbers):.4g}; within the bounds at "
                f"{sum(claim.holds(v) for v in numbers)} of {len(numbers)} seeds")
        shown = ", ".join(f"{seed}: {v:.4g}" for seed, v in zip(seeds, numbers))
        if claim.every_seed:
            failed = [seed for seed, v in zip(seeds, numbers) if not claim.holds(v)]
            if failed:
                wrong.append(f"{claim.quote!r}: {claim.value} should be {claim.bounds()} at every "
                             f"seed; fails at {failed} ({shown})")
        else:
            holds, share = claim.rate_holds(numbers)
            if not holds:
                wrong.append(f"{claim.quote!r}: {claim.value} is {claim.bounds()} at "
                             f"{share:.0%} of the seeds, should be {claim.rate[0]:.0%} to "
                             f"{claim.rate[1]:.0%} ({shown})")
    assert not wrong, (f"{assignment} over seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}) {setting}:"
                       f"\n  " + "\n  ".join(wrong))


def test_a_claim_needs_bounds_and_a_quote():
    with pytest.raises(ValueError):
        claims.Claim(quote="about 90%", value="x")
    with pytest.raises(ValueError):
        claims.Claim(quote="about 90%", value="x", low=1, high=0)
    assert claims.Claim(quote="q", value="x", low=0.5).holds(0.7)
    assert not claims.Claim(quote="q", value="x", low=0.5).holds(math.nan)
    with pytest.raises(ValueError):  # a rate of 0 to 1 says nothing
        claims.Claim(quote="q", value="x", low=0.5, rate=(0.0, 1.0))
    with pytest.raises(ValueError):
        claims.Claim(quote="q", value="x", low=0.5, rate=(0.7, 1.0), every_seed=True)
    assert claims.Claim(quote="q", value="x", low=0, setting="LONGER_RUN = True").optional_run
    assert not claims.Claim(quote="q", value="x", low=0, setting="SEED = 9").optional_run
    assert not claims.Claim(quote="q", value="x", low=0).optional_run
    rate = claims.Claim(quote="q", value="x", low=0.5, rate=(0.7, 1.0))
    assert rate.rate_holds([0.6] * 7 + [0.1] * 3) == (True, 0.7)
    assert rate.rate_holds([0.6] * 6 + [0.1] * 4) == (False, 0.6)


def test_the_sweep_has_ten_seeds_or_more_and_takes_others():
    assert claims.sweep_seeds("") == tuple(range(10))
    assert claims.sweep_seeds("10-19") == tuple(range(10, 20))
    assert claims.sweep_seeds("3,5-13") == (3,) + tuple(range(5, 14))
    with pytest.raises(ValueError):
        claims.sweep_seeds("5,6,7")


def test_uncovered_numbers_finds_results_and_skips_citations_and_equations():
    text = ("It reaches about 90% in 3.2 s, 17 times faster (Bahdanau et al., 2015, Table 1). "
            "In notebook 04, $d_k = 64$ and `0.5`; see section 7. Is it 40% or 0.5?\n## Going further\n12%")
    found = uncovered_numbers(text, [])
    assert [f.split(" in ")[0] for f in found] == ["'about 90'", "'3.2 s'", "'17 times'"]
    assert uncovered_numbers(text, ["reaches about 90% in 3.2 s, 17 times faster"]) == []
    assert len(uncovered_numbers(text, [], given={90.0, 3.2})) == 1
