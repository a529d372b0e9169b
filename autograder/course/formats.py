"""The grader's output formats for a list of results: CSV, the table the command line prints,
and the lines naming flagged notebooks. (JSON is the results themselves; Gradescope's format is
in :mod:`autograder.course.gradescope`.)

Notebook paths hold folder names learners chose: every CSV field is quoted (a carriage return or
a comma in a name stays inside its field) and every name printed to a terminal goes through
:func:`autograder.course.identity.shown`."""
from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .identity import shown
from ..engine.result import Result

if TYPE_CHECKING:
    from _csv import Writer


def csv_writer(handle: IO[str]) -> Writer:
    """The course's CSV: every field quoted, one row per line. ``handle`` is opened with
    ``newline=""``."""
    return csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")


def write_csv(results: Iterable[Result], path: str | Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv_writer(handle)
        writer.writerow(Result.CSV_HEADER)
        for result in results:
            writer.writerow(result.to_csv_row())


def table(results: Sequence[Result]) -> str:
    width = max([len(shown(r.label)) for r in results] + [8])
    lines = [f"{'notebook':<{width}}  {'assignment':<22} grade"]
    lines += [r.table_line(width, shown(r.label)) for r in results]
    flagged = flag_lines(results)
    if flagged:
        lines += ["", "Flagged for review (code that patches modules or names the grader's agent; "
                      "some checks rest on the kernel's word, see the README):", *flagged]
    return "\n".join(lines)


def flag_lines(results: Iterable[Result]) -> list[str]:
    return [f"  {shown(r.notebook)}: {flag}" for r in results for flag in r.flags]
