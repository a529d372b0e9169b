"""Nothing of a grading run outlives it, and nothing a killed run left behind stays.

Every process a run starts is tied to its parent with the parent-death signal: a pool worker dies
when the grader dies, a kernel (and, through bubblewrap's ``--die-with-parent``, its whole
sandbox) when its worker dies, however they die (``kill -9`` and the kernel's OOM killer
included). What cannot die with its owner (a runtime folder, a control group, a half-written
cache entry) carries the owner's process id in its name; :func:`clear_leftovers` removes those
whose owner is no longer running, and only those.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

from .confinement import CGROUP_PREFIX, ENGINE_PACKAGE, Cgroup

PR_SET_PDEATHSIG = 1
RUNTIME_PREFIX = f"{ENGINE_PACKAGE}-kernel-"  # <prefix><pid>-<random>
CGROUP_PATTERN = re.compile(rf"^{CGROUP_PREFIX}(\d+)-[0-9a-f]+$")
TEMPORARY_ENTRY = re.compile(r"^\..+\.(\d+)$")  # .<name>.<pid>: a cache entry being written


_LIBC: ctypes.CDLL | None
try:  # loaded once, before any fork: a forked child only calls it
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:
    _LIBC = None


def die_with_parent(parent: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when the thread that started it exits, and exit at
    once if that already happened (the parent is no longer ``parent``, when given). For pool
    initializers and the grader's own helper processes (Linux only)."""
    parent = parent or os.getppid()
    if _LIBC is None or not hasattr(_LIBC, "prctl"):  # not Linux
        return
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent or parent == 1:
        os._exit(1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def runtime_folder() -> Path:
    """A new private folder for one kernel, named after this process."""
    return Path(tempfile.mkdtemp(prefix=f"{RUNTIME_PREFIX}{os.getpid()}-"))


def clear_leftovers(state: str | Path | None = None) -> int:
    """Remove what killed runs left: their kernels' runtime folders in the temporary folder,
    their control groups (killing anything still in them) and, in ``state``, entries they were
    half-way through writing. Returns how many things were removed."""
    removed = 0
    pattern = re.compile(rf"^{RUNTIME_PREFIX}(\d+)-")
    for folder in Path(tempfile.gettempdir()).glob(f"{RUNTIME_PREFIX}*"):
        match = pattern.match(folder.name)
        if match and not alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    for folder in Cgroup.parents():
        for child in folder.iterdir() if folder.is_dir() else []:
            match = CGROUP_PATTERN.match(child.name)
            if match and child.is_dir() and not alive(int(match.group(1))):
                Cgroup.remove(child)
                removed += 1
    if state is not None and Path(state).is_dir():
        for entry in Path(state).iterdir():
            match = TEMPORARY_ENTRY.match(entry.name)
            if match and entry.is_file() and not alive(int(match.group(1))):
                entry.unlink(missing_ok=True)
                removed += 1
    return removed
