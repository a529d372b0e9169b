"""Read a submitted notebook defensively and put back what the learner may not change.

A submission is untrusted JSON. :func:`read_submission` parses it and flags its code
(:mod:`autograder.flags`) in a child process of its own, bounded in memory and CPU time, and
returns only a canonical notebook (cell types, sources, nbgrader's cell metadata, the figures of
the demonstration cells within the notebook's budget of outputs), whose parse in the grader costs
little more than its size; JSON such as ``[{},{},...]`` or a cell of ``[a,a,...]`` exhausts that
child, not the grader. :func:`copy_for_nbgrader` has the same child make the copy nbgrader reads
in place of the learner's file (:func:`normalised`). Anything unreadable becomes a
:class:`NotebookProblem` with a sentence for the learner. :func:`restore_locked` rebuilds the
notebook on the released one: locked cells (instructions, given code, visible checks) come from the
release, answers come from the learner, and cells the learner added stay where they put them.

It also says, once for the engine, what a cell is: its text (:func:`source`), its nbgrader id
(:func:`grade_id`), whether it is locked (:func:`is_locked`) and which graded function a visible
check checks (:func:`check_exercise`).
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable

from . import figures

MAX_BYTES = 20 << 20
COPY_BYTES = 2 * MAX_BYTES      # nbgrader's copy of a submission, which it writes again
MAX_CELLS = 2000                # the course's notebooks have at most 150
READ_MEMORY = 768 << 20         # address space of the process that reads a submission
READ_CPU_SECONDS = 20           # its CPU time


Notebook = dict[str, Any]
Cell = dict[str, Any]
CHECK_PREFIX = "check_"  # a visible check is the grade cell check_<graded function>


class NotebookProblem(Exception):
    pass


def read_regular(path: str | Path, limit: int = MAX_BYTES, root: str | Path | None = None) -> bytes:
    """The bytes of ``path``, which must be a regular file, read without following links.

    Opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a FIFO cannot stall the grader) and read up to
    ``limit`` bytes (a link to ``/dev/zero`` or a huge file cannot exhaust memory). With ``root``,
    every folder between ``root`` and ``path`` is opened the same way, so a submission folder
    that is itself a link is refused too.
    """
    path = Path(path)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    folder_fd = None
    try:
        if root is not None:
            parts = path.relative_to(root).parts
            folder_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            for part in parts[:-1]:
                next_fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW |
                                  getattr(os, "O_DIRECTORY", 0), dir_fd=folder_fd)
                os.close(folder_fd)
                folder_fd = next_fd
            fd = os.open(parts[-1], flags, dir_fd=folder_fd)
        else:
            fd = os.open(path, flags)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise NotebookProblem("the submission contains a symbolic link where the notebook "
                                  "should be; links are not graded: submit the notebook file "
                                  "itself") from None
        raise NotebookProblem(f"the notebook file could not be opened "
                              f"({error.strerror or error})") from None
    finally:
        if folder_fd is not None:
            os.close(folder_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotebookProblem("the submitted notebook is not a regular file; submit the "
                                  "notebook file itself")
        if info.st_size > limit:
            raise NotebookProblem(f"the notebook is {info.st_size >> 20} MiB, over the "
                                  f"{limit >> 20} MiB limit; clear its outputs (Edit > Clear "
                                  f"Outputs) and resubmit")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise NotebookProblem(f"the notebook is over the {limit >> 20} MiB limit; clear its "
                                  f"outputs (Edit > Clear Outputs) and resubmit")
        return b"".join(chunks)
    finally:
        os.close(fd)


NBGRADER_KEYS = ("grade", "grade_id", "locked", "points", "schema_version", "solution", "task",
                 "checksum", "cell_type")  # what nbgrader's cell metadata holds (schema 3)
MAX_TAGS = 32                    # tags kept of a cell in nbgrader's copy; more are dropped
CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")  # nbformat's


def _plain(values: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    """``values``' entries for ``keys`` that hold plain values (a string, number, bool or null)."""
    if not isinstance(values, dict):
        return {}
    return {k: values[k] for k in keys if k in values and (
        values[k] is None or isinstance(values[k], (str, bool, int, float)))}


def _check_count(notebook: Notebook) -> None:
    if len(notebook["cells"]) > MAX_CELLS:
        raise NotebookProblem(f"the notebook has {len(notebook['cells'])} cells, more than the "
                              f"{MAX_CELLS} the grader reads; merge or delete cells and resubmit")


def canonical(notebook: Notebook, shown: dict[str, list[figures.Output]] | None = None
              ) -> Notebook:
    """Only what grading reads of a checked notebook: per cell its type, source and nbgrader's
    metadata (its known keys, plain values); the notebook's own metadata comes from the release.
    ``shown``: grade id -> the outputs the code cell with that id shows (the figures of a
    demonstration cell not re-run, :func:`figures.submitted`); every other cell has none."""
    _check_count(notebook)
    cells = []
    for cell in notebook["cells"]:
        plain = _plain(cell["metadata"].get("nbgrader"), NBGRADER_KEYS)
        clean = {"cell_type": cell["cell_type"], "source": cell["source"],
                 "metadata": {"nbgrader": plain} if plain else {}}
        if cell["cell_type"] == "code":
            gid = plain.get("grade_id")
            # the first cell with an id shows its figures: a copy of it shows none
            clean["outputs"] = list(shown.pop(gid, [])) if shown and isinstance(gid, str) else []
            clean["execution_count"] = None
        cells.append(clean)
    return {"cells": cells, "metadata": {}, "nbformat": 4,
            "nbformat_minor": notebook["nbformat_minor"]}


def normalised(notebook: Notebook) -> Notebook:
    """The copy of a checked submission that nbgrader reads in place of the learner's file:
    per cell its type, source and id, nbgrader's metadata (its known keys, plain values), its
    tags (up to :data:`MAX_TAGS` short strings), whether JupyterLab may edit or delete it, and a
    markdown cell's attachments (:func:`_attachments`); no outputs or other metadata; of the
    notebook's metadata only the kernel's and language's names and versions. Its parse costs little more than its size, whatever the
    learner's file held. Reading it again gives it back unchanged."""
    _check_count(notebook)
    minor = notebook["nbformat_minor"] if 0 <= notebook["nbformat_minor"] <= 5 else 5
    cells = []
    for cell in notebook["cells"]:
        metadata = cell["metadata"]
        kept: dict[str, Any] = _plain(metadata, ("editable", "deletable"))
        kept = {k: v for k, v in kept.items() if isinstance(v, bool)}
        tags = metadata.get("tags")
        if isinstance(tags, list) and len(tags) <= MAX_TAGS and \
                all(isinstance(t, str) and len(t) <= 100 for t in tags):
            kept["tags"] = list(tags)
        nbgrader = _plain(metadata.get("nbgrader"), NBGRADER_KEYS)
        if nbgrader:
            kept["nbgrader"] = nbgrader
        clean: Cell = {"cell_type": cell["cell_type"], "metadata": kept, "source": cell["source"]}
        if cell["cell_type"] == "code":
            clean.update(outputs=[], execution_count=None)
        elif cell.get("attachments") is not None:
            attachments = _attachments(cell["attachments"])
            if attachments:
                clean["attachments"] = attachments
        cells.append(clean)
    if minor >= 5:
        ids = [cell.get("id") for cell in notebook["cells"]]
        if not all(isinstance(i, str) and CELL_ID.match(i) for i in ids) or \
                len(set(ids)) != len(ids):
            ids = [f"cell-{number}" for number in range(len(cells))]
        for cell, given in zip(cells, ids):
            cell["id"] = given
    metadata = notebook["metadata"]
    kept_metadata = {}
    for key, fields in (("kernelspec", ("name", "display_name", "language")),
                        ("language_info", ("name", "version", "file_extension", "mimetype",
                                           "pygments_lexer", "nbconvert_exporter"))):
        values = {k: v for k, v in _plain(metadata.get(key), fields).items()
                  if isinstance(v, str) and len(v) <= 200}
        if values:
            kept_metadata[key] = values
    return {"cells": cells, "metadata": kept_metadata, "nbformat": 4, "nbformat_minor": minor}


def _attachments(given: Any) -> dict[str, dict[str, str]]:
    """A markdown cell's attachments (images pasted into an answer, which its text names), if
    they are a few plain ones: at most :data:`MAX_TAGS` files of at most 4 types each, with short
    names; else none."""
    if not isinstance(given, dict) or len(given) > MAX_TAGS:
        return {}
    kept: dict[str, dict[str, str]] = {}
    for name, bundle in given.items():
        if not isinstance(name, str) or len(name) > 200 or not isinstance(bundle, dict) or \
                not 0 < len(bundle) <= 4:
            return {}
        data = {mime: "".join(value) if isinstance(value, list) else value
                for mime, value in bundle.items()}
        if not all(isinstance(mime, str) and len(mime) <= 200 and isinstance(value, str)
                   for mime, value in data.items()):
            return {}
        kept[name] = data
    return kept


READER = """import importlib, sys
sys.path.insert(0, sys.argv[1])
importlib.import_module(sys.argv[2])._read_in_child(int(sys.argv[3]))
"""
HEADER_DIGITS = 20  # the length of the header (JSON: what to do, the sizes of the files after it)


def _in_child(header: dict[str, Any], files: list[bytes], timeout: float) -> dict[str, Any]:
    """The answer of a reader child given ``header`` and ``files``; {} if it gave none (it was
    stopped at a limit). RuntimeError if it did not finish within ``timeout`` seconds."""
    if any(len(f) > COPY_BYTES for f in files):
        raise NotebookProblem(f"the notebook is over the {MAX_BYTES >> 20} MiB limit; clear its "
                              f"outputs (Edit > Clear Outputs) and resubmit")
    package = str(Path(__file__).resolve().parents[len(__name__.split(".")) - 1])
    command = [sys.executable, "-I", "-S", "-c", READER, package, __name__, str(os.getpid())]
    head = json.dumps({**header, "sizes": [len(f) for f in files]}).encode()
    try:
        done = subprocess.run(command, input=str(len(head)).zfill(HEADER_DIGITS).encode() + head
                              + b"".join(files), capture_output=True, timeout=timeout,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"reading the notebook did not finish within {timeout:g} s") from None
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except ValueError:
        answer = {}
    return answer if isinstance(answer, dict) else {}


UNREADABLE = ("the grader could not read the notebook within its limits ({memory} MiB of memory, "
              "{cpu} s of CPU time): a cell is very large or deeply nested, or its metadata is; "
              "remove it and resubmit")


def _problem(answer: dict[str, Any]) -> NotebookProblem:
    return NotebookProblem(answer["problem"] if "problem" in answer else UNREADABLE.format(
        memory=READ_MEMORY >> 20, cpu=READ_CPU_SECONDS))


def read_submission(raw: bytes, timeout: float | None = None,
                    figures_from: bytes | None = None,
                    figures_of: Iterable[str] = ()) -> tuple[Notebook, list[str]]:
    """``(notebook, flags)`` of a submission's bytes, read in a child process that may use
    :data:`READ_MEMORY` of memory and :data:`READ_CPU_SECONDS` of CPU time: a notebook that needs
    more is refused with a NotebookProblem. ``timeout`` (seconds of wall-clock time, by default
    three times the CPU time) is for a machine too busy to read it: RuntimeError, not a verdict.

    The code cells whose grade id is in ``figures_of`` (the demonstration cells, which are not
    re-run) show the figures of the learner's copy of that cell, within one
    :class:`figures.Budget` for the notebook (:func:`figures.submitted`); every other cell
    shows nothing. ``figures_from`` is the learner's own file when ``raw`` is a copy without
    outputs (nbgrader's): figures are taken from it, and it must be readable like any
    submission (it is what the learner handed in), read by the same child."""
    timeout = timeout or 3 * READ_CPU_SECONDS
    files = [raw] if figures_from is None else [raw, figures_from]
    answer = _in_child({"mode": "grade", "figures_of": sorted(set(figures_of))}, files, timeout)
    if "notebook" not in answer:
        raise _problem(answer)
    return answer["notebook"], list(answer["flags"])


def copy_for_nbgrader(raw: bytes, timeout: float | None = None) -> str:
    """The JSON text of :func:`normalised` of a submission's bytes, made by a reader child bounded
    as :func:`read_submission`'s; NotebookProblem if the child cannot read it within its limits."""
    answer = _in_child({"mode": "copy"}, [raw], timeout or 3 * READ_CPU_SECONDS)
    copy = answer.get("copy")
    if not isinstance(copy, str):
        raise _problem(answer)
    return copy


def _read_in_child(parent: int) -> None:
    """The child's side of :func:`read_submission` and :func:`copy_for_nbgrader`: stdin's
    header (:data:`HEADER_DIGITS` digits of its length, then JSON) and files in, one JSON answer
    out. Each file is read whole first: a reader needs the bytes anyway, and the limits hold."""
    import gc
    import resource
    from . import flags
    from ..sandbox.lifetime import die_with_parent
    die_with_parent(parent)
    gc.disable()  # JSON makes no cycles: millions of lists would cost collections, not memory
    for limit, value in ((resource.RLIMIT_AS, (READ_MEMORY, READ_MEMORY)),
                         (resource.RLIMIT_CPU, (READ_CPU_SECONDS, READ_CPU_SECONDS + 1))):
        try:
            resource.setrlimit(limit, value)
        except (ValueError, OSError):  # macOS refuses an address-space limit
            pass
    try:
        stdin = sys.stdin.buffer
        header = json.loads(stdin.read(int(stdin.read(HEADER_DIGITS))))
        files = [stdin.read(int(size)) for size in header["sizes"]]
        if header["mode"] == "copy":
            copy = normalised(parse(files.pop()))
            text = json.dumps({"copy": json.dumps(copy, ensure_ascii=False)}, ensure_ascii=False)
        else:
            wanted = set(header["figures_of"])
            # the learner's own file first, while nothing else is held: it may be a bomb. It
            # must be readable as the submission it is, whatever the copy is.
            own = parse_json(files.pop()) if len(files) == 2 else None
            shown = None
            if own is not None:
                _check_count(check_structure(own))
                shown = _figures_of(own, wanted)
            del own
            document = parse_json(files.pop())
            if shown is None:
                shown = _figures_of(document, wanted)
            notebook = canonical(check_structure(document), shown)
            del document
            answer = {"notebook": notebook, "flags": flags.scan(notebook, cell_label)}
            text = json.dumps(answer, ensure_ascii=False)
    except NotebookProblem as problem:
        text = json.dumps({"problem": str(problem)})
    except (MemoryError, RecursionError):
        text = json.dumps({"problem": (
            f"the notebook is too large or too deeply nested for the grader to read within "
            f"{READ_MEMORY >> 20} MiB of memory; remove the oversized cell and resubmit")})
    sys.stdout.buffer.write(text.encode("utf-8", "surrogatepass"))


def _figures_of(document: Any, wanted: set[str]) -> dict[str, list[figures.Output]]:
    """grade id -> what the code cell with that id in ``wanted`` shows of its outputs in the
    parsed notebook ``document`` (untrusted): its figures, within the cell's allowance and one
    notebook's :class:`figures.Budget` (:func:`figures.submitted`). The first cell with an id
    counts; cells are taken in the notebook's order."""
    shown: dict[str, list[figures.Output]] = {}
    if not wanted or not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        return shown
    budget = figures.Budget()
    for cell in document["cells"][:MAX_CELLS]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or \
                not isinstance(cell.get("metadata"), dict) or \
                not isinstance(cell["metadata"].get("nbgrader"), dict):
            continue
        gid = cell["metadata"]["nbgrader"].get("grade_id")
        if isinstance(gid, str) and gid in wanted and gid not in shown:
            shown[gid] = figures.submitted(cell.get("outputs"), budget)
    return shown


def load(path: str | Path, root: str | Path | None = None) -> Notebook:
    """A submitted notebook, checked and cleaned (see :func:`check_structure`)."""
    return parse(read_regular(path, root=root))


def parse(raw: bytes) -> Notebook:
    return check_structure(parse_json(raw))


def parse_json(raw: bytes) -> Any:
    """The JSON document ``raw`` holds, or NotebookProblem saying it holds none."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise NotebookProblem(f"the notebook is not valid JSON ({type(error).__name__}); it may "
                              f"have been damaged: download a fresh copy and paste your answers in")


def check_structure(notebook: Any) -> Notebook:
    if not isinstance(notebook, dict):
        raise NotebookProblem("the file is not a Jupyter notebook (no list of cells)")
    if "nbformat" in notebook and notebook["nbformat"] != 4:
        raise NotebookProblem(f"the notebook has format version {notebook.get('nbformat')!r}; "
                              f"this course needs version 4 (open it in JupyterLab and save it)")
    if not isinstance(notebook.get("cells"), list) or notebook.get("nbformat") != 4:
        raise NotebookProblem("the file is not a Jupyter notebook (no list of cells)")
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotebookProblem(f"cell {index + 1} of the notebook is damaged")
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookProblem(f"cell {index + 1} of the notebook has damaged source text")
        given = cell.get("metadata")
        metadata: dict[str, Any] = given if isinstance(given, dict) else {}
        marks = metadata.get("nbgrader")
        nbgrader: dict[str, Any] = marks if isinstance(marks, dict) else {}
        clean = {"cell_type": cell["cell_type"], "source": source,
                 "metadata": {**metadata, "nbgrader": nbgrader} if nbgrader else dict(metadata)}
        if isinstance(cell.get("id"), str):
            clean["id"] = cell["id"]
        if cell["cell_type"] != "code" and "attachments" in cell:  # see normalised
            clean["attachments"] = cell["attachments"]
        if cell["cell_type"] == "code":  # outputs: see _figures_of
            clean["outputs"] = []
            clean["execution_count"] = None
        cells.append(clean)
    return {"cells": cells, "metadata": notebook.get("metadata", {}) if isinstance(
        notebook.get("metadata"), dict) else {}, "nbformat": 4,
        "nbformat_minor": notebook.get("nbformat_minor", 5)
        if isinstance(notebook.get("nbformat_minor"), int) else 5}


def source(cell: Cell) -> str:
    """A cell's text (notebooks store it as one string or as a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def grade_id(cell: Cell) -> str | None:
    found = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return found if isinstance(found, str) else None


def is_locked(cell: Cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and not meta.get("solution")


def is_written_answer(cell: Cell) -> bool:
    """A part graded by hand: nbgrader's graded markdown answer cell, or a task."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("task") or (meta.get("grade") and cell.get("cell_type") == "markdown"))


def check_exercise(cell: Cell) -> str | None:
    """The graded function a visible check checks (a locked grade cell ``check_<function>``), or
    None for any other cell."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    gid = grade_id(cell) or ""
    if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution") \
            and gid.startswith(CHECK_PREFIX):
        return gid[len(CHECK_PREFIX):]
    return None


def restore_locked(submitted: Notebook, released: Notebook) -> tuple[Notebook, list[str]]:
    """The released notebook's cell order with the learner's answers and added cells in it.

    Returns ``(notebook, notes)``; ``notes`` lists, for the learner, what had to be restored.
    """
    released_ids = {grade_id(c): c for c in released["cells"] if grade_id(c)}
    answers: dict[str, Any] = {}
    extras_after: dict[str | None, list[Any]] = {}
    notes: list[str] = []
    previous = None
    for cell in submitted["cells"]:
        gid = grade_id(cell)
        if gid is not None and gid in released_ids:
            if not is_locked(released_ids[gid]):
                answers[gid] = cell
            elif cell["source"] != released_ids[gid]["source"]:
                notes.append(f"the locked cell '{gid}' was edited; the original was put back")
            previous = gid
        else:
            extras_after.setdefault(previous, []).append(cell)
    cells = list(extras_after.get(None, []))
    for cell in released["cells"]:
        gid = grade_id(cell)
        if gid is None:  # not tracked by nbgrader: the learner's copy (among the extras) stays
            continue
        if is_locked(cell):
            if not any(grade_id(c) == gid for c in submitted["cells"]):
                notes.append(f"the locked cell '{gid}' was deleted; it was put back")
            cells.append(cell)
        else:
            if gid not in answers:
                notes.append(f"the answer cell '{gid}' is missing from the submission")
            answer = answers.get(gid, cell)
            restored = dict(answer)
            restored["metadata"] = cell["metadata"]  # answer metadata comes from the release
            cells.append(restored)
        cells.extend(extras_after.get(gid, []))
    result = dict(submitted)
    result["cells"] = cells
    result["metadata"] = released.get("metadata", {})
    return result, notes


DEFINED = re.compile(r"^(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)  # linear: learner text
HEADING = re.compile(r"^#{1,2}[ \t]+([^\n]*)", re.M)  # sections, not a "Visible check"


def cell_label(notebook: dict[str, Any], number: int) -> str:
    """How a learner finds code cell ``number`` (1-based, counting every cell) in JupyterLab,
    which shows no cell numbers: by the functions it defines ("the cell that defines `align`"),
    the check it holds ("the check of `align`"), or the heading above it ("a cell under 'Step 3 ·
    Attend'"), or its first line; its number only when it is empty."""
    cells: list[Cell] = notebook.get("cells", [])
    cell: Cell = cells[number - 1] if 0 < number <= len(cells) else {}
    defined = DEFINED.findall(source(cell))
    if defined:
        names = ", ".join(f"`{name}`" for name in defined[:3])
        return f"the cell that defines {names}"
    checked = check_exercise(cell)
    if checked:
        return f"the check of `{checked}`"
    for above in reversed(cells[:max(0, number - 1)]):
        if above.get("cell_type") == "markdown":
            headings = HEADING.findall(source(above))
            if headings:
                return f"a cell under '{headings[-1].strip().rstrip('#').strip()[:80]}'"
    first = next((line.strip() for line in source(cell)[:4000].splitlines() if line.strip()), "")
    if first:
        return f"the cell beginning '{first[:60]}{'...' if len(first) > 60 else ''}'"
    return f"code cell {number}"
