"""The grader's output formats for a list of results: CSV, the table the command line prints,
and the lines naming flagged notebooks. (JSON is the results themselves; Gradescope's format is
in :mod:`autograder.gradescope`.)"""
import csv
from pathlib import Path


def write_csv(results, path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["notebook", "assignment", "score", "max_score", "errors"])
        for r in results:
            writer.writerow([r["notebook"], r["assignment"], f"{r['score']:g}",
                             f"{r['max_score']:g}", " | ".join(r["errors"])])


def table(results):
    width = max([len(Path(r["notebook"]).parent.name + "/" + Path(r["notebook"]).name)
                 for r in results] + [8])
    lines = [f"{'notebook':<{width}}  {'assignment':<22} {'score':>13}"]
    for r in results:
        name = Path(r["notebook"]).parent.name + "/" + Path(r["notebook"]).name
        lines.append(f"{name:<{width}}  {str(r['assignment']):<22} "
                     f"{r['score']:>6g} / {r['max_score']:<4g}" + ("  flagged" if r.get("flags") else ""))
    flagged = flag_lines(results)
    if flagged:
        lines += ["", "Flagged for review (code that patches modules or names the grader's agent; "
                      "some checks rest on the kernel's word, see the README):", *flagged]
    return "\n".join(lines)


def flag_lines(results):
    return [f"  {r['notebook']}: {flag}" for r in results for flag in r.get("flags", [])]
