"""Section 3: one submission graded alone, by the command line and in-process, against the same
notebook run from a fresh kernel; and what skipping the demonstration cells gains."""
from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import demo
from ...engine import grade
from .arithmetic import Latency, Stages, per_submission, read_records, stage_medians
from .measuring import notebook_run, timed
from .synthetic import assignments, course, make_distinct


def latency(root: str | Path, repeats: int = 2) -> Latency:
    """assignment -> medians of: one reference submission graded by the command line (a new
    process) and by grade_notebook in-process, ``repeats`` times each; and, once each, the
    solution notebook from a fresh kernel and the in-process grading with every cell run
    (``demonstrations="run"``), side by side with the grading that skips the demonstrations."""
    out: Latency = {}
    folder = Path(tempfile.mkdtemp(prefix="latency-", dir=root))
    for name in assignments():
        assignment = course().assignment(name)
        runs: dict[str, list[float]] = {"command": [], "in-process": []}
        stages: list[Stages] = []
        for repeat in range(repeats):
            notebook = make_distinct(demo.answer_notebook(assignment, demo.Plan("reference")),
                                     f"latency-{repeat}")
            path = folder / str(repeat) / name / assignment.release.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(notebook))
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "autograder", "grade", str(path),
                            "--json", str(path.with_suffix(".json"))], cwd=assignment.course.root,
                           check=True, capture_output=True)
            runs["command"].append(time.perf_counter() - started)
            options, log = timed(folder)
            started = time.perf_counter()
            grade.grade_notebook(path, assignment, options)
            runs["in-process"].append(time.perf_counter() - started)
            stages += per_submission(read_records(log))
        out[name] = {how: statistics.median(values) for how, values in runs.items()}
        out[name]["notebook"] = notebook_run(assignment.solution)
        started = time.perf_counter()
        grade.grade_notebook(path, assignment, dataclasses.replace(options, timings="",
                                                                   demonstrations="run"))
        out[name]["every cell"] = time.perf_counter() - started
        out[name]["stages"] = stage_medians(stages)
    return out
