"""Section 4: capacity, distinct submissions of the light assignments graded by the command line
with one and two jobs, the process tree's memory sampled while it runs."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .arithmetic import CapacityRow
from .measuring import MemorySampler
from .synthetic import class_notebooks, course, light_assignments


def capacity(root: str | Path, sizes: Sequence[int],
             jobs_list: Sequence[int] = (1, 2)) -> list[CapacityRow]:
    """For each size and job count: a fresh folder of ``size`` distinct submissions (the light
    assignments, interleaved) graded by ``python -m autograder grade --jobs J`` in a new process,
    its process tree's memory sampled from /proc."""
    rows: list[CapacityRow] = []
    light = light_assignments()
    for size in sizes:
        per = math.ceil(size / len(light))
        made = class_notebooks(per, True, names=light)
        by_assignment = [[m for m in made if m[1] == a] for a in light]
        mixed = [m for group in zip(*by_assignment) for m in group][:size]
        scores: dict[int, list[float]] = {}  # jobs -> the scores, in the order graded
        for jobs in jobs_list:
            folder = Path(tempfile.mkdtemp(prefix=f"capacity-{size}-{jobs}-", dir=root))
            paths: list[str] = []
            for learner, assignment, notebook in mixed:
                path = folder / learner / assignment / course().assignment(assignment).release.name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(notebook))
                paths.append(str(path))
            out = folder / "results.json"
            started = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-m", "autograder", "grade", "--jobs", str(jobs), "--json",
                 str(out), *paths], cwd=course().root, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            sampler = MemorySampler(process.pid, jobs)
            sampler.start()
            process.wait()
            seconds = time.perf_counter() - started
            sampler.stop()
            results = json.loads(out.read_text()) if out.exists() else []
            results = results if isinstance(results, list) else [results]
            scores[jobs] = [r["score"] for r in results]
            rows.append({"size": size, "jobs": jobs, "seconds": seconds,
                         "per_minute": 60 * size / seconds, "graded": len(results),
                         "worker_mib": sampler.peak_worker / 2**20,
                         "tree_mib": sampler.peak_tree / 2**20})
            shutil.rmtree(folder, ignore_errors=True)
        same = len({tuple(s) for s in scores.values()}) == 1
        for row in rows[-len(jobs_list):]:
            row["same_scores"] = same
    return rows
