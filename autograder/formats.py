"""The grader's output formats for a list of results: CSV, the table the command line prints,
and the lines naming flagged notebooks. (JSON is the results themselves; Gradescope's format is
in :mod:`autograder.gradescope`.)"""
import csv

from .result import Result


def write_csv(results, path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(Result.CSV_HEADER)
        for result in results:
            writer.writerow(result.to_csv_row())


def table(results):
    width = max([len(r.label) for r in results] + [8])
    lines = [f"{'notebook':<{width}}  {'assignment':<22} {'score':>13}"]
    lines += [r.table_line(width) for r in results]
    flagged = flag_lines(results)
    if flagged:
        lines += ["", "Flagged for review (code that patches modules or names the grader's agent; "
                      "some checks rest on the kernel's word, see the README):", *flagged]
    return "\n".join(lines)


def flag_lines(results):
    return [f"  {r.notebook}: {flag}" for r in results for flag in r.flags]
