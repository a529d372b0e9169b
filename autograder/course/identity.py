"""Who a submission is from, and which names may stand for a learner or an assignment.

Names learners choose (the folders they write into the exchange's ``inbound/``, which become the
folders of ``submitted/``) turn into student and assignment ids: gradebook keys, CSV fields, HTML,
lines of the recording protocol. Every such id is checked against one character set,
:data:`ID_CHARACTERS`, before the course uses it (:func:`id_problem`); one that fails is refused
with a sentence, and the rest of the class goes on.

Who submitted is never read from a name. In an exchange other accounts can write into (a shared
machine), a submission counts for a learner only if its folder and everything in it belong to
that learner's account, the user id the operating system's user database gives for the student
id (:func:`account_uid`). In a private exchange, one only the collecting account (and root) can
write into (:func:`others_can_write`: the demo, one person on one machine), every learner's folder
is that account's own doing, so it may also belong to that account. Refusals are kept beside
``submitted/`` (:func:`keep_refusals`) for ``python -m autograder autograde`` to list.
"""
import json
import os
import pwd
import re
import stat
from collections.abc import Collection, Iterable
from pathlib import Path

from ..engine.atomic import write_atomically

ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}")
ID_CHARACTERS = ("ASCII letters and digits and the characters _ . @ - (not first), at most 64 "
                 "characters")


def id_problem(value: object, kind: str = "student id") -> str | None:
    """None if ``value`` may be used as a ``kind`` (``student id``, ``assignment id``); else a
    sentence saying why not."""
    if isinstance(value, str) and ID.fullmatch(value):
        return None
    return f"{shown(value)} is not a valid {kind}: ids are made of {ID_CHARACTERS}"


def shown(value: object) -> str:
    """A learner-chosen string as it may be printed in a terminal or a log line: as it is when
    every character is printable, else quoted with escapes (a newline, a carriage return or a
    terminal control sequence cannot forge or hide a line)."""
    text = str(value)
    return text if text.isprintable() and len(text) <= 200 else ascii(text[:200])


def account_uid(name: str) -> int | None:
    """The user id of the account named ``name`` in the system's user database, or None."""
    if id_problem(name) is not None:
        return None
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def account_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def others_can_write(folder: str | Path, uid: int | None = None) -> bool:
    """Whether an account other than ``uid`` (default: this process's) and root can create,
    remove or replace entries of ``folder``: a folder on the way to it belongs to another account,
    or lets others write without the sticky bit before a folder that shuts others out, or
    ``folder`` itself lets its group or others write (ACLs show in those bits too)."""
    uid = os.geteuid() if uid is None else uid
    path = Path(os.path.realpath(folder))
    chain = [*reversed(path.parents), path]
    for index, part in enumerate(chain):
        info = os.lstat(part)
        if info.st_uid not in (0, uid):
            return True
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if index == len(chain) - 1:
            return bool(writable)
        if writable and not info.st_mode & stat.S_ISVTX:
            return True
        if not info.st_mode & (stat.S_IXGRP | stat.S_IXOTH):
            return False  # nobody else gets past this folder
    return True


# ------------------------------------------------------------------ refusals, kept for autograde

def refusals_path(submitted: str | Path, assignment: str) -> Path:
    """Where collect keeps the refused submissions of ``assignment``: beside ``submitted/``."""
    return Path(submitted).parent / "refused" / f"{assignment}.json"


def read_refusals(submitted: str | Path, assignment: str) -> list[dict[str, str]]:
    """``[{"folder", "student", "reason"}]``: the submissions collect refused and that are still
    in the exchange."""
    try:
        entries = json.loads(refusals_path(submitted, assignment).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in entries if isinstance(e, dict) and
            {"folder", "student", "reason"} <= set(e) and all(isinstance(e[k], str) for k in e)]


def keep_refusals(submitted: str | Path, assignment: str, examined: Collection[str],
                  refused: Iterable[dict[str, str]], inbound: str) -> None:
    """Record ``refused`` (entries as :func:`read_refusals` gives them), replacing what an
    earlier collect said of the folders ``examined`` now, and forgetting folders no longer in
    ``inbound``."""
    earlier = [e for e in read_refusals(submitted, assignment)
               if e["folder"] not in examined and os.path.lexists(os.path.join(inbound, e["folder"]))]
    entries = sorted(earlier + list(refused), key=lambda e: (e["student"], e["folder"]))
    path = refusals_path(submitted, assignment)
    if entries or path.exists():
        write_atomically(path, json.dumps(entries, indent=1) + "\n")


def refusal_line(entry: dict[str, str]) -> str:
    """One refusal, as the instructor reads it."""
    return f"{shown(entry['folder'])} (for {shown(entry['student'])}): {entry['reason']}"
