"""Measuring helpers: stage timings written by every grading process, the recording's own costs,
the memory of a process tree sampled from /proc, a notebook's run from a fresh kernel, medians and
peaks of a function."""
from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.options import Options

if TYPE_CHECKING:
    from ...course.instructor import Recording


def timed(folder: str | Path) -> tuple[Options, Path]:
    """Grading options that have every grade_notebook (in pool workers and in the recording
    process too) append its stage timings to a new file of ``folder``: ``(options, file)``."""
    path = Path(tempfile.mkstemp(prefix="stages-", suffix=".jsonl", dir=folder)[1])
    return Options(timings=str(path)), path


def recording_costs(costs: list[dict[str, float]]) -> Callable[[Recording], None]:
    """A ``recorded`` hook (``instructor.autograde``, ``instructor.record``) that appends
    ``{"cpu", "waited"}`` to ``costs`` as each recording ends: its process's CPU seconds, and the
    seconds its ``finish`` took (what recording added after the last grade)."""
    def measured(recording: Recording) -> None:
        if recording.recorder is not None:
            costs.append({"cpu": recording.recorder.cpu_seconds or 0.0,
                          "waited": recording.waited, "built": recording.built,
                          "written": recording.written})
    return measured


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, rss bytes) for every process readable in /proc."""
    page = os.sysconf("SC_PAGE_SIZE")
    table: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            table[int(entry.name)] = (int(fields[1]), int(fields[21]) * page)
        except (OSError, IndexError, ValueError):
            continue
    return table


def subtree_rss(table: Mapping[int, tuple[int, int]], root: int) -> int:
    """RSS of ``root`` and all its descendants in ``table`` (pid -> (ppid, rss))."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += table.get(pid, (0, 0))[1]
        todo.extend(children.get(pid, []))
    return total


class MemorySampler(threading.Thread):
    """Samples /proc while a grading command runs: the peak RSS of the whole process tree, and of
    the largest worker with its kernel (with one job, the command itself is the worker)."""

    def __init__(self, pid: int, jobs: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.jobs, self.interval = pid, jobs, interval
        self.peak_tree = self.peak_worker = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            table = _process_table()
            self.peak_tree = max(self.peak_tree, subtree_rss(table, self.pid))
            if self.jobs == 1:
                self.peak_worker = self.peak_tree
            else:
                workers = [pid for pid, (ppid, _) in table.items() if ppid == self.pid]
                self.peak_worker = max([self.peak_worker] +
                                       [subtree_rss(table, w) for w in workers])
            self.stopping.wait(self.interval)

    def stop(self) -> None:
        self.stopping.set()
        self.join()


def notebook_run(path: str | Path) -> float:
    """Seconds to run ``path`` top to bottom from a fresh kernel (nbclient, kernel start included)."""
    import nbformat
    from nbclient import NotebookClient
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(Path(path).parent)}}
                   ).execute(stderr=subprocess.DEVNULL)  # the kernel's start-up warnings
    return time.perf_counter() - started


def _median(function: Callable[[], object], repeats: int) -> float:
    times: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _peak(function: Callable[[], object]) -> int:
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak
