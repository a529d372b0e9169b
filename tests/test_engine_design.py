"""The engine's shape: folders by floor, imports that only go down, one name per module, the course
reached only through an Assignment, options declared once, and types checked.

The floors (autograder/__init__.py draws them): sandbox (1) < engine (2) < course (3) < tools (4)
< the command line (5); the suite kit stands over the engine, and the suites, course content,
import only the kit. Every import counts, those inside functions too, which hide a cycle rather
than remove it.
"""
import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import autograder
from autograder.engine import options
from autograder.engine.assignment import Course
from support import COURSE, REPO

PACKAGE = Path(autograder.__file__).parent
FLOORS = {"sandbox": 1, "engine": 2, "kit": 2.5, "course": 3, "tools": 4, "__main__": 5}
# What each floor may import of the package, besides itself.
ALLOWED = {"sandbox": set(), "engine": {"sandbox"}, "kit": {"engine"},
           "course": {"engine", "sandbox"}, "tools": {"course", "engine", "sandbox"},
           "__main__": {"course", "engine", "sandbox", "tools"}}
# Third-party packages only the course layer (nbgrader's world) may use.
NBGRADER_WORLD = {"nbgrader", "traitlets", "nbconvert", "nbformat", "jupyter_core", "bleach",
                  "jinja2", "sqlalchemy"}


def modules():
    """module name -> source file, for every module of the package (suites apart)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if "suites" in relative.parts:
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def floor(module):
    """The floor a module of the package belongs to ("autograder" itself: none)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def imports(path, module):
    """Every module of the package that ``path`` (the module ``module``) imports, by full name,
    and the top-level names of everything else it imports."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    ours, others = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "autograder":
                ours.add(name)
            else:
                others.add(name.split(".")[0])
    known = modules()
    return {name for name in ours if name in known and name != module}, others


def import_graph():
    return {name: imports(path, name)[0] for name, path in modules().items()}


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


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    cycles = [" -> ".join(c) for name in graph if (c := cycle_through(graph, name))]
    assert cycles == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycle_through({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == ["a", "b", "c", "a"]
    assert cycle_through({"a": {"b"}, "b": set()}, "a") is None


def test_every_module_sits_in_a_floor_and_imports_only_the_floors_below():
    graph = import_graph()
    placed = {name: floor(name) for name in graph if floor(name) is not None}
    assert set(placed.values()) <= set(FLOORS), placed
    wrong = [f"{name} -> {target}" for name, targets in graph.items() if name in placed
             for target in targets
             if floor(target) not in ALLOWED[placed[name]] | {placed[name], None}]
    assert wrong == []
    # the whole package hangs together: every floor is used, the command line alone imports tools
    assert {placed[n] for n in placed} == set(FLOORS)
    assert [n for n, targets in graph.items() for t in targets if floor(t) == "__main__"] == []


def test_the_floor_rules_catch_an_import_that_goes_up():
    """The rule the test above applies, on an invented import: the engine importing the course."""
    assert "course" not in ALLOWED["engine"] and "engine" in ALLOWED["course"]
    assert "tools" not in ALLOWED["course"] and not ALLOWED["sandbox"]


def test_each_floor_says_what_it_may_import():
    for name in ("sandbox", "engine", "course", "tools"):
        docstring = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert docstring and "May import" in docstring, name
    overview = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text()))
    assert all(f"``{name}/``" in overview for name in ("sandbox", "engine", "course", "tools"))


def test_the_sandbox_needs_only_the_standard_library_and_the_engine_nothing_of_nbgrader():
    for name, path in modules().items():
        others = imports(path, name)[1]
        if floor(name) == "sandbox":
            # the launcher's own imports of pyzmq and ipykernel run inside the kernel
            allowed = sys.stdlib_module_names | {"__future__", "zmq", "ipykernel"}
            assert others <= allowed, (name, others - allowed)
        if floor(name) in ("sandbox", "engine", "kit"):
            assert not others & NBGRADER_WORLD, (name, others & NBGRADER_WORLD)


def test_the_engine_imports_nothing_of_any_course():
    """What installs as the engine (every floor but tools/, this course's own tools) imports no
    course's package: not this course's learner packages, nor its suites' shared modules."""
    course_packages = set(COURSE.learner_packages) | {p.stem for p in COURSE.suite_support()}
    assert "helpers" in course_packages and "attention_kit" in course_packages
    found = {name: imports(path, name)[1] & course_packages for name, path in modules().items()
             if floor(name) != "tools"}
    assert {name: names for name, names in found.items() if names} == {}


def test_one_import_name_per_module():
    """No module of the package is imported under another name (``grade as engine``)."""
    aliased = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = getattr(node, "module", None) or ""
                for alias in node.names:
                    full = f"{module}.{alias.name}" if module else alias.name
                    is_ours = getattr(node, "level", 0) or full.startswith("autograder")
                    if is_ours and alias.asname and (full.rpartition(".")[2] in
                                                     {m.rpartition(".")[2] for m in modules()}):
                        aliased.append(f"{name}: {full} as {alias.asname}")
    assert aliased == []


def test_suites_import_the_engine_through_the_kit_only():
    wrong = []
    for path in COURSE.suites_folder.rglob("*.py"):
        if path.name == "conftest.py":
            continue  # runs a suite by hand: the engine's own test harness
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder") \
                    and node.module != "autograder.kit":
                wrong.append(f"{path.relative_to(REPO)}: {node.module}")
            if isinstance(node, ast.Import) and any(a.name.startswith("autograder")
                                                    for a in node.names):
                wrong.append(f"{path.relative_to(REPO)}: import autograder")
    assert wrong == []


def test_below_the_course_layer_nothing_knows_this_course():
    """No repository path, no course folder, no course name in the sandbox or the engine: the
    course reaches them only as an Assignment. The four modules that read ``__file__`` read
    their own source (the agent and the launcher run inside the kernel) or find their own
    package (the child processes of the submission reader and of the course's functions)."""
    for name, path in modules().items():
        if floor(name) not in ("sandbox", "engine") and name != "autograder.kit":
            continue
        text = path.read_text(encoding="utf-8")
        for word in ("attention-course", "attention_course", "ATTENTION_COURSE", "REPO"):
            assert word not in text, (name, word)
        tree = ast.parse(text)
        constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        assert not constants & {"solutions", "notebooks", "autograder/suites", "suites/"}, name
        if name != "autograder.engine.assignment":
            assert "suites" not in constants, name  # the Course's default folder name only
        if any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
            assert name.rpartition(".")[2] in ("agent", "launcher", "notebook", "oracle"), name


def test_an_assignment_knows_its_files_and_is_detected_from_a_notebook(tmp_path):
    name = COURSE.assignments()[0].name
    found = COURSE.assignment(name)
    assert found.release.is_file() and found.solution.is_file() and found.suite.is_dir()
    assert found.release.is_relative_to(REPO / "notebooks")
    assert COURSE.detect(tmp_path / name / "anything.ipynb") == found
    assert COURSE.detect(tmp_path / found.release.name) == found
    with pytest.raises(LookupError, match="--assignment"):
        COURSE.detect(tmp_path / "unknown.ipynb")
    with pytest.raises(LookupError, match="no assignment 'unknown'"):
        COURSE.assignment("unknown")


def test_a_course_reads_its_layout_from_its_root(tmp_path):
    assert (COURSE.solutions, COURSE.release, COURSE.suites) == (
        "solutions", "notebooks", "suites")
    assert not COURSE.suites_folder.is_relative_to(REPO / "autograder")  # the course's, not the engine's
    bare = Course.from_root(tmp_path)  # no pyproject.toml: nbgrader's own defaults
    assert (bare.solutions, bare.release, bare.suites, bare.course_id) == (
        "source", "release", "suites", tmp_path.name)
    (tmp_path / "pyproject.toml").write_text('[tool.autograder]\nsuites = "grading"\nmistake = 1\n')
    with pytest.raises(ValueError, match="no setting mistake"):
        Course.from_root(tmp_path)


def test_mypy_strict_passes_on_every_floor():
    """Every function and method of every floor (the sandbox, the engine and the kit, the course,
    the tools and the bench: the whole ``autograder`` package, the files pyproject's [tool.mypy]
    names; not the suites or the tests) is annotated and type-checks strictly, and the kit exports
    only names its modules define or import on purpose. One run: ``--strict`` only adds checks to
    the project's configuration, so a plain ``mypy`` passes whenever this does."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"^Success: no issues found in \d+ source files", done.stdout, re.M), done.stdout


# ------------------------------------------------------------------ options declared once

def test_every_setting_is_a_flag_and_an_nbgrader_setting_with_its_help():
    """The command line's flags and nbgrader's traitlets are generated from Options: every
    setting, the resource limits and the received bytes included, with its help and default."""
    from autograder.course.nbgrader_plugin import HiddenSuiteGrading
    names = {s.name for s in options.settings()}
    assert {"sandbox", "cell_timeout", "budget", "max_restarts", "received_bytes",
            "memory_bytes", "open_files", "scratch_bytes", "timings"} <= names
    traits = HiddenSuiteGrading.class_traits(config=True)
    assert names <= set(traits)
    assert all(traits[name].help == s.help and s.help for s in options.settings()
               for name in [s.name])
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    flags = {action.dest for action in parser._actions if action.option_strings}
    assert names <= flags
    defaults = parser.parse_args([])
    assert options.from_arguments(defaults) == options.Options()


def test_flags_and_nbgrader_settings_give_the_same_options():
    from traitlets.config import Config

    from autograder.course.nbgrader_plugin import HiddenSuiteGrading
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    given = options.from_arguments(parser.parse_args(
        ["--no-sandbox", "--cell-timeout", "7", "--memory-bytes", str(1 << 30),
         "--open-files", "99", "--received-bytes", "12345", "--max-restarts", "1"]))
    assert (given.sandbox, given.cell_timeout, given.limits.memory_bytes, given.limits.open_files,
            given.received_bytes, given.max_restarts) == ("off", 7.0, 1 << 30, 99, 12345, 1)
    config = Config()
    config.HiddenSuiteGrading.cell_timeout = 7.0
    config.HiddenSuiteGrading.memory_bytes = 1 << 30
    config.HiddenSuiteGrading.open_files = 99
    config.HiddenSuiteGrading.received_bytes = 12345
    config.HiddenSuiteGrading.max_restarts = 1
    config.HiddenSuiteGrading.sandbox = "off"
    assert HiddenSuiteGrading(config=config).options() == given


def test_the_recording_process_gets_every_option():
    """What autograde hands the recording process (nbgrader's command line) is all of the
    options: read back by nbgrader's own loader, they are the same options, so the recording
    finds every result the grading kept."""
    from traitlets.config.loader import KVArgParseConfigLoader

    from autograder.course.nbgrader_plugin import HiddenSuiteGrading
    chosen = options.from_values({"sandbox": "require", "cell_timeout": 12.5, "budget": 99.0,
                                  "memory_bytes": 3 << 30, "open_files": 64,
                                  "received_bytes": 1 << 20, "timings": "/tmp/a b.jsonl"})
    arguments = options.config_arguments(chosen, "HiddenSuiteGrading")
    assert len(arguments) == len(options.settings())
    config = KVArgParseConfigLoader(arguments, classes=[HiddenSuiteGrading]).load_config()
    assert HiddenSuiteGrading(config=config).options() == chosen


# ------------------------------------------------------------------ the docs name what exists

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "benchmarks" / "README.md"]
# A repository path written in a doc (not a placeholder such as NN-topic or <id>, not a path inside
# Gradescope's container such as /autograder/source).
DOC_PATH = re.compile(r"(?<![\w/.<-])((?:autograder|tests|src|docs|solutions|notebooks|benchmarks)"
                      r"/[\w./-]*[\w/])")
DOC_MODULE = re.compile(r"(?<![\w.])(autograder(?:\.\w+)+)")
DOC_LINK = re.compile(r"\]\(([^)#\s]+)\)")


def is_module(dotted):
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def named_in_docs(text):
    """(paths, modules, relative links) a doc's text names."""
    paths = [p for p in DOC_PATH.findall(text) if "NN-" not in p]
    return paths, DOC_MODULE.findall(text), [
        link for link in DOC_LINK.findall(text) if "://" not in link]


def test_the_docs_name_only_files_modules_and_links_that_exist():
    """A moved module or test, or a link to a page that is not in the repository, shows up here
    rather than in a reader's failed command."""
    missing = []
    for doc in DOCS:
        paths, modules, links = named_in_docs(doc.read_text(encoding="utf-8"))
        missing += [f"{doc.name}: {p}" for p in paths if not (REPO / p).exists()]
        # a module, or a name defined in one below the package (autograder.course.config.configure)
        missing += [f"{doc.name}: {m}" for m in modules if not is_module(m) and not (
            m.count(".") > 1 and is_module(m.rpartition(".")[0]))]
        missing += [f"{doc.name}: link {link}" for link in links
                    if not (doc.parent / link).exists()]
    assert missing == []


def test_the_docs_check_finds_a_moved_module_and_a_dangling_link():
    paths, modules, links = named_in_docs(
        "see `tests/test_grading.py`, `python -m autograder.bench`, [the contract](../curriculum) "
        "and `autograder/suites/NN-topic/` and `/autograder/source`")
    assert paths == ["tests/test_grading.py"] and modules == ["autograder.bench"]
    assert links == ["../curriculum"]
    assert not (REPO / paths[0]).exists() and not is_module(modules[0])
    assert not (REPO / "docs" / links[0]).exists()


def test_every_module_a_docstring_or_comment_names_exists():
    """Modules named in the package's own text (``autograder.course.identity``, ``python -m
    autograder.course.nbgrader_launch``) are today's: a move leaves no stale name behind."""
    import importlib.util

    def exists(module):
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent that is a module, not a package
            return False
    stale = []
    for path in sorted((REPO / "autograder").rglob("*.py")) + sorted((REPO / "src").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in set(re.findall(r"(?<![\w/.-])autograder(?:\.[a-z_]+)+", text)):
            parts = name.split(".")
            if parts[-1] in ("zip", "json", "py", "ipynb", "csv", "html", "md", "txt"):
                continue  # a file's name (autograder.zip), not a module's
            found = next((k for k in range(len(parts), 0, -1) if exists(".".join(parts[:k]))), 0)
            if found < 2 or found < len(parts) - 1:  # a module, or a module's attribute
                stale.append((path.relative_to(REPO).as_posix(), name))
    assert stale == [], stale


def test_the_stale_module_check_catches_a_moved_module():
    import importlib.util
    assert importlib.util.find_spec("autograder.identity") is None
    assert importlib.util.find_spec("autograder.course.identity") is not None
