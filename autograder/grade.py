"""Grade one submitted notebook: read it, restore it, run it confined, run the hidden suite.

The steps, each with one job: :func:`notebook.load` (read untrusted JSON), :func:`notebook.restore_locked`
(put back locked cells), :class:`Execution` (run every cell in a sandboxed kernel, keep it alive
for calls, replay after a crash), :func:`suite.run` (score each hidden test). Whatever fails, the
result is a complete score sheet: every test listed, 0 where it could not pass, and a line why.
"""
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import notebook as nbio
from . import reference, suite, wire
from . import sandbox as confinement
from .kernel import CallFailed, KernelSession


@dataclasses.dataclass
class Options:
    sandbox: str = "auto"           # "auto", "require" or "off"
    cell_timeout: float = 60.0      # one cell of the learner's notebook
    notebook_timeout: float = 300.0  # all cells together
    call_timeout: float = 20.0      # one call from the hidden suite
    suite_budget: float = 300.0     # the whole hidden suite
    max_restarts: int = 3           # kernel crashes survived before giving up
    limits: confinement.Limits = dataclasses.field(default_factory=confinement.Limits)
    hidden: tuple = ()              # more folders to hide from learner code

    def sandboxed(self):
        return confinement.resolve_mode(self.sandbox)


class Execution:
    """The learner's notebook running in a kernel, kept callable for the hidden suite."""

    def __init__(self, notebook, options, scratch):
        self.notebook = notebook
        self.options = options
        self.scratch = scratch
        self.session = KernelSession(scratch, sandboxed=options.sandboxed(),
                                     limits=options.limits, hidden=options.hidden)
        self.good_cells = []   # sources that ran cleanly, replayed after a crash
        self.errors = []
        self.gave_up = ""

    def run_all(self):
        self.session.start()
        deadline = time.monotonic() + self.options.notebook_timeout
        for number, cell in enumerate(self.notebook["cells"], start=1):
            if cell["cell_type"] != "code" or not cell["source"].strip():
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.errors.append(f"the notebook ran longer than {self.options.notebook_timeout:g} s"
                                   f" in all; cells from cell {number} on were not run")
                break
            result = self.session.execute(cell["source"], min(self.options.cell_timeout, remaining))
            cell["outputs"] = result.outputs
            if result.error:
                self.errors.append(f"cell {number}: {result.error}")
            else:
                self.good_cells.append(cell["source"])
            if result.died and not self._revive():
                break
        self._bootstrap()

    def _revive(self):
        if self.session.restarts >= self.options.max_restarts:
            self.gave_up = (f"the kernel crashed {self.session.restarts + 1} times; "
                            f"grading stopped calling your functions")
            self.errors.append(self.gave_up)
            return False
        try:
            self.session.restart()
        except CallFailed as error:
            self.gave_up = str(error)
            self.errors.append(self.gave_up)
            return False
        for source in self.good_cells:
            self.session.execute(source, self.options.cell_timeout)
        return True

    def _bootstrap(self):
        if self.session.alive():
            self.session.execute(wire.kernel_bootstrap(), 30)

    def call(self, name, args, kwargs):
        if self.gave_up:
            return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
        if not self.session.alive():
            if not self._revive():
                return unavailable(f"Your kernel could not be kept running ({self.gave_up}).")
            self._bootstrap()
        try:
            return self.session.call(wire.request(name, args, kwargs), self.options.call_timeout)
        finally:
            if not self.session.alive():  # this call killed it: revive for the next test
                if self._revive():
                    self._bootstrap()

    def close(self):
        self.session.shutdown()


def unavailable(reason):
    return {"ok": False, "error": {"kind": "unavailable", "message": reason}}


def detect_assignment(path, notebook=None):
    known = reference.assignments()
    path = Path(path)
    if path.parent.name in known:
        return path.parent.name
    for assignment in known:
        if reference.solution_notebook(assignment).name == path.name:
            return assignment
    raise LookupError(f"cannot tell which assignment {path} belongs to; pass --assignment "
                      f"(one of {', '.join(known)})")


def grade_notebook(path, assignment=None, options=None, cache=None):
    """Grade ``path``; return ``(result, executed_notebook)``. Never raises for a bad submission.

    With ``cache`` (a folder), a notebook whose graded content (cells after restoring the locked
    ones) and suite version were graded before is not graded again; results are written there
    atomically as soon as they are known, so an interrupted class resumes where it stopped.
    """
    options = options or Options()
    path = Path(path)
    assignment = assignment or detect_assignment(path)
    errors, executed, problem = [], None, None
    try:
        submitted = nbio.load(path)
        released = nbio.load(reference.release_notebook(assignment))
        executed, notes = nbio.restore_locked(submitted, released)
        errors += notes
        key = content_key(assignment, executed)
    except nbio.NotebookProblem as error:
        problem = error
        key = content_key(assignment, path.read_bytes() if path.is_file() else b"")
    entry = Path(cache) / f"{key}.json" if cache else None
    if entry is not None and entry.exists():
        try:
            stored = json.loads(entry.read_text())
            stored["result"]["notebook"] = str(path)
            return stored["result"], stored["executed"]
        except (OSError, ValueError, KeyError):
            pass  # a damaged entry is graded again
    scratch = Path(tempfile.mkdtemp(prefix="attention-grade-"))
    execution = None
    try:
        if problem is not None:
            errors.append(f"{problem}")
            caller = lambda *a: unavailable(f"Your notebook could not be graded: {problem}.")
        else:
            try:
                shutil.copyfile(path, scratch / path.name)
                execution = Execution(executed, options, scratch)
                execution.run_all()
                errors += execution.errors
                caller = execution.call
            except CallFailed as failure:
                errors.append(f"{failure}")
                caller = lambda *a: unavailable(f"Your notebook could not be run: {failure}.")
        results = suite.run(assignment, caller, options.suite_budget)
    finally:
        if execution is not None:
            execution.close()
        shutil.rmtree(scratch, ignore_errors=True)
    result = summarize(str(path), assignment, results, errors)
    if entry is not None:
        entry.parent.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_name(f".{entry.name}.{os.getpid()}")
        temporary.write_text(json.dumps({"result": result, "executed": executed}))
        os.replace(temporary, entry)
    return result, executed


def content_key(assignment, content):
    """Identifies what grading depends on: the graded cells (or raw bytes) and the suite version."""
    from .batch import suite_version
    digest = hashlib.sha256(assignment.encode() + suite_version(assignment).encode())
    if isinstance(content, bytes):
        digest.update(b"raw:" + content)
    else:
        digest.update(json.dumps([[c["cell_type"], c["source"]] for c in content["cells"]]).encode())
    return digest.hexdigest()[:32]


def summarize(path, assignment, results, errors):
    exercises = {}
    for test in results:
        entry = exercises.setdefault(test.exercise, {"score": 0.0, "max_score": 0.0})
        entry["score"] += test.score
        entry["max_score"] += test.max_score
    return {
        "notebook": path, "assignment": assignment,
        "score": round(sum(t.score for t in results), 6),
        "max_score": round(sum(t.max_score for t in results), 6),
        "exercises": exercises,
        "tests": [t.as_dict() for t in results],
        "errors": errors,
    }


def grade_local(assignment, namespace, budget_seconds=120):
    """Score a trusted namespace of functions in this process (used to test the suites)."""
    results = suite.run(assignment, suite.local_caller(namespace), budget_seconds)
    return summarize("<local>", assignment, results, [])
