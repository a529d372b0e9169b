"""Sections 1 and 2: the instructor's path on the class, stock ``nbgrader autograde`` against this
grader with its recording, assignment by assignment, and where a submission's time goes."""
from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from .. import demo
from ...course import instructor
from ...engine.options import Options
from .arithmetic import Comparison, Stages, per_submission, read_records, worker_shares
from .measuring import recording_costs, timed
from .synthetic import _fresh_state, assignments, course, distinct_count


def instructor_path(root: str | Path, per_assignment: int, jobs: int,
                    distinct: bool = True) -> dict[str, Any]:
    """This grader on a fresh copy of the class: parallel grading with the recording beside it,
    every assignment in one command (``python -m autograder autograde A B C``: one pool of
    workers, one recording process). Returns seconds, the recording's CPU seconds and wait, the
    stages, and each assignment's share of the command's seconds, in proportion to the seconds
    the workers spent on its submissions."""
    state, paths = _fresh_state(root, per_assignment, distinct)
    costs: list[dict[str, float]] = []
    options, log = timed(root)
    started = time.perf_counter()
    instructor.autograde([course().assignment(name) for name in assignments()], jobs=jobs,
                         state=state, progress=False, options=options,
                         recorded=recording_costs(costs))
    seconds = time.perf_counter() - started
    waited = sum(cost["waited"] for cost in costs)
    records = read_records(log)
    shares = worker_shares(records)
    return {"count": len(paths), "distinct": distinct_count(paths), "seconds": seconds,
            "beside": sum(cost["cpu"] for cost in costs), "waited": waited,
            "grading": seconds - waited, "submissions": per_submission(records),
            "state": state, "each": {name: seconds * shares.get(name, 0.0)
                                     for name in assignments()}}


def recording_alone(state: str | Path) -> dict[str, float]:
    """The recording of a graded class replayed on its own, nothing else running: every mark
    removed (so every learner's autograded folder goes too), then one recording of every
    assignment's submissions (as one ``autograde`` command records them), which finds every
    grade in the cache and records it again. What recording costs when it is all there is to
    do; its wall seconds and its processes' CPU seconds."""
    costs: list[dict[str, float]] = []
    started = time.perf_counter()
    submissions: list[tuple[str, str]] = []
    for name in assignments():
        shutil.rmtree(Path(state) / "recorded" / name, ignore_errors=True)
        submitted = instructor.submissions(course().assignment(name), state)[0]
        submissions += [(name, p.parent.parent.name) for p in submitted]
    with instructor.Recording(submissions, course(), Options(), state) as recording:
        recording.finish()
    recording_costs(costs)(recording)
    return {"seconds": time.perf_counter() - started, "cpu": sum(c["cpu"] for c in costs),
            "built": sum(c["built"] for c in costs), "written": sum(c["written"] for c in costs)}


def stock_path(root: str | Path, per_assignment: int) -> dict[str, Any]:
    """Stock ``nbgrader autograde`` on a fresh copy of the class, one command per assignment (it
    grades one assignment a command)."""
    state, paths = _fresh_state(root, per_assignment, True)
    each: dict[str, float] = {}  # assignment -> seconds
    for assignment in assignments():
        started = time.perf_counter()
        instructor.nbgrader("autograde", assignment, state=state,
                            env_extra={"AUTOGRADER_STOCK_AUTOGRADE": "1"}, check=False,
                            stock=True, cwd=course().root)
        each[assignment] = time.perf_counter() - started
    return {"count": len(paths), "seconds": sum(each.values()), "each": each}


def recording_start(root: str | Path, repeats: int = 3) -> list[float]:
    """Wall seconds of a recording process that records nobody, from its start to its exit,
    ``repeats`` times: what recording costs before its first notebook (imports, nbgrader's
    configuration), paid once by each command."""
    from ...course.recorder import Recorder
    state, _ = _fresh_state(root, 0)
    seconds: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        recorder = Recorder(cwd=course().root, env=instructor.nbgrader_env(state))
        recorder.close()
        seconds.append(time.perf_counter() - started)
    return seconds


def compare(root: str | Path, per_assignment: int, jobs: int, repeats: int = 1) -> Comparison:
    """Stock, ours on distinct submissions, ours on the class with duplicates: medians over
    ``repeats`` runs, interleaved."""
    stock: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []
    duplicates: list[dict[str, Any]] = []
    fixed: list[float] = []
    repeating = has_identical(per_assignment)
    for _ in range(repeats):
        fixed += recording_start(root)
        stock.append(stock_path(root, per_assignment))
        ours.append(instructor_path(root, per_assignment, jobs, True))
        replayed = recording_alone(ours[-1]["state"])
        ours[-1].update(recording=replayed["seconds"], built=replayed["built"],
                        written=replayed["written"])
        if repeating:
            duplicates.append(instructor_path(root, per_assignment, jobs, False))

    def median(runs: list[dict[str, Any]], key: str) -> float | None:
        return statistics.median(run[key] for run in runs) if runs else None
    each = {name: {"count": per_assignment,
                   "stock": statistics.median(run["each"][name] for run in stock),
                   "full": statistics.median(run["each"][name] for run in ours)}
            for name in assignments()}
    submissions = [s for run in ours for s in run["submissions"]]
    return {
        "count": stock[0]["count"], "repeats": repeats, "jobs": jobs,
        "stock": median(stock, "seconds"),
        "grading": median(ours, "grading"), "recording": median(ours, "recording"),
        "built": median(ours, "built"), "written": median(ours, "written"),
        "waited": median(ours, "waited"), "beside": median(ours, "beside"),
        "full": median(ours, "seconds"),
        "duplicates": median(duplicates, "seconds"),
        "recording_fixed": statistics.median(fixed), "passes": 1,
        "duplicates_distinct": duplicates[0]["distinct"] if duplicates else None,
        "ours_distinct": ours[0]["distinct"], "each": each, "submissions": submissions,
        "cost": cost_beyond_cells(submissions),
    }


def has_identical(size_per_assignment: int) -> bool:
    """Whether the demo's class of this size, as the demo writes it, holds identical submissions:
    two learners of an assignment with the same plan (read from the plans, no notebook built)."""
    names = assignments()
    plans = demo.sample_class(size_per_assignment, course(), names)
    return any(len({per[name].describe() for per in plans.values()}) < len(plans)
               for name in names)


def cost_beyond_cells(submissions: list[Stages]) -> float | None:
    """Median, over graded submissions, of what grading cost beyond running the notebook's own
    cells: the whole of grade_notebook minus its ``execute`` stage (None without records)."""
    values = [s["total"] - s.get("execute", 0.0) for s in submissions if "total" in s]
    return statistics.median(values) if values else None
