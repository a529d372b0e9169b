"""The sandbox (autograder/sandbox/confinement.py) shows an allowlist: no course folder, no whole
machine, a fixed environment, and one object per confinement mode that says how to start a kernel.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.engine import kernel
from autograder.engine.kernel import KernelSession
from autograder.sandbox import confinement
from support import COURSE, REPO


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


def test_removing_a_kernels_group_kills_what_is_in_it_and_removes_the_group():
    """A kernel's control group is emptied and removed when its grading ends, whatever is still
    running in it (here a process that would sleep for a minute)."""
    if not confinement.Cgroup.works(confinement.Limits()):
        pytest.fail("this machine makes no control group for a kernel: the kernel's limits "
                    "would rest on rlimits alone, and this test would prove nothing")
    group = confinement.Cgroup(f"{confinement.CGROUP_PREFIX}{os.getpid()}-removal",
                               confinement.Limits())
    process = subprocess.Popen(group.prefix() + ["sleep", "60"])
    try:
        for folder in group.folders:
            for _ in range(200):  # the shell step moves the process in before it execs sleep
                if str(process.pid) in (folder / "cgroup.procs").read_text().split():
                    break
                time.sleep(0.01)
            assert str(process.pid) in (folder / "cgroup.procs").read_text().split()
        folders = list(group.folders)
        group.close()
        assert process.wait(timeout=5) == -9
        assert not any(folder.exists() for folder in folders)
    finally:
        process.kill()
        group.close()


def test_a_group_whose_processes_never_leave_is_given_up_on(tmp_path):
    """Removal waits for the group's processes to leave for at most its patience, then goes on:
    a group the kernel cannot be killed out of (an entry that is not a process of ours) never
    holds the grader."""
    (tmp_path / "cgroup.procs").write_text("999999999\n")  # no such process: kill fails, it stays
    started = time.monotonic()
    confinement.Cgroup.remove(tmp_path, patience=0.3)
    assert time.monotonic() - started < 5, "removal did not stop at its patience"
    assert tmp_path.exists()  # (not empty, so not removed: nothing else is touched)
