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


class SandboxUnavailable(RuntimeError):
    pass


@dataclasses.dataclass
class Limits:
    cpu_seconds: int = 300          # CPU time of the whole kernel process
    memory_bytes: int = 2 << 30     # address space (numpy, matplotlib and OpenBLAS fit in 2 GiB)
    processes: int = 64             # RLIMIT_NPROC (not enforced for root outside a user namespace)
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


def command(kernel_cmd, scratch, sandboxed, limits, hidden=()):
    """The full command that starts ``kernel_cmd`` confined to ``scratch``."""
    prefix = _limit_prefix(limits)
    if not sandboxed:
        return prefix + list(kernel_cmd)
    scratch = str(Path(scratch).resolve())
    args = [bubblewrap(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--new-session"]
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
