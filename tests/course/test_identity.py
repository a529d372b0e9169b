"""Ids learners choose (autograder/course/identity.py): one character set for student and
assignment ids, a refusal sentence that can be printed, and names shown so that no character
forges or hides a line."""
import pytest

from autograder.course import identity

VALID = ["alice", "learner01", "a.b@example.org", "jean-luc_2", "00-getting-started", "_x", "A" * 64]
INVALID = ["", "bob\n", "eve\r", "x\r00-getting-started,,,,,,,47,0,47,47", "a b", "a\tb", "a+b",
           "a/b", "..", ".hidden", "-rf", "@home", "a,b", 'a"b', "<img src=x onerror=alert(1)>",
           "ali\u202ecilA", "\x1b]0;pwned\x07", "a\x00b", "A" * 65, "café", "*", "alice?"]


@pytest.mark.parametrize("name", VALID)
def test_valid_ids_pass(name):
    assert identity.id_problem(name) is None


@pytest.mark.parametrize("name", INVALID)
def test_every_other_name_is_refused_with_a_sentence_it_can_print(name):
    problem = identity.id_problem(name)
    assert problem and identity.ID_CHARACTERS in problem
    line = problem.split(" is not a valid")[0]
    assert line.isprintable(), f"the refusal itself carries {line!r}"
    assert identity.account_uid(name) is None  # never looked up


def test_names_are_shown_so_that_no_character_forges_or_hides_a_line():
    for name in INVALID:
        assert identity.shown(name).isprintable() and "\n" not in identity.shown(name)
    assert identity.shown("alice") == "alice"
    assert identity.shown("x" * 5000) != "x" * 5000 and len(identity.shown("x" * 5000)) < 300
