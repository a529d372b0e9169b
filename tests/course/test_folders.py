"""The engine's environment variables have neutral names (AUTOGRADER_*); the old course-named ones
still work, saying once that they are deprecated."""
import subprocess
import sys

from autograder.course import folders


def state_in_child(env):
    code = ("from autograder.course import folders\n"
            "print(folders.state_dir('/nowhere'))\nprint(folders.state_dir('/nowhere'))")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_neutral_name_relocates_the_state_silently(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTENTION_COURSE_STATE", raising=False)
    monkeypatch.setenv("AUTOGRADER_STATE", str(tmp_path))
    assert folders.state_dir("/nowhere") == tmp_path


def test_the_old_name_still_works_and_says_once_it_is_deprecated(tmp_path):
    done = state_in_child({"PATH": "/usr/bin:/bin", "ATTENTION_COURSE_STATE": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path)] * 2
    assert done.stderr.count("$ATTENTION_COURSE_STATE is deprecated") == 1, done.stderr
    assert "$AUTOGRADER_STATE" in done.stderr


def test_the_neutral_name_wins_over_the_old_one(tmp_path):
    done = state_in_child({"PATH": "/usr/bin:/bin", "ATTENTION_COURSE_STATE": "/old",
                           "AUTOGRADER_STATE": str(tmp_path)})
    assert done.stdout.split()[0] == str(tmp_path) and "deprecated" not in done.stderr


def test_without_either_the_state_is_in_the_course_root(monkeypatch):
    for name in ("AUTOGRADER_STATE", "ATTENTION_COURSE_STATE"):
        monkeypatch.delenv(name, raising=False)
    assert str(folders.state_dir("/some/course")) == "/some/course/.course"
