"""The environment files agree: what conda/Binder users get is what CI tests."""
import re
import tomllib

from support import REPO


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


def test_test_extras_are_pinned_exactly():
    for line in (REPO / "requirements-dev.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.match(r"^[A-Za-z0-9_.\-]+==\S+$", line), line
