"""How a learner's kernel is confined: an allowlist, another identity, limits.

With bubblewrap on Linux the kernel starts in an empty root filesystem into which only this is
mounted, read-only:

- the system's program and library folders (``/usr/bin``, ``/usr/lib``, ``/usr/share`` and their
  ``/bin``, ``/lib`` links) and a few files of ``/etc`` the dynamic linker and fonts need;
- the interpreter: its executable, its standard library, the site-packages it imports from, and the
  packages a course shows its learners (``helpers`` in this one), wherever each is installed
  (:func:`python_layout` asks the interpreter itself);
- the kernel's connection file.

The only writable place is a size-limited tmpfs at ``/home/learner`` (``HOME``, ``TMPDIR``, the
working folder): bubblewrap's own root and ``/dev`` are remounted read-only, since as an ordinary
user they are the kernel's to write and have no size limit. The channels the grader reads are
not sockets in that folder but descriptors the grader made (the engine's relay). The course, its
suites and solutions, the gradebook, the exchange, other submissions, the grader's temporary files
and home folders are simply absent, wherever they live. If the grading engine itself is installed
inside an allowed folder (a non-editable install in site-packages), it is covered by an empty
folder.

The kernel never runs with the grader's identity: graded as root, learner code runs as a host user
id of its own that owns nothing (:func:`kernel_uid`), with no capabilities and ``no_new_privs``;
graded as an ordinary user, it runs in a user namespace that sees nothing of that user but the
read-only allowlist. Its environment is a short allowlist. It has no network, its own process,
IPC and UTS namespaces, and resource limits (CPU seconds, address space, threads, file size, open
files) through ``prlimit`` and, where the machine allows, a control group per kernel. It may not
start another process (:mod:`autograder.sandbox.launcher`), so its address space is its total
memory in every layout; :func:`limits_statement` says which mechanisms hold here.

Where bubblewrap cannot run, weaker confinements stand in (:func:`resolve_mode`). Each is one
:class:`Confinement`: the command that wraps the kernel, the environment it starts with and the
folder its sockets are named in, so that the kernel's session never asks which one it has.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, ClassVar, Sequence

INSIDE_HOME = "/home/learner"          # the learner's scratch folder, inside the sandbox
INSIDE_CONNECTION = "/run/kernel/kernel.json"
INSIDE_SOCKETS = f"{INSIDE_HOME}/.kernel/ipc"
UID_BASE = 2_100_000_000               # root grader: kernel uid = UID_BASE + grading process id
ENGINE_PACKAGE = __name__.split(".")[0]  # the grading engine's own package: covered in the sandbox

SYSTEM_FOLDERS = ["/usr/bin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/share"]
TOP_LEVEL_LINKS = ["/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin"]
ETC_FILES = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
             "/etc/alternatives", "/etc/fonts", "/etc/mime.types", "/etc/nsswitch.conf"]


class SandboxUnavailable(RuntimeError):
    pass


def _limit(default: int, help: str) -> Any:
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one learner's kernel may use. Each field is a grading setting (its help is the
    command line's and nbgrader's)."""
    cpu_seconds: int = _limit(300, "CPU seconds the learner's kernel may use in all")
    memory_bytes: int = _limit(2 << 30, "address space of the learner's kernel, in bytes (numpy, "
                               "matplotlib and OpenBLAS fit in 2 GiB)")
    processes: int = _limit(128, "tasks (processes and threads) the learner's kernel may run")
    file_bytes: int = _limit(64 << 20, "largest file the learner's kernel may write, in bytes")
    scratch_bytes: int = _limit(128 << 20, "everything the learner's kernel may write, in bytes "
                                "(the size of its private scratch folder)")
    open_files: int = _limit(256, "descriptors the learner's kernel may hold open (a kernel uses "
                             "about 70); bounds its pipe and socket buffers, memory its address "
                             "space does not count")


def bubblewrap() -> str | None:
    return shutil.which("bwrap")


def setpriv() -> str | None:
    return shutil.which("setpriv") or ("/usr/bin/setpriv" if Path("/usr/bin/setpriv").exists()
                                       else None)


def available() -> bool:
    return sys.platform.startswith("linux") and bubblewrap() is not None


PROBE_TIMEOUTS = (30.0, 120.0)  # seconds bubblewrap's probe is given, then given again


@functools.lru_cache(maxsize=None)
def namespaces_work() -> bool:
    """Whether bubblewrap can build a sandbox on this machine. Containers (Docker, Gradescope's
    graders) usually forbid the namespaces it needs, even to root."""
    tool = bubblewrap()
    if not available() or tool is None:
        return False
    # The same system folders a kernel gets, and nothing else: enough to run /usr/bin/true.
    args = [tool, *system_mounts().args, "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    if os.geteuid() != 0:
        args.append("--unshare-user")
    # A busy machine (a niced recording process among many kernels) can take long to answer:
    # only bubblewrap's own refusal means no namespaces. A probe that never answers is not taken
    # for one: grading would quietly run learner code with less confinement than it should.
    for timeout in PROBE_TIMEOUTS:
        try:
            return subprocess.run(args + ["--", "/usr/bin/true"], capture_output=True,
                                  timeout=timeout).returncode == 0
        except subprocess.TimeoutExpired:
            continue
        except (OSError, subprocess.SubprocessError):
            return False
    raise SandboxUnavailable(f"bubblewrap did not answer within {sum(PROBE_TIMEOUTS)} s: the "
                             f"machine is too busy to tell whether it can sandbox learner code")


# How learner code is confined, strongest first.
BUBBLEWRAP = "bubblewrap"  # the allowlist sandbox, another identity, no network, limits
USER = "user"              # root without namespaces: another identity and limits, no allowlist
LIMITS = "limits"          # resource limits only (no bubblewrap, not root)


def resolve_mode(mode: str) -> str:
    """The confinement to use: ``auto`` takes the strongest this machine allows, ``require``
    refuses anything weaker than bubblewrap, ``off`` applies resource limits only."""
    if mode == "off":
        return LIMITS
    if namespaces_work():
        if os.geteuid() == 0 and setpriv() is None:
            raise SandboxUnavailable("grading as root needs setpriv (util-linux) to run learner "
                                     "code as another user; install util-linux")
        return BUBBLEWRAP
    if mode == "require":
        reason = ("bubblewrap (bwrap) is not installed" if not available() else
                  "bubblewrap cannot create namespaces on this machine (a container?)")
        raise SandboxUnavailable(
            f"{reason}, and --require-sandbox was given. Install bubblewrap (Debian/Ubuntu: "
            f"apt-get install bubblewrap) where namespaces are allowed, or drop --require-sandbox.")
    if os.geteuid() == 0 and setpriv() is not None:
        warnings.warn("bubblewrap cannot sandbox learner code here: it runs as an unprivileged "
                      "user of its own, with resource limits, but sees the machine's files as "
                      "that user would.", RuntimeWarning, stacklevel=2)
        return USER
    warnings.warn("bubblewrap (bwrap) is not installed: learner code runs with resource limits "
                  "only, NOT sandboxed. Install bubblewrap to confine it.", RuntimeWarning,
                  stacklevel=2)
    return LIMITS


def kernel_uid() -> int:
    """The host user id learner code runs as when the grader is root: one no account uses, distinct
    for every grading process, so two kernels graded at once never share an identity."""
    return UID_BASE + os.getpid()


INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # figures drawn, as in JupyterLab
NO_DRAWING = "Agg"   # figures made but never drawn nor shown


def kernel_environment(home: str, extra: dict[str, str] | None = None,
                       figures: bool = True) -> dict[str, str]:
    """The whole environment learner code sees: nothing of the grader's. With ``figures``, the
    kernel draws the learner's figures with matplotlib's inline backend, as JupyterLab does
    (feedback pages show them); without, it draws none (Agg)."""
    env = {
        "HOME": home, "TMPDIR": home, "USER": "learner", "LOGNAME": "learner",
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "IPYTHONDIR": f"{home}/.ipython", "MPLCONFIGDIR": f"{home}/.matplotlib",
        "MPLBACKEND": INLINE_BACKEND if figures else NO_DRAWING, "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # In its own pid namespace the kernel's parent is pid 1: ipykernel skips its parent-poller
        # for pid 1, where it would otherwise think its parent had exited.
        "JPY_PARENT_PID": "1",
    }
    env.update(extra or {})
    return env


# ------------------------------------------------------------------ what the interpreter needs

PROBE = r"""
import importlib.util, json, os, site, sys, sysconfig
def where(name):
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    return spec.origin
chain, path = [], sys.executable
for _ in range(40):
    chain.append(path)
    if not os.path.islink(path):
        break
    path = os.path.join(os.path.dirname(path), os.readlink(path))
lib = sysconfig.get_config_var("LIBDIR") or ""
names = [sysconfig.get_config_var(v) or "" for v in ("INSTSONAME", "LDLIBRARY")]
show, hide = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({
    "executable": sys.executable, "chain": chain, "prefix": sys.prefix,
    "base_prefix": sys.base_prefix, "path": [p for p in sys.path if p],
    "site_packages": site.getsitepackages() + [site.getusersitepackages()] + [
        sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})[k]
        for k in ("purelib", "platlib")],
    "libpython": [os.path.join(lib, n) for n in names if n and os.path.exists(os.path.join(lib, n))],
    "show": [p for p in map(where, show) if p], "hide": [p for p in map(where, hide) if p],
}))
"""


def interpreter() -> str:
    """The interpreter learners' kernels run, as the path they are started through: this one's,
    with its folders resolved. The sandbox shows real paths only, so a course reached through a
    symbolic link (a home or data folder mounted behind one) must start its kernels through the
    real path too. The file's own name is kept: a virtual environment's ``python`` is a link to
    the base interpreter, and Python finds its environment from the path it is started through."""
    folder, name = os.path.split(sys.executable)
    return os.path.join(os.path.realpath(folder), name)


@functools.lru_cache(maxsize=None)
def python_layout(executable: str | None = None, show: tuple[str, ...] = (),
                  hide: tuple[str, ...] = (ENGINE_PACKAGE,)) -> dict[str, Any]:
    """Ask the interpreter that runs kernels where its parts are, as the kernel will see them
    (isolated mode: no current folder, no PYTHONPATH, no user site): its executable, standard
    library and site-packages, and where the packages in ``show`` (to mount) and ``hide`` (to
    cover) are installed."""
    try:
        done = subprocess.run([executable or interpreter(), "-I", "-c", PROBE, json.dumps(show),
                               json.dumps(hide)], capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:  # no interpreter there, or it hung
        raise SandboxUnavailable(f"could not inspect the interpreter: {error}") from None
    if done.returncode != 0:
        raise SandboxUnavailable(f"could not inspect the interpreter: {done.stderr[-500:]}")
    layout: dict[str, Any] = json.loads(done.stdout)
    return layout


def readable_paths(layout: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """(read-only binds, symlinks to recreate, folders to cover) for the interpreter's parts."""
    binds: list[str] = []
    links: list[tuple[str, str]] = []
    if os.path.realpath(layout["prefix"]) != os.path.realpath(layout["base_prefix"]):
        binds.append(layout["prefix"])  # a virtual environment: its pyvenv.cfg, bin/ and packages
    for step in layout["chain"]:
        if os.path.islink(step):
            links.append((os.readlink(step), step))
        else:
            binds.append(step)
    binds += layout["libpython"]
    binds += [p for p in layout["path"] if os.path.exists(p)]
    binds += layout["show"]
    used = {os.path.realpath(p) for p in layout["path"]}
    cover = [p for p in layout["site_packages"] if os.path.isdir(p) and
             os.path.realpath(p) not in used]  # e.g. the base interpreter's, under a venv
    cover += layout["hide"]
    return binds, links, cover


def _inside(path: str, folders: Sequence[str], resolve: bool = True) -> bool:
    path = os.path.realpath(path) if resolve else os.path.normpath(path)
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


class Mounts:
    """bubblewrap arguments that build a root filesystem from nothing, in order."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.made: set[str] = {"/"}
        self.bound: list[str] = []

    def _parents(self, path: str) -> None:
        parts = Path(path).parts
        for depth in range(2, len(parts)):
            folder = str(Path(*parts[:depth]))
            if folder not in self.made and not _inside(folder, self.bound):
                self.made.add(folder)
                self.args += ["--perms", "0755", "--dir", folder]

    def bind(self, source: str, target: str | None = None) -> None:
        """Show host ``source`` read-only at ``target`` (by default at its own real path)."""
        if target is None:
            source = target = os.path.realpath(source)
            if _inside(target, self.bound, resolve=False):
                return  # already visible through a folder bound earlier
        self._parents(target)
        self.args += ["--ro-bind", source, target]
        self.bound.append(target)
        self.made.add(target)

    def link(self, target: str, path: str) -> None:
        if _inside(path, self.bound, resolve=False) or path in self.made:
            return
        self._parents(path)
        self.args += ["--symlink", target, path]
        self.made.add(path)

    def cover(self, folder: str) -> None:
        """An empty, read-only folder over ``folder``, when it lies inside something bound."""
        folder = os.path.realpath(folder)
        if os.path.isdir(folder) and _inside(folder, self.bound, resolve=False):
            self.args += ["--perms", "0555", "--tmpfs", folder, "--remount-ro", folder]


def system_mounts() -> Mounts:
    """The system's program and library folders, read-only, and its top-level links to them."""
    mounts = Mounts()
    for folder in SYSTEM_FOLDERS:
        if os.path.isdir(folder):
            mounts.bind(folder)
    for path in TOP_LEVEL_LINKS:
        if os.path.islink(path):
            mounts.link(os.readlink(path), path)
        elif os.path.isdir(path):
            mounts.bind(path)
    return mounts


def bubblewrap_args(connection_file: str | Path, limits: Limits, passwd_file: str | Path,
                    uid: int | None = None, private: Sequence[str] = (),
                    seeds: Sequence[tuple[str, str]] = (),
                    visible: Sequence[str] = (), figures: bool = True) -> list[str]:
    """The bwrap command line (up to and including ``--``) for one kernel.

    ``private`` names more folders (the course, its state) to cover should any of them lie
    inside an allowed folder; ``seeds`` are ``(file on the host, path under the home)`` pairs
    mounted read-only into the kernel's home (the engine's ``home_seeds``); ``visible`` names the
    packages learners' notebooks import, shown wherever they are installed; ``figures``: see
    :func:`kernel_environment`."""
    tool = bubblewrap()
    if tool is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
    mounts = system_mounts()
    for path in ETC_FILES:
        if os.path.islink(path):
            mounts.link(os.readlink(path), path)
        elif os.path.exists(path):
            mounts.bind(path)
    binds, links, cover = readable_paths(python_layout(show=tuple(visible)))
    for path in sorted({os.path.realpath(p) for p in binds}, key=len):
        mounts.bind(path)
    for target, path in links:
        mounts.link(target, path)
    for folder in [*cover, *private]:
        mounts.cover(folder)
    mounts.bind(str(passwd_file), "/etc/passwd")
    mounts.bind(str(connection_file), INSIDE_CONNECTION)
    home = INSIDE_HOME
    args = [tool, *mounts.args,
            "--dev", "/dev", "--proc", "/proc",
            "--size", str(limits.scratch_bytes), "--perms", "1777", "--tmpfs", home,
            "--perms", "1777", "--dir", f"{home}/.kernel",
            "--perms", "1777", "--dir", f"{home}/tmp"]
    # /tmp is the scratch folder's tmp/, unless the interpreter itself lives under /tmp (a course
    # checked out there): then /tmp holds it, read-only, and TMPDIR alone points at the scratch.
    if "/tmp" not in mounts.made and not any(_inside(b, ["/tmp"], resolve=False)
                                             for b in mounts.bound):
        args += ["--symlink", f"{home}/tmp", "/tmp"]
    for source, relative in seeds:
        inside = f"{home}/{relative}"
        args += ["--perms", "1777", "--dir", os.path.dirname(inside), "--ro-bind", source, inside]
    # Nothing outside the scratch folder stays writable: as an ordinary user, the sandbox's own
    # root and /dev (tmpfs of bubblewrap's, with no size limit) are the kernel's to write, and
    # what is written there is memory no limit of the kernel's counts.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", home,
             "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--hostname", "learner",
             "--die-with-parent", "--new-session", "--clearenv"]
    for key, value in kernel_environment(home, figures=figures).items():
        args += ["--setenv", key, value]
    if uid is not None:  # root: keep only what setpriv needs to become the kernel's own user
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_SETPCAP", "--"]
        args += setpriv_prefix(uid)[:-1]  # bwrap's command goes on after the prefix
    else:  # an ordinary user: a user namespace maps the grader's id, nothing else is reachable
        args += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--"]
    return args


def setpriv_prefix(uid: int | None = None) -> list[str]:
    """Become ``uid`` (group ``uid``, no supplementary groups), keeping no capability; and, where
    setpriv can, be killed when the process that started this one dies (a change of identity
    clears that signal, so setpriv sets it afterwards). With ``uid=None``, only the latter."""
    tool = setpriv()
    if tool is None:
        raise SandboxUnavailable("setpriv (util-linux) is not installed")
    args = [tool]
    if uid is not None:
        args += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs"]
    if setpriv_knows_pdeathsig():
        args.append("--pdeathsig=SIGKILL")
    return args + ["--"]


@functools.lru_cache(maxsize=None)
def setpriv_knows_pdeathsig() -> bool:
    tool = setpriv()
    if tool is None:
        return False
    done = subprocess.run([tool, "--help"], capture_output=True, text=True)
    return "--pdeathsig" in done.stdout


def passwd_text(uid: int) -> str:
    return (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"learner:x:{uid}:{uid}:learner:{INSIDE_HOME}:/bin/sh\n"
            f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")


def limit_prefix(limits: Limits) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    return [prlimit, f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}",
            f"--nproc={limits.processes}", f"--fsize={limits.file_bytes}",
            f"--nofile={limits.open_files}", "--"]


# ------------------------------------------------------------------ one object per confinement

class Confinement:
    """How one kernel is confined: the folder its sockets are named in, the command that wraps
    it, the environment and the folder it starts in. One subclass per mode (:data:`MODES`); the
    kernel's session asks these, and never which mode it has.

    ``private`` names the course's own folders, covered should they ever lie inside an allowed
    one; ``visible`` the packages learners' notebooks import (shown where bubblewrap mounts an
    allowlist); ``figures``, whether the kernel draws figures (:func:`kernel_environment`)."""

    mode: ClassVar[str]
    runtime_permissions: ClassVar[int] = 0o700  # of the kernel's runtime folder on the host

    def __init__(self, limits: Limits, private: Sequence[str] = (),
                 visible: Sequence[str] = (), figures: bool = True) -> None:
        self.limits = limits
        self.private = tuple(str(p) for p in private)
        self.visible = tuple(visible)
        self.figures = figures

    def prepare(self, runtime: Path, seeds: Sequence[tuple[str, str]], uid: int | None) -> str:
        """Make what the kernel needs in its ``runtime`` folder (``seeds``: files its home starts
        with, see the engine's ``home_seeds``); return the socket folder the connection file
        names, as the kernel sees it."""
        home = runtime / "home"
        home.mkdir(mode=0o700)
        (home / ".kernel").mkdir()
        for source, relative in seeds:  # a copy: the home is a folder on the host
            (home / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, home / relative)
        return str(home / ".kernel" / "ipc")

    def connection(self, connection_file: Path) -> str:
        """The path of the connection file, as the kernel sees it."""
        return str(connection_file)

    def wrap(self, runtime: Path, connection_file: Path, uid: int | None,
             seeds: Sequence[tuple[str, str]]) -> list[str]:
        """The command the kernel's own (its limits, its interpreter) follows."""
        raise NotImplementedError

    def environment(self, runtime: Path) -> dict[str, str]:
        """The environment the wrapped command starts with."""
        return kernel_environment(str(runtime / "home"), {"JPY_PARENT_PID": str(os.getpid())},
                                  figures=self.figures)

    def working_folder(self, runtime: Path) -> str:
        return str(runtime / "home")


class Bubblewrap(Confinement):
    """The allowlist sandbox: an empty root with read-only system and Python folders, a scratch
    home, no network, another identity (:func:`bubblewrap_args`)."""

    mode = BUBBLEWRAP

    def prepare(self, runtime: Path, seeds: Sequence[tuple[str, str]], uid: int | None) -> str:
        passwd = runtime / "passwd"
        passwd.write_text(passwd_text(uid if uid is not None else 1000))
        passwd.chmod(0o644)
        return INSIDE_SOCKETS  # the home is a tmpfs inside; seeds are mounted into it

    def connection(self, connection_file: Path) -> str:
        return INSIDE_CONNECTION

    def wrap(self, runtime: Path, connection_file: Path, uid: int | None,
             seeds: Sequence[tuple[str, str]]) -> list[str]:
        return bubblewrap_args(connection_file, self.limits, runtime / "passwd", uid,
                               self.private, seeds, self.visible, self.figures)

    def environment(self, runtime: Path) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # bubblewrap sets the kernel's own

    def working_folder(self, runtime: Path) -> str:
        return str(runtime)


class OtherUser(Confinement):
    """Root without namespaces: another identity and limits, but the machine's files as that
    user sees them (no allowlist)."""

    mode = USER
    runtime_permissions = 0o711  # the kernel's user must reach its home and the connection file

    def prepare(self, runtime: Path, seeds: Sequence[tuple[str, str]], uid: int | None) -> str:
        sockets = super().prepare(runtime, seeds, uid)
        if uid is not None:
            home = runtime / "home"
            for path in (home, *home.rglob("*")):
                os.chown(path, uid, uid)
        return sockets

    def wrap(self, runtime: Path, connection_file: Path, uid: int | None,
             seeds: Sequence[tuple[str, str]]) -> list[str]:
        return setpriv_prefix(uid)


class LimitsOnly(Confinement):
    """Resource limits only (no bubblewrap, not root): the kernel runs as the grader."""

    mode = LIMITS

    def wrap(self, runtime: Path, connection_file: Path, uid: int | None,
             seeds: Sequence[tuple[str, str]]) -> list[str]:
        return setpriv_prefix() if setpriv() else []  # dies with the grader, where setpriv can


MODES: dict[str, type[Confinement]] = {c.mode: c for c in (Bubblewrap, OtherUser, LimitsOnly)}


def confinement(mode: str, limits: Limits, private: Sequence[str] = (),
                visible: Sequence[str] = (), figures: bool = True) -> Confinement:
    """The confinement of ``mode`` (:data:`BUBBLEWRAP`, :data:`USER` or :data:`LIMITS`)."""
    return MODES[mode](limits, private, visible, figures)


# ------------------------------------------------------------------ what holds a kernel's total

@functools.lru_cache(maxsize=None)
def one_process_works() -> bool:
    """Whether a kernel here can be held to one process (:mod:`autograder.sandbox.launcher`'s
    seccomp filter installs, and a fork under it is refused): then its address-space limit is its
    total."""
    from . import launcher
    probe = launcher.source() + (
        "\nimport os\nprint(forbid_new_processes())\ntry:\n    if os.fork() == 0:\n"
        "        os._exit(0)\n    print('forked')\nexcept PermissionError:\n    print('refused')\n")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.stdout.split() == ["True", "refused"]


def limits_statement(mode: str, limits: Limits) -> str:
    """One sentence for the start of a run: which mechanism holds a kernel's total memory and
    processes here, or that none does."""
    memory = f"{limits.memory_bytes / (1 << 30):g} GiB"
    scratch = f"{limits.scratch_bytes >> 20} MiB"
    held = []
    if Cgroup.works(limits):
        held.append(f"a control group each ({memory} and {scratch} of memory, "
                    f"{limits.processes} tasks)")
    if one_process_works():
        held.append(f"one process each (new processes refused), {memory} of address space"
                    + ("" if mode == LIMITS else f" and a {scratch} scratch folder"))
    if held:
        return "learner kernels are held in total by " + " and by ".join(held)
    return (f"learner kernels are NOT held in total here: {memory} of address space per "
            f"process, up to {limits.processes} processes (no control group, and new "
            f"processes cannot be refused on this machine)")


CGROUP_PREFIX = "kernel-"  # kernel-<grading process id>-<random>


class Cgroup:
    """A control group per kernel, where the machine lets us make one (root, cgroup v1 or a
    writable v2 tree): caps the number of processes (fork bombs: RLIMIT_NPROC does not bind
    root) and the memory of the kernel and everything it starts (its tmpfs included), and kills
    them all at the end."""

    ROOT = Path("/sys/fs/cgroup")
    _works: ClassVar[bool | None] = None

    def __init__(self, name: str, limits: Limits) -> None:
        self.folders: list[Path] = []
        self.name = name
        memory = limits.memory_bytes + limits.scratch_bytes
        for controller, settings in (("pids", {"pids.max": limits.processes}),
                                     ("memory", {"memory.limit_in_bytes": memory})):
            folder = self._make(controller, settings)
            if folder:
                self.folders.append(folder)
        if not self.folders:  # cgroup v2: one tree, both controllers
            folder = self._make(None, {"pids.max": limits.processes, "memory.max": memory})
            if folder:
                self.folders.append(folder)

    @staticmethod
    def _own_path(controller: str | None) -> str | None:
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            _, names, path = line.split(":", 2)
            if (controller is None and names == "") or (controller and controller in names.split(",")):
                return path
        return None

    def _make(self, controller: str | None, settings: dict[str, int]) -> Path | None:
        own = self._own_path(controller)
        if own is None:
            return None
        base = self.ROOT / controller if controller else self.ROOT
        folder = base / own.lstrip("/") / self.name
        try:
            folder.mkdir()
            for key, value in settings.items():
                (folder / key).write_text(str(value))
            return folder
        except OSError:
            try:
                folder.rmdir()
            except OSError:
                pass
            return None

    @classmethod
    def works(cls, limits: Limits) -> bool:
        """Whether this process can make a control group for a kernel (made and removed once)."""
        if cls._works is None:
            probe = cls(f"{CGROUP_PREFIX}{os.getpid()}-probe", limits)
            cls._works = bool(probe.folders)
            probe.close()
        return cls._works

    @classmethod
    def parents(cls) -> list[Path]:
        """The folders this process makes its groups in (one per controller, or one for v2)."""
        found = []
        for controller in ("pids", "memory", None):
            own = cls._own_path(controller)
            if own is not None:
                base = cls.ROOT / controller if controller else cls.ROOT
                found.append(base / own.lstrip("/"))
        return found

    @staticmethod
    def remove(folder: Path, patience: float = 2.5) -> None:
        """Kill everything in the group ``folder``, then remove it, waiting at most ``patience``
        seconds for what was killed to leave the group. The group is read again after 1 ms, then
        after twice as long each time up to 50 ms: a killed kernel usually leaves within a few
        milliseconds, and every submission's grading waits for it."""
        deadline, pause = time.monotonic() + patience, 0.001
        while True:
            try:
                pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
            except OSError:
                break
            if not pids or time.monotonic() > deadline:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(pause)
            pause = min(0.05, 2 * pause)
        try:
            folder.rmdir()
        except OSError:
            pass

    def prefix(self) -> list[str]:
        """A shell step that moves the kernel into the group(s) before it starts."""
        if not self.folders:
            return []
        joins = " && ".join(f"echo $$ > {folder}/cgroup.procs" for folder in self.folders)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "confine"]

    def close(self) -> None:
        for folder in self.folders:
            self.remove(folder)
        self.folders = []
