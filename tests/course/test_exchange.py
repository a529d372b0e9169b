"""The exchange (autograder/course/exchange.py): collect reads what learners hand in as data."""
import logging
import os

import pytest

from autograder.course import exchange
from support import COURSE


def test_collect_copies_regular_files_only_and_follows_no_link(tmp_path, caplog):
    source = tmp_path / "inbound" / "alice+02+2026"
    (source / "sub").mkdir(parents=True)
    (source / "answer.ipynb").write_text("{}")
    (source / "sub" / "notes.txt").write_text("n")
    (source / "suite.py").symlink_to(COURSE.assignment("00-getting-started").suite)
    (source / "sub" / "secret").symlink_to("/etc/passwd")
    os.mkfifo(source / "pipe")
    assert "is a symbolic link" in exchange.find_problem(str(source))
    target = tmp_path / "submitted"
    with caplog.at_level(logging.WARNING):
        exchange.copy_regular_tree(str(source), str(target), log=logging.getLogger("collect"))
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    assert copied == ["answer.ipynb", "sub", "sub/notes.txt"]
    assert not any(p.is_symlink() for p in target.rglob("*"))
    assert caplog.text.count("link or a special file") == 3
    linked = tmp_path / "inbound" / "bob+02+2026"
    linked.symlink_to(source, target_is_directory=True)
    assert exchange.find_problem(str(linked)) == "bob+02+2026 is a symbolic link"
    with pytest.raises(OSError):
        exchange.copy_regular_tree(str(linked), str(tmp_path / "bob"))
