"""`make demo`: the instructor's whole loop on a sample class whose every score is known.

release (nbgrader generate_assignment + release_assignment) -> each learner fetches, answers, runs
the notebook as their lab would (the course's kernel, top to bottom) and submits through the
nbgrader exchange -> collect -> grade (in parallel, in the sandbox) ->
nbgrader autograde (records the grades) -> generate_feedback -> export; then a Gradescope
results.json per learner, an instructor report with figures, and the grade table.

The sample class mixes reference answers, correct alternatives, catalogued mistakes, blank
notebooks and a few cheating attempts, so the expected grade of every learner is known in
advance (:func:`expected_scores`), and a test checks the demo's grades equal it exactly.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import csv
import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..course import folders, identity, instructor
from ..engine import catalogue, grade, reference
from ..engine.assignment import Assignment, Course
from ..engine.result import Result, gradescope_results

if TYPE_CHECKING:
    from traitlets.config import Config

OUTPUT = "demo-output"  # in the course root
ASSIGNMENTS = ("00-getting-started", "02-scoring")
# twice the eight places of sample_class: 4 reference answers, 6 mutants, 2 alternatives, 2 blank
# notebooks and both cheats (32 learners took half as long again and showed no other kind)
CLASS_SIZE = 16

# Attempts to cheat, each written as the answer cell of the assignment's first graded function.
# Neither can work, so that function earns nothing.
CHEATS = {
    "reads the hidden suite": (
        "import glob, os\n"
        "if glob.glob('/*/*/suites/*/test_*.py') + glob.glob('/*/*/*/suites/*/test_*.py') + "
        "glob.glob('/*/*/*/*/suites/*/test_*.py'):\n"
        "    from solution import *  # never reached inside the sandbox\n"),
    "patches numpy so every comparison passes": (
        "import numpy\nnumpy.allclose = lambda *a, **k: True\n"
        "numpy.testing.assert_allclose = lambda *a, **k: None\n"),
}


# Names for the sample class, so the formgrader and the exported grades read like a real class.
FIRST_NAMES = ["Ada", "Bashir", "Chiara", "Dmitri", "Esi", "Farah", "Goran", "Hana", "Ines", "Jun",
               "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya"]
LAST_NAMES = ["Abara", "Bjork", "Castillo", "Dubois", "Eze", "Fischer", "Gupta", "Haddad"]


def learner_name(number: int) -> tuple[str, str]:
    """(first, last) name of learner ``number`` (1-based), deterministic and distinct."""
    index = number - 1
    return (FIRST_NAMES[index % len(FIRST_NAMES)],
            LAST_NAMES[(index // len(FIRST_NAMES) + index) % len(LAST_NAMES)])


class DemoStopped(RuntimeError):
    """The demo cannot go on; the message says why, in the instructor's words."""


def private_folder(path: str | Path) -> Path:
    """Make ``path`` a folder only this account (and root) can enter, and check that it is one:
    created with mode 700 (never more open, whatever the umask), a real folder (not a link),
    owned by this account. Everything under it is this account's own doing, whatever modes the
    tools working inside give their folders (nbgrader's release_assignment opens the exchange
    root to 777)."""
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise DemoStopped(f"{path} could not be made a folder only this account can enter")
    return Path(path)


def refused_sentence(state: Path, names: Iterable[str]) -> str | None:
    """None if collect took every submission of ``names``; else what the instructor reads: how
    many submissions were refused, for whom and why (the first few), and where all are listed."""
    submitted = state / "submitted"
    lines: list[str] = []
    for name in names:
        refused = identity.read_refusals(submitted, name)
        if not refused:
            continue
        students = sorted({e["student"] for e in refused})
        lines.append(f"collect refused {len(refused)} submission(s) of {name}, for "
                     f"{len(students)} learner(s) ({', '.join(map(identity.shown, students[:4]))}"
                     f"{', ...' if len(students) > 4 else ''}); none of them can be graded:")
        lines += ["  " + identity.refusal_line(e) for e in refused[:3]]
        if len(refused) > 3:
            lines.append(f"  ... and {len(refused) - 3} more, all listed in "
                         f"{identity.refusals_path(submitted, name)}")
    return "\n".join(lines) or None


@dataclasses.dataclass
class Plan:
    """What one learner hands in for one assignment."""
    kind: str                  # reference, alternative, mutant, blank or cheat
    entry: catalogue.Entry | None = None  # the catalogue entry, for alternative and mutant
    cheat: str = ""

    def describe(self) -> str:
        if self.entry is not None:
            return f"{self.kind}: {self.entry.key}"
        return self.kind + (f": {self.cheat}" if self.cheat else "")


Learners = dict[str, dict[str, Plan]]  # learner id -> assignment name -> what they hand in
Scores = dict[str, dict[str, float]]   # learner id -> assignment name -> score


def assignments(course: Course | None = None) -> list[str]:
    """The names of the demo's assignments that the course (by default: the one nbgrader's
    configuration or the current folder names) has."""
    known = {a.name for a in (course or folders.current_course()).assignments()}
    return [a for a in ASSIGNMENTS if a in known]


def sample_class(size: int = CLASS_SIZE, course: Course | None = None,
                 names: Iterable[str] | None = None) -> Learners:
    """learner id -> {assignment name: Plan}, for the demo's assignments or ``names``;
    deterministic."""
    course = course or folders.current_course()
    learners: Learners = {}
    for name in assignments(course) if names is None else names:
        assignment = course.assignment(name)
        mutants = catalogue.mutants(assignment)
        alternatives = catalogue.alternatives(assignment)
        cheats = list(CHEATS)
        for number in range(size):
            learner = f"learner{number + 1:02d}"
            slot = number % 8
            if slot in (0, 4):
                plan = Plan("reference")
            elif slot in (1, 3, 6):
                plan = Plan("mutant", mutants[(number * 7 + len(name)) % len(mutants)])
            elif slot == 2:
                plan = Plan("alternative", alternatives[number % len(alternatives)])
            elif slot == 5:
                plan = Plan("blank")
            else:
                plan = Plan("cheat", cheat=cheats[(number // 8) % len(cheats)])
            learners.setdefault(learner, {})[name] = plan
    return learners


def answer_notebook(assignment: Assignment, plan: Plan) -> dict[str, Any]:
    if plan.kind == "blank":
        released: dict[str, Any] = json.loads(assignment.release.read_text())
        return released
    if plan.kind in ("mutant", "alternative"):
        assert plan.entry is not None  # sample_class gives every mutant and alternative its entry
        return catalogue.notebook_with(plan.entry)
    if plan.kind == "cheat":
        first = grade.grade_local(assignment, reference.namespace(assignment)).tests[0].exercise
        return catalogue.filled_notebook(assignment, {first: CHEATS[plan.cheat]})
    return catalogue.filled_notebook(assignment)


def expected_scores(learners: Learners, course: Course | None = None) -> Scores:
    """learner -> assignment name -> score, from grading each plan's functions in-process."""
    course = course or folders.current_course()
    cache: dict[tuple[str, str], float] = {}  # (assignment, plan) -> its score
    expected: Scores = {}
    for learner, plans in learners.items():
        for name, plan in plans.items():
            assignment = course.assignment(name)
            key = (name, plan.describe())
            if key not in cache:
                local = grade.grade_local(assignment, reference.namespace(assignment))
                if plan.kind == "mutant":
                    assert plan.entry is not None  # sample_class gives every mutant its entry
                    cache[key] = grade.grade_local(assignment, plan.entry.namespace()).score
                elif plan.kind == "blank":
                    cache[key] = 0.0
                elif plan.kind == "cheat":
                    # the cheat takes the place of the first graded function, which it never
                    # defines: grade the reference without it
                    namespace = reference.namespace(assignment)
                    del namespace[local.tests[0].exercise]
                    cache[key] = grade.grade_local(assignment, namespace).score
                else:
                    cache[key] = local.max_score
            expected.setdefault(learner, {})[name] = cache[key]
    return expected


@contextlib.contextmanager
def lab_environment(course: Course) -> Iterator[None]:
    """The environment ``make lab`` gives a learner's kernel: the course's kernel spec
    (``learner/jupyter/kernels``, found through ``JUPYTER_PATH``) and one BLAS thread."""
    kernels = course.root / "learner" / "jupyter"
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "OPENBLAS_NUM_THREADS",
                                            "OMP_NUM_THREADS")}
    if kernels.is_dir():
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(kernels),
                                                                   saved["JUPYTER_PATH"]]))
    os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_as_in_a_lab(notebook: dict[str, Any], folder: str | Path) -> dict[str, Any]:
    """``notebook`` (a dict) run top to bottom in the learner's ``folder`` with the course's
    kernel, as *Run All* in the learner's lab runs it: an error is kept in its cell's output and
    the cells after it still run. Returns the notebook with its outputs (its figures among them,
    which the feedback shows in place of the demonstrations the grader does not run again)."""
    import nbformat
    from nbclient import NotebookClient
    executed = nbformat.reads(json.dumps(notebook), as_version=4)
    Path(folder).mkdir(parents=True, exist_ok=True)
    # the kernel's own notices (ipykernel's TCP warning) would only clutter the demo's output
    NotebookClient(executed, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute(
                       stderr=subprocess.DEVNULL)
    ran: dict[str, Any] = json.loads(nbformat.writes(executed))
    return ran


def run_answers(course: Course, learners: Learners, scratch: Path,
                jobs: int | None = None) -> dict[tuple[str, str], str]:
    """(assignment name, plan description) -> the answer notebook as its learner's lab leaves it
    after *Run All*, as JSON text: each distinct answer run once (the same code gives the same
    outputs), two at a time, in folders of ``scratch``."""
    answers: dict[tuple[str, str], tuple[str, Plan]] = {}  # (assignment, plan) -> one learner's
    for plans in learners.values():
        for name, plan in plans.items():
            answers.setdefault((name, plan.describe()), (name, plan))
    jobs = max(1, min(jobs or 2, os.cpu_count() or 1, 2))

    notebooks = [(name, answer_notebook(course.assignment(name), plan))
                 for name, plan in answers.values()]

    def run_one(item: tuple[int, tuple[str, dict[str, Any]]]) -> str:
        index, (name, notebook) = item
        return json.dumps(run_as_in_a_lab(notebook, scratch / f"{index:03d}-{name}"))

    with lab_environment(course), concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        texts = list(pool.map(run_one, enumerate(notebooks)))
    shutil.rmtree(scratch, ignore_errors=True)
    return dict(zip(answers, texts))


# ------------------------------------------------------------------ the nbgrader exchange, in-process

def _exchange_config(state: Path, course: Course) -> Config:
    from traitlets.config import Config
    settings = Config()
    settings.CourseDirectory.course_id = course.course_id
    settings.Exchange.root = str(state / "exchange")
    settings.Exchange.cache = str(state / "exchange-cache")
    return settings


def _exchange(kind: str, state: Path, course: Course, assignment: str, learner: str,
              folder: str | Path) -> None:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit
    settings = _exchange_config(state, course)
    coursedir = CourseDirectory(config=settings)
    coursedir.assignment_id = assignment
    coursedir.student_id = learner
    cls = ExchangeFetchAssignment if kind == "fetch" else ExchangeSubmit
    step = cls(coursedir=coursedir, authenticator=Authenticator(config=settings), config=settings)
    step.assignment_dir = str(folder)
    step.start()


def run(output: str | Path | None = None, size: int = CLASS_SIZE, jobs: int | None = None,
        quiet: bool = False, course: Course | None = None) -> dict[str, Any]:
    """Run the whole loop on the course (by default: the one nbgrader's configuration or the
    current folder names); return a summary dict (also written to output/summary.json)."""
    say: Callable[..., None] = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    started = time.monotonic()
    course = course or folders.current_course()
    output = Path(output or course.root / OUTPUT)
    if output.exists():
        shutil.rmtree(output)
    state = output / "course"
    # A private exchange in fact: the demo's state (the exchange, the gradebook, the feedback)
    # lies inside a folder only this account can enter, so every learner's folder in the
    # exchange is this account's own doing, whatever modes nbgrader gives the folders inside, and
    # collect counts it for the name it bears (autograder.course.identity.others_can_write).
    output.mkdir(parents=True)
    private_folder(state)
    learners = sample_class(size, course)
    expected = expected_scores(learners, course)
    names = assignments(course)

    say(f"1/6 releasing {', '.join(names)}")
    for assignment in names:
        for step in ("generate_assignment", "release_assignment"):
            instructor.nbgrader(step, assignment, "--force",
                                f"--CourseDirectory.release_directory={state / 'release'}",
                                state=state, cwd=course.root)

    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{folders.gradebook_path(state)}",
                   course_id=course.course_id) as book:
        for number, learner in enumerate(learners, start=1):
            first, last = learner_name(number)
            book.update_or_create_student(learner, first_name=first, last_name=last)

    say(f"2/6 {len(learners)} learners answer and run their notebooks as their lab would "
        f"(the course's kernel, Run All), then fetch and submit")
    answered = run_answers(course, learners, output / "lab-runs", jobs)
    for learner, plans in learners.items():
        home = output / "learners" / learner
        for name, plan in plans.items():
            release = course.assignment(name).release
            _exchange("fetch", state, course, name, learner, home)
            (home / name / release.name).write_text(answered[(name, plan.describe())])
            _exchange("submit", state, course, name, learner, home)

    say("3/6 collecting")
    for assignment in names:
        instructor.nbgrader("collect", assignment, state=state, cwd=course.root)
    refused = refused_sentence(state, names)
    if refused:
        raise DemoStopped(refused)

    say("4/6 grading in the sandbox, then recording grades with nbgrader autograde")
    instructor.autograde([course.assignment(assignment) for assignment in names], jobs=jobs,
                         state=state, progress=not quiet)

    say("5/6 feedback and export")
    for assignment in names:
        instructor.nbgrader("generate_feedback", assignment, state=state, cwd=course.root)
    grades_csv = output / "grades.csv"
    instructor.nbgrader("export", f"--to={grades_csv}", state=state, cwd=course.root)

    say("6/6 Gradescope results and the instructor report")
    results = _results(state, learners, course)
    gradescope_dir = output / "gradescope"
    gradescope_dir.mkdir()
    for learner, per_assignment in results.items():
        (gradescope_dir / f"{learner}.json").write_text(
            json.dumps(gradescope_results(list(per_assignment.values())), indent=2))
    from .report import write_report
    report = write_report(results, learners, output / "report", course)

    grades = _read_grades(grades_csv)
    flagged = {learner: [a for a, result in per.items() if result.flags]
               for learner, per in results.items()}
    maxima = {a: next(per[a].max_score for per in results.values() if a in per) for a in names}
    written = {a: course.assignment(a).written_points for a in names}
    flagged = {k: v for k, v in flagged.items() if v}
    table = grade_table(learners, grades, expected, names, maxima, written, flagged=flagged)
    summary: dict[str, Any] = {"expected": expected, "grades": grades,
                               "seconds": time.monotonic() - started, "report": str(report),
                               "flagged": flagged, "table": table}
    (output / "summary.json").write_text(json.dumps(summary, indent=2))
    say("")
    say(table)
    say(f"\ngrades: {grades_csv}\nfeedback: {state / 'feedback'}\nGradescope: {gradescope_dir}"
        f"\nreport: {report}\n({summary['seconds']:.0f} s)")
    return summary


def _results(state: Path, learners: Learners, course: Course) -> dict[str, dict[str, Result]]:
    """Each learner's engine results (the cache nbgrader's autograde read them from)."""
    results: dict[str, dict[str, Result]] = {}
    cache = folders.cache_dir(state)
    for learner, plans in learners.items():
        for name in plans:
            path = next((state / "submitted" / learner / name).glob("*.ipynb"))
            result, _ = grade.grade_notebook(path, course.assignment(name), cache_folder=cache)
            results.setdefault(learner, {})[name] = result
    return results


def _read_grades(path: str | Path) -> Scores:
    """learner -> assignment -> the autograded score, from the exported grades.csv (the written
    answers are graded by hand, later: the table says so in its header)."""
    grades: Scores = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            grades.setdefault(row["student_id"], {})[row["assignment"]] = float(
                row["autograded_score"])
    return grades


def points(value: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``."""
    return f"{value:g} point" + ("" if value == 1 else "s")


def grade_table(learners: Learners, grades: Scores, expected: Scores, names: Sequence[str],
                maxima: dict[str, float], written: dict[str, float],
                flagged: dict[str, list[str]] | None = None) -> str:
    """Autograded scores per learner and assignment, each "of" its maximum (`!` where a grade
    differs from the expected one), and what each learner submitted, with the assignments whose
    notebook was flagged for review. Above the table, the grade as the course states it
    everywhere: what the written answers add, graded by hand and still pending here.
    ``maxima`` and ``written``: assignment -> its autograded and its written points."""
    flagged = flagged or {}
    lines = ["Autograded scores; " + ("written answers pending (graded by hand): " + ", ".join(
        f"{a} {points(w)}" for a, w in written.items() if w) if any(written.values())
        else "no written answers") + "."]
    header = f"{'learner':<10} " + " ".join(f"{a:>20}" for a in names) + f" {'total':>12}  submitted"
    lines += [header, "-" * len(header)]
    for learner in sorted(learners):
        scores = [grades.get(learner, {}).get(a, 0.0) for a in names]
        marks: list[str] = []
        for a, s in zip(names, scores):
            flag = "" if abs(s - expected[learner][a]) < 1e-9 else " !"
            marks.append(f"{f'{s:g} of {maxima[a]:g}':>18}{flag:>2}")
        kinds = "; ".join(learners[learner][a].describe() for a in names)
        if flagged.get(learner):
            kinds += f"  [flagged for review: {', '.join(flagged[learner])}]"
        total = f"{sum(scores):g} of {sum(maxima.values()):g}"
        lines.append(f"{learner:<10} " + " ".join(marks) + f" {total:>12}  {kinds}")
    return "\n".join(lines)


def main(course: Course | None = None) -> int:
    try:
        summary = run(course=course)
    except DemoStopped as stopped:
        print(f"demo stopped: {stopped}", file=sys.stderr)
        return 1
    mismatched = [(l, a) for l, per in summary["expected"].items() for a, s in per.items()
                  if abs(summary["grades"].get(l, {}).get(a, -1) - s) > 1e-9]
    if mismatched:
        print(f"{len(mismatched)} grades differ from the expected ones (marked !)", file=sys.stderr)
        return 1
    return 0
