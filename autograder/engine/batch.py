"""Grade many notebooks: in parallel, with progress, resumable.

Each notebook is graded in a worker process of its own; a result is written to the state folder
atomically (a temporary file renamed into place) as soon as it is known, keyed by the notebook's
graded content, the settings and its assignment's version (:mod:`autograder.engine.cache`).
Rerunning the same command after an interruption (even ``kill -9``) grades only what is missing,
and grading the same bytes again gives the same result.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence, TextIO

from . import cache, grade
from .assignment import Assignment, Course
from .options import Options
from .result import Result
from ..sandbox import confinement, lifetime

Job = tuple[str, Assignment, Options, str | None, str | None]


class HostFaults(Exception):
    """Some notebooks could not be graded through no fault of their own (:class:`grade.HostFault`:
    their kernel could not be started). ``faults`` lists ``(notebook, cause)``; ``results`` holds
    the results of every other notebook, which were graded and kept as usual."""

    def __init__(self, faults: list[tuple[str, str]], results: list[Result]) -> None:
        super().__init__(f"{len(faults)} notebook(s) could not be graded on this machine")
        self.faults, self.results = faults, results

    def lines(self) -> list[str]:
        """What the instructor reads: each notebook not graded, and why."""
        return [f"  {notebook}: {cause}" for notebook, cause in self.faults]


def _shared_before_forking(todo: Sequence[tuple[int, Job]]) -> None:
    """Compute here, once, what every worker computes first for each assignment it grades: the
    assignment's version (the grading code's closure, the kernel's, the suite's files:
    :func:`cache.version`). Workers forked after it inherit it, instead of each computing it
    again (about 0.2 s for the first assignment, 0.02 s for each other). A version that cannot
    be computed here is left to the worker, which meets the same error where grading handles it."""
    for assignment in {id(job[1]): job[1] for _, job in todo}.values():
        try:
            cache.version(assignment)
        except Exception:  # (the worker computes it again, and reports what fails)
            pass


def _worker(job: Job) -> Result:
    path, assignment, options, state, root = job
    return grade.grade_safely(path, assignment, options, state, root)


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.started = time.monotonic()
        self.tty = stream.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.started
        line = (f"grading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{elapsed:5.1f}s  {label}")
        if self.tty:
            self.stream.write("\r" + line[:120].ljust(120))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def grade_many(paths: Sequence[str | Path],
               assignment: Assignment | Course | Sequence[Assignment],
               options: Options | None = None, jobs: int | None = None,
               state: str | Path | None = None, progress: bool = True,
               root: str | Path | None = None,
               on_result: Callable[[str | Path, Result], None] | None = None) -> list[Result]:
    """Grade ``paths`` (in parallel, ``jobs`` at once); return results in the same order.

    ``assignment`` is the assignment every notebook belongs to, or the course, in which each
    notebook's assignment is found from its folder or name (:meth:`Course.detect`; a notebook of
    no assignment gets a result saying so), or each notebook's own assignment, in the order of
    ``paths``. However many assignments, the notebooks share one pool of workers. With ``state``
    (a folder), each result is kept there as soon as it is known and a rerun grades only what is
    missing or changed. With ``root``, no folder between ``root`` and a notebook may be a link (a
    class's ``submitted/`` folder).
    ``on_result(path, result)`` is called as each result is known (and kept), in this process.

    A notebook whose kernel could not be started (:class:`grade.HostFault`) gets no result, kept
    or returned: once every other notebook is graded, :class:`HostFaults` is raised, naming each
    with its cause and carrying the other results.
    """
    options = options or Options()
    mode = options.confinement()  # refuse (require) or warn (auto) once, before any work
    if progress:  # which mechanism holds each kernel's total memory and processes here
        print(confinement.limits_statement(mode, options.limits), file=sys.stderr)
    lifetime.clear_leftovers(state)  # what an earlier, killed run left behind
    results: list[Result | None] = [None] * len(paths)
    todo: list[tuple[int, Job]] = []
    if not isinstance(assignment, (Assignment, Course)) and len(assignment) != len(paths):
        raise ValueError(f"{len(paths)} notebooks but {len(assignment)} assignments")
    for index, path in enumerate(paths):
        try:
            if isinstance(assignment, Assignment):
                found = assignment
            elif isinstance(assignment, Course):
                found = assignment.detect(path)
            else:
                found = assignment[index]
        except LookupError as error:
            results[index] = Result(str(path), None, [], [str(error)])
            continue
        todo.append((index, (str(path), found, options, str(state) if state else None,
                             str(root) if root else None)))
    bar = Progress(len(todo)) if progress and todo else None
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))

    faults: list[tuple[str, str]] = []

    def fault(job: Job, error: grade.HostFault) -> None:
        faults.append((job[0], str(error)))
        if bar:
            bar.step(f"{Path(job[0]).name}: not graded (see below)")

    def record(index: int, result: Result) -> None:
        results[index] = result
        if on_result is not None:
            on_result(paths[index], result)
        if bar:
            bar.step(Path(result.notebook).name)

    if jobs == 1:
        for index, job in todo:
            try:
                record(index, _worker(job))
            except grade.HostFault as error:
                fault(job, error)
    else:
        if multiprocessing.get_start_method() == "fork":
            _shared_before_forking(todo)
        # Workers die with this process (however it dies), and their kernels with them.
        with concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs, initializer=lifetime.die_with_parent,
                initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(_worker, job): (index, job) for index, job in todo}
            try:
                for future in concurrent.futures.as_completed(futures):
                    index, job = futures[future]
                    try:
                        result = future.result()
                    except cache.StateFull:
                        raise
                    except grade.HostFault as error:
                        fault(job, error)
                        continue
                    except Exception as error:  # the worker process itself died
                        result = grade.failure_sheet(
                            job[0], job[1], f"the grading process died ({type(error).__name__})")
                    record(index, result)
            except cache.StateFull:
                for future in futures:
                    future.cancel()
                raise
    graded = [result for result in results if result is not None]
    if faults:
        raise HostFaults(faults, graded)
    return graded
