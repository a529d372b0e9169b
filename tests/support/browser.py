"""A browser and a JupyterLab for the tests that look at pages as a reader does: Debian's
Chromium driven by Playwright (its own browser download is not used), and a JupyterLab on a free
loopback port, started directly or by a target of the Makefile."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import REPO

AXE = REPO / "tests" / "accessibility" / "node_modules" / "axe-core" / "axe.min.js"

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                 "(make test installs it from requirements-dev.lock)")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "attention-course-test"


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run must install it")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(root, cwd, logs, env_extra=None, make_target=None):
    """A JupyterLab serving ``root`` on a free loopback port; its URL. With ``make_target`` (lab,
    instructor-lab) it is started by that target of the Makefile, as a reader types it, in this
    environment; its process group (make, the shell, the server and its kernels) ends with it."""
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", **(env_extra or {}))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    log = open(Path(logs) / f"jupyterlab-{port}.log", "w")
    flags = ["--no-browser", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
             f"--IdentityProvider.token={TOKEN}", "--LabApp.news_url=",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if make_target:
        venv = Path(sys.executable).parent.parent
        # -o: this environment counts as installed, whatever the files' dates
        command = ["make", "--no-print-directory", "-C", str(REPO), "-o", f"{venv}/.installed",
                   make_target, f"VENV={venv}", f"LAB_ROOT={root}", f"LAB_ARGS={' '.join(flags)}"]
    else:
        command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--allow-root",
                   f"--ServerApp.root_dir={root}", *flags]
    server = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            assert server.poll() is None, "JupyterLab exited at start"
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # the group this test started, by its id
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        log.close()


def dismiss_notifications(page):
    """Answer JupyterLab's news prompt, which would otherwise cover part of the screenshots."""
    with contextlib.suppress(Exception):
        page.get_by_role("button", name="No", exact=True).click(timeout=5000)


@pytest.fixture
def axe_source():
    if not AXE.exists():
        if os.environ.get("CI"):
            pytest.fail("axe-core is missing in CI: `make test` installs it with npm")
        pytest.skip("axe-core is not installed (make test installs it: npm ci in "
                    "tests/accessibility)")
    return AXE.read_text()
