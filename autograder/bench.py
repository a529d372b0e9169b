"""`make bench`: measurements, side by side in one run, reported as medians and ratios.

1. Grading throughput: the same synthetic class graded by stock ``nbgrader autograde`` (its own
   Execute step, visible checks only, one notebook at a time) and by this course's grader
   (sandboxed kernels, hidden suites, ``--jobs`` in parallel), alone and followed by recording the
   grades in the gradebook through ``nbgrader autograde``.
2. Each solution notebook's run time from a fresh kernel, against the 15 s budget.
3. Attention kernels (when the 09 assignment exists): the reference attention's time as a ratio of
   the two bare matrix products it needs, and blockwise against naive attention at T = 4096, time
   and peak memory.

Machines are shared and noisy: each timing is repeated and the median reported.
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from . import batch, catalogue, course, demo, grade, reference

BENCH_ASSIGNMENTS = ("00-getting-started", "02-scoring")


def synthetic_class(state, per_assignment):
    """Write ``per_assignment`` submissions of each bench assignment into state/submitted."""
    paths = []
    for assignment in [a for a in BENCH_ASSIGNMENTS if a in reference.assignments()]:
        plans = list(demo.sample_class(per_assignment).items())
        name = reference.release_notebook(assignment).name
        for learner, per in plans:
            path = state / "submitted" / learner / assignment / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(demo.answer_notebook(assignment, per[assignment])))
            paths.append(path)
    return paths


def _fresh_state(root, per_assignment):
    state = Path(tempfile.mkdtemp(prefix="state-", dir=root))
    for assignment in [a for a in BENCH_ASSIGNMENTS if a in reference.assignments()]:
        course.nbgrader("generate_assignment", assignment, "--force",
                        f"--CourseDirectory.release_directory={state / 'release'}", state=state)
    return state, synthetic_class(state, per_assignment)


def grading(per_assignment=20, jobs=2, repeats=1):
    rows = {}
    root = Path(tempfile.mkdtemp(prefix="attention-bench-"))
    try:
        assignments = [a for a in BENCH_ASSIGNMENTS if a in reference.assignments()]
        timings = {"stock nbgrader autograde": [], "this grader (sandbox + hidden suites)": [],
                   "this grader + gradebook (autograder autograde)": []}
        count = 0
        for _ in range(repeats):
            state, paths = _fresh_state(root, per_assignment)
            count = len(paths)
            started = time.perf_counter()
            for assignment in assignments:
                course.nbgrader("autograde", assignment, state=state,
                                env_extra={"ATTENTION_COURSE_STOCK_AUTOGRADE": "1"}, check=False)
            timings["stock nbgrader autograde"].append(time.perf_counter() - started)

            state, paths = _fresh_state(root, per_assignment)
            started = time.perf_counter()
            batch.grade_many(paths, None, grade.Options(), jobs=jobs, progress=False)
            timings["this grader (sandbox + hidden suites)"].append(time.perf_counter() - started)

            state, paths = _fresh_state(root, per_assignment)
            started = time.perf_counter()
            for assignment in assignments:
                course.autograde(assignment, jobs=jobs, state=state, progress=False)
            timings["this grader + gradebook (autograder autograde)"].append(
                time.perf_counter() - started)
        for name, values in timings.items():
            seconds = statistics.median(values)
            rows[name] = {"seconds": seconds, "per_minute": 60 * count / seconds}
        return count, rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


def attention_kernels(repeats=5):
    if "09-attention-at-scale" not in reference.assignments():
        return None
    import numpy as np
    ns = reference.namespace("09-attention-at-scale")
    ns3 = reference.namespace("03-qkv") if "03-qkv" in reference.assignments() else None
    rng = np.random.default_rng(0)
    results = {}
    T, d = 1024, 64
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    if ns3 is not None:
        attention = ns3["scaled_dot_product_attention"]
        bare = _median(lambda: (Q @ K.T) @ V, repeats)
        full = _median(lambda: attention(Q, K, V), repeats)
        results["reference attention / two bare matmuls (T=1024, d=64)"] = full / bare
    T = 4096
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    blockwise = ns["blockwise_attention"]
    naive = ns3["scaled_dot_product_attention"] if ns3 else None
    if naive is not None:
        t_naive = _median(lambda: naive(Q, K, V), max(1, repeats // 2))
        t_block = _median(lambda: blockwise(Q, K, V, 256), max(1, repeats // 2))
        m_naive = _peak(lambda: naive(Q, K, V))
        m_block = _peak(lambda: blockwise(Q, K, V, 256))
        results["blockwise / naive time (T=4096, block 256)"] = t_block / t_naive
        results["blockwise / naive peak memory (T=4096, block 256)"] = m_block / m_naive
        results["naive peak memory MiB"] = m_naive / 2**20
        results["blockwise peak memory MiB"] = m_block / 2**20
    return results


def notebook_times(repeats=1):
    """Seconds to run each solution notebook top to bottom from a fresh kernel (budget: 15 s)."""
    import nbformat
    from nbclient import NotebookClient
    times = {}
    for assignment in reference.assignments():
        path = reference.solution_notebook(assignment)
        runs = []
        for _ in range(repeats):
            notebook = nbformat.read(path, as_version=4)
            started = time.perf_counter()
            NotebookClient(notebook, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            runs.append(time.perf_counter() - started)
        times[assignment] = statistics.median(runs)
    return times


def _median(function, repeats):
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _peak(function):
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.bench")
    parser.add_argument("--per-assignment", type=int, default=20,
                        help="submissions per assignment (two assignments)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    count, rows = grading(args.per_assignment, args.jobs, args.repeats)
    stock = rows["stock nbgrader autograde"]["seconds"]
    print(f"\nGrading {count} submissions ({args.per_assignment} per assignment, "
          f"{args.jobs} jobs, median of {args.repeats})\n")
    print(f"| {'grader':<48} | {'seconds':>8} | {'submissions/min':>15} | {'vs stock':>8} |")
    print(f"|{'-' * 50}|{'-' * 10}|{'-' * 17}|{'-' * 10}|")
    for name, row in rows.items():
        print(f"| {name:<48} | {row['seconds']:>8.1f} | {row['per_minute']:>15.1f} | "
              f"{stock / row['seconds']:>7.2f}x |")
    print("\nSolution notebooks, top to bottom from a fresh kernel (budget 15 s each)\n")
    print(f"| {'notebook':<24} | {'seconds':>8} |")
    print(f"|{'-' * 26}|{'-' * 10}|")
    for assignment, seconds in notebook_times(args.repeats).items():
        print(f"| {assignment:<24} | {seconds:>8.1f} |")
    kernels = attention_kernels()
    if kernels:
        print("\nAttention kernels (median of repeated runs)\n")
        print(f"| {'measurement':<56} | {'value':>8} |")
        print(f"|{'-' * 58}|{'-' * 10}|")
        for name, value in kernels.items():
            print(f"| {name:<56} | {value:>8.2f} |")
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
