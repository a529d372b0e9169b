"""The environment files agree: what conda/Binder users get is what CI tests."""
import concurrent.futures
import re
import subprocess
import sys
import tomllib

import pytest

from support import REPO

# The Python versions the README promises (3.11.0 is the lowest; wheels differ per minor version),
# on each of which the lock must install.
PYTHONS = ["3.11.0", "3.12", "3.13", "3.14"]


def pins(text):
    found = {}
    for line in text.splitlines():
        match = re.match(r"^\s*(?:-\s*)?([A-Za-z0-9_.\-]+)==([^\s#]+)", line)
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_environment_yml_pins_exactly_the_locked_versions():
    locked = pins((REPO / "requirements.lock").read_text())
    conda = pins((REPO / "environment.yml").read_text())
    assert conda, "environment.yml pins nothing"
    for name, version in conda.items():
        assert locked.get(name) == version, f"{name}: environment.yml {version}, lock {locked.get(name)}"


def test_every_direct_dependency_is_pinned_in_both_files():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    locked = pins((REPO / "requirements.lock").read_text())
    conda = pins((REPO / "environment.yml").read_text())
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=\[ ;]", requirement)[0].lower().replace("_", "-")
        assert name in locked, f"{name} is not pinned in requirements.lock"
        assert name in conda, f"{name} is missing from environment.yml"


def test_environment_yml_uses_the_python_ci_uses():
    text = (REPO / "environment.yml").read_text()
    assert re.search(r"^\s*-\s*python=3\.11\b", text, re.M)


def test_every_environment_the_course_makes_gets_the_same_pip():
    """The Makefile's environments and the hub's learners' environment (docs/jupyterhub.md) get
    one pinned pip before anything else, and make wheelhouse carries that one."""
    makefile = (REPO / "Makefile").read_text()
    [version] = re.findall(r"^PIP_VERSION := (\S+)$", makefile, re.M)
    assert "-m venv $(VENV) && { $(PIP) pip==$(PIP_VERSION) ||" in makefile
    assert re.search(r"^\t  .*pip==\$\(PIP_VERSION\)$", makefile, re.M), "make wheelhouse"
    docs = (REPO / "docs" / "jupyterhub.md").read_text()
    assert f"/opt/attention-course/env/bin/pip install pip=={version}\n" in docs


def test_test_extras_are_pinned_exactly():
    for lock in ("requirements-dev.lock", "requirements-hub.lock"):
        for line in (REPO / lock).read_text().splitlines():
            if line.strip() and not line.startswith(("#", "-r ")):
                assert re.match(r"^[A-Za-z0-9_.\-]+==\S+$", line), f"{lock}: {line}"


def test_the_readme_states_the_python_versions_checked_here():
    readme = (REPO / "README.md").read_text()
    assert "Python 3.11 to 3.14" in readme
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    learner = tomllib.loads((REPO / "learner" / "pyproject.toml").read_text())["project"]
    assert requires == learner["requires-python"] == ">=3.11"


@pytest.mark.slow
def test_the_lock_resolves_for_every_stated_python(tmp_path):
    """pip finds a wheel of every pinned package of requirements.lock and the hub's lock for each
    Python the README names (the locks pin every dependency, so each pin is checked on its own:
    --no-deps)."""
    def resolve(version):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
             "--disable-pip-version-check", "--only-binary=:all:", "--no-deps",
             "--python-version", version,
             "--target", str(tmp_path / version), "-r", str(REPO / "requirements.lock"),
             "-r", str(REPO / "requirements-hub.lock")],
            capture_output=True, text=True, timeout=900)
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        return version, done.returncode, "\n".join(errors) or done.stderr[-2000:]

    with concurrent.futures.ThreadPoolExecutor(len(PYTHONS)) as pool:
        outcomes = list(pool.map(resolve, PYTHONS))
    failed = {version: errors for version, code, errors in outcomes if code != 0}
    assert not failed, failed


def test_the_locked_pytest_keeps_an_xdist_group_on_one_worker(tmp_path):
    """`make test` runs with --dist loadgroup: the tests of one xdist group (the real accounts',
    the wheelhouse's, each notebook's run at SEED = 0) must share a worker, one after another.
    pytest 9.2 derives a test's id from a structured form that pytest-xdist 3.8 cannot add a
    group's name to, and every group then spread over the workers (each test of a shared run made
    the run again); the lock pins a pytest that keeps them together."""
    (tmp_path / "test_grouped.py").write_text(
        "import os\nimport pytest\n\n"
        "@pytest.mark.parametrize('n', [pytest.param(n, marks=pytest.mark.xdist_group('one'))\n"
        "                               for n in range(8)] + list(range(8, 16)))\n"
        "def test_where(n, tmp_path_factory):\n"
        "    out = tmp_path_factory.getbasetemp().parent.parent / f'ran-{n}'\n"
        "    out.write_text(os.environ['PYTEST_XDIST_WORKER'])\n")
    (tmp_path / "base").mkdir()
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "3", "--dist", "loadgroup", "-q",
                           "-p", "no:cacheprovider", "-p", "no:randomly", "--basetemp",
                           str(tmp_path / "base" / "t"), str(tmp_path / "test_grouped.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = {n: (tmp_path / "base" / f"ran-{n}").read_text() for n in range(16)}
    assert len({workers[n] for n in range(8)}) == 1, workers  # the group: one worker
    assert len(set(workers.values())) > 1, workers  # and the others spread as usual
