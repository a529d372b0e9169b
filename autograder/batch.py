"""Grade many notebooks: in parallel, with progress, resumable, and with every output format.

Each notebook is graded in a worker process of its own; a result is written to the state folder
atomically (a temporary file renamed into place) as soon as it is known, keyed by the notebook's
bytes and the version of its assignment's suite. Rerunning the same command after an interruption
(even ``kill -9``) grades only what is missing, and grading the same bytes again gives the same
result.
"""
import concurrent.futures
import csv
import functools
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from . import grade as engine
from . import lifetime, reference, suite


@functools.lru_cache(maxsize=None)
def suite_version(assignment):
    """Changes whenever the suite, its catalogue, the solution or the release notebook change."""
    digest = hashlib.sha256()
    files = sorted(suite.suite_path(assignment).rglob("*.py"))
    files += [reference.solution_notebook(assignment), reference.release_notebook(assignment)]
    files += sorted(Path(engine.__file__).parent.glob("*.py"))
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def grade_safely(path, assignment, options, cache=None, root=None):
    """grade_notebook, but an internal failure still yields a complete, zero score sheet."""
    try:
        result, _ = engine.grade_notebook(path, assignment, options, cache, root)
        return result
    except engine.StateFull:
        raise  # not the learner's fault and not a result: grading stops, keeping what it has
    except Exception as error:  # a bug of ours must not cost the rest of the class
        return zero_sheet(path, assignment,
                          f"the grader failed on this notebook ({type(error).__name__}: {error})")


def _worker(job):
    path, assignment, options, cache, root = job
    return grade_safely(path, assignment, options, cache, root)


class Progress:
    def __init__(self, total, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.started = time.monotonic()
        self.tty = stream.isatty()

    def step(self, label):
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


def grade_many(paths, assignment=None, options=None, jobs=None, state=None, progress=True,
               root=None):
    """Grade ``paths`` (in parallel, ``jobs`` at once); return results in the same order.

    With ``state`` (a folder), each result is kept there as soon as it is known and a rerun
    grades only what is missing or changed. With ``root``, no folder between ``root`` and a
    notebook may be a link (a class's ``submitted/`` folder).
    """
    options = options or engine.Options()
    options.confinement()  # refuse (require) or warn (auto) once, before any work
    lifetime.clear_leftovers(state)  # what an earlier, killed run left behind
    results, todo = [None] * len(paths), []
    for index, path in enumerate(paths):
        try:
            todo.append((index, (str(path), assignment or engine.detect_assignment(path),
                                 options, state and str(state), root and str(root))))
        except LookupError as error:
            results[index] = {"notebook": str(path), "assignment": None, "score": 0.0,
                              "max_score": 0.0, "exercises": {}, "tests": [], "errors": [str(error)],
                              "flags": []}
    bar = Progress(len(todo)) if progress and todo else None
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))

    def record(index, result):
        results[index] = result
        if bar:
            bar.step(Path(result["notebook"]).name)

    if jobs == 1:
        for index, job in todo:
            record(index, _worker(job))
    else:
        # Workers die with this process (however it dies), and their kernels with them.
        with concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs, initializer=lifetime.die_with_parent) as pool:
            futures = {pool.submit(_worker, job): (index, job) for index, job in todo}
            try:
                for future in concurrent.futures.as_completed(futures):
                    index, job = futures[future]
                    try:
                        result = future.result()
                    except engine.StateFull:
                        raise
                    except Exception as error:  # the worker process itself died
                        result = zero_sheet(job[0], job[1],
                                            f"the grading process died ({type(error).__name__})")
                    record(index, result)
            except engine.StateFull:
                for future in futures:
                    future.cancel()
                raise
    return results


def zero_sheet(path, assignment, reason):
    """Every test at 0: the result when grading itself failed (the learner is told to ask)."""
    return engine.zero_sheet(path, assignment, f"{reason}. Tell your instructor")


# ------------------------------------------------------------------ output formats

def write_csv(results, path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["notebook", "assignment", "score", "max_score", "errors"])
        for r in results:
            writer.writerow([r["notebook"], r["assignment"], f"{r['score']:g}",
                             f"{r['max_score']:g}", " | ".join(r["errors"])])


def table(results):
    width = max([len(Path(r["notebook"]).parent.name + "/" + Path(r["notebook"]).name)
                 for r in results] + [8])
    lines = [f"{'notebook':<{width}}  {'assignment':<22} {'score':>13}"]
    for r in results:
        name = Path(r["notebook"]).parent.name + "/" + Path(r["notebook"]).name
        lines.append(f"{name:<{width}}  {str(r['assignment']):<22} "
                     f"{r['score']:>6g} / {r['max_score']:<4g}" + ("  flagged" if r.get("flags") else ""))
    flagged = flag_lines(results)
    if flagged:
        lines += ["", "Flagged for review (code that patches modules or names the grader's agent; "
                      "some checks rest on the kernel's word, see the README):", *flagged]
    return "\n".join(lines)


def flag_lines(results):
    return [f"  {r['notebook']}: {flag}" for r in results for flag in r.get("flags", [])]


def grade_command(args):
    from .__main__ import options_from
    from .sandbox import SandboxUnavailable
    options = options_from(args)
    try:
        results = grade_many([Path(p) for p in args.notebooks], args.assignment, options,
                             args.jobs, args.state, progress=True)
    except SandboxUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except engine.StateFull as error:
        print(f"error: grading stopped: {error.strerror}. Every result already kept there is "
              f"intact; free some space and run the same command again to grade the rest.",
              file=sys.stderr)
        return 3
    payload = results[0] if len(results) == 1 else results
    if args.json == "-":
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.json:
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    if args.gradescope:
        from .gradescope import results_json
        Path(args.gradescope).write_text(
            json.dumps(results_json(results, args.visibility), indent=2) + "\n")
    if args.csv:
        write_csv(results, args.csv)
    if args.json != "-":
        print(table(results))
    return 0
