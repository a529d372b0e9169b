"""Collecting submissions without trusting them.

``nbgrader collect`` copies each learner's folder from the exchange's ``inbound/`` into the
course's ``submitted/`` with the instructor's rights, following symbolic links: a learner who
places a link to the hidden suite or a solution in the exchange gets it copied into their own
submission and, through autograde and feedback, shown back to them. A FIFO stalls the copy.

:class:`SafeCollect` (configured by ``nbgrader_config.py`` as the exchange's collect step) refuses
a submission folder that is a link or holds links or special files, and copies with
:func:`copy_regular_tree`, which opens every folder and file without following links and copies
regular files only, so a folder changed while it is copied cannot smuggle a link in either.
"""
import errno
import fnmatch
import os
import stat

from nbgrader.exchange.default.collect import ExchangeCollect

NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
DIRECTORY = os.O_RDONLY | NOFOLLOW | getattr(os, "O_DIRECTORY", 0)


def find_problem(path, max_files=1000):
    """A sentence naming the first link or special file in the folder ``path``, or None."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{path} cannot be read ({error.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"{os.path.basename(path)} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{os.path.basename(path)} is not a folder"
    count = 0
    for folder, folders, files in os.walk(path, followlinks=False):
        for name in folders + files:
            count += 1
            if count > max_files:
                return f"it holds more than {max_files} files"
            full = os.path.join(folder, name)
            mode = os.lstat(full).st_mode
            relative = os.path.relpath(full, path)
            if stat.S_ISLNK(mode):
                return f"{relative} is a symbolic link"
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                return f"{relative} is not a regular file"
    return None


def copy_regular_tree(source, destination, skip=lambda folder, name, size: False, log=None):
    """Copy folders and regular files from ``source`` to ``destination``, never following a link.

    ``skip(folder, name, size)`` may leave a file out (nbgrader's ignore, include and size
    options). Links and special files are left out and logged."""
    def copy_folder(source_fd, target, relative):
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
                log.warning("Not collected: %s is a link or a special file", shown)

    def copy_file(source_fd, name, target, shown):
        try:
            fd = os.open(name, os.O_RDONLY | NOFOLLOW | os.O_NONBLOCK, dir_fd=source_fd)
        except OSError as error:
            if log is not None and error.errno in (errno.ELOOP, errno.ENXIO):
                log.warning("Not collected: %s is a link or a special file", shown)
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
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


class SafeCollect(ExchangeCollect):
    """nbgrader's collect step, refusing links and special files (see the module's docstring)."""

    def init_src(self):
        super().init_src()
        kept = []
        for record in self.src_records:
            path = os.path.join(self.inbound_path, record["filename"])
            problem = find_problem(path)
            if problem is None:
                kept.append(record)
                continue
            self.log.error("Refused the submission %s of %s: %s. Links and special files are "
                           "not collected; ask %s to submit the notebook itself again.",
                           record["filename"], record["username"], problem, record["username"])
        self.src_records = kept

    def do_copy(self, src, dest, log=None):
        coursedir = self.coursedir
        limit = 1000 * coursedir.max_file_size if coursedir.max_file_size else None

        def skip(folder, name, size):
            if any(fnmatch.fnmatch(name, pattern) for pattern in coursedir.ignore):
                return True
            if size is None:
                return False
            if coursedir.include and not any(fnmatch.fnmatch(name, p) for p in coursedir.include):
                return True
            if limit is not None and size > limit:
                self.log.warning("Not collected: %s is larger than CourseDirectory.max_file_size",
                                 os.path.join(folder, name))
                return True
            return False

        copy_regular_tree(src, dest, skip, self.log)
        if coursedir.groupshared:
            for folder, _, files in os.walk(dest):
                os.chmod(folder, (os.stat(folder).st_mode | 0o2770) & 0o2777)
                for name in files:
                    full = os.path.join(folder, name)
                    os.chmod(full, (os.stat(full).st_mode | 0o660) & 0o777)
