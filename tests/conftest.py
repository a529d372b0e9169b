"""Fixtures shared by the project's tests."""
import os
import sys
from pathlib import Path

from support import course_state  # noqa: F401

# nbgrader runs `alembic` by name; make the test environment's bin/ visible as `make` does.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
