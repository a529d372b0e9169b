"""The instructor's report on a graded class: grade histogram, pass rate per test, and the tests
learners fail most, each with the catalogued mistake that explains it."""
from __future__ import annotations

import collections
import functools
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..course import sanitize
from ..engine import catalogue, grade
from ..engine.assignment import Assignment, Course
from ..engine.result import Result, score_story

LOW, HIGH = "#c44e52", "#4c72b0"  # pass-rate bars: fewer than half of the class pass, or more


def write_report(results: Mapping[str, Mapping[str, Result]],
                 learners: Mapping[str, Mapping[str, object]], folder: str | Path,
                 course: Course) -> Path:
    """``results``: learner -> assignment name -> engine result, of ``course``; ``learners``
    (what each handed in) is not read. Returns the report's Markdown path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    totals = [sum(r.score for r in per.values()) for per in results.values()]
    maximum = sum(r.max_score for r in next(iter(results.values())).values())
    written = sum(r.written_max_score for r in next(iter(results.values())).values())

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist(totals, bins=min(20, max(5, len(set(totals)))), range=(0, maximum), color="#4c72b0")
    ax.set_xlabel(f"autograded score (out of {maximum:g})")
    ax.set_ylabel("learners")
    ax.set_title("Grade distribution")
    fig.tight_layout()
    fig.savefig(folder / "grade-histogram.png", dpi=120)
    plt.close(fig)

    passed: collections.Counter[tuple[str, str]] = collections.Counter()
    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    for per in results.values():
        for result in per.values():
            for test in result.tests:
                assert result.assignment is not None  # a graded notebook of the course's
                key = (result.assignment, test.name)
                seen[key] += 1
                passed[key] += test.passed
    keys = sorted(seen, key=lambda k: (k[0], k[1]))
    rates = [passed[k] / seen[k] for k in keys]
    labels = pass_rate_labels(keys)
    rows = sum(label.count("\n") + 1 for label in labels)
    fig, ax = plt.subplots(figsize=(9, 0.16 * rows + 0.1 * len(keys) + 1.2))
    low = [r < 0.5 for r in rates]
    ax.barh(range(len(keys)), rates, color=[LOW if is_low else HIGH for is_low in low],
            edgecolor="black", linewidth=0.3)
    for bar, is_low in zip(ax.patches, low):
        # the colours differ in greyscale too; None (no hatch), which matplotlib's stubs omit
        bar.set_hatch("///" if is_low else None)  # type: ignore[arg-type]
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(facecolor=LOW, hatch="///", edgecolor="black",
                             label="fewer than half pass"),
                       Patch(facecolor=HIGH, edgecolor="black", label="half or more pass")],
              loc="lower right", fontsize=7, framealpha=0.9)
    ax.set_yticks(range(len(keys)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of learners passing")
    ax.set_title("Pass rate per hidden test")
    fig.tight_layout()
    fig.savefig(folder / "pass-rates.png", dpi=120)
    plt.close(fig)

    hardest = sorted(keys, key=lambda k: (passed[k] / seen[k], k))[:3]
    median = sorted(totals)[len(totals) // 2]
    lines = ["# Class report", "", f"{len(results)} learners. Median grade: "
             f"{score_story(median, maximum, written)}." + (
                 " The written answers are graded by hand in the formgrader; no total here "
                 "counts them." if written else ""), "",
             f"![Grade distribution: a histogram of the learners' autograded scores, from 0 to "
             f"{maximum:g} points](grade-histogram.png)", "",
             "![Pass rate per hidden test: one bar per test, the fraction of learners who pass "
             "it; hatched bars are tests that fewer than half of the class pass](pass-rates.png)",
             "",
             "## The three tests learners fail most", ""]
    for assignment, name in hardest:
        explanation = explaining_mistake(course.assignment(assignment), name)
        lines.append(f"- **{assignment} / {name}**: {seen[(assignment, name)] - passed[(assignment, name)]}"
                     f" of {seen[(assignment, name)]} fail it." +
                     (f" Typical mistake: the learner would *{explanation}*." if explanation else ""))
    flagged = [(learner, result.assignment, flag) for learner, per in sorted(results.items())
               for result in per.values() for flag in result.flags]
    lines += ["", "## Flagged for review", ""]
    if flagged:
        lines.append("Code that patches modules or names the grader's agent: a reason to read the "
                     "notebook, not a penalty (the formgrader marks these submissions flagged).")
        lines.append("")
        lines += [f"- **{learner}**, {assignment}: {sanitize.code_span(flag)}"
                  for learner, assignment, flag in flagged]
    else:
        lines.append("No submission was flagged.")
    path = folder / "report.md"
    path.write_text("\n".join(lines) + "\n")
    write_html(path)
    return path


def pass_rate_labels(keys: Iterable[tuple[str, str]]) -> list[str]:
    """One label per (assignment, test name): wrapped to fit, never cut short, so two tests never
    share a label."""
    return [textwrap.fill(f"{assignment[:2]} {name}", 72, break_on_hyphens=False,
                          break_long_words=False) for assignment, name in keys]


def explaining_mistake(assignment: Assignment, test_name: str) -> str | None:
    """The catalogued mistake that explains a failure of ``test_name`` most specifically: of the
    mistakes that fail it, the one that fails the fewest other tests."""
    best: tuple[int, str] | None = None  # (how many tests it fails, its description)
    for description, failed in _mistake_failures(assignment):
        if test_name in failed and (best is None or len(failed) < best[0]):
            best = (len(failed), description)
    return best[1] if best else None


@functools.lru_cache(maxsize=None)
def _mistake_failures(assignment: Assignment) -> tuple[tuple[str, frozenset[str]], ...]:
    """(description, names of the tests it fails) for every catalogued mistake, graded once."""
    found: list[tuple[str, frozenset[str]]] = []
    for entry in catalogue.mutants(assignment):
        tests = grade.grade_local(assignment, entry.namespace()).tests
        found.append((entry.description, frozenset(t.name for t in tests if not t.passed)))
    return tuple(found)


def write_html(markdown_path: str | Path) -> Path:
    """The report as a page of its own beside ``report.md`` (``report.html``): a language, a
    title, the figures with their descriptions as alt text, nothing loaded from elsewhere."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    markdown_path = Path(markdown_path)
    body = markdown2html_mistune(markdown_path.read_text())
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>Class report</title>\n<style>body { font-family: sans-serif; max-width: 60em; "
            "margin: 2em auto; padding: 0 1em; color: #1a1a1a; } img { max-width: 100%; } "
            "a { color: #0b5394; }</style>\n</head>\n<body>\n<main>\n"
            f"{body}</main>\n</body>\n</html>\n")
    html_path = markdown_path.with_suffix(".html")
    html_path.write_text(page)
    return html_path
