"""`nbgrader autograde`, `generate_feedback` and `export` give the hidden-suite scores, and the
written answers go through nbgrader's manual grading: they wait for a grader after autograde, and
the scores a grader gives add to the total and appear in the export."""
import base64
import csv
import json

import pytest

from autograder.course import instructor
from autograder.engine import catalogue, demonstrations, figures, grade
from support import COURSE, REPO, cell_source, gradebook, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("nbgrader-class")]

ASSIGNMENT = "00-getting-started"
AUTOGRADED = 8.0     # the check_row_normalize cell, worth the points of its hidden tests
ALICES_FIGURE = base64.b64encode(figures.PNG_SIGNATURE + b"alice's own figure").decode()


def written_questions():
    """grade_id -> points of the written answers (markdown answer cells graded by hand)."""
    notebook = json.loads(COURSE.assignment(ASSIGNMENT).solution.read_text(encoding="utf-8"))
    found = {}
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown" and meta.get("solution") and meta.get("grade"):
            found[meta["grade_id"]] = float(meta["points"])
    return found


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of three, autograded by nbgrader: alice (right answers and a written answer), bob (a
    catalogued mistake, a learner warning on stderr, a written answer), carol (the blank notebook)."""
    root = tmp_path_factory.mktemp("class")
    state = root / "course"
    state.mkdir()
    instructor.nbgrader("generate_assignment", ASSIGNMENT, "--force",
                    f"--CourseDirectory.release_directory={root / 'release'}", state=state)
    scored = [(grade.grade_local(COURSE.assignment(ASSIGNMENT), m.namespace()).score, m)
              for m in catalogue.mutants(COURSE.assignment(ASSIGNMENT), "row_normalize")]
    expected_bob, mutant = next((s, m) for s, m in scored if 0 < s < AUTOGRADED)  # partial credit
    name = COURSE.assignment(ASSIGNMENT).solution.name
    submitted = state / "submitted"
    alice = catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))
    drawn = [c for c in alice["cells"] if demonstrations.is_demonstration(c)][-1]
    drawn["outputs"] = [{"output_type": "display_data", "metadata": {},
                         "data": {"image/png": ALICES_FIGURE, "text/plain": "<Figure>"}}]
    write_notebook(submitted / "alice" / ASSIGNMENT / name, alice)
    bob = catalogue.notebook_with(mutant)
    bob["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                         "source": "import warnings\nwarnings.warn('a learner warning on stderr')"})
    write_notebook(submitted / "bob" / ASSIGNMENT / name, bob)
    write_notebook(submitted / "carol" / ASSIGNMENT / name,
                   json.loads(COURSE.assignment(ASSIGNMENT).release.read_text(encoding="utf-8")))
    instructor.nbgrader("autograde", ASSIGNMENT, state=state)
    instructor.nbgrader("generate_feedback", ASSIGNMENT, state=state)
    return {"state": state, "root": root, "name": name.removesuffix(".ipynb"),
            "mutant": mutant, "expected_bob": expected_bob}


def score_by_hand(gb, question, name, student, points):
    """What the formgrader does when a grader types a score (its grade API's PUT handler): set the
    manual score and mark the grade as graded."""
    grade = gb.find_grade(question, name, ASSIGNMENT, student)
    grade.manual_score = points
    grade.needs_manual_grade = False
    gb.db.commit()


def export(state, path):
    instructor.nbgrader("export", f"--to={path}", state=state)
    return {r["student_id"]: r for r in csv.DictReader(path.open())}


def test_two_learner_class_through_nbgrader(graded_class):
    state, name = graded_class["state"], graded_class["name"]
    assert graded_class["mutant"].key == "row_normalize/no_zero_guard"
    with gradebook(state) as gb:
        for student, autograded in [("alice", AUTOGRADED), ("bob", graded_class["expected_bob"]),
                                    ("carol", 0.0)]:
            submission = gb.find_submission_notebook(name, ASSIGNMENT, student)
            check = gb.find_grade("check_row_normalize", name, ASSIGNMENT, student)
            assert check.auto_score == autograded    # partial credit, not all-or-nothing
            assert submission.max_score == AUTOGRADED + sum(written_questions().values())

    feedback = (state / "feedback" / "bob" / ASSIGNMENT / f"{name}.html")
    html = feedback.read_text()
    assert "Hidden tests of" in html and "of row_normalize with zero rows is nan" in html
    autograded = json.loads((state / "autograded" / "alice" / ASSIGNMENT / f"{name}.ipynb").read_text())
    assert "def test_" not in json.dumps(autograded)


def test_a_demonstration_cell_not_rerun_shows_the_learners_own_figure_in_the_feedback(
        graded_class):
    """nbgrader clears a submission's outputs before grading; the figure alice's own notebook
    showed in a demonstration cell the grader does not re-run is read from her submitted file."""
    state, name = graded_class["state"], graded_class["name"]
    autograded = json.loads((state / "autograded" / "alice" / ASSIGNMENT / f"{name}.ipynb").read_text())
    shown = [c for c in autograded["cells"] if demonstrations.is_demonstration(c)][-1]
    assert "not re-run by the grader" in "".join(shown["outputs"][0]["text"])
    assert shown["outputs"][1]["data"]["image/png"] == ALICES_FIGURE
    page = (state / "feedback" / "alice" / ASSIGNMENT / f"{name}.html").read_text()
    assert ALICES_FIGURE in page and "not re-run by the grader" in page


def test_written_answers_are_graded_by_hand_and_count(graded_class):
    state, name = graded_class["state"], graded_class["name"]
    questions = written_questions()
    assert questions, "notebook 00 has no written question"
    (question, points), = questions.items()

    # After autograde: a written answer waits for a grader; an untouched one is scored 0 at once.
    with gradebook(state) as gb:
        alice = gb.find_grade(question, name, ASSIGNMENT, "alice")
        assert alice.auto_score is None and alice.manual_score is None
        assert alice.needs_manual_grade
        carol = gb.find_grade(question, name, ASSIGNMENT, "carol")
        assert carol.auto_score == 0 and not carol.needs_manual_grade
        assert gb.find_submission_notebook(name, ASSIGNMENT, "alice").needs_manual_grade
        assert gb.find_submission_notebook(name, ASSIGNMENT, "alice").score == AUTOGRADED
    before = export(state, graded_class["root"] / "before.csv")
    assert float(before["alice"]["score"]) == AUTOGRADED
    assert float(before["alice"]["max_score"]) == AUTOGRADED + points

    # A grader scores the written answers, through the Gradebook API the formgrader uses.
    with gradebook(state) as gb:
        score_by_hand(gb, question, name, "alice", points)
        score_by_hand(gb, question, name, "bob", points / 2)
        assert not gb.find_submission_notebook(name, ASSIGNMENT, "alice").needs_manual_grade
        assert gb.find_submission_notebook(name, ASSIGNMENT, "alice").score == AUTOGRADED + points

    after = export(state, graded_class["root"] / "after.csv")
    assert float(after["alice"]["score"]) == AUTOGRADED + points
    assert float(after["bob"]["score"]) == graded_class["expected_bob"] + points / 2
    assert float(after["carol"]["score"]) == 0.0
    assert {float(r["max_score"]) for r in after.values()} == {AUTOGRADED + points}

    # the model answer never reaches a learner: not in the release, not in the feedback
    released = (COURSE.assignment(ASSIGNMENT).release).read_text(encoding="utf-8")
    assert "YOUR ANSWER HERE" in released and "Model answer" not in released
    feedback = (state / "feedback" / "carol" / ASSIGNMENT / f"{name}.html").read_text()
    assert "Rubric" not in feedback


def test_the_courses_settings_name_its_steps_and_load_no_grader_until_autograde_runs():
    """The course's nbgrader configuration names its autograding steps (nbconvert imports them
    when autograde starts), the hidden suites in place of nbgrader's Execute: a command that reads
    the configuration, every nbgrader command, imports neither the grader nor numpy nor pytest."""
    import subprocess
    import sys

    from nbgrader.preprocessors import Execute

    from autograder.course import nbgrader_plugin
    assert nbgrader_plugin.HiddenSuiteGrading in nbgrader_plugin.AUTOGRADE_STEPS
    assert nbgrader_plugin.RecordFlags in nbgrader_plugin.AUTOGRADE_STEPS
    assert Execute not in nbgrader_plugin.AUTOGRADE_STEPS
    probe = ("import sys\nfrom traitlets.config import Config\nfrom autograder.course import config\n"
             f"c = config.configure(Config(), {str(REPO)!r})\n"
             "assert list(c.Autograde.autograde_preprocessors) == list(config.AUTOGRADE_STEP_NAMES)\n"
             "print(sorted(m for m in ('numpy', 'pytest', 'autograder.engine.grade',\n"
             "                         'autograder.course.nbgrader_plugin') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_only_the_courses_own_autograde_steps_are_split_between_workers_and_the_writer():
    """The recording builds autograded notebooks in workers and writes rows in one writer only
    for the steps it knows write nothing else: the course's own list, nbgrader's sanitizing steps
    and no hooks. Anything else an instructor configures sends every learner through nbgrader's
    whole converter, in the writer."""
    from nbgrader.converters.autograde import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import ClearOutput, Execute
    from traitlets.config import Config

    from autograder.course import autograded, nbgrader_plugin

    def converter(change=lambda c: None, plugin=True):
        c = Config()
        if plugin:
            nbgrader_plugin.configure(c)
        change(c)
        return Autograde(coursedir=CourseDirectory(config=c), config=c)

    assert autograded.splittable(converter())
    assert not autograded.splittable(converter(plugin=False))  # stock: Execute, no hidden suites
    changes = {
        "another step": lambda c: setattr(c.Autograde, "autograde_preprocessors",
                                          [*nbgrader_plugin.AUTOGRADE_STEPS, Execute]),
        "other sanitizing": lambda c: setattr(c.Autograde, "sanitize_preprocessors",
                                              [ClearOutput]),
        "a hook": lambda c: setattr(c.Autograde, "pre_convert_hook", "os.getcwd"),
        "after": lambda c: setattr(c.Autograde, "post_convert_hook", "os.getcwd"),
        "kept files": lambda c: setattr(c.Autograde, "exclude_overwriting",
                                        {"02-scoring": ["data.csv"]}),
    }
    for name, change in changes.items():
        assert not autograded.splittable(converter(change)), name


def test_nbgrader_reads_a_normalised_copy_made_by_the_bounded_reader(tmp_path, course_state):
    """What nbgrader's converter reads of a learner's file is the bounded reader's normalised
    copy: cells, ids, nbgrader's metadata, tags and a few attachments, no outputs or other
    metadata, the same when read again; a file the reader cannot read (a bomb, a link, over
    20 MiB) becomes the release."""
    import nbformat
    from traitlets.config import Config
    from autograder.course import nbgrader_plugin
    from autograder.engine import catalogue, notebook
    found = COURSE.assignment(ASSIGNMENT)
    submission = catalogue.filled_notebook(found)
    submission["metadata"]["bomb"] = [[]] * 1000
    submission["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                            "extra": {"x": 1}}
    first = submission["cells"][0]
    first["metadata"].update(tags=["a", "b"], editable=False, collapsed=True,
                             nbgrader={**first["metadata"].get("nbgrader", {}), "junk": [1]})
    first["attachments"] = {"x.png": {"image/png": "AAAA"}}  # an image pasted into markdown
    second = submission["cells"][1]
    second.update(cell_type="markdown", attachments={f"{n}.png": {"image/png": ""}
                                                      for n in range(1000)})
    second.pop("outputs", None), second.pop("execution_count", None)
    raw = json.dumps(submission).encode()
    copy = json.loads(notebook.copy_for_nbgrader(raw))
    assert copy == notebook.normalised(notebook.parse(json.dumps(copy).encode()))  # unchanged
    assert copy["metadata"]["kernelspec"] == {"name": "python3", "display_name": "Python 3"}
    assert set(copy["metadata"]) == {"kernelspec", "language_info"}
    assert copy["cells"][0]["metadata"]["tags"] == ["a", "b"]
    assert copy["cells"][0]["metadata"]["editable"] is False
    assert "collapsed" not in copy["cells"][0]["metadata"]
    assert copy["cells"][0]["attachments"] == first["attachments"]  # kept: its text shows it
    assert "attachments" not in copy["cells"][1]  # a thousand: none kept
    assert "junk" not in copy["cells"][0]["metadata"].get("nbgrader", {})
    assert [c["source"] for c in copy["cells"]] == [cell_source(c) for c in submission["cells"]]
    assert all(c.get("outputs", []) == [] for c in copy["cells"])
    nbformat.validate(nbformat.from_dict(copy))

    from autograder.course import config as course_config
    config = Config()
    course_config.configure(config, REPO)  # as nbgrader_config.py does
    exporter = nbgrader_plugin.SubmissionExporter(config=config)
    resources = {"nbgrader": {"assignment": ASSIGNMENT, "notebook": found.release.stem}}
    good = tmp_path / "good.ipynb"
    good.write_bytes(raw)
    read, _ = exporter.from_filename(str(good), resources=dict(resources))
    assert nbformat.reads(read, as_version=4) == nbformat.from_dict(copy)
    release = nbformat.read(str(found.release), as_version=4)
    bomb = tmp_path / "bomb.ipynb"
    bomb.write_bytes(b'{"cells": [], "metadata": {"x": ' + b"[" * 100_000 + b"]" * 100_000
                     + b'}, "nbformat": 4, "nbformat_minor": 5}')
    big = tmp_path / "big.ipynb"
    big.write_bytes(raw[:-1] + b', "x": "' + b"z" * (21 << 20) + b'"}')
    link = tmp_path / "link.ipynb"
    link.symlink_to(good)
    for refused in (bomb, big, link):
        read, _ = exporter.from_filename(str(refused), resources=dict(resources))
        assert nbformat.reads(read, as_version=4).cells == release.cells, refused


def test_a_new_gradebook_is_stamped_with_the_revision_alembic_names(tmp_path):
    """The course's nbgrader commands learn the newest revision of nbgrader's database schema
    from alembic in their own process (autograder/course/nbgrader_launch.py): it is the revision
    stock nbgrader reads from the ``alembic heads`` command, and a gradebook a course command
    creates is stamped with it."""
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    from autograder.course import folders, nbgrader_launch
    env = instructor.nbgrader_env()
    stock = subprocess.run([sys.executable, "-c", "from nbgrader.api import get_alembic_version;"
                            " print(get_alembic_version())"], env=env, capture_output=True,
                           text=True, timeout=300, check=True).stdout.strip()
    assert stock and nbgrader_launch.alembic_head() == stock
    state = tmp_path / "state"
    instructor.nbgrader("db", "student", "add", "learner01", state=state, cwd=REPO)
    with sqlite3.connect(Path(folders.gradebook_path(state))) as book:
        assert book.execute("SELECT version_num FROM alembic_version").fetchall() == [(stock,)]
