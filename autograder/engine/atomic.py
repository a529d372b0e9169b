"""Files written whole or not at all: every file the grader writes (a kept result, ``--json``,
Gradescope's ``results.json``, a mark of the recording, the exchange's notes) goes through
:func:`write_atomically`, so a reader sees the whole of it or nothing, whenever the writer is
killed."""
from __future__ import annotations

import errno
import os
from pathlib import Path


class StateFull(OSError):
    """The state folder's disk is full: grading must stop, keeping what it recorded."""


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader only ever sees the whole of it: a temporary
    file named after this process (cleared by a later run if this one is killed), flushed to
    disk, then renamed into place. A full disk raises :class:`StateFull` and leaves nothing."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StateFull(error.errno, f"the state folder {path.parent} is full "
                            f"({error.strerror})") from None
        raise
