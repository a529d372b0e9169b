"""The Gradescope autograder: one zip per assignment, graded in Gradescope's own layout.

Every zip is built twice (same bytes) and checked for what it holds and what it must not; its
suite, catalogue and reference grade the reference from the unpacked zip alone. Then the zip of
00-getting-started grades, as root inside a temporary /autograder, a perfect notebook, a blank
one, a catalogued mistake, a damaged file, a notebook under another name, another assignment's
notebook and an attack on /autograder/source and /autograder/results, in a container that forbids
namespaces (as Docker does) and, for the perfect and the attacking notebook, in one that allows
them. Every results.json follows Gradescope's specification, and its score is what
`python -m autograder grade` gives the same notebook. The worst learner files of each kind are
read there within the grader's bounds.
"""
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.course import gradescope
from autograder.engine import catalogue, grade, reference
from autograder.engine.result import gradescope_results
from autograder.sandbox import confinement
from support import (ASSIGNMENTS, COURSE, MEASURE_MODULE, REPO, figure_flood,
                     interpreter_open_to_others, metadata_bomb, peaks, write_notebook)

ASSIGNMENT = "00-getting-started"
NOTEBOOK = COURSE.assignment(ASSIGNMENT).release.name

# Gradescope's results.json (autograder_samples, docs/specs.md): the keys it reads.
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format",
            "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
            "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output",
             "output_format", "tags", "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}


def check_specification(payload):
    """Fail unless ``payload`` is a results.json Gradescope accepts, as its specification says."""
    assert set(payload) <= TOP_KEYS, set(payload) - TOP_KEYS
    assert isinstance(payload["score"], (int, float)) and not isinstance(payload["score"], bool)
    assert "max_score" not in payload
    assert payload.get("visibility", "visible") in VISIBILITY
    assert payload.get("stdout_visibility", "hidden") in VISIBILITY
    assert payload.get("output_format", "text") in FORMATS
    assert isinstance(payload.get("output", ""), str)
    if "execution_time" in payload:
        assert isinstance(payload["execution_time"], (int, float)) and payload["execution_time"] >= 0
    numbers = []
    for test in payload["tests"]:
        assert set(test) <= TEST_KEYS, set(test) - TEST_KEYS
        assert isinstance(test.get("name", ""), str) and isinstance(test.get("output", ""), str)
        assert test.get("status", "passed") in {"passed", "failed"}
        assert test.get("visibility", "visible") in VISIBILITY
        assert test.get("output_format", "text") in FORMATS
        assert test.get("name_format", "text") in FORMATS
        if "score" in test:
            assert 0 <= test["score"] <= test["max_score"]
        if "number" in test:
            assert isinstance(test["number"], str)
            numbers.append(test["number"])
    assert len(numbers) == len(set(numbers)), "test numbers repeat"
    scored = [t["score"] for t in payload["tests"] if "score" in t]
    assert abs(sum(scored) - payload["score"]) < 1e-9 or not scored


ENGINE_FILES = {f"autograder/{p.relative_to(REPO / 'autograder')}"
                for p in (REPO / "autograder").rglob("*.py")
                if p.parent.name in ("engine", "sandbox")}
ENGINE_FILES |= {"autograder/__init__.py", "autograder/kit.py", "autograder/course/__init__.py",
                 "autograder/course/gradescope.py"}  # the runner inside Gradescope's container


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_zip_is_reproducible_and_holds_only_what_grading_needs(assignment, tmp_path):
    found = COURSE.assignment(assignment)
    first = gradescope.build(found, tmp_path / "a.zip")
    second = gradescope.build(found, tmp_path / "b.zip")
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as archive:
        names = archive.namelist()
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
        # Listed in full: the engine and sandbox layers with the runner (no nbgrader module, no
        # tool: benchmark, demo, report), the learners' package, this assignment's suite and
        # mutants (no alternatives), what the course's suites share, its reference definitions
        # and its release.
        suite = {f"suites/{assignment}/{p.relative_to(found.suite)}"
                 for p in found.suite.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                 and p.name != "alternatives.py"}
        learner = {f"learner/helpers/{p.name}" for p in (REPO / "src" / "helpers").glob("*.py")}
        assert set(names) == {"setup.sh", "run_autograder", "requirements.lock", "settings.json",
                              *ENGINE_FILES, *learner, *suite, "suites/attention_kit.py",
                              f"solutions/{assignment}/{found.solution.name}",
                              f"notebooks/{assignment}/{found.release.name}"}, sorted(names)
        assert f"suites/{assignment}/mutants.py" in names
        solution = json.loads(archive.read(f"solutions/{assignment}/{found.solution.name}"))
        assert all(c["cell_type"] == "code" for c in solution["cells"])
        written = [c for c in json.loads(found.solution.read_text())["cells"]
                   if c["cell_type"] == "markdown" and c.get("metadata", {}).get("nbgrader", {})
                   .get("solution")]
        text = b"".join(archive.read(n) for n in names).decode("utf-8", "replace")
        for cell in written:  # the written questions' model answers stay home
            answer = "".join(cell["source"]).split("### BEGIN SOLUTION")[-1]
            assert answer.split("### END SOLUTION")[0].strip()[:80] not in text
        archive.extractall(tmp_path / "source")
    # The unpacked zip alone grades the reference with full marks (its engine, suite, catalogue
    # and reference), in the course layout its settings name.
    script = ("import json, autograder\nfrom autograder.engine import grade, reference\n"
              "from autograder.engine.assignment import Course\n"
              "course = Course.from_root('.', **json.load(open('settings.json'))['course'])\n"
              f"found = course.assignment({assignment!r})\n"
              "r = grade.grade_local(found, reference.namespace(found))\n"
              "print(json.dumps([r.score, r.max_score, course.root.as_posix(), "
              "autograder.__file__]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path / "source", text=True,
                          capture_output=True, env={**os.environ,
                                                    "PYTHONPATH": str(tmp_path / "source")},
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    score, maximum, root, engine = json.loads(done.stdout.splitlines()[-1])
    assert root == (tmp_path / "source").as_posix()
    assert Path(engine).is_relative_to(tmp_path / "source")
    assert score == maximum > 0


def test_results_json_follows_the_specification_and_the_chosen_visibility():
    found = COURSE.assignment(ASSIGNMENT)
    result = grade.grade_local(found, reference.namespace(found))
    result.checks = {"row_normalize": {"status": "passed", "message": "the visible checks pass"}}
    result.errors = ["cell 3: NameError: name 'x' is not defined"]
    for visibility in sorted(VISIBILITY):
        payload = gradescope_results([result], visibility, execution_time=12.3)
        check_specification(payload)
        hidden = [t for t in payload["tests"] if "score" in t]
        assert hidden and all(t["visibility"] == visibility for t in hidden)
        assert all(t["visibility"] == "visible" for t in payload["tests"] if "score" not in t)
        assert payload["score"] == result.score
    with pytest.raises(ValueError):
        gradescope_results([result], "sometimes")
    check_specification(gradescope.failure_json("Upload the notebook."))


def test_setup_sh_resolves_every_package_it_installs_without_installing(tmp_path):
    zipped = gradescope.build(COURSE.assignment(ASSIGNMENT), tmp_path / "autograder.zip")
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(tmp_path / "source")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(tmp_path / "source" / "setup.sh"), "--dry-run"],
                          capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    locked = [line for line in (REPO / "requirements.lock").read_text().splitlines()
              if line and not line.startswith("#")]
    assert locked and all("==" in line for line in locked)


ATTACK = """import glob, os
found = []
for pattern in ['/autograder/source/**/*.py', '/autograder/source/**/*.ipynb',
                '/autograder/results/*', '/autograder/run_autograder']:
    for path in glob.glob(pattern, recursive=True):
        try:
            found.append(open(path).read())
        except OSError:
            pass
for path in ['/autograder/results/results.json', '/autograder/source/settings.json']:
    try:
        open(path, 'w').write('{"score": 100}')
        found.append('wrote')
    except OSError:
        pass
if found:
    def row_normalize(X):
        sums = X.sum(axis=-1, keepdims=True)
        return X / np.where(sums == 0, 1, sums)
else:
    def row_normalize(X):
        raise RuntimeError('nothing could be read')
"""


def cases(tmp_path):
    """name -> (what the learner uploads: a notebook file or a folder, expected score)."""
    folder = tmp_path / "uploads"
    found = COURSE.assignment(ASSIGNMENT)
    mutant = next(m for m in catalogue.mutants(found, "row_normalize")
                  if 0 < grade.grade_local(found, m.namespace()).score < 8)
    attack = catalogue.filled_notebook(found, {"row_normalize": ATTACK})
    uploads = {
        "perfect": (write_notebook(folder / "perfect" / NOTEBOOK,
                                   catalogue.filled_notebook(found)), "grade"),
        "blank": (write_notebook(folder / "blank" / NOTEBOOK,
                                 json.loads(found.release.read_text())), "grade"),
        "mistake": (write_notebook(folder / "mistake" / NOTEBOOK, catalogue.notebook_with(mutant)),
                    "grade"),
        "damaged": (folder / "damaged" / NOTEBOOK, "grade"),
        "another name": (write_notebook(folder / "renamed" / "my work (1).ipynb",
                                        catalogue.filled_notebook(found)), "grade"),
        "another assignment": (folder / "other", 0.0),
        "not a notebook": (folder / "text", 0.0),
        "attack": (write_notebook(folder / "attack" / NOTEBOOK, attack), 0.0),
    }
    (folder / "damaged").mkdir(parents=True)
    (folder / "damaged" / NOTEBOOK).write_bytes(b'{"cells": [{"cell_type": "code", "sou')
    other = "02-scoring" if "02-scoring" in ASSIGNMENTS else ASSIGNMENTS[-1]
    write_notebook(folder / "other" / COURSE.assignment(other).release.name,
                   catalogue.filled_notebook(COURSE.assignment(other)))
    (folder / "text").mkdir()
    (folder / "text" / "answers.py").write_text("def row_normalize(X): return X\n")
    return uploads


@pytest.fixture
def gradescope_root():
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs the autograder as root; so does this test (CI is root)")
    if not confinement.available():
        pytest.fail("bubblewrap is missing") if os.environ.get("CI") else pytest.skip(
            "bubblewrap is not installed")
    with interpreter_open_to_others():  # learner code runs as another user, with this Python
        yield


@pytest.mark.slow
@pytest.mark.xdist_group("users")
def test_the_zip_grades_every_case_in_gradescopes_layout(tmp_path, gradescope_root):
    zipped = gradescope.build(COURSE.assignment(ASSIGNMENT), tmp_path / "autograder.zip")
    uploads = cases(tmp_path)
    gradable = {name: path for name, (path, expected) in uploads.items() if expected == "grade"}
    out = tmp_path / "cli.json"
    subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
                    "--json", str(out), *map(str, gradable.values())], cwd=REPO, check=True,
                   capture_output=True, timeout=900)
    by_cli = dict(zip(gradable, json.loads(out.read_text())))
    runs = [(name, False) for name in uploads] + [("perfect", True), ("attack", True)]
    for name, namespaces in runs:
        upload, expected = uploads[name]
        payload = gradescope.try_zip(zipped, upload, bubblewrap_inside=namespaces)
        log = payload.pop("_stdout")
        check_specification(payload)
        where = f"{name} ({'with' if namespaces else 'without'} namespaces)\n{log}"
        if expected == "grade":
            assert payload["score"] == by_cli[name]["score"], where
            hidden = [t for t in payload["tests"] if "score" in t]
            assert [t["score"] for t in hidden] == [t["score"] for t in by_cli[name]["tests"]]
            assert all(t["visibility"] == "after_due_date" for t in hidden)
        else:
            assert payload["score"] == expected, where
        text = json.dumps(payload)
        assert "def test_" not in text and "BEGIN SOLUTION" not in text
        if name == "perfect":
            assert payload["score"] == 8.0 and "visible check of row_normalize" in text
        if name == "mistake":
            assert 0 < payload["score"] < 8.0
        if name == "another name":
            assert "my work (1).ipynb was graded in its place" in text
        if name == "another assignment":
            assert "notebook of another assignment" in text and NOTEBOOK in text
        if name == "not a notebook":
            assert "holds no notebook" in text and "answers.py" in text
        if name == "damaged":
            assert "not valid JSON" in text
        if name == "attack":
            assert "wrote" not in text and "nothing could be read" in text


GRADER_PEAK_MIB = 512  # docs/guarantees.md: the grading process, its reader child apart


@pytest.mark.slow
@pytest.mark.xdist_group("users")
def test_the_worst_uploads_are_read_within_the_graders_bounds(tmp_path, gradescope_root,
                                                              monkeypatch):
    """Gradescope's entry point (run_autograder, then ``python -m autograder.course.gradescope
    run``) reads an upload only through the bounded reader: 300,000 figures in the
    demonstrations and 6.3 million empty lists of metadata are graded as the work they hold,
    JSON nested a million deep, 100,000 cells and 30 MB score 0 with a sentence, and the entry
    point's own peak memory stays within the grader's bound."""
    zipped = gradescope.build(COURSE.assignment(ASSIGNMENT), tmp_path / "autograder.zip")
    perfect = json.dumps(catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))).encode()
    uploads = {
        "300,000 figures": (figure_flood(ASSIGNMENT), 8.0, None),
        "6.3 million empty lists": (metadata_bomb(ASSIGNMENT), 8.0, None),
        "nested a million deep": (perfect[:-1] + b', "x": ' + b"[" * 1_000_000
                                  + b"]" * 1_000_000 + b"}", 0.0, "not valid JSON"),
        "100,000 cells": (json.dumps({"cells": [{"cell_type": "raw", "metadata": {},
                                                 "source": ""}] * 100_000, "metadata": {},
                                      "nbformat": 4, "nbformat_minor": 5}).encode(), 0.0,
                          "more than the 2000"),
        "30 MB": (perfect[:-1] + b', "x": "' + b"z" * (30 << 20) + b'"}', 0.0,
                  "over the 20 MiB limit"),
    }
    # the entry point's interpreter, as run_autograder calls it, appending its own peak memory
    measure = tmp_path / "measure.py"
    measure.write_text(MEASURE_MODULE)
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nexec /autograder/env/bin/python {measure} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("AUTOGRADER_PYTHON", str(wrapper))
    for name, (raw, score, words) in uploads.items():
        peak_file = tmp_path / f"peak-{len(raw)}"
        monkeypatch.setenv("PEAK_FILE", str(peak_file))
        upload = tmp_path / "uploads" / str(len(raw)) / NOTEBOOK
        upload.parent.mkdir(parents=True)
        upload.write_bytes(raw)
        payload = gradescope.try_zip(zipped, upload, bubblewrap_inside=False)
        log = payload.pop("_stdout")
        check_specification(payload)
        peak = peaks(peak_file)["autograder.course.gradescope"]
        print(f"\n[bounded] Gradescope, {name}: entry point's peak {peak:.0f} MiB, score "
              f"{payload['score']:g}")
        assert payload["score"] == score, (name, log)
        assert peak < GRADER_PEAK_MIB
        assert len(json.dumps(payload)) < 100_000
        if words:
            assert any(t["name"] == "Your notebook" and words in t["output"]
                       for t in payload["tests"]), (name, payload["tests"][:1])
