"""autograder/engine/assignment.py: where an assignment's files are, and the listing of its
solution kept while its folder does not change."""
import os
import time

import pytest

from autograder.engine import assignment as module
from autograder.engine.assignment import Assignment, Course


def a_course(tmp_path, seconds_ago):
    """A course with one solution notebook, its folder last changed ``seconds_ago``."""
    folder = tmp_path / "source" / "a1"
    folder.mkdir(parents=True)
    (folder / "first.ipynb").write_text("{}")
    then = time.time() - seconds_ago
    os.utime(folder, (then, then))
    return Assignment(Course(tmp_path), "a1"), folder


@pytest.mark.parametrize("seconds_ago", [0, 60])
def test_a_notebook_added_or_renamed_after_a_listing_is_seen(tmp_path, seconds_ago):
    """Whether or not the folder had been still long enough for its listing to be kept, a second
    notebook is seen at once, and a rename of the only one too."""
    found, folder = a_course(tmp_path, seconds_ago)
    assert found.solution.name == "first.ipynb"
    (folder / "first.ipynb").rename(folder / "renamed.ipynb")
    assert found.solution.name == "renamed.ipynb"
    (folder / "second.ipynb").write_text("{}")
    with pytest.raises(LookupError, match="found 2"):
        found.solution


def test_a_still_folder_is_listed_once_and_a_fresh_one_every_time(tmp_path, monkeypatch):
    listed = []
    glob = type(tmp_path).glob

    def counting(self, pattern):
        listed.append(self.name)
        return glob(self, pattern)
    monkeypatch.setattr(type(tmp_path), "glob", counting)
    still, _ = a_course(tmp_path / "still", 60)
    for _ in range(5):
        assert still.solution.name == "first.ipynb"
    assert len(listed) == 1
    fresh, _ = a_course(tmp_path / "fresh", 0)
    for _ in range(3):
        assert fresh.solution.name == "first.ipynb"
    assert len(listed) == 1 + 3
    assert module.STILL_NS >= 1_000_000_000  # well beyond any file system's clock tick
