"""nbgrader integration: ``nbgrader autograde`` grades with the hidden suites.

:class:`HiddenSuiteGrading` takes the place of nbgrader's ``Execute`` step. It grades the notebook
with the course's engine (sandboxed kernel, hidden suite in this trusted process), copies the
learner's outputs back for the feedback pages, and gives each grade cell ``check_<function>`` an
output nbgrader reads as partial credit: a feedback table followed by the number of points the
hidden tests of ``<function>`` earned. A learner's stray warning on stderr can no longer zero a
correct answer, because a grade cell's outputs are written here, not by the learner's code. The
table quotes what the learner's code raised: every piece of it is escaped
(:func:`autograder.sanitize.markdown_text`), so it renders as the text it is.
"""
import json
import os
import tempfile
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat import from_dict
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,
                                    LimitOutput, NbGraderPreprocessor, SaveAutoGrades)
from traitlets import Float, Int, Unicode

import nbformat

from . import feedback_page, identity, reference, sanitize, state
from . import sandbox as confinement
from . import grade as engine
from . import notebook as nbio

CHECK_PREFIX = "check_"
FLAGS, ERRORS = "attention_course_flags", "attention_course_errors"  # autograded notebook metadata


def exercise_of(cell):
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("grade") and not meta.get("solution") and gid.startswith(CHECK_PREFIX):
        return gid[len(CHECK_PREFIX):]
    return None


def feedback_markdown(exercise, tests):
    """The markdown table of ``exercise``'s hidden tests; every text in it is escaped. When
    every test failed with the same message (a function not written yet, a notebook that did not
    run), the message is given once, for all of them."""
    name = f"`{exercise}`" if exercise.isidentifier() else sanitize.markdown_text(exercise)
    lines = [f"**Hidden tests of {name}**", "", "| test | points | what happened |",
             "|---|---|---|"]
    messages = {test.feedback for test in tests}
    if len(tests) > 1 and len(messages) == 1 and tests[0].feedback and \
            not any(test.score for test in tests):
        total = sum(test.max_score for test in tests)
        lines.append(f"| all {len(tests)} tests | 0 / {total:g} | "
                     f"{sanitize.markdown_text(tests[0].feedback)} |")
        return "\n".join(lines)
    for test in tests:
        mark = sanitize.markdown_text(test.feedback) if test.feedback else "passed"
        lines.append(f"| {sanitize.markdown_text(test.name.split(': ', 1)[-1])} | "
                     f"{test.score:g} / {test.max_score:g} | {mark} |")
    return "\n".join(lines)


def annotate(notebook, result, executed):
    """Write outputs and per-exercise scores into ``notebook`` (a dict or NotebookNode)."""
    unused = [c for c in (executed or {"cells": []})["cells"] if c["cell_type"] == "code"]
    by_exercise = {}
    for test in result.tests:
        by_exercise.setdefault(test.exercise, []).append(test)
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        exercise = exercise_of(cell)
        if exercise is not None:
            tests = by_exercise.get(exercise, [])
            score = sum(t.score for t in tests)
            points = float(cell["metadata"]["nbgrader"]["points"])
            cell["outputs"] = [
                {"output_type": "display_data", "metadata": {},
                 "data": {"text/markdown": feedback_markdown(exercise, tests),
                          "text/plain": f"hidden tests of {exercise}: {score:g} points"}},
                {"output_type": "execute_result", "metadata": {}, "execution_count": None,
                 "data": {"text/plain": repr(round(min(score, points), 6))}},
            ]
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        match = next((c for c in unused if c["source"] == source), None)
        if match is not None:
            unused.remove(match)
            cell["outputs"] = [o for o in match.get("outputs", [])]
    if result.errors:
        notebook.setdefault("metadata", {})[ERRORS] = list(result.errors)
    if result.flags:
        notebook.setdefault("metadata", {})[FLAGS] = list(result.flags)
    return notebook


class HiddenSuiteGrading(NbGraderPreprocessor):
    """Execute in the sandbox and score grade cells from the hidden suite (replaces Execute)."""

    sandbox = Unicode(os.environ.get("ATTENTION_COURSE_SANDBOX", "auto"),
                      help="auto, require or off: how learner code is confined").tag(config=True)
    cell_timeout = Float(engine.Options.cell_timeout,
                         help="seconds one cell of a notebook may run").tag(config=True)
    notebook_timeout = Float(engine.Options.notebook_timeout,
                             help="seconds all cells of a notebook may run").tag(config=True)
    call_timeout = Float(engine.Options.call_timeout,
                         help="seconds one call of a hidden test may take").tag(config=True)
    budget = Float(engine.Options.budget,
                   help="seconds for everything one notebook gets: cells, replays after crashes "
                        "and the hidden suite").tag(config=True)

    max_restarts = Int(engine.Options.max_restarts,
                       help="kernel crashes a notebook survives (replayed from its last good cell) "
                            "before grading gives up on it").tag(config=True)
    cpu_seconds = Int(confinement.Limits.cpu_seconds,
                      help="CPU seconds the learner's kernel may use in all").tag(config=True)
    memory_bytes = Int(confinement.Limits.memory_bytes,
                       help="address space of the learner's kernel, in bytes").tag(config=True)
    processes = Int(confinement.Limits.processes,
                    help="processes and threads the learner's kernel may run").tag(config=True)
    file_bytes = Int(confinement.Limits.file_bytes,
                     help="largest file the learner's kernel may write, in bytes").tag(config=True)
    scratch_bytes = Int(confinement.Limits.scratch_bytes,
                        help="everything the learner's kernel may write, in bytes (the size of "
                             "its private scratch folder)").tag(config=True)

    def options(self):
        """The grading options these settings stand for."""
        limits = confinement.Limits(cpu_seconds=self.cpu_seconds, memory_bytes=self.memory_bytes,
                                processes=self.processes, file_bytes=self.file_bytes,
                                scratch_bytes=self.scratch_bytes)
        return engine.Options(sandbox=self.sandbox, cell_timeout=self.cell_timeout,
                              notebook_timeout=self.notebook_timeout,
                              call_timeout=self.call_timeout, budget=self.budget,
                              max_restarts=self.max_restarts, limits=limits)

    def _submission_problem(self, resources):
        """Why the submitted file must not be graded (a link, a special file), or None.

        nbgrader reads submissions following links; the submitted file itself is checked here,
        without following any link between the course's submitted folder and the notebook."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        root = Path(coursedir.root) / coursedir.submitted_directory
        path = Path(coursedir.format_path(coursedir.submitted_directory, info["student"],
                                          info["assignment"])) / f"{info['notebook']}.ipynb"
        if not path.is_relative_to(root):
            return None
        try:
            nbio.read_regular(path, root=root)
        except nbio.NotebookProblem as problem:
            return str(problem)
        return None

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        name = resources["nbgrader"]["notebook"]
        for value, kind in ((resources["nbgrader"]["student"], "student id"),
                            (assignment, "assignment id")):
            problem = identity.id_problem(value, kind)
            if problem:  # nbgrader reports the learner as failed and grades the others
                raise ValueError(f"refused, not graded: {problem}")
        problem = self._submission_problem(resources)
        if problem is not None:
            # What nbgrader read through the link must not reach the feedback: show the release.
            nb.cells = nbformat.read(str(reference.release_notebook(assignment)), as_version=4).cells
            result, executed = engine.zero_sheet(f"{name}.ipynb", assignment, problem), None
        else:
            with tempfile.TemporaryDirectory(prefix="attention-autograde-") as folder:
                path = Path(folder) / f"{name}.ipynb"
                path.write_text(json.dumps(nb), encoding="utf-8")
                coursedir = CourseDirectory(config=self.config)
                result, executed = engine.grade_notebook(
                    path, assignment, self.options(),
                    cache=state.cache_dir(state.state_dir(coursedir.root)))
        for error in result.errors:
            self.log.warning("%s/%s: %s", assignment, name, error)
        for flag in result.flags:
            self.log.warning("%s/%s flagged for review: %s", assignment, name, flag)
        plain = annotate(json.loads(json.dumps(nb)), result, executed)
        for index, cell in enumerate(plain["cells"]):
            if cell["cell_type"] == "code":
                nb.cells[index].outputs = [from_dict(o) for o in cell["outputs"]]
        for key in (ERRORS, FLAGS):  # for the instructor; RecordFlags marks the gradebook too
            if key in plain.get("metadata", {}):
                nb.metadata[key] = list(plain["metadata"][key])
        return nb, resources


class RecordFlags(NbGraderPreprocessor):
    """A flagged notebook (code that patches modules or names the grader's agent) is marked with
    nbgrader's own ``flagged`` in the gradebook, which the formgrader shows beside the submission
    and in its page; the reasons stay in the autograded notebook's metadata (``FLAGS``). The
    learner's feedback does not show them: a flag is a reason for the instructor to look."""

    def preprocess(self, nb, resources):
        if nb.get("metadata", {}).get(FLAGS):
            info = resources["nbgrader"]
            with Gradebook(info["db_url"]) as book:
                submitted = book.find_submission_notebook(info["notebook"], info["assignment"],
                                                          info["student"])
                submitted.flagged = True
                book.db.commit()
        return nb, resources


def configure(c):
    """Make ``nbgrader autograde`` use the hidden suites, ``nbgrader collect`` check what it
    takes (:mod:`autograder.exchange`), ``nbgrader export`` quote its CSV and every HTML page
    nbgrader renders sanitise learner content (called from nbgrader_config.py)."""
    c.ExchangeFactory.collect = "autograder.exchange.SafeCollect"
    c.ExportApp.plugin_class = "autograder.export.QuotedCsvExport"
    sanitize.configure(c)
    feedback_page.configure(c)
    c.Autograde.autograde_preprocessors = [
        HiddenSuiteGrading, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGrades, RecordFlags, AssignLatePenalties, CheckCellMetadata]
    # nbconvert's ClearMetadataPreprocessor empties the notebook's metadata but for the kernel's
    # language: the grading's errors and flags are kept for the instructor (the README says so)
    c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {
        ("language_info", "name"), (FLAGS,), (ERRORS,)}
    c.OverwriteCells.add_missing_cells = True
    # nbconvert's own setting: validate a notebook once after all the steps of a pass, not after
    # each of them (twelve whole-notebook validations per notebook when autograding); a notebook
    # left invalid still fails the same way
    c.Exporter.optimistic_validation = True
