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
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.tools.demo import CLASS_SIZE, sample_class
from support import REPO
from support.demo_output import check_demo_output

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheelhouse")]

UNREACHABLE = "http://127.0.0.1:9/simple"  # nothing listens there: any use of an index fails


def offline_environment():
    """This process's environment, with every route to a package index cut: no configuration
    file, no find-links, and an index that refuses connections."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "VIRTUAL_ENV", "ATTENTION_COURSE_", "AUTOGRADER_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=UNREACHABLE, PIP_RETRIES="0",
               PIP_TIMEOUT="2", npm_config_offline="true",
               PATH=os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                    if not p.startswith(str(REPO))))
    return env


@pytest.fixture(scope="module")
def ordinary_folder():
    """A folder with 755 parents, outside pytest's private temporary folder."""
    top = Path(tempfile.mkdtemp(prefix="attention-offline-", dir="/var/tmp"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def test_a_wheelhouse_installs_the_course_and_runs_the_demo_with_no_index(ordinary_folder):
    wheelhouse = ordinary_folder / "wheelhouse"
    done = subprocess.run(["make", "--no-print-directory", "wheelhouse",
                           f"WHEELHOUSE={wheelhouse}", f"PYTHON={sys.executable}"],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "On the machine with no network" in done.stdout
    clone = ordinary_folder / "attention-course"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=300)
    offline = offline_environment()
    demo = subprocess.run(["make", "--no-print-directory", "demo", f"WHEELHOUSE={wheelhouse}",
                           f"PYTHON={sys.executable}"], cwd=clone, env=offline,
                          capture_output=True, text=True, timeout=3600)
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
