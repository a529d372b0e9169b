"""nbgrader integration: ``nbgrader autograde`` grades with the hidden suites.

:class:`HiddenSuiteGrading` takes the place of nbgrader's ``Execute`` step. It grades the notebook
with the engine (sandboxed kernel, hidden suite in this trusted process), copies the learner's
outputs back for the feedback pages, and gives each grade cell ``check_<function>`` an output
nbgrader reads as partial credit: a feedback table followed by the number of points the hidden
tests of ``<function>`` earned. A learner's stray warning on stderr can no longer zero a correct
answer, because a grade cell's outputs are written here, not by the learner's code. The table
quotes what the learner's code raised: every piece of it is escaped
(:func:`autograder.course.sanitize.markdown_text`), so it renders as the text it is.

nbgrader's ``Autograde`` never parses a learner's file itself: :class:`SubmissionExporter` has
the grader's bounded reader make a normalised copy of it, and nbgrader reads that.

The course is the one in nbgrader's own course root (``CourseDirectory.root``, with its source
and release folders), wherever the engine is installed. Its settings are the grading
:class:`~autograder.engine.options.Options`, one traitlet each, generated from their one
definition (``c.HiddenSuiteGrading.cell_timeout = 30`` in ``nbgrader_config.py``).
"""
from __future__ import annotations

import collections
import datetime
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat import from_dict
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Enum, Float, Int, TraitType, Unicode
from traitlets.utils.importstring import import_item

from . import folders, identity, sanitize
from .config import AUTOGRADE_STEP_NAMES, ERRORS, FLAGS, plugin_settings
from ..engine import grade, notebook, options
from ..engine.assignment import Course
from ..engine.result import Result, TestResult
from ..sandbox import lifetime

SANDBOX_VARIABLE = "SANDBOX"  # $AUTOGRADER_SANDBOX: the sandbox setting's default, for the tests


def feedback_markdown(exercise: str, tests: list[TestResult]) -> str:
    """The markdown table of ``exercise``'s hidden tests; every text in it is escaped, but for
    the names it quotes (`attend`), shown as code (:func:`sanitize.markdown_text_with_names`).
    When every test fared alike with the same message (a function not written yet, a notebook
    that did not run, a function that kept its points although the one it calls is wrong), the
    message is given once, for all of them; a message several rows share is given once, as a
    numbered note under the table, which those rows point to."""
    text = sanitize.markdown_text_with_names
    name = f"`{exercise}`" if exercise.isidentifier() else sanitize.markdown_text(exercise)
    lines = [f"**Hidden tests of {name}**", "", "| test | points | what happened |",
             "|---|---|---|"]
    messages = {test.feedback for test in tests}
    if len(tests) > 1 and len(messages) == 1 and tests[0].feedback and \
            len({test.passed for test in tests}) == 1:
        total = sum(test.max_score for test in tests)
        scored = sum(test.score for test in tests)
        lines.append(f"| all {len(tests)} tests | {scored:g} / {total:g} | "
                     f"{text(tests[0].feedback)} |")
        return "\n".join(lines)
    counts = collections.Counter(test.feedback for test in tests if test.feedback)
    notes = [m for m in dict.fromkeys(test.feedback for test in tests) if counts.get(m, 0) > 1]
    for test in tests:
        if test.feedback in notes:
            number = notes.index(test.feedback) + 1
            mark = ("passed; " if test.passed else "") + f"see note {number} below"
        else:
            mark = text(test.feedback) if test.feedback else "passed"
        lines.append(f"| {sanitize.markdown_text(test.name.split(': ', 1)[-1])} | "
                     f"{test.score:g} / {test.max_score:g} | {mark} |")
    if notes:
        lines += [""] + [f"{number}. {text(note)}" for number, note in enumerate(notes, 1)]
    return "\n".join(lines)


def annotate(submitted: dict[str, Any], result: Result,
             executed: dict[str, Any] | None) -> dict[str, Any]:
    """Write outputs and per-exercise scores into ``submitted`` (a notebook as a dict)."""
    unused = [c for c in (executed or {"cells": []})["cells"] if c["cell_type"] == "code"]
    by_exercise: dict[str, list[TestResult]] = {}
    for test in result.tests:
        by_exercise.setdefault(test.exercise, []).append(test)
    for cell in submitted["cells"]:
        if cell["cell_type"] != "code":
            continue
        exercise = notebook.check_exercise(cell)
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
        source = notebook.source(cell)
        match = next((c for c in unused if c["source"] == source), None)
        if match is not None:
            unused.remove(match)
            cell["outputs"] = [o for o in match.get("outputs", [])]
    if result.errors:
        submitted.setdefault("metadata", {})[ERRORS] = list(result.errors)
    if result.flags:
        submitted.setdefault("metadata", {})[FLAGS] = list(result.flags)
    return submitted


TRAITS: dict[type, type[TraitType[Any, Any]]] = {str: Unicode, float: Float, int: Int}


def settings_traits() -> dict[str, TraitType[Any, Any]]:
    """One configurable traitlet per grading setting, with its default and help."""
    traits: dict[str, TraitType[Any, Any]] = {}
    for setting in options.settings():
        default = setting.default
        if setting.name == "sandbox":
            default = folders.environment(SANDBOX_VARIABLE) or default
        if setting.choices:
            trait: TraitType[Any, Any] = Enum(setting.choices, default_value=default,
                                              help=setting.help)
        else:
            trait = TRAITS[setting.type](default, help=setting.help)
        traits[setting.name] = trait.tag(config=True)
    return traits


def course_of(config: Any) -> Course:
    """The course in nbgrader's course root (with its source and release folders)."""
    coursedir = CourseDirectory(config=config)
    return Course.from_root(coursedir.root, solutions=coursedir.source_directory,
                            release=coursedir.release_directory)


class _Grading(NbGraderPreprocessor):  # type: ignore[misc]
    """What :class:`HiddenSuiteGrading` does; its settings are generated below."""

    def options(self) -> options.Options:
        """The grading options these settings stand for."""
        return options.from_values({s.name: getattr(self, s.name) for s in options.settings()})

    def _submitted_bytes(self, resources: dict[str, Any]) -> bytes | None:
        """The submitted file as the learner handed it in (nbgrader's copy has no outputs); None
        when it is not in the course's submitted folder. nbgrader reads submissions following
        links; this reads the file itself, without following any link between the course's
        submitted folder and the notebook: NotebookProblem says why it must not be graded (a
        link, a special file)."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        root = Path(coursedir.root) / coursedir.submitted_directory
        path = Path(coursedir.format_path(coursedir.submitted_directory, info["student"],
                                          info["assignment"])) / f"{info['notebook']}.ipynb"
        if not path.is_relative_to(root):
            return None
        return notebook.read_regular(path, root=root)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        name = resources["nbgrader"]["notebook"]
        for value, kind in ((resources["nbgrader"]["student"], "student id"),
                            (resources["nbgrader"]["assignment"], "assignment id")):
            problem = identity.id_problem(value, kind)
            if problem:  # nbgrader reports the learner as failed and grades the others
                raise ValueError(f"refused, not graded: {problem}")
        # The course is nbgrader's: its root and folders, wherever the engine is installed.
        coursedir = CourseDirectory(config=self.config)
        assignment = course_of(self.config).assignment(resources["nbgrader"]["assignment"])
        problem, raw = None, None
        try:
            raw = self._submitted_bytes(resources)
        except notebook.NotebookProblem as refused:
            problem = str(refused)
        executed: dict[str, Any] | None
        if problem is not None:
            # What nbgrader read through the link must not reach the feedback: show the release.
            nb.cells = nbformat.read(str(assignment.release), as_version=4).cells
            result, executed = grade.zero_sheet(f"{name}.ipynb", assignment, problem), None
        else:
            # named with this process's id, so that a later run removes it if this one is killed
            # (lifetime.clear_leftovers), as it does a kernel's runtime folder
            with tempfile.TemporaryDirectory(
                    prefix=f"{lifetime.RUNTIME_PREFIX}{os.getpid()}-autograde-") as folder:
                path = Path(folder) / f"{name}.ipynb"
                path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
                # nbgrader's copy has no outputs: a demonstration cell not re-run shows the
                # figures of the learner's own file, read with the copy in one bounded child,
                # which refuses the copy if the learner's file cannot be read
                result, executed = grade.grade_notebook(
                    path, assignment, self.options(),
                    cache_folder=folders.cache_dir(folders.state_dir(coursedir.root)),
                    figures_from=raw)
            if executed is None:  # refused as unreadable: its pages show the release, and why
                nb.cells = nbformat.read(str(assignment.release), as_version=4).cells
        for error in result.errors:
            self.log.warning("%s/%s: %s", assignment.name, name, error)
        for flag in result.flags:
            self.log.warning("%s/%s flagged for review: %s", assignment.name, name, flag)
        # nb is nbgrader's copy of the bounded reader's (SubmissionExporter): what annotate
        # reads of it, as plain values
        plain = annotate({"cells": [
            {"cell_type": cell.cell_type, "source": cell.source,
             "metadata": {"nbgrader": dict(cell.metadata.get("nbgrader", {}))}}
            for cell in nb.cells], "metadata": {}}, result, executed)
        for index, cell in enumerate(plain["cells"]):
            if "outputs" in cell:  # what annotate gave it
                nb.cells[index].outputs = [from_dict(o) for o in cell["outputs"]]
        for key in (ERRORS, FLAGS):  # for the instructor; RecordFlags marks the gradebook too
            if key in plain.get("metadata", {}):
                nb.metadata[key] = list(plain["metadata"][key])
        return nb, resources


HiddenSuiteGrading = type("HiddenSuiteGrading", (_Grading,), {
    "__doc__": "Execute in the sandbox and score grade cells from the hidden suite (replaces "
               "nbgrader's Execute). Its settings are the grading options, one traitlet each.",
    "__module__": __name__, **settings_traits()})


class SubmissionExporter(NotebookExporter):
    """nbgrader's ``Autograde`` (and the recording's builders) read notebooks through this.

    A learner's file (anything outside the converter's autograded folder) is never parsed here:
    it is read as bytes without following links or blocking (:func:`notebook.read_regular`, at
    most 20 MiB), and a reader child bounded in memory and CPU time
    (:func:`notebook.copy_for_nbgrader`) gives back a normalised copy, cells and the little
    metadata nbgrader reads (:func:`notebook.normalised`), which is what nbgrader parses and
    converts. A file the child cannot read becomes the release's notebook (what nbgrader read
    must not reach the feedback); :class:`HiddenSuiteGrading` gives it a zero score sheet with
    the reason. What nbgrader wrote itself from that copy (its autograded folder, read again for
    the grading steps) is read as nbgrader would."""

    def from_filename(self, filename: str, resources: dict[str, Any] | None = None,
                      **kw: Any) -> tuple[Any, dict[str, Any]]:
        if self._own(filename):
            return super().from_filename(filename, resources, **kw)
        resources = ResourcesDict() if resources is None else resources
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        folder, base = os.path.split(filename)
        resources["metadata"].update(name=os.path.splitext(base)[0], path=folder)
        try:
            changed = os.lstat(filename).st_mtime
            copy = notebook.copy_for_nbgrader(notebook.read_regular(
                filename, root=self._submitted(filename)))
            nb = nbformat.reads(copy, as_version=4)
        except (notebook.NotebookProblem, OSError) as problem:
            self.log.warning("%s cannot be read as a notebook (%s); the release is read in its "
                             "place", filename, problem)
            changed = datetime.datetime.now().timestamp()
            nb = self._release(resources)
        modified = datetime.datetime.fromtimestamp(changed, tz=datetime.timezone.utc)
        resources["metadata"]["modified_date"] = modified.strftime("%B %-d, %Y")
        # nbconvert's NotebookExporter.from_notebook_node is unannotated
        converted: tuple[Any, dict[str, Any]] = self.from_notebook_node(  # type: ignore[no-untyped-call]
            nb, resources=resources, **kw)
        return converted

    def _own(self, filename: str) -> bool:
        """Whether ``filename`` is in the converter's autograded folder (which nbgrader writes
        from the bounded copy), not a learner's file."""
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            return False
        folder: str = os.path.realpath(os.path.join(coursedir.root, coursedir.autograded_directory))
        return os.path.commonpath([os.path.realpath(filename), folder]) == folder

    def _submitted(self, filename: str) -> str | None:
        """The course's submitted folder if ``filename`` is in it (no folder between them may be
        a link either), else None."""
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            return None
        root = os.path.join(coursedir.root, coursedir.submitted_directory)
        return root if Path(filename).is_relative_to(root) else None

    def _release(self, resources: dict[str, Any]) -> Any:
        """The release's notebook of the assignment being converted (empty if there is none)."""
        try:
            release = course_of(self.config).assignment(resources["nbgrader"]["assignment"]).release
            if release.stem == resources["nbgrader"]["notebook"]:
                return nbformat.read(str(release), as_version=4)
        except (KeyError, LookupError, OSError, ValueError, TypeError):
            pass
        return nbformat.v4.new_notebook()


class RecordFlags(NbGraderPreprocessor):  # type: ignore[misc]
    """A flagged notebook (code that patches modules or names the grader's agent) is marked with
    nbgrader's own ``flagged`` in the gradebook, which the formgrader shows beside the submission
    and in its page; the reasons stay in the autograded notebook's metadata (``FLAGS``). The
    learner's feedback does not show them: a flag is a reason for the instructor to look."""

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if nb.get("metadata", {}).get(FLAGS):
            info = resources["nbgrader"]
            with Gradebook(info["db_url"]) as book:
                submitted = book.find_submission_notebook(info["notebook"], info["assignment"],
                                                          info["student"])
                submitted.flagged = True
                book.db.commit()
        return nb, resources


# nbgrader's autograding steps with the hidden suites in place of Execute: the classes the
# course's settings name (this module's own are defined above by now)
AUTOGRADE_STEPS = [import_item(name) for name in AUTOGRADE_STEP_NAMES]
configure = plugin_settings  # the course's nbgrader settings (autograder.course.config)
