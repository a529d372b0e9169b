"""The first hour, anywhere: `make wheelhouse` on a machine with network, then, from a fresh clone in
an ordinary folder (755, as a home or /srv is; not pytest's private temporary folder), `make demo
WHEELHOUSE=...` with no package index reachable, as the README runs both: the environment
installs from the folder alone, and the demo prints its table with every grade as expected and
writes every artefact (tests/support/demo_output.py: the export, Gradescope results, feedback,
report, flags, one score story, the learners' figures, `make demo-lab`'s formgrader). The hub's
configurable-http-proxy comes in the same folder, ready to run."""
import json
import os
import re
import shutil
import subprocess

import pytest

from autograder.tools.demo import CLASS_SIZE, sample_class
from support.demo_output import check_demo_output

# the offline demo (tests/conftest.py) is made once, on the worker of this group, for this test
# and the formgrader's in the browser (tests/end_to_end/test_browser.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheelhouse")]


def test_a_wheelhouse_installs_the_course_and_runs_the_demo_with_no_index(offline_demo):
    made, demo, offline = offline_demo.wheelhouse_run, offline_demo.demo_run, offline_demo.env
    assert made.returncode == 0, made.stderr[-3000:]
    assert "On the machine with no network" in made.stdout
    clone, wheelhouse = offline_demo.clone, offline_demo.wheelhouse
    assert demo.returncode == 0, (demo.stdout[-3000:], demo.stderr[-3000:])
    assert "--no-index" in demo.stdout  # every install step ran from the folder alone
    assert "Traceback (most recent call last)" not in demo.stdout + demo.stderr
    # nbgrader's release_assignment opens the exchange root to 777; the demo's exchange stays
    # private in fact (inside a folder only this account can enter), so collect takes every
    # sample learner's submission and the table shows every grade as expected
    assert "collect refused" not in demo.stderr and "demo stopped" not in demo.stderr
    rows = [line for line in demo.stdout.splitlines() if re.match(r"learner\d\d ", line)]
    assert len(rows) == CLASS_SIZE and not any(" !" in row for row in rows), demo.stdout[-3000:]
    header = next(line for line in demo.stdout.splitlines() if line.startswith("Autograded"))
    assert not re.search(r"\b1 points\b", header), header
    summary = json.loads((clone / "demo-output" / "summary.json").read_text())
    assert summary["grades"] == summary["expected"]
    state = clone / "demo-output" / "course"
    assert os.stat(state).st_mode & 0o077 == 0
    check_demo_output(clone / "demo-output", summary, sample_class(CLASS_SIZE), clone,
                      clone / ".venv", offline)
    if shutil.which("npm"):
        proxy = wheelhouse / "npm" / "node_modules" / ".bin" / "configurable-http-proxy"
        version = subprocess.run([str(proxy), "--version"], env=offline, capture_output=True,
                                 text=True, timeout=60)
        assert version.returncode == 0 and version.stdout.strip() == "5.3.0", version
