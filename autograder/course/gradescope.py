"""Gradescope: the autograder zip, the run inside Gradescope's container, and results.json.

    python -m autograder gradescope ASSIGNMENT [-o autograder.zip] [--visibility V]
    python -m autograder gradescope-try autograder.zip NOTEBOOK [--results FILE]

Gradescope grades each submission in a fresh container built from the zip: ``setup.sh`` runs
once when the image is built, ``run_autograder`` once per submission, as root, in ``/autograder``
(``source/`` holds the zip's files, ``submission/`` the learner's upload, ``results/`` where
``results.json`` must appear). See docs/gradescope.md.

The zip holds what grading needs and nothing else (:func:`zip_entries`): the engine and sandbox
layers with this runner, the modules of other packages the engine and the suite import, this
assignment's hidden suite with its mutants (they name mistakes; the alternatives stay home), the
modules the course's suites share (``suites/*.py``), the reference definitions the suite compares
against (the solution notebook's definition cells only: no narrative, no model answers), the
release notebook (to restore locked cells), the packages learners' notebooks import and the course's pinned
requirements. The same commit always gives the same bytes.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from ..engine import atomic, cache, closure, grade, reference
from ..engine.assignment import Assignment, Course
from ..engine.options import Options
from ..engine.result import check_visibility, gradescope_results
from ..sandbox import confinement

FILES = Path(__file__).resolve().parent / "gradescope_files"
EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's timestamp: builds are byte-for-byte reproducible
# The course's layout inside the zip (source/ in the container)
LAYOUT = {"solutions": "solutions", "release": "notebooks", "suites": "suites"}
LEFT_HOME = {"alternatives.py"}  # correct implementations: proving the suite needs them, grading not


# ------------------------------------------------------------------ results.json

def failure_json(message: str) -> dict[str, Any]:
    """A results.json that gives no points and says, to the learner, what to do."""
    return {"score": 0.0, "output": message, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [{"name": "Your submission", "status": "failed", "output": message,
                       "visibility": "visible", "name_format": "text", "output_format": "text"}]}


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    atomic.write_atomically(path, json.dumps(payload, indent=2) + "\n")


# ------------------------------------------------------------------ the zip

def reference_notebook(assignment: Assignment) -> str:
    """The solution notebook reduced to what grading runs: its definition cells."""
    solution = json.loads(assignment.solution.read_text(encoding="utf-8"))
    kept = [{"cell_type": "code", "execution_count": None, "outputs": [], "source": c["source"],
             "metadata": {k: v for k, v in c.get("metadata", {}).items()
                          if k in ("nbgrader", "tags")}}
            for c in reference.definition_cells(solution)]
    return json.dumps({"cells": kept, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1, sort_keys=True) + "\n"


def _package_files(name: str) -> tuple[Path, list[Path]]:
    """(the folder holding package ``name``, its Python files), wherever it is installed."""
    located = closure.closure([name])[0].get(name)
    if located is None or located.name != "__init__.py":
        raise LookupError(f"the package {name} cannot be found")
    folder = located.parent
    return folder.parent, sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def engine_files(assignment: Assignment) -> list[tuple[str, Path]]:
    """(name in the zip, file) of the code the grader runs: the engine and sandbox layers, the
    kit, this runner, and every module of another first-party package the engine or the suite
    imports (left out when it belongs to a learner package, which the zip ships whole)."""
    top, files = _package_files(closure.ENGINE_PACKAGE)
    layers = {"engine", "sandbox"}
    wanted = [p for p in files if p.parent.name in layers
              or p.parent == top / closure.ENGINE_PACKAGE and p.name in ("__init__.py", "kit.py")
              or p == Path(__file__).resolve() or p == Path(__file__).resolve().parent / "__init__.py"]
    found = [(str(p.relative_to(top)), p) for p in wanted]
    modules = {cache.ENTRY_POINT}
    for path in cache.suite_files(assignment):
        if path.suffix == ".py":
            modules |= closure.imported_names(path)
    learner = set(assignment.course.learner_packages)
    for name, path in sorted(closure.closure(modules)[0].items()):
        package = name.split(".")[0]
        if package != closure.ENGINE_PACKAGE and package not in learner:
            parents = len(name.split(".")) - (0 if path.name == "__init__.py" else 1)
            base = path.parents[parents]
            found.append((str(path.relative_to(base)), path))
    return found


def zip_entries(assignment: Assignment, visibility: str) -> list[tuple[str, bytes, int]]:
    """(name in the zip, bytes, mode) of every file, in the zip's order."""
    course = assignment.course
    requirements = course.root / course.requirements
    if not requirements.is_file():
        raise LookupError(f"the course has no {course.requirements} (its pinned requirements, "
                          f"which the Gradescope image installs): set [tool.autograder] "
                          f"requirements in {course.root / 'pyproject.toml'}")
    settings = {"assignment": assignment.name, "visibility": visibility, "course": LAYOUT,
                # every assignment's notebook name, to recognise an upload meant for another
                "notebooks": {a.name: a.release.name for a in course.assignments()}}
    entries = [("setup.sh", (FILES / "setup.sh").read_bytes(), 0o755),
               ("run_autograder", (FILES / "run_autograder").read_bytes(), 0o755),
               ("requirements.lock", requirements.read_bytes(), 0o644),
               ("settings.json", json.dumps(settings, sort_keys=True).encode() + b"\n", 0o644)]
    for package in course.learner_packages:  # installed into the image's environment
        top, files = _package_files(package)
        entries += [(f"learner/{p.relative_to(top)}", p.read_bytes(), 0o644) for p in files]
    entries += [(name, path.read_bytes(), 0o644) for name, path in engine_files(assignment)]
    entries += [(f"{LAYOUT['suites']}/{assignment.name}/{p.relative_to(assignment.suite)}",
                 p.read_bytes(), 0o644) for p in cache.suite_files(assignment)
                if p.is_relative_to(assignment.suite) and p.name not in LEFT_HOME]
    entries += [(f"{LAYOUT['suites']}/{p.name}", p.read_bytes(), 0o644)
                for p in course.suite_support()]  # what the course's suites share
    solution, release = assignment.solution, assignment.release
    entries += [(f"{LAYOUT['solutions']}/{assignment.name}/{solution.name}",
                 reference_notebook(assignment).encode(), 0o644),
                (f"{LAYOUT['release']}/{assignment.name}/{release.name}", release.read_bytes(),
                 0o644)]
    return entries


def build(assignment: Assignment, output: str | Path, visibility: str = "after_due_date") -> Path:
    """Write the autograder zip of ``assignment`` to ``output``; the same commit gives the same
    bytes (fixed order, timestamps and modes)."""
    check_visibility(visibility)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data, mode in zip_entries(assignment, visibility):
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so the modes below are kept
            info.external_attr = (stat.S_IFREG | mode) << 16
            archive.writestr(info, data, compresslevel=9)
    Path(output).write_bytes(buffer.getvalue())
    return Path(output)


# ------------------------------------------------------------------ inside Gradescope's container

def find_notebook(folder: str | Path, expected: str, names: dict[str, str] | None = None
                  ) -> tuple[Path | None, str]:
    """``(path, note)`` of the notebook to grade in the learner's upload, or ``(None, message)``.

    The release's name wins, wherever it is in the upload; otherwise a single notebook is graded
    under that name. Links and special files are never taken."""
    found = []
    for here, folders, files in os.walk(folder, followlinks=False):
        folders[:] = [f for f in folders if not f.startswith(".")]
        for name in files:
            path = Path(here) / name
            if name.endswith(".ipynb") and stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    exact = [p for p in found if p.name == expected]
    if exact:
        return min(exact, key=lambda p: len(p.parts)), ""
    others = {name: assignment for assignment, name in (names or {}).items()}
    if len(found) == 1:
        name = found[0].name
        if name in others and name != expected:
            return None, (f"You uploaded {name}, the notebook of another assignment "
                          f"({others[name]}). Upload {expected} for this one.")
        return found[0], f"Your upload has no {expected}; {name} was graded in its place."
    uploaded = sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*")
                      if not p.is_dir())[:10]
    if not found:
        return None, (f"Your upload holds no notebook (.ipynb file). Upload {expected}, the "
                      f"notebook you worked in (File > Download in JupyterLab). You uploaded: "
                      f"{', '.join(uploaded) or 'nothing'}.")
    return None, (f"Your upload holds {len(found)} notebooks but none is named {expected}: "
                  f"upload only {expected}.")


def run(root: str | Path) -> int:
    """Grade ``root``/submission into ``root``/results/results.json; never raises."""
    root = Path(root)
    results = root / "results" / "results.json"
    started = time.monotonic()
    try:
        settings = json.loads((root / "source" / "settings.json").read_text())
        course = Course.from_root(root / "source", **settings["course"])
        assignment, visibility = course.assignment(settings["assignment"]), settings["visibility"]
        for private in (root / "source", root / "results"):
            private.mkdir(parents=True, exist_ok=True)
            private.chmod(0o700)  # learner code runs as another user: none of this is theirs
        if (root / "run_autograder").exists():
            (root / "run_autograder").chmod(0o700)
        # Gradescope shows the results alone: no figure is drawn (its notebook is not kept)
        options = Options(sandbox="auto", figures="off")
        if options.confinement() == confinement.LIMITS and os.geteuid() == 0:
            write_json(results, failure_json(
                "The autograder could not run your code as an unprivileged user here, so it did "
                "not run it. Nothing was recorded against you: tell your instructor."))
            return 1
        expected = assignment.release.name
        upload, note = find_notebook(root / "submission", expected, settings.get("notebooks"))
        if upload is None:
            write_json(results, failure_json(note))
            return 0
        result, _ = grade.grade_notebook(upload, assignment, options, root=root / "submission")
        if note:
            result.errors.insert(0, note)
        write_json(results, gradescope_results([result], visibility, time.monotonic() - started))
        return 0
    except BaseException as error:  # the grader's own failure still gives a results.json
        write_json(results, failure_json(
            f"The autograder failed while grading this submission ({type(error).__name__}). "
            f"Nothing was recorded against you: tell your instructor."))
        print(f"autograder failure: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


# ------------------------------------------------------------------ trying a zip locally

def try_zip(archive: str | Path, upload: str | Path, results: str | Path | None = None,
            bubblewrap_inside: bool = True) -> dict[str, Any]:
    """Grade ``upload`` (a notebook, or a folder standing for the whole upload) with the zip
    ``archive`` as Gradescope would, on this machine (root).

    The zip is unpacked into a temporary ``/autograder`` (``source/``, ``submission/``,
    ``results/``) that bubblewrap shows at ``/autograder``, with this environment's Python at
    ``/autograder/env``; ``run_autograder`` runs there as root. With ``bubblewrap_inside=False``
    the container forbids namespaces, as Docker does: no CAP_SYS_ADMIN, so the grader inside falls
    back to running learner code as an unprivileged user. Returns the parsed results.json."""
    top = Path(tempfile.mkdtemp(prefix="gradescope-"))
    try:
        autograder = top / "autograder"
        for folder in ("source", "submission", "results"):
            (autograder / folder).mkdir(parents=True)
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                target = autograder / "source" / info.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zipped.read(info))
                target.chmod((info.external_attr >> 16) & 0o777 or 0o644)
        shutil.copy(autograder / "source" / "run_autograder", autograder / "run_autograder")
        upload = Path(upload)
        if upload.is_dir():
            shutil.copytree(upload, autograder / "submission", dirs_exist_ok=True,
                            symlinks=True)
        else:
            shutil.copy(upload, autograder / "submission" / upload.name)
        env_dir = Path(sys.prefix)  # this environment stands in for /autograder/env
        args = ["bwrap", "--dev-bind", "/", "/", "--bind", str(autograder), "/autograder",
                "--ro-bind", str(env_dir), "/autograder/env", "--proc", "/proc",
                "--unshare-pid", "--die-with-parent", "--chdir", "/autograder"]
        if not bubblewrap_inside:  # Docker's default capabilities: no CAP_SYS_ADMIN
            args += ["--cap-drop", "ALL"] + [a for cap in (
                "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "SETGID", "SETUID",
                "SETFCAP", "SETPCAP", "SYS_CHROOT", "KILL", "AUDIT_WRITE")
                for a in ("--cap-add", f"CAP_{cap}")]
        done = subprocess.run(args + ["--", "/autograder/run_autograder"], capture_output=True,
                              text=True, timeout=1800)
        payload: dict[str, Any] = json.loads((autograder / "results" / "results.json").read_text())
        if results:
            Path(results).write_text(json.dumps(payload, indent=2) + "\n")
        payload["_stdout"] = done.stdout[-4000:] + done.stderr[-4000:]
        return payload
    finally:
        shutil.rmtree(top, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.course.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    r = commands.add_parser("run", help="grade /autograder/submission (inside Gradescope)")
    r.add_argument("--root", default="/autograder")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.root)
    return 2


if __name__ == "__main__":
    sys.exit(main())
