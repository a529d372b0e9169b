"""Collecting submissions without trusting them.

``nbgrader collect`` copies each learner's folder from the exchange's ``inbound/`` into the
course's ``submitted/`` with the instructor's rights. It takes the learner's id and the time of
the submission from the folder's name (``<student>+<assignment>+<timestamp>[+<random>]``), keeps
each learner's latest, and only warns when the folder belongs to another account: anyone who can
write into the inbound can hand in work as anyone else, or push a learner's own work aside with a
later timestamp. It also follows symbolic links (a learner who places a link to the hidden suite
or a solution in the exchange gets it copied into their own submission and shown back to them),
and a FIFO stalls the copy.

:class:`SafeCollect` (configured by ``nbgrader_config.py`` as the exchange's collect step) keeps
nbgrader's choice of the latest submission (or the latest before the due date, with
``--before-duedate``), made among the submissions that pass every check (:meth:`SafeCollect.problem`):

- the student id in the name is made of :data:`autograder.course.identity.ID_CHARACTERS`;
- the folder and everything in it belong to that student's account (the operating system's user
  database); in a private exchange, which no account but the collecting one can write into, they
  may also belong to the collecting account (:mod:`autograder.course.identity`);
- it holds no link and no special file;
- its timestamp is not later than the folder's last change, as the kernel recorded it (a
  timestamp from the future is refused), and ``timestamp.txt``, when there, says the same;
- in a shared exchange, nothing in it changed after it was handed in (:func:`late_change`):
  ``nbgrader submit`` copies the folder, writes ``timestamp.txt`` and sets every mode within
  moments of the time it names the folder after, so every entry's last change (its ``ctime``,
  which the kernel sets on every write, rename, link or change of mode, and which no one but root
  can set back) lies within :data:`SUBMIT_SPREAD` of the others and within
  :data:`CLOCK_SLACK` of that time; and no file in it has a second name (a hard link).

nbgrader leaves each submission folder writable by all (0777), so another account that learns
its name can move or link files into it, remove them, or (in an inbound without the sticky bit)
rename it: each of these changes some entry's ``ctime``. In a shared exchange a folder that belongs
to the learner's account is one of hers; when one of them fails a check, collect takes none of
hers (it can no longer tell which was her latest: an older one taken in its place is exactly what
such a change would aim at), and says so for each. :class:`SafeReleaseAssignment` gives the
inbound the sticky bit, so that no account but the folder's owner, the inbound's and root can
rename or remove a submission folder (collect sets it too, on an inbound it owns).

A refused submission is never copied; each is logged as an error, summed up at the end, and kept
beside ``submitted/`` for ``python -m autograder autograde`` to list. The copy
(:func:`copy_regular_tree`) opens every folder and file without following links, copies regular
files only and checks each one's owner on the open file, so a folder changed while it is copied
can smuggle in neither a link nor another account's file.
"""
from __future__ import annotations

import contextlib
import datetime
import errno
import fnmatch
import glob
import logging
import os
import shutil
import stat
from collections import defaultdict
from collections.abc import Callable, Collection
from typing import Any, NoReturn

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.utils import check_mode, parse_utc

from . import identity
from ..engine import notebook

NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
DIRECTORY = os.O_RDONLY | NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
# How much later than the folder's last change a timestamp may be: the clocks of the machine a
# learner submitted from and of the exchange's file server (a network file system) may differ.
CLOCK_SLACK = datetime.timedelta(seconds=60)


# How far apart the last changes of a submission's entries may lie: nbgrader submit sets the mode
# of every file and folder it copied, last of all the folder's own, in one pass at its end.
SUBMIT_SPREAD = datetime.timedelta(seconds=5)


class Refused(Exception):
    """A submission that must not be collected; the message says why."""


# nbgrader's record of a submission folder: "username", "filename" (the folder's name), and here
# "stamp" (the timestamp its name gives) and "timestamp" (a naive UTC datetime, once checked)
Record = dict[str, Any]


def owner_problem(info: os.stat_result, shown: str, owners: Collection[int] | None) -> str | None:
    """A sentence if the file whose ``os.stat`` is ``info`` belongs to none of ``owners``."""
    if owners is None or info.st_uid in owners:
        return None
    expected = " or ".join(identity.account_name(uid) for uid in sorted(owners))
    return f"{shown} belongs to {identity.account_name(info.st_uid)}, not {expected}"


def find_problem(path: str, max_files: int = 1000,
                 owners: Collection[int] | None = None) -> str | None:
    """A sentence naming the first link, special file or file of an account not in ``owners``
    (user ids; None: any) in the folder ``path``, or None."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{path} cannot be read ({error.strerror})"
    name = os.path.basename(path)
    if stat.S_ISLNK(info.st_mode):
        return f"{identity.shown(name)} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{identity.shown(name)} is not a folder"
    problem = owner_problem(info, "the folder", owners)
    if problem:
        return problem

    def unreadable(error: OSError) -> NoReturn:
        raise error

    count = 0
    try:
        for folder, folders, files in os.walk(path, followlinks=False, onerror=unreadable):
            for name in folders + files:
                count += 1
                if count > max_files:
                    return f"it holds more than {max_files} files"
                full = os.path.join(folder, name)
                info = os.lstat(full)
                relative = identity.shown(os.path.relpath(full, path))
                if stat.S_ISLNK(info.st_mode):
                    return f"{relative} is a symbolic link"
                if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                    return f"{relative} is not a regular file"
                problem = owner_problem(info, relative, owners)
                if problem:
                    return problem
    except OSError as error:
        where = os.path.relpath(error.filename, path) if error.filename else "the folder"
        return f"{identity.shown(where)} cannot be read ({error.strerror})"
    return None


def utc(seconds: float) -> datetime.datetime:
    """A ``st_ctime`` as nbgrader's timestamps are: naive UTC."""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


def late_change(path: str, stamp: datetime.datetime, max_files: int = 1000) -> str | None:
    """A sentence if an entry of the submission folder ``path`` (the folder included) changed
    after the submission was handed in at ``stamp`` (naive UTC): later than ``stamp`` and
    :data:`CLOCK_SLACK`, or more than :data:`SUBMIT_SPREAD` after the submission's other
    entries; or if a file in it has another name (a hard link, through which it could be changed);
    else None. Links are not followed (:func:`find_problem` refuses them)."""
    entries = [("the folder", os.lstat(path))]
    for folder, folders, files in os.walk(path, followlinks=False):
        for name in folders + files:
            if len(entries) > max_files:
                return f"it holds more than {max_files} files"
            full = os.path.join(folder, name)
            entries.append((identity.shown(os.path.relpath(full, path)), os.lstat(full)))
    for shown, info in entries:
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return (f"{shown} has {info.st_nlink} names (hard links): it could have been changed "
                    f"through another")
    shown, info = max(entries, key=lambda entry: entry[1].st_ctime_ns)
    latest, earliest = utc(info.st_ctime), utc(min(i.st_ctime for _, i in entries))
    where = "the folder was" if shown == "the folder" else f"{shown} was"
    if latest > stamp + CLOCK_SLACK:
        return (f"{where} changed at {latest:%Y-%m-%d %H:%M:%S} UTC, after the submission was "
                f"handed in ({stamp:%Y-%m-%d %H:%M:%S} UTC): what a learner hands in is changed "
                f"by no one afterwards")
    if latest - earliest > SUBMIT_SPREAD:
        return (f"{where} changed at {latest:%Y-%m-%d %H:%M:%S} UTC, "
                f"{(latest - earliest).total_seconds():.0f} s after the rest of the submission: "
                f"what a learner hands in is changed by no one afterwards")
    return None


# whether to leave a file out: skip(folder, name, size), the size None for a folder
Skip = Callable[[str, str, int | None], bool]


def copy_regular_tree(source: str, destination: str,
                      skip: Skip = lambda folder, name, size: False,
                      log: logging.Logger | None = None,
                      owners: Collection[int] | None = None) -> None:
    """Copy folders and regular files from ``source`` to ``destination``, never following a link.

    ``skip(folder, name, size)`` may leave a file out (nbgrader's ignore, include and size
    options). Links and special files are left out and logged. With ``owners`` (user ids), a
    folder or file that belongs to another account raises :class:`Refused`, checked on the
    opened folder or file itself."""
    def check_owner(fd: int, shown: str) -> None:
        problem = owner_problem(os.fstat(fd), shown, owners)
        if problem:
            raise Refused(problem)

    def copy_folder(source_fd: int, target: str, relative: str) -> None:
        check_owner(source_fd, identity.shown(relative) or "the folder")
        os.makedirs(target, exist_ok=True)
        with os.scandir(source_fd) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            shown = os.path.join(relative, name)
            try:
                info = os.stat(name, dir_fd=source_fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if skip(relative, name, None):
                    continue
                child = os.open(name, DIRECTORY, dir_fd=source_fd)
                try:
                    copy_folder(child, os.path.join(target, name), shown)
                finally:
                    os.close(child)
            elif stat.S_ISREG(info.st_mode):
                if not skip(relative, name, info.st_size):
                    copy_file(source_fd, name, os.path.join(target, name), shown)
            elif log is not None:
                log.warning("Not collected: %s is a link or a special file", identity.shown(shown))

    def copy_file(source_fd: int, name: str, target: str, shown: str) -> None:
        try:
            fd = os.open(name, os.O_RDONLY | NOFOLLOW | os.O_NONBLOCK, dir_fd=source_fd)
        except OSError as error:
            if log is not None and error.errno in (errno.ELOOP, errno.ENXIO):
                log.warning("Not collected: %s is a link or a special file", identity.shown(shown))
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            check_owner(fd, identity.shown(shown))
            with open(target, "wb") as out:
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    out.write(chunk)
        finally:
            os.close(fd)

    top = os.open(source, DIRECTORY)
    try:
        copy_folder(top, destination, "")
    finally:
        os.close(top)


def untaken(student: str, damaged: list[str]) -> str:
    """Why none of ``student``'s submissions is taken: ``damaged`` (folder names) are hers and
    failed a check."""
    shown = identity.shown(student)
    which = identity.shown(damaged[0]) + (f" and {len(damaged) - 1} more" if len(damaged) > 1
                                          else "")
    return (f"another submission of {shown}'s ({which}) is {shown}'s own folder and failed its "
            f"checks, so collect cannot tell which of {shown}'s submissions is the latest and "
            f"takes none of them: look at that folder, move it out of inbound/, and collect again")


def sticky_inbound(inbound: str, log: logging.Logger) -> None:
    """Give the inbound the sticky bit if this account owns it and it lacks it: then no account
    but a folder's owner, the inbound's owner and root can rename or remove a submission."""
    try:
        info = os.stat(inbound)
        if info.st_uid != os.geteuid() or info.st_mode & stat.S_ISVTX:
            return
        os.chmod(inbound, stat.S_IMODE(info.st_mode) | stat.S_ISVTX)
    except OSError as error:
        log.warning("Could not give %s the sticky bit (%s): any account may rename or remove a "
                    "submission folder there", inbound, error.strerror)
        return
    log.info("Gave %s the sticky bit: no other account can rename or remove a learner's "
             "submission folder there", inbound)


class SafeReleaseAssignment(ExchangeReleaseAssignment):  # type: ignore[misc]  # nbgrader is untyped
    """nbgrader's release step, giving the inbound the sticky bit (:func:`sticky_inbound`) and
    leaving a private exchange private."""

    def ensure_root(self) -> None:
        """nbgrader's, except that an exchange root this account owns and no other account can
        enter (the course's own single-machine exchange, ``.course/exchange``, made 700) stays
        so: nbgrader would open it to 777, and every folder in it could then be another
        account's doing. A shared exchange's root is made 1777 by whoever sets it up
        (docs/jupyterhub.md)."""
        try:
            info = os.lstat(self.root)
        except OSError:
            super().ensure_root()
            return
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() \
                and not info.st_mode & 0o077:
            return
        super().ensure_root()

    def init_dest(self) -> None:
        super().init_dest()
        sticky_inbound(self.inbound_path, self.log)


def read_timestamp(folder: str) -> str | None:
    """The text of ``folder``'s ``timestamp.txt`` (stripped), None if there is none; raises
    :class:`Refused` if it cannot be read."""
    path = os.path.join(folder, "timestamp.txt")
    if not os.path.lexists(path):
        return None
    try:
        return notebook.read_regular(path, limit=200).decode("utf-8").strip()
    except (notebook.NotebookProblem, UnicodeDecodeError):
        raise Refused("its timestamp.txt cannot be read as a timestamp") from None


def parsed(text: str) -> datetime.datetime | None:
    """nbgrader's reading of a timestamp (naive UTC), or None if it is not one."""
    try:
        stamp: datetime.datetime = parse_utc(text)
        return stamp
    except Exception:  # a third-party parser given learner text: whatever fails, it is no time
        return None


class SafeCollect(ExchangeCollect):  # type: ignore[misc]  # nbgrader is untyped
    """nbgrader's collect step, taking only submissions that pass every check (see the module's
    docstring)."""

    def init_src(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        assignment = self.coursedir.assignment_id
        problem = identity.id_problem(assignment, "assignment id")
        if problem:
            self.fail(problem)
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.shared = identity.others_can_write(self.inbound_path)
        if self.shared:
            sticky_inbound(self.inbound_path, self.log)
        student = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student}+{glob.escape(assignment)}+*")
        self.examined: set[str] = set()  # the folders' names
        self.refused: list[dict[str, str]] = []  # {"folder", "student", "reason"}
        self.owners: dict[str, set[int]] = {}  # folder -> the user ids its files may belong to
        # folder -> the timestamp to write as its timestamp.txt (its name's), if it had none
        self.timestamps: dict[str, str | None] = {}
        self.stamps: dict[str, datetime.datetime] = {}  # folder -> when it was handed in
        by_student: defaultdict[str, list[Record]] = defaultdict(list)
        # student -> her own folders that failed a check
        damaged: defaultdict[str, list[str]] = defaultdict(list)
        for path in sorted(glob.glob(pattern)):
            name = os.path.basename(path)
            self.examined.add(name)
            record = self.record(name)
            try:
                self.check(path, record)
            except (Refused, OSError) as refusal:  # OSError: changed or removed while read
                self.refuse(name, record["username"], str(refusal) if isinstance(
                    refusal, Refused) else f"it could not be read ({refusal.strerror})")
                if self.shared and self.learners_own(path, record["username"]):
                    damaged[record["username"]].append(name)
                continue
            by_student[record["username"]].append(record)
        for student, names in damaged.items():
            for record in by_student.pop(student, []):
                self.refuse(record["filename"], student, untaken(student, names))
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(assignment).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = [self.latest(records) for records in by_student.values()]
        # this collect checks owners itself (check() and do_copy()), and refuses what nbgrader
        # would only warn of
        self.check_owner = False

    @staticmethod
    def learners_own(path: str, student: str) -> bool:
        """Whether the folder ``path`` belongs to the account of ``student``: one of the
        submissions that learner handed in, whatever happened to it since."""
        uid = identity.account_uid(student)
        try:
            return uid is not None and os.lstat(path).st_uid == uid
        except OSError:
            return False

    def record(self, name: str) -> Record:
        """nbgrader's record of the folder ``name``: its student id and timestamp (the text after
        ``+<assignment>+``, up to a ``+`` that starts nbgrader's random suffix)."""
        student, _, rest = name.partition(f"+{self.coursedir.assignment_id}+")
        return {"username": student, "filename": name, "stamp": rest.split("+")[0],
                "timestamp": None}

    def check(self, path: str, record: Record) -> None:
        """Raise :class:`Refused` if the submission at ``path`` must not count for its student;
        else fill in the record's timestamp."""
        student = record["username"]
        problem = identity.id_problem(student)
        if problem:
            raise Refused(problem)
        uid = identity.account_uid(student)
        owners = {uid} if uid is not None else set()
        if not self.shared:
            owners.add(os.geteuid())
        if not owners:
            raise Refused(f"{student} is not an account on this machine, and other accounts "
                          f"can write into the exchange: a submission counts only for the "
                          f"account that owns its files (in an exchange no other account can "
                          f"enter, your own folders count for any name)")
        problem = find_problem(path, owners=owners)
        if problem:
            raise Refused(problem)
        stamp = parsed(record["stamp"])
        if stamp is None:
            raise Refused("its name does not end in a timestamp")
        written = read_timestamp(path)
        if written is not None:
            agrees = parsed(written) == stamp
            if not agrees:
                raise Refused(f"its timestamp.txt says {identity.shown(written)}, its name "
                              f"{identity.shown(record['stamp'])}")
        changed = utc(os.lstat(path).st_ctime)
        if stamp > changed + CLOCK_SLACK:
            raise Refused(f"its timestamp {stamp:%Y-%m-%d %H:%M:%S} UTC is in the future: the "
                          f"folder was last changed at {changed:%Y-%m-%d %H:%M:%S} UTC")
        if self.shared:
            problem = late_change(path, stamp)
            if problem:
                raise Refused(problem)
            self.stamps[record["filename"]] = stamp  # checked again once copied
        record["timestamp"] = stamp
        self.owners[record["filename"]] = owners
        self.timestamps[record["filename"]] = record["stamp"] if written is None else None

    def latest(self, records: list[Record]) -> Record:
        """nbgrader's choice among one student's submissions: the latest, or with
        ``--before-duedate`` the latest before the due date if there is one."""
        records = sorted(records, key=lambda record: record["timestamp"], reverse=True)
        if self.duedate is not None and self.before_duedate:
            before = [r for r in records if r["timestamp"] <= self.duedate]
            if before:
                return before[0]
        return records[0]

    def refuse(self, name: str, student: str, reason: str) -> None:
        self.refused.append({"folder": name, "student": student, "reason": reason})
        self.log.error("Refused the submission %s of %s: %s. It is not collected.",
                       identity.shown(name), identity.shown(student), reason)

    def copy_files(self) -> None:
        super().copy_files()
        identity.keep_refusals(os.path.join(self.coursedir.root,
                                            self.coursedir.submitted_directory),
                               self.coursedir.assignment_id, self.examined, self.refused,
                               self.inbound_path)
        if self.refused:
            self.log.error("%d submission(s) of %s refused (not collected):\n%s",
                           len(self.refused), self.coursedir.assignment_id,
                           "\n".join("  " + identity.refusal_line(e) for e in self.refused))

    def do_copy(self, src: str, dest: str, log: logging.Logger | None = None) -> None:
        coursedir = self.coursedir
        limit = 1000 * coursedir.max_file_size if coursedir.max_file_size else None
        name = os.path.basename(src)

        def skip(folder: str, name: str, size: int | None) -> bool:
            if any(fnmatch.fnmatch(name, pattern) for pattern in coursedir.ignore):
                return True
            if size is None:
                return False
            if coursedir.include and not any(fnmatch.fnmatch(name, p) for p in coursedir.include):
                return True
            if limit is not None and size > limit:
                self.log.warning("Not collected: %s is larger than CourseDirectory.max_file_size",
                                 identity.shown(os.path.join(folder, name)))
                return True
            return False

        try:
            copy_regular_tree(src, dest, skip, self.log, owners=self.owners.get(name))
            if name in self.stamps:  # nothing changed while it was checked and copied
                problem = late_change(src, self.stamps[name])
                if problem:
                    raise Refused(problem)
        except (Refused, OSError) as refusal:  # changed between the check and the copy
            shutil.rmtree(dest, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(dest))  # the student's folder, if nothing else is there
            reason = (str(refusal) if isinstance(refusal, Refused) else
                      f"it could not be copied ({refusal.strerror})")
            self.refuse(name, os.path.basename(os.path.dirname(dest)), reason)
            return
        written = self.timestamps.get(name)
        if written:
            # the time nbgrader reads (lateness) is the checked one of the folder's name
            with open(os.path.join(dest, "timestamp.txt"), "w", encoding="utf-8") as out:
                out.write(written)
        if coursedir.groupshared:
            for folder, _, files in os.walk(dest):
                os.chmod(folder, (os.stat(folder).st_mode | 0o2770) & 0o2777)
                for name in files:
                    full = os.path.join(folder, name)
                    os.chmod(full, (os.stat(full).st_mode | 0o660) & 0o777)
