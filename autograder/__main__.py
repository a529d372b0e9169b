"""Command line of the grading engine.

    python -m autograder grade NOTEBOOK... [--assignment ID] [--json FILE|-] [--gradescope FILE]
                                          [--csv FILE] [--jobs N] [--state DIR] [settings]
    python -m autograder autograde ASSIGNMENT... [--jobs N] [--student ID]... [settings]
    python -m autograder release [ASSIGNMENT...]
    python -m autograder demo
    python -m autograder gradescope ASSIGNMENT [-o autograder.zip] [--visibility V]
    python -m autograder gradescope-try autograder.zip NOTEBOOK [--results FILE]
    python -m autograder privacy [COURSE_ROOT]

Every command works on the course in ``--course ROOT`` (default: the course root nbgrader's
configuration names, else the current folder). The grading settings (``--cell-timeout``,
``--memory-bytes``, ``--no-sandbox``...) are generated from their one definition,
:class:`autograder.engine.options.Options`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .course import folders
from .engine import options
from .engine.assignment import Course
from .engine.result import VISIBILITIES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="Grade a course's notebooks with its hidden "
                                                 "suites.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--course", metavar="ROOT", help="the course root (default: the one "
                        "nbgrader's configuration names, else the current folder)")
    commands = parser.add_subparsers(dest="command", required=True)
    # Flags several commands share, declared once each.
    jobs = argparse.ArgumentParser(add_help=False)
    jobs.add_argument("--jobs", type=int, default=None,
                      help="notebooks graded at once (default: one per core)")
    visibility = argparse.ArgumentParser(add_help=False)
    visibility.add_argument("--visibility", default="after_due_date", choices=VISIBILITIES,
                            help="when learners see the hidden tests in Gradescope (default "
                                 "%(default)s; the visible checks always show)")

    def command(name: str, *shared: argparse.ArgumentParser,
                **kwargs: Any) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[common, *shared], **kwargs)

    g = command("grade", jobs, visibility, help="grade submitted notebooks with the hidden suites")
    g.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    g.add_argument("--assignment", help="assignment id (default: from the folder or file name)")
    g.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    g.add_argument("--gradescope", metavar="FILE", help="write Gradescope results.json")
    g.add_argument("--csv", metavar="FILE", help="write one row per notebook")
    g.add_argument("--state", metavar="DIR",
                   help="remember finished results here; a rerun skips notebooks already graded")
    options.add_arguments(g)

    r = command("release", help="regenerate the released notebooks from the "
                            "instructor notebooks with nbgrader")
    r.add_argument("assignments", nargs="*")

    a = command("autograde", jobs, help="grade all submissions of one or more assignments in "
                            "parallel and record them in the nbgrader gradebook (one pool of "
                            "workers and one recording process for them all)")
    a.add_argument("assignments", nargs="+", metavar="ASSIGNMENT")
    a.add_argument("--student", action="append", help="only these students (repeatable)")
    a.add_argument("--lock-wait", type=float, default=120.0, metavar="SECONDS",
                   help="how long recording waits for a gradebook that another program (the "
                        "formgrader, another command) is writing (default 120)")
    options.add_arguments(a)

    command("demo", help="release, grade a sample class, print the grade table")

    z = command("gradescope", visibility, help="build the Gradescope autograder zip of an "
                            "assignment")
    z.add_argument("assignment")
    z.add_argument("-o", "--output", help="the zip to write (default: "
                   "gradescope-ASSIGNMENT.zip)")

    t = command("gradescope-try", help="grade a notebook with an autograder zip in "
                            "Gradescope's layout on this machine (root, bubblewrap)")
    t.add_argument("zip")
    t.add_argument("notebook", help="a notebook, or a folder standing for the whole upload")
    t.add_argument("--results", metavar="FILE", help="also write results.json here")

    p = command("privacy", help="warn when other users can read the suites, the "
                            "solutions or the gradebook")
    p.add_argument("course_root", nargs="?", help="the course root (default: --course)")

    args = parser.parse_args(argv)
    course = Course.from_root(args.course or folders.course_root())
    try:
        if args.command == "grade":
            return grade_command(args, course)
        if args.command == "release":
            from .course.instructor import release
            return release([course.assignment(a) for a in args.assignments]
                           or course.assignments())
        if args.command == "autograde":
            return autograde_command(args, course)
        if args.command == "gradescope":
            from .course.gradescope import build
            path = build(course.assignment(args.assignment),
                         args.output or f"gradescope-{args.assignment}.zip", args.visibility)
            print(f"wrote {path}: upload it as the autograder of {args.assignment} "
                  f"(see docs/gradescope.md)")
            return 0
    except LookupError as error:  # an assignment the course does not have, a notebook of none
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.command == "gradescope-try":
        from .course.gradescope import try_zip
        payload = try_zip(args.zip, args.notebook, args.results)
        payload.pop("_stdout", None)
        json.dump(payload, sys.stdout, indent=2)
        print()
        return 0
    if args.command == "privacy":
        from .course.privacy import main as privacy
        return privacy([args.course_root or str(course.root)])
    if args.command == "demo":
        from .tools.demo import main as demo
        return demo(course)
    return 2


HOST_FAULT = 6  # exit status: some notebooks were not graded through a fault of this machine


def host_faults(error: Any) -> int:
    """Tell the instructor which notebooks were not graded because their kernel could not be
    started here, and why; nothing was recorded for them."""
    print(f"error: {len(error.faults)} notebook(s) were not graded: the learner's kernel could "
          f"not be started on this machine, before any of their code ran. No grade was recorded "
          f"for them; fix the cause and run the same command again:", file=sys.stderr)
    print("\n".join(error.lines()), file=sys.stderr)
    return HOST_FAULT


def state_full(error: OSError) -> int:
    print(f"error: grading stopped: {error.strerror}. Every result already kept there is "
          f"intact; free some space and run the same command again to grade the rest.",
          file=sys.stderr)
    return 3


def autograde_command(args: argparse.Namespace, course: Course) -> int:
    from .course.formats import flag_lines
    from .course.instructor import GradebookBusy, RecordingFailed, autograde, refusals
    from .engine.batch import HostFaults
    from .engine.atomic import StateFull
    assignments = [course.assignment(name) for name in dict.fromkeys(args.assignments)]
    faulted: HostFaults | None = None
    try:
        results = autograde(assignments, args.jobs, students=args.student,
                            options=options.from_arguments(args), lock_wait=args.lock_wait)
    except HostFaults as error:  # the others were graded and recorded
        faulted, results = error, error.results
    except StateFull as error:
        return state_full(error)
    except GradebookBusy as error:
        print(f"error: {error}", file=sys.stderr)
        return 4
    except RecordingFailed as error:
        print(f"error: recording in the gradebook failed: {error}", file=sys.stderr)
        return 5
    finally:
        refused = [(f"{assignment.name}: " if len(assignments) > 1 else "") + line
                   for assignment in assignments
                   for line in refusals(assignment, students=args.student)]
        if refused:
            print("refused, not graded (the name is not a valid id, or the files do not "
                  "belong to the learner's account, or the timestamp is wrong; see "
                  "docs/jupyterhub.md):")
            print("\n".join(f"  {line}" for line in refused))
    print(f"graded {len(results)} submissions of {', '.join(a.name for a in assignments)}; "
          f"see `nbgrader formgrader` or `nbgrader export`")
    flagged = flag_lines(results)
    if flagged:
        print("flagged for review (code that patches modules or names the grader's agent):")
        print("\n".join(flagged))
    return host_faults(faulted) if faulted is not None else 0


def grade_command(args: argparse.Namespace, course: Course) -> int:
    from .course.formats import table, write_csv
    from .engine.batch import HostFaults, grade_many
    from .engine.atomic import StateFull, write_atomically
    from .engine.result import gradescope_results
    from .sandbox.confinement import SandboxUnavailable
    target = course.assignment(args.assignment) if args.assignment else course
    faulted: HostFaults | None = None
    try:
        results = grade_many([Path(p) for p in args.notebooks], target,
                             options.from_arguments(args), args.jobs, args.state, progress=True)
    except HostFaults as error:  # the others were graded: their results are written below
        faulted, results = error, error.results
    except SandboxUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except StateFull as error:
        return state_full(error)
    if faulted is not None and not results:  # nothing graded: nothing written
        return host_faults(faulted)
    payload = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
    if args.json == "-":
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.json:
        write_atomically(args.json, json.dumps(payload, indent=2) + "\n")
    if args.gradescope:
        write_atomically(args.gradescope, json.dumps(
            gradescope_results(results, args.visibility), indent=2) + "\n")
    if args.csv:
        write_csv(results, args.csv)
    if args.json != "-" and results:
        print(table(results))
    return host_faults(faulted) if faulted is not None else 0


if __name__ == "__main__":
    sys.exit(main())
