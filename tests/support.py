"""Shared fixtures of the project's own tests."""
import json
import os
from pathlib import Path

import pytest

from autograder import reference

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENTS = reference.assignments()


@pytest.fixture
def course_state(tmp_path, monkeypatch):
    """A private .course/ (gradebook, exchange, submissions) for one test."""
    state = tmp_path / "course"
    state.mkdir()
    monkeypatch.setenv("ATTENTION_COURSE_STATE", str(state))
    return state


def write_notebook(path, notebook):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def sandbox_mode():
    """Tests grade in the sandbox wherever bubblewrap exists (CI installs it)."""
    return os.environ.get("ATTENTION_COURSE_SANDBOX", "auto")
