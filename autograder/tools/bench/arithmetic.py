"""The bench's arithmetic, from records to verdicts (unit-tested in tests/tools/test_bench.py):
stage records per submission, medians, projections for a class and a server, markdown tables and
the goals they are read against."""
from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


STAGES = ("start", "execute", "suite", "close")
STAGE_NAMES = {
    "start": "sandbox + kernel start (and the grader's agent)",
    "execute": "notebook execution (the learner's cells)",
    "suite": "hidden suite (calls into the kernel)",
    "close": "kernel shutdown",
    "other": "read, restore locked cells, cache write",
    "total": "grade_notebook in all",
}
GOALS = {"speed-up": 3.0, "latency": 1.0, "recording": 0.2, "cost": 1.0, "server": 1.5}
CLASS_SIZE = 1000

# The measurements, as the sections return them and the tables read them (JSON-like dicts of
# numbers): a stage record as a grading process writes it ({"stage", "seconds", "pid"}); one
# submission's seconds per stage; each stage's (median seconds, count); the comparison's measures
# (sections 1 and 2, :func:`autograder.tools.bench.comparison.compare`); one row of the capacity
# curve ({"size", "jobs", "seconds", "per_minute", "worker_mib", "tree_mib", ...}); and each
# assignment's latencies (section 3).
StageRecord = dict[str, Any]
Stages = dict[str, float]
Medians = dict[str, tuple[float, int]]
Comparison = dict[str, Any]
CapacityRow = dict[str, Any]
Latency = dict[str, dict[str, Any]]


def parse_sizes(text: str) -> list[int]:
    """'10,40,160' -> [10, 40, 160] (positive, in the order given)."""
    sizes = [int(part) for part in str(text).split(",") if part.strip()]
    if not sizes or any(size <= 0 for size in sizes):
        raise ValueError(f"sizes must be positive integers separated by commas, not {text!r}")
    return sizes


def per_submission(records: Iterable[StageRecord]) -> list[Stages]:
    """Stage records (dicts with stage, seconds, pid, in the order written) -> one dict per graded
    submission, stage -> seconds, with ``other`` = total minus the timed stages. A worker grades
    one submission at a time, so a pid's records up to its ``total`` are one submission's."""
    open_: dict[int | None, Stages] = {}  # pid -> the submission it is grading
    done: list[Stages] = []
    for record in records:
        current = open_.setdefault(record.get("pid"), {})
        current[record["stage"]] = current.get(record["stage"], 0.0) + record["seconds"]
        if record["stage"] == "total":
            current["other"] = max(0.0, current["total"] - sum(current.get(s, 0.0)
                                                               for s in STAGES))
            done.append(open_.pop(record.get("pid")))
    return done


def worker_shares(records: Iterable[StageRecord]) -> dict[str, float]:
    """Each assignment's share (0 to 1) of the seconds the grading workers spent on whole
    submissions (the ``total`` records): how one command's wall time over several assignments is
    divided among them."""
    seconds: dict[str, float] = {}
    for record in records:
        if record["stage"] == "total" and "assignment" in record:
            name = record["assignment"]
            seconds[name] = seconds.get(name, 0.0) + record["seconds"]
    whole = sum(seconds.values())
    return {name: value / whole for name, value in seconds.items()} if whole else {}


def stage_medians(submissions: Sequence[Stages]) -> Medians:
    """[{stage: seconds}] -> {stage: (median seconds, count)} for every stage present."""
    out: Medians = {}
    for stage in (*STAGES, "other", "total"):
        values = [s[stage] for s in submissions if stage in s]
        if values:
            out[stage] = (statistics.median(values), len(values))
    return out


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table, first column left-aligned, the others right-aligned."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *[line(row) for row in cells[1:]]])


def verdict(measured: float | None, goal: float, at_least: bool = False) -> str:
    """PASS or MISS: ``measured`` against ``goal`` (at most, or at least)."""
    if measured is None or (isinstance(measured, float) and math.isnan(measured)):
        return "n/a"
    return "PASS" if (measured >= goal if at_least else measured <= goal) else "MISS"


def projection(per_minute: float, recording_per_submission: float,
               learners: int = CLASS_SIZE) -> dict[str, float]:
    """Minutes to grade and record ``learners`` notebooks: {"grading", "recording", "total"}."""
    grading = learners / per_minute
    recording = learners * recording_per_submission / 60
    return {"grading": grading, "recording": recording, "total": grading + recording}


def class_recording(c: Comparison | None, learners: int = CLASS_SIZE) -> float | None:
    """Seconds of recording per learner in a class of ``learners`` (one assignment): one
    recording process's start, then each notebook at the cost measured after the starts. The
    replayed class has a start for every few notebooks; a class of 1000 has one. Without the
    split, the replayed average; None without a comparison."""
    if not c:
        return None
    if c.get("recording_fixed") is None:
        average: float = c["recording"] / c["count"]
        return average
    per_learner: float = (c["recording_fixed"] + learners * recording_per_notebook(c)) / learners
    return per_learner


def writer_per_learner(c: Comparison | None, learners: int = CLASS_SIZE) -> float | None:
    """Seconds of the one gradebook writer per learner in a class of ``learners``: one recording
    process's start, then each learner's rows (the writer's own seconds, measured by it in the
    replay); the building workers' share is not in it (:func:`building_per_notebook`). Without
    the writer's own measure, all of :func:`class_recording`."""
    if not c or c.get("written") is None:
        return class_recording(c, learners)
    per_learner: float = (c["recording_fixed"] + learners * c["written"] / c["count"]) / learners
    return per_learner


def building_per_notebook(c: Comparison | None) -> float:
    """CPU seconds the recording's building workers spent per notebook in the replay (work that
    is spread over the cores like grading): 0 without a measure."""
    built: float = c["built"] / c["count"] if c and c.get("built") else 0.0
    return built


def recording_per_notebook(c: Comparison) -> float:
    """Seconds of recording per notebook after the starts: the replayed class's recording less
    its recording processes' starts (``passes``: one for the whole command), shared among its
    notebooks."""
    per_notebook: float = max(0.0, c["recording"] - c["passes"] * c["recording_fixed"]) / c["count"]
    return per_notebook


def server_minutes(rows: Sequence[CapacityRow], recording: float | None, learners: int = 1000,
                   cores: int = 32, building: float = 0.0) -> dict[str, float] | None:
    """``learners`` notebooks on a ``cores``-core grading server, from the cost of one submission
    on one core (the largest class graded with --jobs 1, plus ``building``, the CPU seconds of
    building its autograded notebook) and the memory per worker, assuming one worker per core
    scales linearly (grading and building share nothing between workers); the gradebook's rows
    are one writer, ``recording`` seconds per submission, one at a time. {"grading",
    "recording", "total" (minutes), "seconds" (per submission per core), "size", "memory"
    (GiB), "worker_mib"}, or None without rows."""
    single = [r for r in rows if r["jobs"] == 1]
    if not single:
        return None
    row = max(single, key=lambda r: r["size"])
    seconds = 60 / row["per_minute"] + building
    grading = learners * seconds / cores / 60
    written = learners * (recording or 0.0) / 60
    return {"grading": grading, "recording": written, "total": max(grading, written),
            "seconds": seconds, "size": row["size"], "memory": cores * row["worker_mib"] / 1024,
            "worker_mib": row["worker_mib"]}


def server_projection(rows: Sequence[CapacityRow], recording: float | None, learners: int = 1000,
                      cores: int = 32, building: float = 0.0) -> str:
    """One line: :func:`server_minutes` in words."""
    m = server_minutes(rows, recording, learners, cores, building)
    if m is None:
        return ""
    return (f"Projection, {learners} learners on a {cores}-core grading server with --jobs "
            f"{cores}: {m['seconds']:.2f} s per submission per core (from {m['size']} "
            f"submissions with --jobs 1"
            + (f", and {building:.2f} s of building each autograded notebook" if building
               else "")
            + f") gives {m['grading']:.1f} min of grading"
            + (f"; the one gradebook writer, beside it, needs {m['recording']:.1f} min "
               f"({recording:.2f} s each, one at a time), so the class takes "
               f"{m['total']:.1f} min" if recording else "")
            + f"; about {m['memory']:.0f} GiB of memory for {cores} workers "
              f"({m['worker_mib']:.0f} MiB each).")


def read_records(path: str | Path) -> list[StageRecord]:
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
