"""`make demo`: the instructor's loop on a sample class whose every grade is known."""
import csv
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograder.engine.figures import plain_figure
from autograder.tools import demo
from support import BIN, COURSE, REPO

SIZE = 16


@pytest.fixture
def ordinary_folder():
    """A folder other accounts may pass through (755, under /var/tmp), as a home, /srv or /opt
    is: pytest's own temporary folders lie under one only this account can enter, where any
    exchange is private whatever its own mode."""
    folder = Path(tempfile.mkdtemp(prefix="attention-demo-", dir="/var/tmp"))
    folder.chmod(0o755)
    for above in [folder, *folder.parents]:
        assert os.stat(above).st_mode & stat.S_IXOTH, f"{above} shuts others out"
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
# `make demo` from a fresh clone in an ordinary (755) folder, installed from a wheelhouse with no
# index reachable, as the README runs both: tests/end_to_end/test_wheelhouse.py.


def test_when_collect_refuses_the_demo_stops_saying_how_many_for_whom_and_why(
        ordinary_folder, monkeypatch):
    """The demo's state and exchange opened to others (as nbgrader left them before): collect
    refuses every sample learner, and the demo stops with that sentence, not with a traceback
    from a later step."""
    def opened(path):
        path.mkdir(mode=0o755)
        path.chmod(0o755)
        (path / "exchange").mkdir()
        (path / "exchange").chmod(0o777)
        return path
    monkeypatch.setattr(demo, "private_folder", opened)
    with pytest.raises(demo.DemoStopped) as stopped:
        demo.run(output=ordinary_folder / "demo", size=2, quiet=True)
    message = str(stopped.value)
    first = demo.assignments()[0]
    assert f"collect refused 2 submission(s) of {first}, for 2 learner(s) " \
           f"(learner01, learner02)" in message, message
    assert "learner01 is not an account on this machine, and other accounts can write" in message


def test_the_table_says_1_point_and_2_points():
    assert demo.points(1) == "1 point" and demo.points(2) == "2 points"
    assert demo.points(0.5) == "0.5 points"
    learners = {"learner01": {"a": demo.Plan("blank")}}
    table = demo.grade_table(learners, {"learner01": {"a": 0}}, {"learner01": {"a": 0}}, ["a"],
                             {"a": 3}, {"a": 1})
    assert "a 1 point." in table.splitlines()[0]


@pytest.mark.slow
def test_demo_grades_equal_the_expected_ones_and_writes_every_artefact(tmp_path):
    output = tmp_path / "demo"
    # half of `make demo`'s class: every kind of learner (two of each mistake slot) and both cheats
    summary = demo.run(output=output, size=SIZE, quiet=True)
    learners = demo.sample_class(SIZE)
    assert len(learners) == SIZE and {p.cheat for per in learners.values() for p in per.values()
                                      if p.kind == "cheat"} == set(demo.CHEATS)
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
    assert sorted(formgrader_students(output / "course")) == sorted(learners)


def formgrader_students(state):
    """The student ids the formgrader of `make demo-lab` lists for the demo state ``state``."""
    import socket
    import time
    import urllib.request
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = os.urandom(12).hex()
    venv = BIN.parent
    lab = subprocess.Popen(
        ["make", "demo-lab", f"VENV={venv}", "-o", f"{venv}/.installed", f"DEMO_STATE={state}",
         f"LAB_ARGS=--no-browser --port={port} --ServerApp.ip=127.0.0.1 "
         f"--IdentityProvider.token={token}"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
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


def test_report_labels_are_whole_test_names():
    from autograder.engine import grade, reference
    from autograder.tools.report import pass_rate_labels
    keys = [(a.name, t.name) for a in COURSE.assignments()
            for t in grade.grade_local(a, reference.namespace(a)).tests]
    labels = pass_rate_labels(keys)
    assert len(set(labels)) == len(set(keys))
    assert all(label.replace("\n", " ").endswith(name) for label, (_, name) in zip(labels, keys))


def test_the_sample_learners_run_their_notebooks_with_the_courses_kernel():
    """As in `make lab`: the kernel spec the demo's runs start is the course's own."""
    from jupyter_client.kernelspec import KernelSpecManager
    before = dict(os.environ)
    with demo.lab_environment(COURSE):
        spec = KernelSpecManager().get_kernel_spec("python3")
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "--IPKernelApp.kernel_class=helpers.kernel.Kernel" in spec.argv
    assert dict(os.environ) == before
