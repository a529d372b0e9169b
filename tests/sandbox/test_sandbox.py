"""The sandbox shows an allowlist; flags and the collect step read submissions as data."""
import json
import re
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import exchange
from autograder.engine import catalogue, flags, kernel, notebook
from autograder.engine.kernel import KernelSession
from autograder.sandbox import confinement
from support import ASSIGNMENTS, COURSE, REPO


def mount_args(args):
    """(read-only binds, tmpfs mount points) of a bwrap command line."""
    binds, tmpfs = [], []
    for index, arg in enumerate(args):
        if arg == "--ro-bind":
            binds.append(args[index + 2])
        elif arg == "--tmpfs":
            tmpfs.append(args[index + 1])
    return binds, tmpfs


def test_the_sandbox_binds_no_course_folder_and_no_whole_machine(tmp_path):
    args = confinement.bubblewrap_args(tmp_path / "kernel.json", confinement.Limits(),
                                       tmp_path / "passwd", uid=confinement.kernel_uid(),
                                       visible=COURSE.learner_packages)
    binds, _ = mount_args(args)
    assert "/" not in binds and "/etc" not in binds and "/usr" not in binds
    assert "/usr/local" not in binds, "nbgrader's default exchange lives under /usr/local/share"
    for private in (REPO, REPO / "autograder", COURSE.suites_folder, COURSE.solutions_folder,
                    Path.home(), Path("/tmp"), Path("/srv"), Path("/var")):
        assert not any(Path(b) == private or private.is_relative_to(b) for b in binds), private
    [helpers] = confinement.python_layout(show=("helpers",))["show"]
    assert any(Path(helpers).resolve().is_relative_to(b) for b in binds)
    assert "--clearenv" in args and "--unshare-net" in args and "--new-session" in args


def test_an_engine_installed_inside_site_packages_is_covered(tmp_path, monkeypatch):
    """A non-editable install puts the grading engine (and its suites) in site-packages, which
    the kernel needs: it is covered by an empty folder."""
    site = tmp_path / "site-packages"
    (site / "autograder" / "suites").mkdir(parents=True)
    (site / "helpers").mkdir()
    layout = dict(confinement.python_layout(), path=[str(site)], show=[str(site / "helpers")],
                  hide=[str(site / "autograder")], site_packages=[str(site)])
    monkeypatch.setattr(confinement, "python_layout", lambda **which: layout)
    args = confinement.bubblewrap_args(tmp_path / "k.json", confinement.Limits(), tmp_path / "p",
                                       private=[str(tmp_path / "elsewhere")])
    binds, tmpfs = mount_args(args)
    assert str(site) in binds and str(site / "autograder") in tmpfs
    assert str(tmp_path / "elsewhere") not in tmpfs  # not inside anything bound: simply absent


def test_the_kernel_environment_is_a_fixed_list(monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "x")
    env = confinement.kernel_environment("/home/learner")
    assert "GRADER_SECRET" not in env and set(env) <= {
        "HOME", "TMPDIR", "USER", "LOGNAME", "PATH", "LANG", "LC_ALL", "IPYTHONDIR",
        "MPLCONFIGDIR", "MPLBACKEND", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
        "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE", "PYDEVD_DISABLE_FILE_VALIDATION",
        "JPY_PARENT_PID"}


@pytest.mark.slow
def test_inside_a_kernel_only_the_allowlist_is_mounted(tmp_path):
    if not confinement.available():
        pytest.skip("bubblewrap is not installed")
    expected, covers = mount_args(confinement.bubblewrap_args(Path("/k"), confinement.Limits(),
                                                              Path("/p"), uid=1,
                                                              seeds=kernel.home_seeds(tmp_path)))
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        result = session.execute(
            "import json, os\nprint(json.dumps([[l.split()[4] for l in open('/proc/self/mountinfo')],"
            " sorted(os.listdir('/')), os.getuid(), dict(os.environ)]))", 30)
    text = "".join(o.get("text", "") for o in result.outputs)
    points, top, uid, env = json.loads(text)
    allowed = set(expected) | set(covers) | {"/", "/dev", "/proc", "/etc/passwd",
                                             confinement.INSIDE_CONNECTION}
    extra = [p for p in points if p not in allowed and not p.startswith(("/dev/", "/proc/"))]
    assert extra == [], f"mounted but not on the allowlist: {extra}"
    assert set(top) <= {"bin", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "proc",
                        "root", "run", "sbin", "tmp", "usr", *Path(sys.prefix).parts[1:2],
                        *Path(REPO).parts[1:2], *Path(os.path.realpath(sys.executable)).parts[1:2]}
    assert uid != os.getuid() or os.geteuid() != 0
    home = [p for p in points if p.startswith(confinement.INSIDE_HOME + "/")]
    fonts = kernel.matplotlib_font_list.get()   # None while it is still being read
    assert home == [] or (fonts is not None and home == [
        f"{confinement.INSIDE_HOME}/.matplotlib/{fonts[0]}"]), (
        "the home holds at most one read-only file: matplotlib's font list")
    assert set(env) <= set(confinement.kernel_environment("/")) | {"PWD", "SHLVL", "_"} | {
        "LC_CTYPE", "PYDEVD_USE_FRAME_EVAL", "TERM", "CLICOLOR", "FORCE_COLOR", "CLICOLOR_FORCE",
        "PAGER", "GIT_PAGER"}  # the last ones ipykernel sets for itself


def test_flags_name_a_cell_as_a_reader_finds_it_never_by_number():
    """JupyterLab shows no cell numbers: a flag names the cell by the function it defines, the
    heading above it or its first line (what the grader's reader passes, notebook.cell_label)."""
    from autograder.engine import notebook as notebooks
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Setup"},
             {"cell_type": "code", "metadata": {}, "source": "import numpy as np"},
             {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "row_normalize"}},
              "source": "def row_normalize(x):\n    return x\nnp.allclose = lambda *a: True"},
             {"cell_type": "code", "metadata": {}, "source": "np.testing.x = 1"}]
    found = flags.scan({"cells": cells}, notebooks.cell_label)
    assert found[0].startswith("the cell that defines `row_normalize` assigns np.allclose")
    assert found[-1].startswith("a cell under 'Setup' assigns np.testing.x"), found
    assert not [line for line in found if re.search(r"\bcell \d", line)], found
    alone = flags.scan({"cells": [cells[3]]}, notebooks.cell_label)
    assert alone == ["the cell beginning 'np.testing.x = 1' assigns np.testing.x"], alone


def test_flags_name_code_that_patches_modules_or_the_agent():
    notebook = {"cells": [
        {"cell_type": "code", "source": "import numpy as np\nimport json as j\n%matplotlib inline",
         "metadata": {}},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "softmax"}}, "source":
         "np.allclose = lambda *a: True\nj.dumps = None\nsetattr(np.testing, 'x', 1)\n"
         "import sys\nsys.modules['pytest'] = 1\n__autograder_agent__.x = 1\n"
         "del np.linalg.norm\nvars(np)['a'] = 1\nnp.__dict__['b'] = 2\n"},
        {"cell_type": "code", "metadata": {}, "source":
         "def softmax(z, axis=-1):\n    e = np.exp(z - z.max(axis, keepdims=True))\n"
         "    out = e / e.sum(axis, keepdims=True)\n    out.flags.writeable = True\n    return out"},
        {"cell_type": "code", "metadata": {}, "source": "def broken(:\n"},
    ]}
    found = flags.scan(notebook)
    assert all(line.startswith("cell 2 ('softmax') ") for line in found)
    for words in ("assigns np.allclose", "assigns j.dumps", "calls setattr on np.testing",
                  "sys.modules", "__autograder_agent__", "deletes np.linalg.norm",
                  "vars(np)", "np.__dict__"):
        assert any(words in line for line in found), words


def test_ordinary_answers_are_not_flagged():
    """No solution, and no mutant or alternative of the catalogue (wrong and right answers
    written as learners write them), is flagged."""
    for assignment in ASSIGNMENTS:
        solution = json.loads(COURSE.assignment(assignment).solution.read_text())
        for cell in solution["cells"]:
            cell["source"] = "".join(cell["source"])
        assert flags.scan(solution) == [], assignment
        for entry in catalogue.entries(COURSE.assignment(assignment)):
            submitted = notebook.check_structure(catalogue.notebook_with(entry))
            assert flags.scan(submitted) == [], entry.key


def test_collect_copies_regular_files_only_and_follows_no_link(tmp_path, caplog):
    source = tmp_path / "inbound" / "alice+02+2026"
    (source / "sub").mkdir(parents=True)
    (source / "answer.ipynb").write_text("{}")
    (source / "sub" / "notes.txt").write_text("n")
    (source / "suite.py").symlink_to(COURSE.assignment("00-getting-started").suite)
    (source / "sub" / "secret").symlink_to("/etc/passwd")
    os.mkfifo(source / "pipe")
    assert "is a symbolic link" in exchange.find_problem(str(source))
    target = tmp_path / "submitted"
    with caplog.at_level(logging.WARNING):
        exchange.copy_regular_tree(str(source), str(target), log=logging.getLogger("collect"))
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    assert copied == ["answer.ipynb", "sub", "sub/notes.txt"]
    assert not any(p.is_symlink() for p in target.rglob("*"))
    assert caplog.text.count("link or a special file") == 3
    linked = tmp_path / "inbound" / "bob+02+2026"
    linked.symlink_to(source, target_is_directory=True)
    assert exchange.find_problem(str(linked)) == "bob+02+2026 is a symbolic link"
    with pytest.raises(OSError):
        exchange.copy_regular_tree(str(linked), str(tmp_path / "bob"))


def test_a_kernel_starts_with_matplotlibs_font_list_and_never_rebuilds_it():
    """Every kernel's empty home gets the font list the grader built once, so matplotlib's first
    import does not rebuild it; the folder stays writable, the list read-only."""
    if not confinement.available():
        pytest.skip("bubblewrap is not installed")
    fonts = kernel.matplotlib_font_list
    fonts.get()
    fonts.thread.join(120)
    name, text = fonts.get()
    assert name.startswith("fontlist-") and json.loads(text)["ttflist"]
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        result = session.execute(
            "import os, json, matplotlib, matplotlib.font_manager as fm\n"
            "folder = matplotlib.get_cachedir()\n"
            "path = os.path.join(folder, os.listdir(folder)[0])\n"
            "print(json.dumps([sorted(os.listdir(folder)), os.access(folder, os.W_OK),"
            " os.access(path, os.W_OK), len(fm.fontManager.ttflist)]))", 60)
    text_out = "".join(o.get("text", "") for o in result.outputs)
    listed, folder_writable, list_writable, fonts = json.loads(text_out.strip().splitlines()[-1])
    assert listed == [name] and folder_writable and not list_writable and fonts > 0
    assert "Matplotlib" not in text_out and "cache" not in text_out.lower()


def test_an_interpreter_under_tmp_keeps_tmp_for_itself(monkeypatch, tmp_path):
    """A course checked out under /tmp: its environment is mounted there, so /tmp cannot also be
    the scratch folder's link (bubblewrap would refuse to start); TMPDIR still is the scratch."""
    def symlinks(args):
        return [args[i + 1:i + 3] for i, a in enumerate(args) if a == "--symlink"]

    scratch = [f"{confinement.INSIDE_HOME}/tmp", "/tmp"]
    normal = confinement.bubblewrap_args(tmp_path / "k.json", confinement.Limits(), tmp_path / "p",
                                         uid=1)
    real = confinement.readable_paths
    monkeypatch.setattr(confinement, "readable_paths", lambda layout: (
        lambda found: ([*found[0], "/tmp"], found[1], found[2]))(real(layout)))
    under_tmp = confinement.bubblewrap_args(tmp_path / "k.json", confinement.Limits(),
                                            tmp_path / "p", uid=1)
    if any(b == "/tmp" or b.startswith("/tmp/") for b in real(confinement.python_layout())[0]):
        assert scratch not in symlinks(normal)  # this very interpreter lives under /tmp
    else:
        assert scratch in symlinks(normal)
    assert scratch not in symlinks(under_tmp)
    assert any(under_tmp[i:i + 3] == ["--ro-bind", "/tmp", "/tmp"] for i in range(len(under_tmp)))
    env = confinement.kernel_environment(confinement.INSIDE_HOME)
    assert env["TMPDIR"] == confinement.INSIDE_HOME


def test_the_launcher_finds_the_private_hook_it_needs_in_ipykernel():
    """The launcher serves each channel on the grader's socket through ipykernel's private
    ``IPKernelApp._bind_socket(socket, port)`` (ipykernel has no public hook for it): this fails,
    rather than every kernel failing to start, the day ipykernel drops or changes it."""
    import inspect

    from ipykernel.kernelapp import IPKernelApp
    assert list(inspect.signature(IPKernelApp._bind_socket).parameters) == ["self", "s", "port"]


@pytest.mark.parametrize("mode", sorted(confinement.MODES))
def test_each_confinement_says_how_to_start_a_kernel(mode, tmp_path):
    """One object per confinement mode answers the session's questions (the socket folder the
    connection file names, the command around the kernel, its environment and folder): the
    session itself never asks which mode it has."""
    held = confinement.confinement(mode, confinement.Limits(), private=[str(tmp_path / "x")])
    assert held.mode == mode
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    seed = tmp_path / "fontlist.json"
    seed.write_text("{}")
    sockets = held.prepare(runtime, [(str(seed), ".matplotlib/fontlist.json")], None)
    connection = runtime / "kernel.json"
    connection.write_text("{}")
    if mode == confinement.BUBBLEWRAP:
        assert sockets == confinement.INSIDE_SOCKETS
        assert held.connection(connection) == confinement.INSIDE_CONNECTION
        assert held.environment(runtime) == {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        if confinement.available():
            assert held.wrap(runtime, connection, None, [])[0] == confinement.bubblewrap()
    else:
        home = runtime / "home"
        assert sockets == str(home / ".kernel" / "ipc")
        assert (home / ".matplotlib" / "fontlist.json").read_text() == "{}"
        assert held.connection(connection) == str(connection)
        assert held.environment(runtime)["HOME"] == str(home)
        assert held.working_folder(runtime) == str(home)


@pytest.mark.slow
def test_a_course_reached_through_a_symbolic_link_grades_normally(tmp_path):
    """The course's environment behind a symbolic link (a home or data folder mounted behind
    one, as on many department servers): the sandbox shows real paths only, so the kernel is
    started through the real path too. It once failed to start for every learner ("prlimit:
    failed to execute .../.venv/bin/python: Permission denied") and each scored 0."""
    if not confinement.available():
        pytest.skip("bubblewrap is not installed")
    environment = Path(sys.executable).parent.parent  # the environment make builds (.venv)
    linked = tmp_path / "linked-environment"
    linked.symlink_to(environment, target_is_directory=True)
    python = linked / "bin" / Path(sys.executable).name
    solution = COURSE.assignment("00-getting-started").solution
    out = tmp_path / "result.json"
    done = subprocess.run([str(python), "-m", "autograder", "grade", str(solution), "--course",
                           str(REPO), "--json", str(out), "--figures", "off"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["score"] == result["max_score"] == 8, result["errors"]
    assert confinement.interpreter() == os.path.join(
        os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))
