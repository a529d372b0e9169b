"""A kept result cannot outlive what it was computed by.

Its key (autograder/engine/cache.py) holds the graded content, every setting that can change a
result, the confinement in force, and the assignment's version: the suite, the reference, the
release, the grading code, which is the import closure of the grading entry point and of the
suite, read from their imports, never a list kept by hand, and the code the learner's kernel runs
besides the learner's (the course's helpers, where the kernel imports them from). Each test changes one thing and sees the key (and so the cache) miss;
the grading code is changed in a copy of the package, never in this checkout.
"""
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.engine import cache, catalogue, closure, options
from autograder.engine.assignment import Course
from autograder.engine.options import Options
from autograder.sandbox import confinement
from support import COURSE, REPO, sandbox_mode

ASSIGNMENT = "00-getting-started"
SECOND_COURSE = REPO / "tests" / "end_to_end" / "second-course"


def suite_modules(assignment):
    modules = {cache.ENTRY_POINT}
    for path in cache.suite_files(assignment):
        if path.suffix == ".py":
            modules |= closure.imported_names(path)
    return tuple(sorted(modules))


def package_copy(tmp_path):
    """The engine and the helpers it imports, copied: a tree whose files a test may change."""
    top = tmp_path / "lib"
    ignore = shutil.ignore_patterns("__pycache__", "suites")
    shutil.copytree(REPO / "autograder", top / "autograder", ignore=ignore)
    shutil.copytree(REPO / "src" / "helpers", top / "helpers", ignore=ignore)
    return top


def run_in(top, script, *args, timeout=600):
    """Run ``script`` in ``top`` with the package there ahead of the installed one (an editable
    install: this checkout); its JSON answer."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=top,
                          env={"PYTHONPATH": str(top), "PATH": "/usr/bin:/bin",
                               "HOME": str(top), "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_grading_code_is_every_module_grading_loads():
    """The closure holds every module of the engine (and of helpers) that grading imports, the
    reference and the result among them, and nothing of the course layer or the tools."""
    files, others = closure.closure(suite_modules(COURSE.assignment(ASSIGNMENT)))
    assert {"autograder.engine.reference", "autograder.engine.result", "autograder.engine.grade",
            "autograder.engine.kernel", "autograder.engine.suite", "autograder.engine.wire",
            "autograder.sandbox.launcher", "autograder.kit", "autograder.engine.checks"} <= set(files)
    assert not [m for m in files if m.startswith(("autograder.course", "autograder.tools"))]
    assert {o.split("==")[0] for o in others} >= {"numpy", "pytest", "pyzmq", "jupyter_client"}
    # what a grading process really loads, it finds
    loaded = run_in(REPO, """
        import json, sys
        from autograder.engine import grade, reference
        from autograder.engine.assignment import Course
        found = Course.from_root(sys.argv[1]).assignment(sys.argv[2])
        grade.grade_local(found, reference.namespace(found))
        print(json.dumps(sorted(m for m in sys.modules
                                if m.split(".")[0] in ("autograder", "helpers"))))""",
                    REPO, ASSIGNMENT)
    assert set(loaded) <= set(files), set(loaded) - set(files)


def test_a_changed_byte_in_any_grading_module_misses_the_cache(tmp_path):
    """Every file of the closure, changed by one byte, changes the key: a result kept under the
    old one is not found."""
    top = package_copy(tmp_path)
    found = run_in(top, """
        import json, sys
        from pathlib import Path
        from autograder.engine import cache, closure
        from autograder.engine.assignment import Course
        from autograder.engine.options import Options
        from autograder.engine.result import Result
        top, folder = Path(sys.argv[1]), Path(sys.argv[2])
        assignment = Course.from_root(sys.argv[3]).assignment(sys.argv[4])
        submitted = json.loads(assignment.release.read_text())
        key = cache.content_key(assignment, Options(), submitted)
        cache.store(folder, key, Result("kept", assignment.name, []), None)
        modules = set(json.loads(sys.argv[5]))
        files = closure.closure(modules)[0]
        missed, outside = [], [n for n, p in files.items() if not p.is_relative_to(top)
                                and n.split(".")[0] in ("autograder", "helpers")]
        for name, path in sorted(files.items()):
            original = path.read_bytes()
            path.write_bytes(original + b" ")
            closure.code_digest.cache_clear()
            try:
                changed = cache.content_key(assignment, Options(), submitted)
                if changed != key and cache.lookup(folder, changed) is None:
                    missed.append(name)
            finally:
                path.write_bytes(original)
        closure.code_digest.cache_clear()
        print(json.dumps({"files": sorted(files), "missed": missed, "outside": outside,
                          "hit": cache.lookup(folder, key) is not None}))""",
                   top, tmp_path / "kept", REPO, ASSIGNMENT,
                   json.dumps(suite_modules(COURSE.assignment(ASSIGNMENT))))
    assert found["outside"] == []  # the copy's files were changed, not this checkout's
    assert len(found["files"]) > 20 and found["missed"] == found["files"]
    assert found["hit"]  # and restored, the key finds the kept result again


def test_every_setting_that_can_change_a_result_misses_the_cache():
    found = COURSE.assignment(ASSIGNMENT)
    submitted = json.loads(found.release.read_text())
    key = cache.content_key(found, Options(), submitted)
    for setting in options.settings():
        if setting.choices:
            other = next(c for c in setting.choices if c != setting.default)
        elif setting.type is str:
            other = setting.default + "x"
        else:
            other = setting.type(setting.default + 1)
        changed = cache.content_key(found, options.from_values({setting.name: other}), submitted)
        assert (changed != key) == setting.result, setting.name
    assert [s.name for s in options.settings() if not s.result] == ["timings"]


def test_the_course_files_a_result_depends_on_change_the_version(tmp_path):
    """The suite (and each catalogue file), a module the course's suites share, the reference
    notebook and the release: a copy of the second course, each file changed in turn."""
    root = tmp_path / "course"
    shutil.copytree(SECOND_COURSE, root)
    (root / "suites" / "shared.py").write_text("TOLERANCE = 1e-6\n")
    assignment = Course.from_root(root).assignment("centering")
    before = cache.version(assignment)
    changed = [*cache.suite_files(assignment), assignment.solution, assignment.release]
    assert {p.name for p in changed} >= {"test_centering.py", "mutants.py", "alternatives.py",
                                        "shared.py", "centering.ipynb"}
    for path in changed:
        original = path.read_bytes()
        path.write_bytes(original + b" ")
        assert cache.version(assignment) != before, path
        path.write_bytes(original)
    assert cache.version(assignment) == before
    # an edited catalogue is read anew by a process that keeps running
    mutants = assignment.suite / "mutants.py"
    mutants.write_text(mutants.read_text().replace("whole array", "entire array"))
    assert "entire array" in catalogue.mutants(assignment)[0].description


@pytest.mark.slow
def test_a_changed_reference_py_invalidates_the_results_kept_today(tmp_path):
    """A class graded and kept; then reference.py (which the hand-kept list once left out) gains
    a byte: the next run grades the notebook again instead of trusting the old entry."""
    if not confinement.available() and sandbox_mode() != "off":
        pytest.skip("bubblewrap is not installed")
    top = package_copy(tmp_path)
    notebook = tmp_path / "class" / "alice" / ASSIGNMENT / COURSE.assignment(ASSIGNMENT).release.name
    notebook.parent.mkdir(parents=True)
    notebook.write_text(json.dumps(catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT))))
    kept = tmp_path / "kept"
    script = """
        import json, sys
        from pathlib import Path
        from autograder.engine import batch
        from autograder.engine.assignment import Course
        from autograder.engine.options import Options
        assignment = Course.from_root(sys.argv[1]).assignment(sys.argv[2])
        [result] = batch.grade_many([sys.argv[3]], assignment, Options(sandbox=sys.argv[5]),
                                    jobs=1, state=sys.argv[4], progress=False)
        print(json.dumps({"score": result.score,
                          "entries": sorted(p.name for p in Path(sys.argv[4]).glob("*.json"))}))"""
    arguments = (REPO, ASSIGNMENT, notebook, kept, sandbox_mode())
    first = run_in(top, script, *arguments)
    assert first["score"] == 8.0 and len(first["entries"]) == 1
    entry = kept / first["entries"][0]
    stamp = entry.stat().st_mtime_ns
    again = run_in(top, script, *arguments)
    assert again == first and entry.stat().st_mtime_ns == stamp  # found, not graded again
    reference_py = top / "autograder" / "engine" / "reference.py"
    reference_py.write_text(reference_py.read_text() + "\n# a changed byte\n")
    after = run_in(top, script, *arguments)
    assert after["score"] == 8.0 and len(after["entries"]) == 2  # graded again, under a new key
    assert entry.stat().st_mtime_ns == stamp


def test_every_import_statement_counts_however_nested(tmp_path):
    """An import inside a function, a class, a branch, a handler or a match case is part of the
    grading code's closure as much as one at the top."""
    path = tmp_path / "module.py"
    path.write_text(
        "import a\n"
        "def f():\n    import b.c\n    class K:\n        from d import e\n"
        "try:\n    pass\nexcept ImportError:\n    import f1\nelse:\n    import f2\n"
        "finally:\n    import f3\n"
        "if x:\n    pass\nelse:\n    with y:\n        for z in w:\n            import g\n"
        "match v:\n    case 1:\n        import h\n"
        "value = [__import__('not_a_statement')]\n")
    assert closure.imported_names(path) == {"a", "b", "b.c", "d", "d.e", "f1", "f2", "f3", "g", "h"}


def test_a_file_is_parsed_once_for_its_bytes_and_again_when_they_change(tmp_path, monkeypatch):
    """Every assignment's closure reaches the same engine modules: each is parsed once per
    process for its bytes. A file whose bytes change is read afresh, never from that memory."""
    path = tmp_path / "module.py"
    path.write_text("import first\n")
    parsed = []
    real_parse = closure.ast.parse
    monkeypatch.setattr(closure.ast, "parse",
                        lambda *a, **k: parsed.append(a) or real_parse(*a, **k))
    assert closure.imported_names(path) == {"first"}
    assert closure.imported_names(path) == {"first"}
    assert len(parsed) == 1
    path.write_text("import second\n")
    assert closure.imported_names(path) == {"second"}
    assert len(parsed) == 2
    found = closure.imported_names(path)
    found.add("changed by a caller")
    assert closure.imported_names(path) == {"second"}  # callers get their own copy


def test_a_file_graded_before_is_found_by_its_bytes_without_being_read_again(tmp_path,
                                                                             monkeypatch):
    """The recording finds each learner's file graded by the workers, and a command run again
    finds every file it graded, by the file's bytes: no child reads it again. nbgrader's copy of a
    submission (no outputs) is found by the learner's own file, which it names; other bytes,
    settings or versions are graded."""
    from autograder.engine import grade, notebook
    found = COURSE.assignment("00-getting-started")
    own = tmp_path / "own.ipynb"
    own.write_text(json.dumps(catalogue.filled_notebook(found)))
    folder = tmp_path / "cache"
    settings = Options(sandbox=sandbox_mode(), figures="off")
    first, _ = grade.grade_notebook(own, found, settings, cache_folder=folder)
    assert first.score == first.max_score > 0
    assert cache.lookup_file(folder, cache.file_key(found, settings, own.read_bytes()))

    reads = []
    real = notebook.read_submission
    monkeypatch.setattr(notebook, "read_submission",
                        lambda *args, **kwargs: reads.append(1) or real(*args, **kwargs))
    again, executed = grade.grade_notebook(own, found, settings, cache_folder=folder)
    assert reads == [] and again.to_json() == dict(first.to_json(), notebook=str(own))
    copy = tmp_path / "copy.ipynb"  # nbgrader's copy: the same cells, no outputs
    copy.write_text(json.dumps(catalogue.filled_notebook(found)) + "\n")
    by_copy, _ = grade.grade_notebook(copy, found, settings, cache_folder=folder,
                                      figures_from=own.read_bytes())
    assert reads == [] and by_copy.score == first.score and by_copy.notebook == str(copy)
    # without the learner's file named, the copy's own bytes are new: read, and found by content
    grade.grade_notebook(copy, found, settings, cache_folder=folder)
    assert reads == [1]
    other = Options(sandbox=sandbox_mode(), figures="off", budget=settings.budget + 1)
    assert cache.file_key(found, other, own.read_bytes()) != \
        cache.file_key(found, settings, own.read_bytes())
    assert cache.file_key(found, settings, own.read_bytes() + b" ") != \
        cache.file_key(found, settings, own.read_bytes())
    (folder / f"{cache.file_key(found, settings, own.read_bytes())}.file").write_text("../x")
    assert cache.lookup_file(folder, cache.file_key(found, settings, own.read_bytes())) is None


# ---------------------------------------------------------------- the other side of the wire

def course_with_its_own_environment(tmp_path):
    """A copy of this course (the files git tracks, as a fresh clone has them) in an ordinary
    folder, installed in an interpreter environment of its own as ``make`` installs a course
    (``pip install -e``): the copy's ``helpers`` and engine are the ones its grader and its
    kernels import. Third-party packages come from this test's own environment."""
    import sysconfig
    top = tmp_path / "copy"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (top / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, top / name)
    env = top / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout
    (Path(site.strip()) / "third-party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-index", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "-e", str(top)], check=True, capture_output=True,
                   timeout=600)
    return top, python


def grade_with_state(top, python, notebook, state):
    """``python -m autograder grade --state`` in the copy, as an instructor types it; the score."""
    out = state.parent / "result.json"
    done = subprocess.run([str(python), "-m", "autograder", "grade", str(notebook), "--assignment",
                           "02-scoring", "--state", str(state), "--json", str(out),
                           "--sandbox", sandbox_mode(), "--figures", "off"],
                          cwd=top, capture_output=True, text=True, timeout=600,
                          env={"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(top),
                               "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode in (0, 1), done.stderr[-3000:]
    result = json.loads(out.read_text())  # one notebook: one result
    return result["score"], sorted(p.name for p in state.glob("*.json"))


@pytest.mark.slow
def test_a_helper_changed_after_grading_is_graded_again(tmp_path):
    """The probe of an instructor who fixes a helper: a perfect 02-scoring notebook graded with
    --state; then the copy's helpers/scoring.py, which only the kernel imports, made to raise;
    graded again with the same --state: graded afresh (0), not served from the cache (42).
    Put back, the first result is found again."""
    if not confinement.available() and sandbox_mode() != "off":
        pytest.skip("bubblewrap is not installed")
    top, python = course_with_its_own_environment(tmp_path)
    notebook = tmp_path / "class" / "alice" / "02-scoring" / "scoring.ipynb"
    notebook.parent.mkdir(parents=True)
    notebook.write_text(json.dumps(catalogue.filled_notebook(COURSE.assignment("02-scoring"))))
    state = tmp_path / "state"
    first, kept = grade_with_state(top, python, notebook, state)
    assert first == 42 and len(kept) == 1
    helper = top / "src" / "helpers" / "scoring.py"
    original = helper.read_text()
    helper.write_text("raise RuntimeError('a helper broken on purpose')\n" + original)
    stamp = (state / kept[0]).stat().st_mtime_ns
    broken, _ = grade_with_state(top, python, notebook, state)
    assert broken == 0  # graded afresh: the helper's failure, not the kept 42
    helper.write_text(original)
    assert grade_with_state(top, python, notebook, state)[0] == 42
    assert (state / kept[0]).stat().st_mtime_ns == stamp  # the first result, found again


def test_a_changed_byte_in_any_file_the_kernel_imports_misses_the_cache(tmp_path):
    """Every file of the course's learner packages, where the kernel imports them from, changed
    by one byte, changes the key; so does the release notebook's import of another module."""
    top, python = course_with_its_own_environment(tmp_path)
    done = subprocess.run([str(python), "-c", textwrap.dedent("""
        import json, sys
        from autograder.engine import cache, closure
        from autograder.engine.assignment import Course
        from autograder.engine.options import Options
        assignment = Course.from_root(sys.argv[1]).assignment("02-scoring")
        submitted = json.loads(assignment.release.read_text())
        key = cache.content_key(assignment, Options(), submitted)
        files = closure.package_files(assignment.course.learner_packages)
        missed = []
        for path in files:
            original = path.read_bytes()
            path.write_bytes(original + b" ")
            if cache.content_key(assignment, Options(), submitted) == key:
                missed.append(str(path))
            path.write_bytes(original)
        print(json.dumps({"files": [str(p) for p in files], "missed": missed,
                          "again": cache.content_key(assignment, Options(), submitted) == key}))
        """), str(top)], capture_output=True, text=True, cwd=top, timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(top)})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(found["files"]) > 10
    assert all(f.startswith(str(top / "src" / "helpers")) for f in found["files"])
    assert found["missed"] == [] and found["again"]


def test_the_confinement_in_force_is_in_the_key(monkeypatch):
    """``--sandbox auto`` grades in bubblewrap on one machine and with limits only on another:
    the key names what is in force, not the word auto."""
    found = COURSE.assignment(ASSIGNMENT)
    submitted = json.loads(found.release.read_text())
    monkeypatch.setattr(Options, "confinement", lambda self: confinement.BUBBLEWRAP)
    sandboxed = cache.content_key(found, Options(), submitted)
    monkeypatch.setattr(Options, "confinement", lambda self: confinement.LIMITS)
    assert cache.content_key(found, Options(), submitted) != sandboxed
    assert cache.file_key(found, Options(), b"x") != cache.file_key(
        found, Options(sandbox="off"), b"y")
