"""A notebook's grade: what every part of the course reads, and every format it is written in.

A :class:`Result` is made by grading (:mod:`autograder.engine.grade`) and read by everything else: the
command line's table and CSV, the JSON kept in the state folder and printed by ``--json``,
Gradescope's ``results.json``, the nbgrader plugin and the demo's report. Its JSON form is stable:
a result written by one run and read by the next compares equal, byte for byte once written again.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any


def score_story(autograded: float, autograded_max: float, written_max: float,
                written: float | None = None) -> str:
    """The one way the course states a grade, wherever it is shown: "autograded 31 of 42;
    written answers 4 of 5", or "...; written answers pending (5 points)" until they are graded by
    hand, or only "autograded 31 of 42" when the assignment asks for none."""
    text = f"autograded {autograded:g} of {autograded_max:g}"
    if written_max > 0:
        points = f"{written_max:g} point" + ("" if written_max == 1 else "s")
        text += (f"; written answers pending ({points})" if written is None
                 else f"; written answers {written:g} of {written_max:g}")
    return text


@dataclasses.dataclass
class TestResult:
    """One hidden test: its learner-facing name, the graded function it checks, its points."""
    name: str
    exercise: str
    score: float
    max_score: float
    status: str          # "passed" or "failed"
    feedback: str        # what the learner reads; "" when passed
    # pytest's id, for maintainers: not part of the JSON, nor of what makes two results equal
    nodeid: str = dataclasses.field(default="", compare=False)
    # while grading only (not in the JSON): the SubmissionError kind a failure came from ("" for a
    # wrong value), and the learner's functions the test called
    kind: str = dataclasses.field(default="", compare=False)
    called: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # while grading only: the test read no value the function returned, only the kernel's word
    # on hygiene (no in-place change, no warning, no print)
    hygiene: bool = dataclasses.field(default=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "exercise": self.exercise, "score": self.score,
                "max_score": self.max_score, "status": self.status, "feedback": self.feedback}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestResult:
        return cls(name=data["name"], exercise=data["exercise"], score=float(data["score"]),
                   max_score=float(data["max_score"]), status=data["status"],
                   feedback=data["feedback"])


@dataclasses.dataclass
class Result:
    """The grade of one notebook.

    ``errors`` say what went wrong with the notebook itself (a cell that raised, a refused file);
    ``flags`` name code an instructor may want to read; ``checks`` is the state of each visible
    check cell after the notebook ran (None when the notebook did not run); ``written_max_score``
    the points of the written answers, graded by hand and never by the engine (its ``score`` and
    ``max_score`` are the autograded part only)."""
    notebook: str
    assignment: str | None
    tests: list[TestResult]
    errors: list[str] = dataclasses.field(default_factory=list)
    flags: list[str] = dataclasses.field(default_factory=list)
    checks: dict[str, dict[str, str]] | None = None
    written_max_score: float = 0.0

    @property
    def story(self) -> str:
        """:func:`score_story`: the engine grades no written answer, so they are pending."""
        return score_story(self.score, self.max_score, self.written_max_score)

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 6)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 6)

    @property
    def exercises(self) -> dict[str, dict[str, float]]:
        """Points per graded function, in the order the suite tests them."""
        totals: dict[str, dict[str, float]] = {}
        for test in self.tests:
            entry = totals.setdefault(test.exercise, {"score": 0.0, "max_score": 0.0})
            entry["score"] += test.score
            entry["max_score"] += test.max_score
        return totals

    def tests_of(self, exercise: str) -> list[TestResult]:
        return [t for t in self.tests if t.exercise == exercise]

    # ------------------------------------------------------------ formats
    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "notebook": self.notebook, "assignment": self.assignment, "score": self.score,
            "max_score": self.max_score, "exercises": self.exercises,
            "tests": [t.to_json() for t in self.tests], "errors": list(self.errors),
            "flags": list(self.flags), "written_max_score": self.written_max_score}
        if self.checks is not None:
            data["checks"] = self.checks
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(notebook=data["notebook"], assignment=data["assignment"],
                   tests=[TestResult.from_json(t) for t in data["tests"]],
                   errors=list(data.get("errors", [])), flags=list(data.get("flags", [])),
                   checks=data.get("checks"),
                   written_max_score=float(data.get("written_max_score", 0.0)))

    CSV_HEADER = ("notebook", "assignment", "score", "max_score", "written_max_score", "grade",
                  "errors")

    def to_csv_row(self) -> list[str]:
        return [self.notebook, str(self.assignment), f"{self.score:g}", f"{self.max_score:g}",
                f"{self.written_max_score:g}", self.story, " | ".join(self.errors)]

    @property
    def label(self) -> str:
        """The notebook's folder and name: enough to tell learners apart in a class."""
        path = Path(self.notebook)
        return f"{path.parent.name}/{path.name}"

    def table_line(self, width: int, label: str | None = None) -> str:
        """One line of the command line's table; ``label`` (default :attr:`label`) as shown."""
        return (f"{label or self.label:<{width}}  {str(self.assignment):<22} {self.story}"
                + ("  [flagged]" if self.flags else ""))


# ------------------------------------------------------------------ Gradescope's results.json

VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


def check_visibility(visibility: str) -> str:
    """``visibility`` if Gradescope knows it; a clear ValueError otherwise."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    return visibility


def gradescope_results(results: list[Result], visibility: str = "after_due_date",
                       execution_time: float | None = None) -> dict[str, Any]:
    """Gradescope's results.json for one submission (one or more notebooks' engine results).

    Per notebook: an always-visible line for what went wrong with the notebook itself, one
    always-visible, unscored test per visible check (what the learner could run themselves), and
    every hidden test with its points under ``visibility``."""
    check_visibility(visibility)
    several = len(results) > 1
    tests: list[dict[str, Any]] = []
    for index, result in enumerate(results, start=1):
        prefix = f"{result.assignment} / " if several else ""
        if result.errors:
            tests.append({"name": f"{prefix}Your notebook", "status": "failed",
                          "output": "\n".join(result.errors), "visibility": "visible",
                          "name_format": "text", "output_format": "text"})
        for exercise, check in (result.checks or {}).items():
            tests.append({"name": f"{prefix}visible check of {exercise}",
                          "status": check["status"], "output": check["message"],
                          "visibility": "visible", "name_format": "text",
                          "output_format": "text"})
        exercises = list(result.exercises)
        counters: dict[int, int] = {}
        for test in result.tests:
            group = exercises.index(test.exercise) + 1
            counters[group] = counters.get(group, 0) + 1
            tests.append({
                "name": prefix + test.name,
                "number": (f"{index}." if several else "") + f"{group}.{counters[group]}",
                "score": test.score, "max_score": test.max_score,
                "status": "passed" if test.passed else "failed",
                "output": test.feedback or "passed", "visibility": visibility,
                "name_format": "text", "output_format": "text"})
    score = round(sum(r.score for r in results), 6)
    maximum = round(sum(r.max_score for r in results), 6)
    errors = [e for r in results for e in r.errors]
    written = round(sum(r.written_max_score for r in results), 6)
    story = score_story(score, maximum, written)
    output = (f"Your notebook was graded: {story}." if not errors else
              f"Your notebook was graded ({story}), but not everything in it ran: see 'Your "
              f"notebook' below.")
    if written > 0:
        output += (" The written answers are graded by hand; their points are not in this "
                   "score yet.")
    payload: dict[str, Any] = {"score": score, "output": output, "output_format": "text",
               "visibility": visibility, "stdout_visibility": "hidden", "tests": tests}
    if execution_time is not None:
        payload["execution_time"] = int(round(execution_time))
    return payload
