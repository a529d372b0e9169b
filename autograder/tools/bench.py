"""`make bench`: measurements, side by side in one run, reported as medians and ratios.

1. The instructor's path on a class of *distinct* submissions of every assignment of the course
   (every notebook carries a comment of its own, so no grader can grade two of them once), one
   row per assignment and the class in all: stock ``nbgrader autograde`` (its own Execute step,
   visible checks only, one notebook at a time) against this grader (sandboxed kernels, hidden
   suites, ``--jobs`` in parallel) with its recording of the grades in the gradebook (one nbgrader
   process beside the grading, fed each result as it is known). When the class holds identical
   submissions (from 5 learners per assignment on), it is graded again by this
   grader alone: what its content cache gains is its own line.
2. Per submission, the median of each stage: sandbox and kernel start, the notebook's cells, the
   hidden suite, kernel shutdown; the recording process's CPU time, its start and what it added
   after the last grade.
3. Single-submission latency: one submission graded alone (``python -m autograder grade NOTEBOOK``
   end to end, and ``grade_notebook`` in-process) against the same notebook run from a fresh
   kernel (nbclient), medians of a few repeats; beside them, the grading with every cell run
   (``--demonstrations run``): what skipping the demonstration cells gains.
4. Capacity: 10 and 40 (``--capacity``) distinct submissions of the two lightest assignments with ``--jobs 1``
   and ``--jobs 2``: submissions per minute, peak memory per worker, a projection for a class of
   1000 and for a 32-core server.
5. Goals beside the measurements, PASS or MISS.
6. Each solution notebook's run time from a fresh kernel against its budget (15 s; 20 s for 10,
   30 s for 11), and the attention kernels.

With the defaults (5 submissions per assignment, 2 latency repeats, capacity at 10 and 40), the
whole run takes about a quarter of an hour on a 2-core machine (benchmarks/README.md). Five, not
three: each assignment's row also pays one command's fixed cost (its worker pool, its recording
process's start), which three notebooks of a few seconds each do not outweigh, so that a row
measured the start more than the grading and one run to the next could turn it either way.
``--assignments``, ``--per-assignment`` and ``--only`` choose a smaller run, ``--capacity
10,40,80`` a longer curve.

Machines are shared and noisy: read the ratios of runs made minutes apart in this one process.
"""
import argparse
import copy
import dataclasses
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

from . import demo
from ..course import instructor
from ..course import folders
from ..engine import grade, reference
from ..engine.assignment import Course
from ..engine.options import Options

LIGHT_ASSIGNMENTS = ("00-getting-started", "02-scoring")  # the capacity curve's class
NOTEBOOK_BUDGET = 15.0    # seconds, from a fresh kernel on 2 cores; the heavier three have their own
NOTEBOOK_BUDGETS = {"10-learning-self-attention": 20.0, "11-transformer-block": 30.0,
                    "12-real-words": 60.0}
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
_selected: list[str] | None = None   # --assignments; None: every assignment of the course


# ------------------------------------------------------------------ the synthetic class

def course() -> Course:
    """The course measured: the one in nbgrader's course root (``make bench`` runs in it)."""
    return folders.current_course()


def assignments():
    """The names of the assignments measured: every one of the course, in its order, or those
    chosen with ``--assignments``."""
    names = [a.name for a in course().assignments()]
    return names if _selected is None else [a for a in names if a in _selected]


def light_assignments():
    """The capacity curve's assignments (:data:`LIGHT_ASSIGNMENTS`) that the course has."""
    known = {a.name for a in course().assignments()}
    return [a for a in LIGHT_ASSIGNMENTS if a in known]


def notebook_budget(name):
    return NOTEBOOK_BUDGETS.get(name, NOTEBOOK_BUDGET)


def make_distinct(notebook, tag):
    """A copy of ``notebook`` whose first answer cell starts with a comment naming ``tag``: other
    bytes, the same behaviour and score (a comment line changes neither what runs nor a cell's
    last expression)."""
    notebook = copy.deepcopy(notebook)
    line = f"# submission {tag}\n"
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and \
                cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            if isinstance(cell["source"], list):
                cell["source"] = [line, *cell["source"]]
            else:
                cell["source"] = line + cell["source"]
            return notebook
    raise ValueError("the notebook has no answer cell to vary")


def class_notebooks(size_per_assignment, distinct=True, names=None):
    """[(learner, assignment, notebook dict)]: the demo's mix of reference answers, mistakes,
    alternatives, blanks and cheats, ``size_per_assignment`` learners per assignment measured (or
    of ``names``), each submission made distinct (``distinct``) or left as the demo writes it
    (identical ones from an assignment's 5th learner on: see :func:`has_identical`)."""
    here = course()
    names = assignments() if names is None else names
    plans = demo.sample_class(size_per_assignment, here, names)
    made, out = {}, []
    for assignment in names:
        for learner, per in plans.items():
            key = (assignment, per[assignment].describe())
            if key not in made:
                made[key] = demo.answer_notebook(here.assignment(assignment), per[assignment])
            notebook = made[key]
            if distinct:
                notebook = make_distinct(notebook, f"{learner}/{assignment}")
            out.append((learner, assignment, notebook))
    return out


def synthetic_class(state, per_assignment, distinct=True):
    """Write the class into ``state/submitted/<learner>/<assignment>/``; return the paths."""
    paths = []
    for learner, assignment, notebook in class_notebooks(per_assignment, distinct):
        path = state / "submitted" / learner / assignment / course().assignment(
            assignment).release.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook))
        paths.append(path)
    return paths


def _fresh_state(root, per_assignment, distinct=True):
    state = Path(tempfile.mkdtemp(prefix="state-", dir=root))
    for assignment in assignments():
        instructor.nbgrader("generate_assignment", assignment, "--force",
                            f"--CourseDirectory.release_directory={state / 'release'}",
                            state=state, cwd=course().root)
    return state, synthetic_class(state, per_assignment, distinct)


def distinct_count(paths):
    return len({Path(p).read_bytes() for p in paths})


# ------------------------------------------------------------------ pure helpers (unit-tested)

def parse_sizes(text):
    """'10,40,160' -> [10, 40, 160] (positive, in the order given)."""
    sizes = [int(part) for part in str(text).split(",") if part.strip()]
    if not sizes or any(size <= 0 for size in sizes):
        raise ValueError(f"sizes must be positive integers separated by commas, not {text!r}")
    return sizes


def per_submission(records):
    """Stage records (dicts with stage, seconds, pid, in the order written) -> one dict per graded
    submission, stage -> seconds, with ``other`` = total minus the timed stages. A worker grades
    one submission at a time, so a pid's records up to its ``total`` are one submission's."""
    open_, done = {}, []
    for record in records:
        current = open_.setdefault(record.get("pid"), {})
        current[record["stage"]] = current.get(record["stage"], 0.0) + record["seconds"]
        if record["stage"] == "total":
            current["other"] = max(0.0, current["total"] - sum(current.get(s, 0.0)
                                                               for s in STAGES))
            done.append(open_.pop(record.get("pid")))
    return done


def stage_medians(submissions):
    """[{stage: seconds}] -> {stage: (median seconds, count)} for every stage present."""
    out = {}
    for stage in (*STAGES, "other", "total"):
        values = [s[stage] for s in submissions if stage in s]
        if values:
            out[stage] = (statistics.median(values), len(values))
    return out


def markdown_table(header, rows):
    """A markdown table, first column left-aligned, the others right-aligned."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *[line(row) for row in cells[1:]]])


def verdict(measured, goal, at_least=False):
    """PASS or MISS: ``measured`` against ``goal`` (at most, or at least)."""
    if measured is None or (isinstance(measured, float) and math.isnan(measured)):
        return "n/a"
    return "PASS" if (measured >= goal if at_least else measured <= goal) else "MISS"


def projection(per_minute, recording_per_submission, learners=CLASS_SIZE):
    """Minutes to grade and record ``learners`` notebooks: {"grading", "recording", "total"}."""
    grading = learners / per_minute
    recording = learners * recording_per_submission / 60
    return {"grading": grading, "recording": recording, "total": grading + recording}


def class_recording(c, learners=CLASS_SIZE):
    """Seconds of recording per learner in a class of ``learners`` (one assignment): one
    recording process's start, then each notebook at the cost measured after the starts. The
    replayed class has a start for every few notebooks; a class of 1000 has one. Without the
    split, the replayed average; None without a comparison."""
    if not c:
        return None
    if c.get("recording_fixed") is None:
        return c["recording"] / c["count"]
    return (c["recording_fixed"] + learners * recording_per_notebook(c)) / learners


def writer_per_learner(c, learners=CLASS_SIZE):
    """Seconds of the one gradebook writer per learner in a class of ``learners``: one recording
    process's start, then each learner's rows (the writer's own seconds, measured by it in the
    replay); the building workers' share is not in it (:func:`building_per_notebook`). Without
    the writer's own measure, all of :func:`class_recording`."""
    if not c or c.get("written") is None:
        return class_recording(c, learners)
    return (c["recording_fixed"] + learners * c["written"] / c["count"]) / learners


def building_per_notebook(c):
    """CPU seconds the recording's building workers spent per notebook in the replay (work that
    is spread over the cores like grading): 0 without a measure."""
    return c["built"] / c["count"] if c and c.get("built") else 0.0


def recording_per_notebook(c):
    """Seconds of recording per notebook after the starts: the replayed class's recording less
    one process's start for each assignment, shared among its notebooks."""
    return max(0.0, c["recording"] - c["passes"] * c["recording_fixed"]) / c["count"]


def server_minutes(rows, recording, learners=1000, cores=32, building=0.0):
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


def server_projection(rows, recording, learners=1000, cores=32, building=0.0):
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


def read_records(path):
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------ measuring helpers

def timed(folder):
    """Grading options that have every grade_notebook (in pool workers and in the recording
    process too) append its stage timings to a new file of ``folder``: ``(options, file)``."""
    path = Path(tempfile.mkstemp(prefix="stages-", suffix=".jsonl", dir=folder)[1])
    return Options(timings=str(path)), path


def recording_costs(costs):
    """A ``recorded`` hook (``instructor.autograde``, ``instructor.record``) that appends
    ``{"cpu", "waited"}`` to ``costs`` as each recording ends: its process's CPU seconds, and the
    seconds its ``finish`` took (what recording added after the last grade)."""
    def measured(recording):
        if recording.recorder is not None:
            costs.append({"cpu": recording.recorder.cpu_seconds or 0.0,
                          "waited": recording.waited, "built": recording.built,
                          "written": recording.written})
    return measured


def _process_table():
    """pid -> (ppid, rss bytes) for every process readable in /proc."""
    page = os.sysconf("SC_PAGE_SIZE")
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            table[int(entry.name)] = (int(fields[1]), int(fields[21]) * page)
        except (OSError, IndexError, ValueError):
            continue
    return table


def subtree_rss(table, root):
    """RSS of ``root`` and all its descendants in ``table`` (pid -> (ppid, rss))."""
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += table.get(pid, (0, 0))[1]
        todo.extend(children.get(pid, []))
    return total


class MemorySampler(threading.Thread):
    """Samples /proc while a grading command runs: the peak RSS of the whole process tree, and of
    the largest worker with its kernel (with one job, the command itself is the worker)."""

    def __init__(self, pid, jobs, interval=0.25):
        super().__init__(daemon=True)
        self.pid, self.jobs, self.interval = pid, jobs, interval
        self.peak_tree = self.peak_worker = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            table = _process_table()
            self.peak_tree = max(self.peak_tree, subtree_rss(table, self.pid))
            if self.jobs == 1:
                self.peak_worker = self.peak_tree
            else:
                workers = [pid for pid, (ppid, _) in table.items() if ppid == self.pid]
                self.peak_worker = max([self.peak_worker] +
                                       [subtree_rss(table, w) for w in workers])
            self.stopping.wait(self.interval)

    def stop(self):
        self.stopping.set()
        self.join()


# ------------------------------------------------------------------ 1, 2: the instructor's path

def instructor_path(root, per_assignment, jobs, distinct=True):
    """This grader on a fresh copy of the class: parallel grading with the recording beside it
    (``python -m autograder autograde``, assignment by assignment). Returns seconds, the
    recording's CPU seconds and wait, and the stages."""
    state, paths = _fresh_state(root, per_assignment, distinct)
    costs = []
    options, log = timed(root)
    each = {}
    for assignment in assignments():
        started = time.perf_counter()
        instructor.autograde(course().assignment(assignment), jobs=jobs, state=state,
                             progress=False, options=options, recorded=recording_costs(costs))
        each[assignment] = time.perf_counter() - started
    seconds = sum(each.values())
    waited = sum(cost["waited"] for cost in costs)
    return {"count": len(paths), "distinct": distinct_count(paths), "seconds": seconds,
            "beside": sum(cost["cpu"] for cost in costs), "waited": waited,
            "grading": seconds - waited, "submissions": per_submission(read_records(log)),
            "state": state, "each": each}


def recording_alone(state):
    """The recording of a graded class replayed on its own, nothing else running: every mark
    removed (so every learner's autograded folder goes too), then ``instructor.record`` for each
    assignment, which finds every grade in the cache and records it again. What recording
    costs when it is all there is to do; its wall seconds and its processes' CPU seconds."""
    costs = []
    started = time.perf_counter()
    for name in assignments():
        assignment = course().assignment(name)
        shutil.rmtree(Path(state) / "recorded" / name, ignore_errors=True)
        submitted = instructor.submissions(assignment, state)[0]
        instructor.record(assignment, [p.parent.parent.name for p in submitted], Options(), state,
                          recorded=recording_costs(costs))
    return {"seconds": time.perf_counter() - started, "cpu": sum(c["cpu"] for c in costs),
            "built": sum(c["built"] for c in costs), "written": sum(c["written"] for c in costs)}


def stock_path(root, per_assignment):
    state, paths = _fresh_state(root, per_assignment, True)
    each = {}
    for assignment in assignments():
        started = time.perf_counter()
        instructor.nbgrader("autograde", assignment, state=state,
                            env_extra={"AUTOGRADER_STOCK_AUTOGRADE": "1"}, check=False,
                            stock=True, cwd=course().root)
        each[assignment] = time.perf_counter() - started
    return {"count": len(paths), "seconds": sum(each.values()), "each": each}


def recording_start(root, repeats=3):
    """Wall seconds of a recording process that records nobody, from its start to its exit,
    ``repeats`` times for each assignment: what recording costs before its first notebook
    (imports, nbgrader's configuration), in the unit of the replayed recording it is taken
    from."""
    from ..course.recorder import Recorder
    state, _ = _fresh_state(root, 0)
    seconds = []
    for _ in range(repeats):
        for assignment in assignments():
            started = time.perf_counter()
            recorder = Recorder(assignment, cwd=course().root, env=instructor.nbgrader_env(state))
            recorder.close()
            seconds.append(time.perf_counter() - started)
    return seconds


def compare(root, per_assignment, jobs, repeats=1):
    """Stock, ours on distinct submissions, ours on the class with duplicates: medians over
    ``repeats`` runs, interleaved."""
    stock, ours, duplicates, fixed = [], [], [], []
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

    def median(runs, key):
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
        "recording_fixed": statistics.median(fixed), "passes": len(assignments()),
        "duplicates_distinct": duplicates[0]["distinct"] if duplicates else None,
        "ours_distinct": ours[0]["distinct"], "each": each, "submissions": submissions,
        "cost": cost_beyond_cells(submissions),
    }


def has_identical(size_per_assignment):
    """Whether the demo's class of this size, as the demo writes it, holds identical submissions:
    two learners of an assignment with the same plan (read from the plans, no notebook built)."""
    names = assignments()
    plans = demo.sample_class(size_per_assignment, course(), names)
    return any(len({per[name].describe() for per in plans.values()}) < len(plans)
               for name in names)


def cost_beyond_cells(submissions):
    """Median, over graded submissions, of what grading cost beyond running the notebook's own
    cells: the whole of grade_notebook minus its ``execute`` stage (None without records)."""
    values = [s["total"] - s.get("execute", 0.0) for s in submissions if "total" in s]
    return statistics.median(values) if values else None


# ------------------------------------------------------------------ 3: single-submission latency

def notebook_run(path):
    """Seconds to run ``path`` top to bottom from a fresh kernel (nbclient, kernel start included)."""
    import nbformat
    from nbclient import NotebookClient
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(Path(path).parent)}}
                   ).execute(stderr=subprocess.DEVNULL)  # the kernel's start-up warnings
    return time.perf_counter() - started


def latency(root, repeats=2):
    """assignment -> medians of: one reference submission graded by the command line (a new
    process) and by grade_notebook in-process, ``repeats`` times each; and, once each, the
    solution notebook from a fresh kernel and the in-process grading with every cell run
    (``demonstrations="run"``), side by side with the grading that skips the demonstrations."""
    out = {}
    folder = Path(tempfile.mkdtemp(prefix="latency-", dir=root))
    for name in assignments():
        assignment = course().assignment(name)
        runs = {"command": [], "in-process": []}
        stages = []
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


# ------------------------------------------------------------------ 4: capacity

def capacity(root, sizes, jobs_list=(1, 2)):
    """For each size and job count: a fresh folder of ``size`` distinct submissions (the light
    assignments, interleaved) graded by ``python -m autograder grade --jobs J`` in a new process,
    its process tree's memory sampled from /proc."""
    rows = []
    light = light_assignments()
    for size in sizes:
        per = math.ceil(size / len(light))
        made = class_notebooks(per, True, names=light)
        by_assignment = [[m for m in made if m[1] == a] for a in light]
        mixed = [m for group in zip(*by_assignment) for m in group][:size]
        scores = {}
        for jobs in jobs_list:
            folder = Path(tempfile.mkdtemp(prefix=f"capacity-{size}-{jobs}-", dir=root))
            paths = []
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


# ------------------------------------------------------------------ 6: notebooks and kernels

def font_list_gain(repeats=9):
    """Seconds a fresh sandboxed kernel takes to import numpy, pyplot and helpers.plots and draw
    one figure, with and without matplotlib's font list in its home (``KernelSession``'s
    ``seed_home``), alternating: ``{"with": median, "without": median}``."""
    from ..engine import kernel
    from ..sandbox import confinement
    fonts = kernel.matplotlib_font_list
    fonts.get()
    if fonts.thread is not None:
        fonts.thread.join(120)
    code = ("import numpy as np\nimport matplotlib.pyplot as plt\nfrom helpers import plots\n"
            "plt.figure(); plt.plot([1, 2])")
    mode = confinement.resolve_mode("auto")
    times = {"with": [], "without": []}
    for _ in range(repeats):
        for how in times:
            session = kernel.KernelSession(mode=mode, visible=course().learner_packages,
                                           seed_home=how == "with")
            session.start()
            try:
                session.install_agent()
                started = time.perf_counter()
                session.execute(code, 60)
                times[how].append(time.perf_counter() - started)
            finally:
                session.shutdown()
    return {how: statistics.median(values) for how, values in times.items()}


def attention_kernels(repeats=5):
    known = {a.name: a for a in course().assignments()}
    if "09-attention-at-scale" not in known:
        return None
    import numpy as np
    ns = reference.namespace(known["09-attention-at-scale"])
    ns3 = reference.namespace(known["03-qkv"]) if "03-qkv" in known else None
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


def notebook_times(repeats=1, skip=()):
    """Seconds to run each solution notebook (but those in ``skip``) top to bottom from a fresh
    kernel, against its budget (:func:`notebook_budget`)."""
    return {assignment.name: statistics.median(notebook_run(assignment.solution)
                                               for _ in range(repeats))
            for assignment in course().assignments() if assignment.name not in skip}


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


# ------------------------------------------------------------------ printing

def comparison_table(c):
    n = c["count"]
    rows = []
    for name, seconds in (("stock nbgrader autograde (distinct submissions)", c["stock"]),
                          ("this grader, until its last grade (recording beside it)",
                           c["grading"]),
                          ("this grader + recording (autograder autograde)", c["full"])):
        rows.append([name, f"{seconds:.1f}", f"{60 * n / seconds:.1f}",
                     f"{c['stock'] / seconds:.2f}x"])
    return markdown_table(["grader", "seconds", "submissions/min", "vs stock"], rows)


def speed_up(stock, full):
    """This grader + recording against stock: [the ratio as printed, its verdict at the goal]."""
    ratio = stock / full
    return [f"{ratio:.2f}x", verdict(ratio, GOALS["speed-up"], at_least=True)]


def assignment_table(c):
    """One row per assignment: stock against this grader + recording, and the class in all."""
    rows = [[name, m["count"], f"{m['stock']:.1f}", f"{m['full']:.1f}",
             *speed_up(m["stock"], m["full"])] for name, m in c["each"].items()]
    rows.append(["the class in all", c["count"], f"{c['stock']:.1f}", f"{c['full']:.1f}",
                 *speed_up(c["stock"], c["full"])])
    return markdown_table(["assignment", "submissions", "stock s", "this grader + recording s",
                           "ratio", f">= {GOALS['speed-up']:g}x"], rows)


def duplicates_line(c):
    if not c.get("duplicates"):
        return (f"Identical submissions: none in this class (the demo's mix first repeats itself "
                f"at an assignment's 5th learner, a second reference answer), so the content "
                f"cache is not measured.")
    gain = c["full"] / c["duplicates"]
    return (f"Identical submissions (this grader + recording, the demo's mix with duplicates: "
            f"{c['duplicates_distinct']} distinct notebooks among {c['count']}): "
            f"{c['duplicates']:.1f} s against {c['full']:.1f} s for {c['ours_distinct']} distinct "
            f"ones, {gain:.2f}x from the content cache (not counted above).")


def stage_table(c, stock_per_submission):
    medians = stage_medians(c["submissions"])
    total = medians.get("total", (float("nan"), 0))[0]
    rows = []
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
        rows.append(["  of which its start (wall, one process per assignment)",
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


def latency_table(lat):
    rows = []
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


def capacity_table(rows):
    return markdown_table(
        ["submissions", "jobs", "seconds", "submissions/min", "peak MiB per worker",
         "peak MiB all", "same scores"],
        [[r["size"], r["jobs"], f"{r['seconds']:.1f}", f"{r['per_minute']:.1f}",
          f"{r['worker_mib']:.0f}", f"{r['tree_mib']:.0f}", "yes" if r["same_scores"] else "NO"]
         for r in rows])


def goal_table(c, lat, cap):
    rows = []
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


def main(argv=None):
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
    global _selected
    _selected = [a.strip() for a in args.assignments.split(",") if a.strip()] or None
    unknown = set(_selected or ()) - {a.name for a in course().assignments()}
    if unknown:
        parser.error(f"the course has no assignment {', '.join(sorted(unknown))}")
    sections = set(args.only.split(","))
    sizes = parse_sizes(args.capacity)
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="bench-"))
    c = lat = cap = None
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


if __name__ == "__main__":
    sys.exit(main())
