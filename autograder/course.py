"""The nbgrader course around the notebooks: releasing and running nbgrader commands."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import reference
from .reference import REPO, solution_notebook


def site_config():
    """What the site's and the user's nbgrader configuration files set (``/etc/jupyter``,
    ``~/.jupyter``, ``$JUPYTER_CONFIG_PATH``...), without the course's own ``nbgrader_config.py``."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import (ConfigFileNotFound, JSONFileConfigLoader,
                                         PyFileConfigLoader)
    own = (REPO / "nbgrader_config.py").resolve()
    merged = Config()
    for folder in reversed(jupyter_config_path()):  # lowest priority first
        for loader, name in ((JSONFileConfigLoader, "nbgrader_config.json"),
                             (PyFileConfigLoader, "nbgrader_config.py")):
            path = Path(folder) / name
            if not path.is_file() or path.resolve() == own:
                continue
            try:
                merged.merge(loader(name, path=folder).load_config())
            except (ConfigFileNotFound, OSError):
                continue
    return merged


def course_root(site=None):
    """The nbgrader course root: the site's or user's ``CourseDirectory.root``, else this checkout."""
    site = site_config() if site is None else site
    return Path(site.CourseDirectory.root) if "root" in site.CourseDirectory else REPO


def configure(c, root=None):
    """Every nbgrader setting of the course, on the config object ``c``.

    Used by the course's own ``nbgrader_config.py`` and, on a shared machine, by the instructor's
    ``~/.jupyter/nbgrader_config.py`` (``configure(get_config(), "/path/to/course")``), so that
    nbgrader finds the course, its state and its grading steps wherever it is started (the
    formgrader reads the user's configuration, not the course's file)."""
    root = Path(root or course_root())
    state = state_dir(root)
    state.mkdir(parents=True, exist_ok=True)
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.source_directory = "solutions"
    c.CourseDirectory.release_directory = "notebooks"
    for step in ("submitted", "autograded", "feedback"):
        setattr(c.CourseDirectory, f"{step}_directory", os.path.relpath(state / step, root))
    c.CourseDirectory.db_url = f"sqlite:///{state / 'gradebook.db'}"
    # Only notebooks are released: nothing else from solutions/<assignment>/ reaches learners.
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]
    # `make bench` measures stock nbgrader against this grader; only it sets this variable.
    if not os.environ.get("ATTENTION_COURSE_STOCK_AUTOGRADE"):
        from . import nbgrader_plugin
        nbgrader_plugin.configure(c)
    return c


def single_machine_defaults(c, site):
    """A course id and a private exchange (made on first use) for one person on one machine,
    where neither the site nor the user configured them."""
    state = state_dir(c.CourseDirectory.root)
    if "course_id" not in site.CourseDirectory:
        c.CourseDirectory.course_id = "attention-course"
    if "root" not in site.Exchange:
        c.Exchange.root = str(state / "exchange")
        (state / "exchange").mkdir(parents=True, exist_ok=True)
    if "cache" not in site.Exchange:
        c.Exchange.cache = str(state / "exchange-cache")
    return c


def state_dir(root=None):
    """Where the course's working state lives: ``$ATTENTION_COURSE_STATE``, else ``.course/`` in
    the course root (nbgrader_config.py computes the same)."""
    if os.environ.get("ATTENTION_COURSE_STATE"):
        return Path(os.environ["ATTENTION_COURSE_STATE"])
    return Path(root or course_root()) / ".course"


def cache_dir(state=None):
    return Path(state or state_dir()) / "grading-cache"



# nbgrader's command line, started without rfc3987-syntax: jsonschema imports it to check IRIs,
# which nbgrader never does, and it compiles 38 grammars on import (about 2 s per command).
NBGRADER_MAIN = ("import sys; sys.modules['rfc3987_syntax'] = None; "
                 "from nbgrader.apps.nbgraderapp import main; sys.argv[0] = 'nbgrader'; "
                 "sys.exit(main())")


def nbgrader(*args, state=None, check=True, cwd=REPO, env_extra=None, quiet=True):
    """Run one nbgrader command in the course folder; ``state`` relocates .course/."""
    env = dict(os.environ)
    if state is not None:
        env["ATTENTION_COURSE_STATE"] = str(state)
    # nbgrader runs `alembic` as a command: the virtual environment's bin/ must be on PATH.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(env_extra or {})
    completed = subprocess.run([sys.executable, "-c", NBGRADER_MAIN, *args], cwd=cwd, env=env,
                               text=True, capture_output=quiet)
    if check and completed.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({completed.returncode}):\n"
                           + (completed.stdout or "")[-2000:] + (completed.stderr or "")[-4000:])
    return completed


def release(assignments, release_directory=None, state=None):
    """Regenerate learner notebooks from solutions/ (into ``release_directory`` if given)."""
    for assignment in assignments:
        solution_notebook(assignment)  # fails clearly on an unknown assignment
        args = ["generate_assignment", assignment, "--force"]
        if release_directory is not None:
            args.append(f"--CourseDirectory.release_directory={release_directory}")
        nbgrader(*args, state=state)
        print(f"released {assignment}")
    return 0


def submissions(assignment, state=None, students=None):
    """``(notebooks, notes)``: the release's notebook of ``assignment`` for every student folder
    under ``submitted/``, and a line for each student folder that is a link, each extra notebook
    (reported, not graded) and each missing notebook."""
    root = Path(state or state_dir()) / "submitted"
    name = reference.release_notebook(assignment).name
    found, notes = [], []
    for student in sorted(root.iterdir()) if root.is_dir() else []:
        if students and student.name not in students:
            continue
        folder = student / assignment
        if student.is_symlink() or folder.is_symlink():
            notes.append(f"{student.name}: the submission folder is a link; refused")
            found.append(folder / name)  # graded as refused: read_regular says why
            continue
        if not folder.is_dir():
            continue
        extras = sorted(p.name for p in folder.iterdir() if p.suffix == ".ipynb" and p.name != name)
        for extra in extras:
            notes.append(f"{student.name}: {extra} is not part of {assignment}; only {name} "
                         f"is graded")
        if (folder / name).exists() or (folder / name).is_symlink():
            found.append(folder / name)
        else:
            notes.append(f"{student.name}: no {name} was submitted")
    return found, notes


def autograde(assignment, jobs=None, state=None, sandbox="auto", progress=True, students=None,
              options=None):
    """Grade every submission of ``assignment`` in parallel, then record the grades with
    ``nbgrader autograde`` (which finds each result in the cache and only writes the gradebook,
    one notebook at a time). Returns the results of the parallel pass."""
    from . import batch, grade
    options = options or grade.Options(sandbox=sandbox)
    sandbox = options.sandbox
    state = Path(state or state_dir())
    submitted, notes = submissions(assignment, state, students)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    results = batch.grade_many(submitted, assignment, options, jobs=jobs,
                               state=cache_dir(state), progress=progress,
                               root=state / "submitted")
    args = ["autograde", assignment]
    for student in students or []:
        args.append(f"--student={student}")
    timeouts = [f"--HiddenSuiteGrading.{name}={getattr(options, name)}" for name in
                ("cell_timeout", "notebook_timeout", "call_timeout", "budget")]
    nbgrader(*args, *timeouts, state=state, env_extra={"ATTENTION_COURSE_SANDBOX": sandbox})
    return results
