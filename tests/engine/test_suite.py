"""Running a hidden suite and scoring it test by test (autograder/engine/suite.py)."""
import sys

import pytest

from autograder.engine import grade, reference, suite
from autograder.engine.assignment import Assignment, Course
from support import COURSE
from support.attacks import ASSIGNMENT, FULL


@pytest.mark.slow
def test_what_rests_on_the_kernels_word_is_labelled():
    found = COURSE.assignment(ASSIGNMENT)
    result = grade.grade_local(found, reference.namespace(found))
    labelled = [t for t in result.tests if t.feedback == suite.KERNEL_WORD]
    assert result.score == FULL and labelled
    assert all(t.passed for t in labelled)
    names = {t.name for t in labelled}
    assert any("unchanged" in n or "warning" in n for n in names), names
    assert any(t.feedback == "" for t in result.tests), "a test that reads only values is unlabelled"


def test_suite_runner_reports_a_suite_that_cannot_run(tmp_path):
    broken = Assignment(Course(tmp_path), "broken")
    broken.suite.mkdir(parents=True)
    (broken.suite / "test_broken.py").write_text("import does_not_exist\n")
    with pytest.raises(RuntimeError, match="did not run"):
        suite.run(broken, suite.local_caller({}))
    with pytest.raises(LookupError, match="no hidden suite"):
        suite.run(Assignment(Course(tmp_path), "missing"), suite.local_caller({}))


def test_hygiene_counts_only_beside_a_passing_test_of_values():
    from autograder.engine.result import TestResult

    def test(name, exercise, passed, hygiene=False):
        return TestResult(name, exercise, float(passed), 1.0, "passed" if passed else "failed",
                          suite.KERNEL_WORD if hygiene else "", hygiene=hygiene)
    stub = [test("values", "f", False), test("clean", "f", True, hygiene=True)]
    right = [test("values", "g", True), test("clean", "g", True, hygiene=True)]
    alone = [test("clean", "h", True, hygiene=True)]  # a function tested on hygiene alone
    kept = suite.hygiene_counts_with_values(stub + right + alone)
    assert [t.score for t in kept] == [0, 0, 1, 1, 1]
    assert "counts once f returns right values" in kept[1].feedback and kept[1].status == "failed"


def test_what_a_course_suites_share_is_importable_only_while_a_suite_runs():
    """suite.importable puts the suites folder on the path and forgets its modules afterwards,
    so that an edited module is read again and another course's module of that name is its own."""
    assert [p.name for p in COURSE.suite_support()] == ["attention_kit.py"]
    with suite.importable(COURSE.suites_folder):
        import attention_kit
        assert attention_kit.__file__ == str(COURSE.suites_folder / "attention_kit.py")
    assert "attention_kit" not in sys.modules
    assert str(COURSE.suites_folder) not in sys.path
    with pytest.raises(ImportError):
        import attention_kit  # noqa: F401, F811


def test_a_suite_is_imported_with_its_asserts_plain_even_inside_pytest(tmp_path, monkeypatch):
    """The grader runs a suite with --assert=plain; this process is itself a pytest session,
    whose import hook rewrites any module named test_*.py. While a suite runs, that hook is set
    aside (the suite is imported as the grader imports it, and from its bytecode), then put
    back."""
    import importlib
    hooks = [h for h in sys.meta_path if type(h).__module__ == "_pytest.assertion.rewrite"]
    assert hooks, "run under pytest with assertion rewriting (its default)"
    for name in ("test_probe_rewritten", "test_probe_plain"):
        (tmp_path / f"{name}.py").write_text("REWRITTEN = '@py_builtins' in globals()\n"
                                            "assert True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.import_module("test_probe_rewritten").REWRITTEN  # the hook, at work
    before = list(sys.meta_path)
    with suite.plain_imports():
        assert not any(h in sys.meta_path for h in hooks)
        assert not importlib.import_module("test_probe_plain").REWRITTEN
    assert sys.meta_path == before
    for name in ("test_probe_rewritten", "test_probe_plain"):
        sys.modules.pop(name, None)


def test_a_suite_runs_with_no_plugin_another_package_installed(tmp_path, monkeypatch):
    """A pytest plugin installed by some package of the grading environment (entry point group
    ``pytest11``: pytest-randomly, pytest-timeout, pytest-xdist...) is not loaded into a hidden
    suite's run, where it could reorder or stop the tests; a plain pytest run loads it (the
    control: the spy below is installed the way such a plugin is)."""
    site = tmp_path / "site"
    (site / "spy_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "spy_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (site / "spy_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[pytest11]\nspy = spy_plugin\n")
    loaded = tmp_path / "loaded"
    (site / "spy_plugin.py").write_text(
        "import pathlib\n\n\ndef pytest_configure(config):\n"
        f"    pathlib.Path({str(loaded)!r}).touch()\n")
    monkeypatch.syspath_prepend(str(site))
    found = COURSE.assignment(ASSIGNMENT)
    results = suite.run(found, suite.local_caller(reference.namespace(found)), 120)
    assert results and all(t.passed for t in results)
    assert not loaded.exists(), "a hidden suite's run loaded a plugin of another package"
    (tmp_path / "empty").mkdir()
    pytest.main(["-q", "--co", "-p", "no:cacheprovider", str(tmp_path / "empty")])
    assert loaded.exists()  # the same plugin, in a plain pytest run
