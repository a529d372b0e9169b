"""The engine's shape: imports go one way, so each module can be read and tested on its own.

Grading one notebook (grade) knows nothing of grading many (batch); grading many knows nothing of
the command line (__main__); nothing imports the command line. Every relative import counts,
also those inside functions, which hide a cycle rather than remove it.
"""
import ast
from pathlib import Path

from autograder.engine import assignment

PACKAGE = Path(assignment.__file__).parent


def import_graph():
    modules = {path.stem: path for path in PACKAGE.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder."):
                found.add(node.module.split(".")[1])
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def cycle_through(graph, start):
    """A path start -> ... -> start, or None."""
    stack = [(start, [start])]
    seen = set()
    while stack:
        node, path = stack.pop()
        for following in graph[node]:
            if following == start:
                return path + [start]
            if following not in seen:
                seen.add(following)
                stack.append((following, path + [following]))
    return None


def test_the_engine_has_no_import_cycle():
    graph = import_graph()
    cycles = [" -> ".join(c) for name in graph if (c := cycle_through(graph, name))]
    assert cycles == []


def test_imports_go_one_way():
    graph = import_graph()
    assert "batch" not in graph["grade"] and "__main__" not in graph["grade"]
    assert "__main__" not in graph["batch"]
    assert [name for name, deps in graph.items() if "__main__" in deps] == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycle_through({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == ["a", "b", "c", "a"]
    assert cycle_through({"a": {"b"}, "b": set()}, "a") is None


def test_the_assignment_version_ignores_what_does_not_grade():
    """Editing the demo, the report or the command line keeps every cached result."""
    graded = {Path(module).name for module in assignment.GRADING_MODULES}
    assert {"demo.py", "report.py", "__main__.py", "bench.py", "formats.py", "instructor.py",
            "gradescope.py"}.isdisjoint(graded)
    assert all((PACKAGE.parent / module).is_file() for module in assignment.GRADING_MODULES)
    # what a score is computed by is in it: the grade, the kernel, the suite runner, the wire
    assert {"grade.py", "kernel.py", "suite.py", "wire.py", "agent.py", "testing.py"} <= graded


def test_an_assignment_knows_its_files_and_is_detected_from_a_notebook(tmp_path):
    from autograder.engine import reference
    name = reference.assignments()[0]
    found = assignment.Assignment(name)
    assert found.release.is_file() and found.solution.is_file() and found.suite.is_dir()
    assert len(found.version) == 16 and found.version == assignment.Assignment(name).version
    assert assignment.Assignment.detect(tmp_path / name / "anything.ipynb") == found
    assert assignment.Assignment.detect(tmp_path / found.release.name) == found
    try:
        assignment.Assignment.detect(tmp_path / "unknown.ipynb")
    except LookupError as error:
        assert "--assignment" in str(error)
    else:
        raise AssertionError("an unknown notebook was given an assignment")


def test_mypy_passes_on_the_engine():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=PACKAGE.parent,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_every_grading_option_is_an_nbgrader_setting_with_help():
    """nbgrader_config.py can set the sandbox, the time limits and the resource limits."""
    from traitlets.config import Config
    from autograder.course.nbgrader_plugin import HiddenSuiteGrading
    config = Config()
    config.HiddenSuiteGrading.memory_bytes = 1 << 30
    config.HiddenSuiteGrading.cell_timeout = 7.0
    config.HiddenSuiteGrading.max_restarts = 1
    config.HiddenSuiteGrading.sandbox = "require"
    options = HiddenSuiteGrading(config=config).options()
    assert (options.limits.memory_bytes, options.cell_timeout, options.max_restarts,
            options.sandbox) == (1 << 30, 7.0, 1, "require")
    traits = HiddenSuiteGrading.class_traits(config=True)
    assert {"sandbox", "cell_timeout", "notebook_timeout", "call_timeout", "budget",
            "max_restarts", "cpu_seconds", "memory_bytes", "processes", "file_bytes",
            "scratch_bytes"} <= set(traits)
    assert all(trait.help for trait in traits.values())
