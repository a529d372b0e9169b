"""How a learner's kernel is confined.

On Linux with bubblewrap the kernel sees the machine read-only, with these folders hidden behind
empty tmpfs mounts: the course repository (all but the installed ``helpers`` package), the home
folders, ``/tmp``, and every folder the caller names (gradebook, exchange, other submissions).
Its only writable place is a scratch folder holding the submission copy and the kernel's sockets.
It has no network. Resource limits (CPU seconds, address space, processes, file size) apply with
or without bubblewrap, through ``prlimit``.
"""
import dataclasses
import os
import shutil
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HELPERS = REPO / "src" / "helpers"


SANDBOX_UID = 65534  # "nobody" inside the sandbox: a user namespace, so limits bind even for root


class SandboxUnavailable(RuntimeError):
    pass


@dataclasses.dataclass
class Limits:
    cpu_seconds: int = 300          # CPU time of the whole kernel process
    memory_bytes: int = 2 << 30     # address space (numpy, matplotlib and OpenBLAS fit in 2 GiB)
    processes: int = 128            # tasks (processes and threads) in the kernel's cgroup
    file_bytes: int = 64 << 20      # largest file the kernel may write


def bubblewrap():
    return shutil.which("bwrap")


def available():
    return sys.platform.startswith("linux") and bubblewrap() is not None


def resolve_mode(mode):
    """``auto`` sandboxes where bubblewrap exists, ``require`` refuses without it, ``off`` never."""
    if mode == "off":
        return False
    if available():
        return True
    if mode == "require":
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed, and --require-sandbox was given. "
            "Install it (Debian/Ubuntu: apt-get install bubblewrap) or drop --require-sandbox.")
    warnings.warn("bubblewrap (bwrap) is not installed: learner code runs with resource limits "
                  "only, NOT sandboxed. Install bubblewrap to confine it.", RuntimeWarning,
                  stacklevel=2)
    return False


def _limit_prefix(limits):
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    return [prlimit, f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}",
            f"--nproc={limits.processes}", f"--fsize={limits.file_bytes}", "--"]


def command(kernel_cmd, scratch, sandboxed, limits, hidden=(), cgroup=None):
    """The full command that starts ``kernel_cmd`` confined to ``scratch``."""
    prefix = (cgroup.prefix() if cgroup else []) + _limit_prefix(limits)
    if not sandboxed:
        return prefix + list(kernel_cmd)
    scratch = str(Path(scratch).resolve())
    args = [bubblewrap(), "--ro-bind", "/", "/", "--dev", "/dev",
            "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--unshare-pid", "--proc", "/proc",
            "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            # In its own pid namespace the kernel's parent is pid 1: ipykernel skips its
            # parent-poller for pid 1, where it would otherwise think its parent had exited.
            "--setenv", "JPY_PARENT_PID", "1"]
    to_hide = [REPO, Path("/tmp"), Path("/root"), Path("/home"), Path("/var/tmp"),
               *[Path(h) for h in hidden]]
    for folder in to_hide:
        folder = folder.resolve()
        if folder.is_dir():
            args += ["--tmpfs", str(folder)]
    # The interpreter and its packages may live inside a hidden folder (a .venv in the repo).
    for needed in _needed_paths():
        args += ["--ro-bind", str(needed), str(needed)]
    args += ["--bind", scratch, scratch, "--chdir", scratch,
             "--setenv", "HOME", scratch, "--setenv", "TMPDIR", scratch]
    return prefix + args + ["--"] + list(kernel_cmd)


def _needed_paths():
    """Read-only paths a kernel needs even when they sit inside a hidden folder."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), HELPERS.resolve()}
    real = Path(os.path.realpath(sys.executable)).parent.parent
    paths.add(real)
    # Keep only the shortest distinct paths, parents before children.
    ordered = sorted(paths, key=lambda p: len(p.parts))
    kept = []
    for path in ordered:
        if not any(path.is_relative_to(k) for k in kept) and path != Path("/"):
            kept.append(path)
    return [p for p in kept if p.exists()]


class Cgroup:
    """A control group per kernel, where the machine lets us make one (root, cgroup v1 or a
    writable v2 tree): caps the number of processes (fork bombs: RLIMIT_NPROC does not bind
    root) and the memory of the kernel and everything it starts, and kills them all at the end."""

    ROOT = Path("/sys/fs/cgroup")

    def __init__(self, name, limits):
        self.folders = []
        self.name = name
        for controller, settings in (("pids", {"pids.max": limits.processes}),
                                     ("memory", {"memory.limit_in_bytes": limits.memory_bytes})):
            folder = self._make(controller, settings)
            if folder:
                self.folders.append(folder)
        if not self.folders:  # cgroup v2: one tree, both controllers
            folder = self._make(None, {"pids.max": limits.processes, "memory.max": limits.memory_bytes})
            if folder:
                self.folders.append(folder)

    def _own_path(self, controller):
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            _, names, path = line.split(":", 2)
            if (controller is None and names == "") or (controller and controller in names.split(",")):
                return path
        return None

    def _make(self, controller, settings):
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

    @property
    def active(self):
        return bool(self.folders)

    def prefix(self):
        """A shell step that moves the kernel into the group(s) before it starts."""
        if not self.folders:
            return []
        joins = " && ".join(f"echo $$ > {folder}/cgroup.procs" for folder in self.folders)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "confine"]

    def close(self):
        import signal
        import time
        for folder in self.folders:
            for _ in range(50):
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.05)
            try:
                folder.rmdir()
            except OSError:
                pass
        self.folders = []
