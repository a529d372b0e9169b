"""Printing: the bench's measurements as markdown tables, the goals beside them."""
from __future__ import annotations

from collections.abc import Sequence

from .arithmetic import (CLASS_SIZE, GOALS, STAGE_NAMES, STAGES, CapacityRow, Comparison, Latency,
                         building_per_notebook, markdown_table, recording_per_notebook,
                         server_minutes, stage_medians, verdict, writer_per_learner)


def comparison_table(c: Comparison) -> str:
    n = c["count"]
    rows: list[list[str]] = []
    for name, seconds in (("stock nbgrader autograde (distinct submissions)", c["stock"]),
                          ("this grader, until its last grade (recording beside it)",
                           c["grading"]),
                          ("this grader + recording (autograder autograde)", c["full"])):
        rows.append([name, f"{seconds:.1f}", f"{60 * n / seconds:.1f}",
                     f"{c['stock'] / seconds:.2f}x"])
    return markdown_table(["grader", "seconds", "submissions/min", "vs stock"], rows)


def speed_up(stock: float, full: float) -> list[str]:
    """This grader + recording against stock: [the ratio as printed, its verdict at the goal]."""
    ratio = stock / full
    return [f"{ratio:.2f}x", verdict(ratio, GOALS["speed-up"], at_least=True)]


def assignment_table(c: Comparison) -> str:
    """One row per assignment: stock against this grader + recording, and the class in all."""
    rows = [[name, m["count"], f"{m['stock']:.1f}", f"{m['full']:.1f}",
             *speed_up(m["stock"], m["full"])] for name, m in c["each"].items()]
    rows.append(["the class in all", c["count"], f"{c['stock']:.1f}", f"{c['full']:.1f}",
                 *speed_up(c["stock"], c["full"])])
    return markdown_table(["assignment", "submissions", "stock s", "this grader + recording s",
                           "ratio", f">= {GOALS['speed-up']:g}x"], rows)


def duplicates_line(c: Comparison) -> str:
    if not c.get("duplicates"):
        return ("Identical submissions: none in this class (the demo's mix first repeats itself "
                "at an assignment's 5th learner, a second reference answer), so the content "
                "cache is not measured.")
    gain = c["full"] / c["duplicates"]
    return (f"Identical submissions (this grader + recording, the demo's mix with duplicates: "
            f"{c['duplicates_distinct']} distinct notebooks among {c['count']}): "
            f"{c['duplicates']:.1f} s against {c['full']:.1f} s for {c['ours_distinct']} distinct "
            f"ones, {gain:.2f}x from the content cache (not counted above).")


def stage_table(c: Comparison, stock_per_submission: float) -> str:
    medians = stage_medians(c["submissions"])
    total = medians.get("total", (float("nan"), 0))[0]
    rows: list[list[object]] = []
    for stage in (*STAGES, "other", "total"):
        if stage in medians:
            seconds, count = medians[stage]
            rows.append([STAGE_NAMES[stage], f"{seconds:.2f}", f"{100 * seconds / total:.0f}%",
                         count])
    recording = c["recording"] / c["count"]
    rows.append(["recording, replayed alone (wall, per submission)", f"{recording:.2f}",
                 f"{100 * recording / total:.0f}%", c["count"]])
    if c.get("recording_fixed") is not None:
        marginal = recording_per_notebook(c)
        rows.append(["  of which its start (wall, one process per command)",
                     f"{c['recording_fixed']:.2f}", "", c["passes"]])
        rows.append(["  of which per notebook, after the start", f"{marginal:.2f}",
                     f"{100 * marginal / total:.0f}%", c["count"]])
    if c.get("written") is not None:
        written, built = c["written"] / c["count"], building_per_notebook(c)
        rows.append(["  the one writer's rows (its own seconds, per notebook)", f"{written:.2f}",
                     f"{100 * written / total:.0f}%", c["count"]])
        rows.append(["  building autograded notebooks (workers' CPU, per notebook)",
                     f"{built:.2f}", f"{100 * built / total:.0f}%", c["count"]])
    if c.get("beside") is not None:
        beside = c["beside"] / c["count"]
        rows.append(["recording beside the grading (CPU of its process, per submission)",
                     f"{beside:.2f}", f"{100 * beside / total:.0f}%", c["count"]])
    if c.get("waited") is not None:
        waited = c["waited"] / c["count"]
        rows.append(["recording after the last grade (wall, per submission)", f"{waited:.2f}",
                     f"{100 * waited / total:.0f}%", c["count"]])
    rows.append(["stock nbgrader autograde, per submission", f"{stock_per_submission:.2f}",
                 f"{100 * stock_per_submission / total:.0f}%", c["count"]])
    return markdown_table(["stage (per submission)", "median s", "of total", "n"], rows)


def latency_table(lat: Latency) -> str:
    rows: list[list[str]] = []
    for assignment, m in lat.items():
        stages = m["stages"]
        start = stages.get("start", (float("nan"), 0))[0]
        every = m.get("every cell", float("nan"))
        rows.append([assignment, f"{m['notebook']:.2f}", f"{m['command']:.2f}",
                     f"{m['in-process']:.2f}", f"{start:.2f}",
                     f"{m['command'] - m['notebook']:+.2f}",
                     f"{m['in-process'] - m['notebook']:+.2f}", f"{every:.2f}",
                     f"{every / m['in-process']:.2f}x"])
    return markdown_table(["assignment", "notebook s", "command s", "in-process s",
                           "of which start s", "X command", "X in-process",
                           "every cell run s", "skipping gains"], rows)


def capacity_table(rows: Sequence[CapacityRow]) -> str:
    return markdown_table(
        ["submissions", "jobs", "seconds", "submissions/min", "peak MiB per worker",
         "peak MiB all", "same scores"],
        [[r["size"], r["jobs"], f"{r['seconds']:.1f}", f"{r['per_minute']:.1f}",
          f"{r['worker_mib']:.0f}", f"{r['tree_mib']:.0f}", "yes" if r["same_scores"] else "NO"]
         for r in rows])


def goal_table(c: Comparison | None, lat: Latency | None, cap: list[CapacityRow] | None) -> str:
    rows: list[list[str]] = []
    if c:
        compared = [(name, m["stock"], m["full"]) for name, m in c.get("each", {}).items()]
        for name, stock, full in compared + [("the class in all", c["stock"], c["full"])]:
            ratio, met = speed_up(stock, full)
            rows.append([f"instructor path (grade + recording) vs stock, {name}", ratio,
                         f">= {GOALS['speed-up']:g}x", met])
        if c.get("cost") is not None:
            rows.append(["median grading cost per submission beyond the notebook's own cells",
                         f"{c['cost']:.2f} s", f"<= {GOALS['cost']:g} s",
                         verdict(c["cost"], GOALS["cost"])])
        recording = c["recording"] / c["count"]
        rows.append(["recording cost per submission (replayed alone, wall)",
                     f"{recording:.2f} s",
                     f"<= {GOALS['recording']} s", verdict(recording, GOALS["recording"])])
    for assignment, m in (lat or {}).items():
        for how in ("command", "in-process"):
            x = m[how] - m["notebook"]
            rows.append([f"latency {assignment} ({how}) = notebook {m['notebook']:.2f} s + X",
                         f"X = {x:+.2f} s", f"X <= {GOALS['latency']} s",
                         verdict(x, GOALS["latency"])])
    server = server_minutes(cap or [], writer_per_learner(c), building=building_per_notebook(c))
    if server is not None:
        rows.append([f"{CLASS_SIZE} learners on a 32-core server, recording included",
                     f"{server['total']:.1f} min", f"<= {GOALS['server']:g} min",
                     verdict(server["total"], GOALS["server"]) if c else "n/a"])
    if cap:
        worst = max(r["worker_mib"] for r in cap)
        rows.append(["peak memory per worker (grader + its kernel, RSS)", f"{worst:.0f} MiB",
                     "none set (reported)", "-"])
    return markdown_table(["goal", "measured", "goal", "verdict"], rows)
