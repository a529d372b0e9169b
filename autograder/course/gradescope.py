"""Gradescope: the autograder zip, the run inside Gradescope's container, and results.json.

    python -m autograder gradescope ASSIGNMENT [-o autograder.zip] [--visibility V]
    python -m autograder gradescope-try autograder.zip NOTEBOOK [--results FILE]

Gradescope grades each submission in a fresh container built from the zip: ``setup.sh`` runs
once when the image is built, ``run_autograder`` once per submission, as root, in ``/autograder``
(``source/`` holds the zip's files, ``submission/`` the learner's upload, ``results/`` where
``results.json`` must appear). See docs/gradescope.md.

The zip holds the grading engine, this assignment's hidden suite with its catalogue, the release
notebook (to restore locked cells), the reference definitions the suite compares against (the
solution notebook's code cells only: no narrative, no model answers), the learner-facing
``helpers`` package and the pinned requirements. The same commit always gives the same bytes.
"""
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

from ..engine import reference, suite
from ..engine.result import VISIBILITIES, gradescope_results as results_json  # noqa: F401

FILES = Path(__file__).resolve().parent / "gradescope_files"
EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's timestamp: builds are byte-for-byte reproducible


# ------------------------------------------------------------------ results.json

def failure_json(message):
    """A results.json that gives no points and says, to the learner, what to do."""
    return {"score": 0.0, "output": message, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [{"name": "Your submission", "status": "failed", "output": message,
                       "visibility": "visible", "name_format": "text", "output_format": "text"}]}


def write_json(path, payload):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(temporary, path)


# ------------------------------------------------------------------ the zip

def reference_notebook(assignment):
    """The solution notebook reduced to what grading runs: its definition cells."""
    notebook = json.loads(reference.solution_notebook(assignment).read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code" and (
        c.get("metadata", {}).get("nbgrader", {}).get("solution")
        or "setup" in c.get("metadata", {}).get("tags", []))]
    kept = [{"cell_type": "code", "execution_count": None, "outputs": [], "source": c["source"],
             "metadata": {k: v for k, v in c.get("metadata", {}).items()
                          if k in ("nbgrader", "tags")}} for c in cells]
    return json.dumps({"cells": kept, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1, sort_keys=True) + "\n"


def zip_entries(assignment, visibility):
    """(name in the zip, bytes, mode) of every file, in the zip's order."""
    repo = reference.REPO
    solution = reference.solution_notebook(assignment)
    release = reference.release_notebook(assignment)
    package = Path(suite.__file__).resolve().parents[1]
    entries = [("setup.sh", (FILES / "setup.sh").read_bytes(), 0o755),
               ("run_autograder", (FILES / "run_autograder").read_bytes(), 0o755),
               ("requirements.lock", (repo / "requirements.lock").read_bytes(), 0o644),
               ("settings.json", json.dumps({
                   "assignment": assignment, "visibility": visibility,
                   # every assignment's notebook name, to recognise an upload meant for another
                   "notebooks": {a: reference.release_notebook(a).name
                                 for a in reference.assignments()}},
                   sort_keys=True).encode() + b"\n", 0o644),
               ("learner/pyproject.toml", (repo / "learner" / "pyproject.toml").read_bytes(),
                0o644)]
    helpers = Path(reference.REPO / "src" / "helpers")
    entries += [(f"learner/helpers/{p.name}", p.read_bytes(), 0o644)
                for p in sorted(helpers.glob("*.py"))]
    entries += [(f"autograder/{p.relative_to(package)}", p.read_bytes(), 0o644)
                for p in sorted(package.rglob("*.py")) if "suites" not in p.relative_to(package).parts]
    entries += [(f"autograder/course/gradescope_files/{p.name}", p.read_bytes(), 0o755)
                for p in sorted(FILES.iterdir()) if p.is_file()]
    entries += [("autograder/suites/pytest.ini", (suite.SUITES / "pytest.ini").read_bytes(), 0o644)]
    entries += [(f"autograder/suites/{assignment}/{p.name}", p.read_bytes(), 0o644)
                for p in sorted(suite.suite_path(assignment).glob("*.py"))]
    entries += [(f"solutions/{assignment}/{solution.name}", reference_notebook(assignment).encode(),
                 0o644),
                (f"notebooks/{assignment}/{release.name}", release.read_bytes(), 0o644)]
    return entries


def build(assignment, output, visibility="after_due_date"):
    """Write the autograder zip of ``assignment`` to ``output``; the same commit gives the same
    bytes (fixed order, timestamps and modes)."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}")
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

def find_notebook(folder, expected, names=None):
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


def run(root):
    """Grade ``root``/submission into ``root``/results/results.json; never raises."""
    root = Path(root)
    results = root / "results" / "results.json"
    started = time.monotonic()
    try:
        settings = json.loads((root / "source" / "settings.json").read_text())
        assignment, visibility = settings["assignment"], settings["visibility"]
        for private in (root / "source", root / "results"):
            private.mkdir(parents=True, exist_ok=True)
            private.chmod(0o700)  # learner code runs as another user: none of this is theirs
        if (root / "run_autograder").exists():
            (root / "run_autograder").chmod(0o700)
        from ..engine import grade
        from ..sandbox import confinement
        options = grade.Options(sandbox="auto")
        if options.confinement() == confinement.LIMITS and os.geteuid() == 0:
            write_json(results, failure_json(
                "The autograder could not run your code as an unprivileged user here, so it did "
                "not run it. Nothing was recorded against you: tell your instructor."))
            return 1
        expected = reference.release_notebook(assignment).name
        notebook, note = find_notebook(root / "submission", expected, settings.get("notebooks"))
        if notebook is None:
            write_json(results, failure_json(note))
            return 0
        result, _ = grade.grade_notebook(notebook, assignment, options, root=root / "submission")
        if note:
            result.errors.insert(0, note)
        write_json(results, results_json([result], visibility, time.monotonic() - started))
        return 0
    except BaseException as error:  # the grader's own failure still gives a results.json
        write_json(results, failure_json(
            f"The autograder failed while grading this submission ({type(error).__name__}). "
            f"Nothing was recorded against you: tell your instructor."))
        print(f"autograder failure: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


# ------------------------------------------------------------------ trying a zip locally

def try_zip(archive, notebook, results=None, bubblewrap_inside=True):
    """Grade ``notebook`` with the zip ``archive`` as Gradescope would, on this machine (root).

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
        notebook = Path(notebook)
        if notebook.is_dir():
            shutil.copytree(notebook, autograder / "submission", dirs_exist_ok=True,
                            symlinks=True)
        else:
            shutil.copy(notebook, autograder / "submission" / notebook.name)
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
        payload = json.loads((autograder / "results" / "results.json").read_text())
        if results:
            Path(results).write_text(json.dumps(payload, indent=2) + "\n")
        payload["_stdout"] = done.stdout[-4000:] + done.stderr[-4000:]
        return payload
    finally:
        shutil.rmtree(top, ignore_errors=True)


def main(argv=None):
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
