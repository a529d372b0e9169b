"""What `make demo` leaves, checked artefact by artefact: the grades against the expected ones, the
grade table, the CSV export, the Gradescope results, the feedback pages, the instructor's report,
the flags wherever an instructor looks, one score story everywhere, the learners' own figures in
their feedback, and the class in `make demo-lab`'s formgrader."""
import csv
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.engine.figures import plain_figure
from autograder.tools import demo
from support import COURSE, REPO

UNREACHABLE = "http://127.0.0.1:9/simple"  # nothing listens there: any use of an index fails


def offline_environment():
    """This process's environment, with every route to a package index cut: no configuration
    file, no find-links, and an index that refuses connections."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "VIRTUAL_ENV", "ATTENTION_COURSE_", "AUTOGRADER_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=UNREACHABLE, PIP_RETRIES="0",
               PIP_TIMEOUT="2", npm_config_offline="true",
               PATH=os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                    if not p.startswith(str(REPO))))
    return env


@dataclasses.dataclass
class OfflineDemo:
    """`make wheelhouse`, then `make demo WHEELHOUSE=...` from a fresh clone with no index, as the
    README runs them, in a folder with 755 parents outside pytest's private temporary folder."""
    top: Path
    wheelhouse: Path
    clone: Path
    env: dict
    wheelhouse_run: subprocess.CompletedProcess
    demo_run: subprocess.CompletedProcess

    @property
    def output(self):
        return self.clone / "demo-output"


def offline_demo():
    """Make the demo as :class:`OfflineDemo` says (the ``offline_demo`` fixture of
    tests/conftest.py: once per test process, for the wheelhouse's test and the formgrader's)."""
    top = Path(tempfile.mkdtemp(prefix="attention-offline-", dir="/var/tmp"))
    top.chmod(0o755)
    wheelhouse = top / "wheelhouse"
    made = subprocess.run(["make", "--no-print-directory", "wheelhouse",
                           f"WHEELHOUSE={wheelhouse}", f"PYTHON={sys.executable}"],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    clone, env = top / "attention-course", offline_environment()
    if made.returncode != 0:  # no demo without a wheelhouse: both tests report this failure
        return OfflineDemo(top, wheelhouse, clone, env, made, made)
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=300)
    ran = subprocess.run(["make", "--no-print-directory", "demo", f"WHEELHOUSE={wheelhouse}",
                          f"PYTHON={sys.executable}"], cwd=clone, env=env, capture_output=True,
                         text=True, timeout=3600)
    return OfflineDemo(top, wheelhouse, clone, env, made, ran)


def remove_offline_demo(made):
    shutil.rmtree(made.top, ignore_errors=True)


def check_demo_output(output, summary, learners, clone, venv, env):
    """Check the demo's ``output`` folder and ``summary`` (its summary.json) for the class
    ``learners`` (demo.sample_class), the demo run in ``clone`` with the environment ``venv``
    (``make demo-lab`` is started there with the process environment ``env``)."""
    assert {p.cheat for per in learners.values() for p in per.values()
            if p.kind == "cheat"} == set(demo.CHEATS)  # every kind of learner, both cheats
    kinds = {plan.kind for plans in learners.values() for plan in plans.values()}
    assert kinds == {"reference", "alternative", "mutant", "blank", "cheat"}
    assert summary["grades"] == summary["expected"]
    rows = list(csv.DictReader((output / "grades.csv").open()))
    assert len(rows) == len(learners) * len(demo.assignments())
    names = {(r["first_name"], r["last_name"]) for r in rows}
    assert len(names) == len(learners) and ("None", "None") not in names and ("", "") not in names
    for learner in learners:
        gradescope = json.loads((output / "gradescope" / f"{learner}.json").read_text())
        assert gradescope["score"] == pytest.approx(sum(summary["expected"][learner].values()))
        feedback = list((output / "course" / "feedback" / learner).rglob("*.html"))
        assert len(feedback) == len(demo.assignments())
    report = (output / "report" / "report.md").read_text()
    assert "Typical mistake" in report
    # the sample learners hand in answers, not the solution's markers, model-answer labels or rubrics
    for handed_in in (output / "course" / "submitted").rglob("*.ipynb"):
        text = handed_in.read_text()
        for word in ("BEGIN SOLUTION", "END SOLUTION", "Model answer", "Rubric"):
            assert word not in text, f"{word!r} in {handed_in}"
    # flags, wherever the instructor looks: the demo's table (summary), the report, the
    # autograded notebook's metadata and the gradebook (which the formgrader shows)
    patching = "patches numpy so every comparison passes"  # the one cheat the flagger names
    cheats = {learner: sorted(a for a, plan in plans.items() if plan.cheat == patching)
              for learner, plans in learners.items()}
    cheats = {learner: found for learner, found in cheats.items() if found}
    assert cheats and {k: sorted(v) for k, v in summary["flagged"].items()} == cheats
    section = report.split("## Flagged for review", 1)[1]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{output / 'course' / 'gradebook.db'}") as book:
        for learner, plans in learners.items():
            for assignment in plans:
                [autograded] = (output / "course" / "autograded" / learner / assignment).glob(
                    "*.ipynb")
                metadata = json.loads(autograded.read_text())["metadata"]
                flagged = assignment in cheats.get(learner, [])
                assert bool(metadata.get("autograder_flags")) == flagged, (learner, assignment)
                notebook = autograded.stem
                assert book.find_submission_notebook(notebook, assignment, learner).flagged == flagged
                assert (f"**{learner}**, {assignment}:" in section) == flagged
    for figure in ("grade-histogram.png", "pass-rates.png"):
        assert (output / "report" / figure).read_bytes()[:4] == b"\x89PNG"
    # one score story: the CSV's grade, the feedback page's heading, Gradescope's summary, the
    # report and the table say the same thing (the written answers are pending in the demo)
    from autograder.engine.result import score_story
    written = {a: COURSE.assignment(a).written_points for a in demo.assignments()}
    maxima = {r["assignment"]: float(r["autograded_max_score"]) for r in rows}
    for row in rows:
        learner, assignment = row["student_id"], row["assignment"]
        # pending (empty), or 0 where nbgrader scored an untouched answer itself (blank learners)
        graded = None if row["written_score"] == "" else float(row["written_score"])
        assert graded is None or (graded == 0 and learners[learner][assignment].kind == "blank")
        story = score_story(float(row["autograded_score"]), maxima[assignment],
                            written[assignment], graded)
        assert row["grade"] == story and float(row["written_max_score"]) == written[assignment]
        [page] = (output / "course" / "feedback" / learner / assignment).glob("*.html")
        assert f": {story}</h1>" in page.read_text(), (learner, assignment, story)
    for learner in learners:
        gradescope = json.loads((output / "gradescope" / f"{learner}.json").read_text())
        total = sum(summary["grades"][learner].values())
        assert score_story(total, sum(maxima.values()), sum(written.values())) in \
            gradescope["output"]
    assert "Median grade: autograded " in report
    assert f"of {sum(maxima.values()):g}" in summary["table"]
    # the sample learners ran their notebooks as their lab would: the feedback shows their own
    # figures in place of the demonstrations the grader does not run again
    for learner, plans in learners.items():
        for assignment, plan in plans.items():
            if plan.kind != "reference":
                continue
            [page] = (output / "course" / "feedback" / learner / assignment).glob("*.html")
            text = page.read_text()
            [handed_in] = (output / "course" / "submitted" / learner / assignment).glob("*.ipynb")
            drawn = [cell for cell in json.loads(handed_in.read_text())["cells"]
                     if "demonstration" in cell.get("metadata", {}).get("tags", [])
                     and any(plain_figure(o) for o in cell.get("outputs", []))]
            assert drawn, (learner, assignment)  # her lab drew figures...
            # ...and each such cell shows them in her feedback
            assert text.count("figure(s) from your submitted notebook") == len(drawn)
            assert text.count("<img") >= len(drawn)
            # ...each with the description the course's kernel gave it, not nbconvert's stand-in
            assert "No description has been provided" not in text, (learner, assignment)
    # `make demo-lab` opens this class in the formgrader
    assert sorted(formgrader_students(output / "course", clone, venv, env)) == sorted(learners)


def formgrader_students(state, clone, venv, env):
    """The student ids the formgrader of `make demo-lab`, run in ``clone`` with the environment
    ``venv``, lists for the demo state ``state``."""
    import socket
    import time
    import urllib.request
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = os.urandom(12).hex()
    lab = subprocess.Popen(
        ["make", "demo-lab", f"VENV={venv}", "-o", f"{venv}/.installed", f"DEMO_STATE={state}",
         f"LAB_ARGS=--no-browser --port={port} --ServerApp.ip=127.0.0.1 "
         f"--IdentityProvider.token={token}"],
        cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/formgrader/api/students"
                                            f"?token={token}", timeout=30) as reply:
                    return [student["id"] for student in json.loads(reply.read())]
            except OSError:
                assert lab.poll() is None, lab.stdout.read().decode()[-3000:]
                assert time.monotonic() < deadline, "the formgrader did not answer"
                time.sleep(1)
    finally:
        os.killpg(lab.pid, 15)
        lab.wait(timeout=60)
