"""A kernel's memory and processes are held in total in every layout, with or without a control
group (one process, with its address space as the total): autograder/sandbox/confinement.py and
the one-process filter of autograder/sandbox/launcher.py.
"""
import json
import subprocess
import sys

import pytest

from autograder.sandbox import confinement, launcher
from support import REPO, run_as, write_notebook
from support.attacks import (ASSIGNMENT, FULL, SOLUTION_FILE, instructor, needs_bubblewrap,  # noqa: F401
                             with_extra_cell)

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ the kernel's total, per layout

MEMORY_PROBE = r"""import ctypes, json, os, subprocess, threading
report = {}
def attempt(name, action):
    try:
        report[name] = action()
    except BaseException as error:
        report[name] = f"refused: {type(error).__name__}"
def forks():  # the issue's fifth attack: four processes of 1.25 GiB against a 2 GiB promise
    for _ in range(4):
        if os.fork() == 0:
            hog = bytearray(1280 << 20)
            import time
            time.sleep(20)
            os._exit(0)
    return "forked"
attempt("fork", forks)
attempt("subprocess", lambda: subprocess.run(["/bin/true"]).returncode)
libc = ctypes.CDLL(None, use_errno=True)
def unshare():  # a user and mount namespace of its own could mount an unlimited tmpfs
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    return "unshared"
attempt("unshare", unshare)
attempt("memfd", lambda: os.memfd_create("hog") and "made")
def write(path):
    with open(path, "wb") as handle:
        handle.write(b"x" * (16 << 20))
    os.unlink(path)
    return "written"
for path in ["/dev/shm/hog", "/hog", "/run/hog", "/etc/hog", "/usr/hog"]:
    attempt(path, lambda path=path: write(path))
held = []
def hold():
    try:
        while True:
            held.append(bytearray(64 << 20))
    except MemoryError:
        pass
threads = [threading.Thread(target=hold) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
report["held_by_threads_mib"] = len(held) * 64
del held[:]
import resource
report["open_files"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
print("MEMORY-REPORT " + json.dumps(report))
"""


@pytest.mark.xdist_group("users")
@pytest.mark.parametrize("who", ["root", "instructor"])
def test_a_kernel_is_held_to_its_total_in_every_layout(who, tmp_path, request):
    """Graded as root (a control group) and as an ordinary user (none): the kernel cannot fork,
    unshare, make memory files or write outside its scratch folder, and its threads together
    hold less than its one address space. The run says at its start which mechanism holds."""
    if who == "root":
        top = tmp_path / "layout"
    else:
        user, home = request.getfixturevalue("instructor")
        top = home / "layout"
    path = write_notebook(top / "class" / "mallory" / ASSIGNMENT / SOLUTION_FILE.name,
                          with_extra_cell(MEMORY_PROBE))
    state, out = top / "state", top / "results.json"
    args = [sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
            "--require-sandbox", "--jobs", "1", "--cell-timeout", "60", "--budget", "180",
            "--state", str(state), "--json", str(out), str(path)]
    if who == "root":
        done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(top)], check=True)
        done = run_as(user, home, *args, cwd=REPO)
    print(f"\n[bounded] {who}: {done.stderr.splitlines()[0]}")
    assert "held in total by" in done.stderr and "one process each" in done.stderr
    if who == "root":
        assert "control group" in done.stderr
    assert json.loads(out.read_text())["score"] == FULL
    [entry] = state.glob("*.json")
    texts = [o.get("text", "") for c in json.loads(entry.read_text())["executed"]["cells"]
             for o in c.get("outputs", [])]
    line = next(t for t in texts if "MEMORY-REPORT" in t)
    found = json.loads(line.split("MEMORY-REPORT ", 1)[1])
    print(f"[bounded] {who}: the kernel's attempts: {found}")
    for refused in ("fork", "subprocess", "unshare", "memfd", "/dev/shm/hog", "/hog", "/run/hog",
                    "/etc/hog", "/usr/hog"):
        assert str(found[refused]).startswith("refused"), (refused, found[refused])
    assert 0 < found["held_by_threads_mib"] <= confinement.Limits().memory_bytes >> 20
    assert found["open_files"] == confinement.Limits().open_files


def test_the_run_says_when_no_mechanism_holds_the_total(monkeypatch):
    monkeypatch.setattr(confinement.Cgroup, "works", classmethod(lambda cls, limits: False))
    monkeypatch.setattr(confinement, "one_process_works", lambda: False)
    assert "NOT held in total" in confinement.limits_statement(confinement.BUBBLEWRAP,
                                                               confinement.Limits())


def test_the_one_process_filter_covers_this_machine():
    assert launcher.one_process_filter() is not None
    assert confinement.one_process_works()
