"""A class of real OS accounts: an instructor and three learners, with private homes under a
folder other accounts can pass through (755, as /home is), removed afterwards."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from support import interpreter_open_to_others, needs_root_and_users, os_users

PREFIX = f"ac{os.getpid() % 10000}"


@pytest.fixture
def people():
    needs_root_and_users()
    root = Path(tempfile.mkdtemp(prefix="classroom-"))  # pytest's own tmp is root-only
    root.chmod(0o755)
    names = {"instructor": f"{PREFIX}-teach", "alice": f"{PREFIX}-alice", "bob": f"{PREFIX}-bob",
             "carol": f"{PREFIX}-carol"}
    try:
        with interpreter_open_to_others(), os_users(root, *names.values()) as homes:
            yield names, {role: homes[user] for role, user in names.items()}, root
    finally:
        shutil.rmtree(root, ignore_errors=True)
