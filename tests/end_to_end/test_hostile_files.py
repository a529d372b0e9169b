"""Every reader of a learner's file is bounded: nbgrader's collect, ``python -m autograder
autograde`` (grading, the recording's writer and building worker), the feedback, the formgrader's
pages and nbgrader's own autograde, each given the worst file of each kind in one class.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from autograder.engine import figures
from autograder.engine import kernel
from support import (REPO, autograde_measured, figure_flood, formgrader_pages, measured_module,
                     metadata_bomb, peaks, run_as)
from support.attacks import (ASSIGNMENT, CORRECT, FULL, SOLUTION_FILE, instructor,  # noqa: F401
                             needs_bubblewrap, with_answer)
from support.bounds import GRADER_PEAK_MIB, READER_BOMBS, code

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ hostile files, every reader

OUTPUT_FLOOD = ("from IPython.display import display\n"
                "for _ in range(150):\n"
                "    display({'image/png': 'iVBORw0KGgo='}, raw=True)\n"
                "    print('and a line', flush=True)\n")
BIG_FIGURES = ("from IPython.display import display\n"
               "for _ in range(3):\n"
               f"    display({{'image/png': 'iVBORw0KGgo=' + 'A' * {kernel.MAX_FIGURE_CHARS - 300}}},"
               " raw=True)\n")
RENDER_SECONDS = 30  # the formgrader's and the feedback page of any submission's outputs


def with_cells(*sources):
    """The reference submission with cells the learner added after the answer."""
    submission = with_answer(CORRECT)
    index = next(i for i, c in enumerate(submission["cells"])
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "row_normalize")
    submission["cells"][index + 1:index + 1] = [code(source) for source in sources]
    return submission


def hostile_class():
    """learner -> (the file they hand in, their score, words their refusal says): the worst
    input of each kind for the readers of a learner's file, and an honest learner."""
    honest = json.dumps(base()).encode()
    deep = json.dumps(base()).encode()[:-1] + b', "x": ' + b"[" * 1_000_000 + b"]" * 1_000_000 \
        + b"}"
    return {
        "honest": (honest, FULL, None),
        # the two attacks
        "figures": (figure_flood(ASSIGNMENT), FULL, None),
        "wide": (metadata_bomb(ASSIGNMENT), FULL, None),
        # the kernel's outputs past every allowance: counts, a cell's figures, the notebook's
        "outputs": (json.dumps(with_cells(*[BIG_FIGURES] * 3, *[OUTPUT_FLOOD] * 12)).encode(),
                    FULL, None),
        "deep": (deep, 0, "not valid JSON"),
        "flagger": (json.dumps(with_cells("[" + "a," * 8_000_000 + "a]")).encode(), 0,
                    "resubmit"),
        "cells": (READER_BOMBS["100k cells"], 0, "more than the 2000"),
        "oversized": (honest[:-1] + b', "x": "' + b"z" * (30 << 20) + b'"}', 0,
                      "over the 20 MiB limit"),
    }


def base():
    return with_answer(CORRECT)


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_every_reader_of_a_learners_file_is_bounded(who, request):
    """The worst file of each kind (300,000 figures in the demonstrations, 6.3 million empty
    lists of metadata, outputs past every allowance, JSON nested a million deep, a cell too
    large to flag, 100,000 cells, 30 MB) in one class, through nbgrader's collect, ``python -m
    autograder autograde`` (grading, and the recording's writer and building worker), the
    feedback, the formgrader's pages and, as root, nbgrader's own autograde: each reader's peak
    memory is printed and within its bound, each page renders within RENDER_SECONDS, each
    learner gets their score (0 with a sentence for a file no reader may read), and what is
    kept of each (cache entry, autograded notebook) is bounded."""
    top = Path(tempfile.mkdtemp(prefix="hostile-readers-"))
    top.chmod(0o755)
    state, exchange, peak_file = top / "course", top / "exchange", top / "peaks.jsonl"
    env = {"AUTOGRADER_STATE": str(state), "PEAK_FILE": str(peak_file)}
    learners = hostile_class()
    try:
        for learner, (raw, _, _) in learners.items():
            folder = (exchange / "attention-course" / "inbound" /
                      f"{learner}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC")
            folder.mkdir(parents=True)
            (folder / SOLUTION_FILE.name).write_bytes(raw)
        if who == "root":
            def run(*args):
                done = subprocess.run(args, cwd=REPO, env={**os.environ, **env},
                                      capture_output=True, text=True, timeout=1800)
                assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
                return done
        else:
            user, home = request.getfixturevalue("instructor")
            subprocess.run(["chown", "-R", f"{user}:{user}", str(top)], check=True)

            def run(*args):
                return run_as(user, home, *args, cwd=REPO, env=env, timeout=1800)
        exchange_flags = [f"--Exchange.root={exchange}",
                          "--CourseDirectory.course_id=attention-course"]
        run(*measured_module("nbgrader", "generate_assignment", ASSIGNMENT, "--force",
                             f"--CourseDirectory.release_directory={top / 'release'}"))
        run(*measured_module("nbgrader", "collect", ASSIGNMENT, *exchange_flags))
        collected = peaks(peak_file)["nbgrader"]
        graded = autograde_measured(ASSIGNMENT, {"sandbox": "require", "cell_timeout": 20,
                                                 "call_timeout": 5, "budget": 120}, state,
                                    run=None if who == "root" else run)
        peak_file.unlink()
        started = time.monotonic()
        run(*measured_module("nbgrader", "generate_feedback", ASSIGNMENT))
        pages_seconds = time.monotonic() - started
        feedback = peaks(peak_file)["nbgrader"]
        print(f"\n[bounded] {who}: collect {collected:.0f} MiB; autograde: grader "
              f"{graded['grader_peak_mib']:.0f} MiB, recording {graded['recorder_peak_mib']:.0f} "
              f"MiB, {graded['seconds']:.0f} s; feedback {feedback:.0f} MiB, {pages_seconds:.0f} s "
              f"for {len(learners)} pages\n[bounded] {who}: the recording's peak after each "
              f"learner: {graded['recorder_peaks_mib']}")
        assert pages_seconds < RENDER_SECONDS * len(learners)
        for peak in (collected, graded["grader_peak_mib"], graded["recorder_peak_mib"], feedback):
            assert peak < GRADER_PEAK_MIB
        scores = {Path(r["notebook"]).parent.parent.name: r for r in graded["results"]}
        for learner, (_, score, words) in learners.items():
            assert scores[learner]["score"] == score, (learner, scores[learner]["errors"])
            if words:
                assert any(words in e for e in scores[learner]["errors"]), scores[learner]
        # its visible check ran after the notebook's budget was spent: still reported as it fared
        assert scores["outputs"]["checks"]["row_normalize"]["status"] == "passed"
        for entry in (state / "grading-cache").glob("*.json"):
            assert entry.stat().st_size < 10 << 20, entry
        check_autograded(state, learners)
        pages = formgrader_pages(sorted((state / "autograded").glob("*/*/*.ipynb")), run=run)
        for path, (seconds, chars) in pages.items():
            print(f"[bounded] {who}: the formgrader's page of {Path(path).parts[-3]}: "
                  f"{seconds:.1f} s, {chars:,} characters")
            assert seconds < RENDER_SECONDS and chars < 20 << 20
        assert len(pages) == len(learners)
        for learner in learners:
            page = state / "feedback" / learner / ASSIGNMENT / SOLUTION_FILE.with_suffix(".html").name
            assert page.stat().st_size < 20 << 20
        if who == "root":  # nbgrader's own autograde, grading in its process: no cache
            direct = top / "direct"
            shutil.copytree(state / "submitted", direct / "submitted")
            shutil.copy(state / "gradebook.db", direct / "gradebook.db")
            peak_file.unlink()
            subprocess.run(measured_module("nbgrader", "autograde", ASSIGNMENT), cwd=REPO,
                           check=True, env={**os.environ, **env,
                                            "AUTOGRADER_STATE": str(direct)},
                           capture_output=True, timeout=1800)
            alone = peaks(peak_file)["nbgrader"]
            print(f"[bounded] nbgrader autograde (grading in its own process): {alone:.0f} MiB")
            assert alone < GRADER_PEAK_MIB
            check_autograded(direct, learners)
            assert gradebook_scores(direct) == gradebook_scores(state) == {
                learner: score for learner, (_, score, _) in learners.items()}
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(top)], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def check_autograded(state, learners):
    """Each learner's autograded notebook: outputs within the notebook's budget (besides the
    feedback tables of the check cells), and the release in place of a refused file."""
    release = json.loads(SOLUTION_FILE.read_text())
    for learner, (_, score, words) in learners.items():
        path = state / "autograded" / learner / ASSIGNMENT / SOLUTION_FILE.name
        assert path.stat().st_size < 10 << 20, path
        cells = json.loads(path.read_text())["cells"]
        kept = [o for c in cells if not c["metadata"].get("nbgrader", {}).get("grade")
                for o in c.get("outputs", [])]
        assert len(kept) <= figures.MAX_NOTEBOOK_OUTPUTS + 1, (learner, len(kept))
        assert sum(figures.size(o) for o in kept) <= figures.MAX_NOTEBOOK_OUTPUT_CHARS + 500
        notes = "".join("".join(o.get("text", "")) for o in kept)  # nbformat keeps lines
        if learner in ("figures", "outputs"):
            assert "left out by the grader" in notes, learner
        if learner == "figures":
            assert "149,900 more output(s) of your submitted copy" in notes
        if learner == "outputs":
            assert "the cells below keep no outputs" in notes
        if words:
            assert len(cells) == len(release["cells"]), learner


def gradebook_scores(state):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{state / 'gradebook.db'}") as book:
        return {s.student.id: s.score for s in book.assignment_submissions(ASSIGNMENT)}
