"""``python -m autograder.tools.bench``: the sections chosen, run in one process and printed."""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .arithmetic import (CLASS_SIZE, CapacityRow, Comparison, Latency, building_per_notebook,
                         class_recording, markdown_table, parse_sizes, projection,
                         server_projection, verdict, writer_per_learner)
from .capacity_curve import capacity
from .comparison import compare
from .one_submission import latency
from .notebooks import attention_kernels, font_list_gain, notebook_times
from .synthetic import assignments, course, notebook_budget, select, selected
from .tables import (assignment_table, capacity_table, comparison_table, duplicates_line,
                     goal_table, latency_table, stage_table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.tools.bench")
    parser.add_argument("--assignments", default="",
                        help="assignments to compare and time, separated by commas (default: "
                             "every assignment of the course)")
    parser.add_argument("--per-assignment", type=int, default=5,
                        help="distinct submissions per assignment in the comparison (default "
                             "%(default)s: a class of 65 over the thirteen assignments)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each whole-class comparison (default %(default)s)")
    parser.add_argument("--latency-repeats", type=int, default=2,
                        help="gradings of each reference submission alone, by the command line "
                             "and in-process (default %(default)s)")
    parser.add_argument("--capacity", default="10,40",
                        help="class sizes for the capacity curve, e.g. 10,40,160 "
                             "(default %(default)s)")
    parser.add_argument("--only", default="compare,latency,capacity,fonts,notebooks,kernels",
                        help="sections to run (default: all)")
    args = parser.parse_args(argv)
    select([a.strip() for a in args.assignments.split(",") if a.strip()] or None)
    unknown = set(selected() or ()) - {a.name for a in course().assignments()}
    if unknown:
        parser.error(f"the course has no assignment {', '.join(sorted(unknown))}")
    sections = set(args.only.split(","))
    sizes = parse_sizes(args.capacity)
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="bench-"))
    c: Comparison | None = None
    lat: Latency | None = None
    cap: list[CapacityRow] | None = None
    try:
        if "compare" in sections:
            c = compare(root, args.per_assignment, args.jobs, args.repeats)
            stock_per = c["stock"] / c["count"]
            print(f"\nThe instructor's path: {c['count']} distinct submissions "
                  f"({args.per_assignment} per assignment of {', '.join(assignments())}), "
                  f"{c['jobs']} jobs, median of {c['repeats']} run(s) of the whole class\n")
            print(comparison_table(c))
            print(f"\nPer assignment ({args.per_assignment} distinct submissions each: the "
                  f"demo's mix of reference answers, catalogue mistakes and alternatives)\n")
            print(assignment_table(c))
            print("\n" + duplicates_line(c))
            print(f"\nWhere a submission's time goes (medians over the {len(c['submissions'])} "
                  f"submissions graded above, {c['jobs']} at once)\n")
            print(stage_table(c, stock_per))
        if "latency" in sections:
            lat = latency(root, args.latency_repeats)
            print(f"\nOne submission alone (a reference answer), median of "
                  f"{args.latency_repeats}: latency = notebook time + X. The notebook (nbclient) "
                  f"and the in-process grading with every cell run (--demonstrations run) once "
                  f"each; skipping gains = every cell run / in-process\n")
            print(latency_table(lat))
        if "capacity" in sections:
            cap = capacity(root, sizes)
            print(f"\nCapacity: distinct submissions, sizes {','.join(map(str, sizes))} "
                  f"(--capacity), `python -m autograder grade --jobs J` in a new process, one "
                  f"run each\n")
            print(capacity_table(cap))
            best = [r for r in cap if r["jobs"] == 2 and r["size"] == max(sizes)] or \
                [r for r in cap if r["size"] == max(sizes)]
            rate = best[0]["per_minute"]
            recording = class_recording(c) or 0.0
            p = projection(rate, recording)
            print(f"\nProjection, a class of {CLASS_SIZE} learners (one notebook each) on this "
                  f"machine with --jobs {best[0]['jobs']}: grading {p['grading']:.0f} min (at "
                  f"{rate:.1f}/min, from {best[0]['size']} submissions)"
                  + (f" + recording {p['recording']:.0f} min ({recording:.2f} s each: one "
                     f"recording process's start, then each notebook's cost after the starts "
                     f"measured above; on the same cores) = {p['total']:.0f} min" if c else "")
                  + ".")
            print(server_projection(cap, writer_per_learner(c) or 0.0,
                                    building=building_per_notebook(c)))
        print("\nGoals\n")
        print(goal_table(c, lat, cap))
        if "notebooks" in sections:
            measured = {a: m["notebook"] for a, m in (lat or {}).items()}
            times = {**notebook_times(skip=set(measured)), **measured}
            print("\nSolution notebooks, top to bottom from a fresh kernel (nbclient; the "
                  "latency runs' median where they ran)\n")
            print(markdown_table(
                ["notebook", "seconds", "budget s", "verdict"],
                [[a.name, f"{times[a.name]:.1f}", f"{notebook_budget(a.name):g}",
                  verdict(times[a.name], notebook_budget(a.name))]
                 for a in course().assignments() if a.name in times]))
        if "fonts" in sections:
            gain = font_list_gain()
            print("\nA fresh kernel's first figure (import numpy, pyplot, helpers.plots; draw), "
                  "median of 9, alternating\n")
            print(markdown_table(
                ["kernel home", "seconds"],
                [["with matplotlib's font list (as graded)", f"{gain['with']:.2f}"],
                 ["empty (matplotlib builds the list)", f"{gain['without']:.2f}"]]))
        if "kernels" in sections:
            kernels = attention_kernels()
            if kernels:
                print("\nAttention kernels (median of repeated runs)\n")
                print(markdown_table(["measurement", "value"],
                                     [[name, f"{value:.2f}"] for name, value in kernels.items()]))
        print(f"\n(bench ran {time.perf_counter() - started:.0f} s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0
