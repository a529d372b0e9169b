"""autograder/engine/assignment.py: where an assignment's files are, and what is kept of them
(the listing of a solution folder, the digest of files) while they do not change."""
import os
import time

import pytest

from autograder.engine import assignment as module
from autograder.engine.assignment import Assignment, Course, contents_digest

STILL = 0.3  # seconds a path must be unchanged before its status vouches for it, in these tests


@pytest.fixture
def still(monkeypatch):
    """STILL_NS made short, so that a test can wait for a path to settle."""
    assert module.STILL_NS >= 1_000_000_000  # the real one: well beyond any clock's tick
    monkeypatch.setattr(module, "STILL_NS", int(STILL * 1e9))


def a_course(tmp_path):
    """A course with one solution notebook."""
    folder = tmp_path / "source" / "a1"
    folder.mkdir(parents=True)
    (folder / "first.ipynb").write_text("{}")
    return Assignment(Course(tmp_path), "a1"), folder


@pytest.mark.parametrize("settled", [False, True])
def test_a_notebook_added_or_renamed_after_a_listing_is_seen(tmp_path, still, settled):
    """Whether or not the folder had been still long enough for its listing to be kept, a second
    notebook is seen at once, and a rename of the only one too."""
    found, folder = a_course(tmp_path)
    if settled:
        time.sleep(STILL + 0.1)
    assert found.solution.name == "first.ipynb"
    (folder / "first.ipynb").rename(folder / "renamed.ipynb")
    assert found.solution.name == "renamed.ipynb"
    (folder / "second.ipynb").write_text("{}")
    with pytest.raises(LookupError, match="found 2"):
        found.solution


def test_a_still_folder_is_listed_once_and_a_fresh_one_every_time(tmp_path, still, monkeypatch):
    """A folder whose times were set back (os.utime) is still fresh: its change time counts."""
    listed = []
    glob = type(tmp_path).glob

    def counting(self, pattern):
        listed.append(self.name)
        return glob(self, pattern)
    monkeypatch.setattr(type(tmp_path), "glob", counting)
    settled, _ = a_course(tmp_path / "settled")
    time.sleep(STILL + 0.1)
    for _ in range(5):
        assert settled.solution.name == "first.ipynb"
    assert len(listed) == 1
    fresh, folder = a_course(tmp_path / "fresh")
    then = time.time() - 60
    os.utime(folder, (then, then))
    for _ in range(3):
        assert fresh.solution.name == "first.ipynb"
    assert len(listed) == 1 + 3


def test_a_file_rewritten_with_its_times_put_back_gets_a_new_digest(tmp_path, still):
    """Same size, same modification time, same inode: until the file has been still, its digest
    is computed again, so a change within one tick of the clock is never missed; once still, it
    is kept, and any later change of status is seen."""
    path = tmp_path / "helper.py"
    path.write_text("x = 1\n")
    first = contents_digest([path])
    info = os.stat(path)
    path.write_text("x = 2\n")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    second = contents_digest([path])
    assert second != first
    time.sleep(STILL + 0.1)
    assert contents_digest([path]) == second
    path.write_text("x = 3\n")
    assert contents_digest([path]) not in (first, second)
