"""Command line of the grading grade.

    python -m autograder grade NOTEBOOK... [--assignment ID] [--json FILE|-] [--gradescope FILE]
                                          [--jobs N] [--require-sandbox | --no-sandbox]
    python -m autograder autograde ASSIGNMENT [--jobs N] [--student ID]...
    python -m autograder release [ASSIGNMENT...]
    python -m autograder demo
    python -m autograder gradescope ASSIGNMENT [-o autograder.zip] [--visibility V]
    python -m autograder gradescope-try autograder.zip NOTEBOOK [--results FILE]
    python -m autograder privacy [COURSE_ROOT]
"""
import argparse
import json
import sys
from pathlib import Path

from .engine import grade, reference


def add_time_options(parser):
    defaults = grade.Options()
    parser.add_argument("--cell-timeout", type=float, default=defaults.cell_timeout, metavar="S",
                        help="seconds one cell of a notebook may run (default %(default)g)")
    parser.add_argument("--notebook-timeout", type=float, default=defaults.notebook_timeout,
                        metavar="S", help="seconds all cells together may run (default %(default)g)")
    parser.add_argument("--call-timeout", type=float, default=defaults.call_timeout, metavar="S",
                        help="seconds one call of a hidden test may take (default %(default)g)")
    parser.add_argument("--budget", type=float, default=defaults.budget, metavar="S",
                        help="seconds for everything one notebook gets: cells, replays after "
                             "crashes and the hidden suite (default %(default)g)")


def options_from(args):
    return grade.Options(sandbox=args.sandbox, cell_timeout=args.cell_timeout,
                          notebook_timeout=args.notebook_timeout, call_timeout=args.call_timeout,
                          budget=args.budget)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="Grade attention-course notebooks.")
    commands = parser.add_subparsers(dest="command", required=True)

    g = commands.add_parser("grade", help="grade submitted notebooks with the hidden suites")
    g.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    g.add_argument("--assignment", help="assignment id (default: from the folder or file name)")
    g.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    g.add_argument("--gradescope", metavar="FILE", help="write Gradescope results.json")
    g.add_argument("--visibility", default="after_due_date",
                   choices=["visible", "after_due_date", "after_published", "hidden"],
                   help="when learners see the hidden tests in Gradescope (default "
                        "%(default)s; visible checks always show)")
    g.add_argument("--csv", metavar="FILE", help="write one row per notebook")
    g.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: cores)")
    g.add_argument("--state", metavar="DIR",
                   help="remember finished results here; a rerun skips notebooks already graded")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--require-sandbox", action="store_const", dest="sandbox", const="require",
                      help="refuse to grade where bubblewrap is missing")
    mode.add_argument("--no-sandbox", action="store_const", dest="sandbox", const="off",
                      help="run learner code without bubblewrap (trusted notebooks only)")
    g.set_defaults(sandbox="auto")
    add_time_options(g)

    r = commands.add_parser("release", help="regenerate notebooks/ from solutions/ with nbgrader")
    r.add_argument("assignments", nargs="*")

    a = commands.add_parser("autograde", help="grade all submissions of an assignment in "
                            "parallel and record them in the nbgrader gradebook")
    a.add_argument("assignment")
    a.add_argument("--jobs", type=int, default=None)
    a.add_argument("--student", action="append", help="only these students (repeatable)")
    a.add_argument("--require-sandbox", action="store_const", dest="sandbox", const="require",
                   default="auto")
    a.add_argument("--lock-wait", type=float, default=120.0, metavar="SECONDS",
                   help="how long recording waits for a gradebook that another program (the "
                        "formgrader, another command) is writing (default 120)")
    add_time_options(a)

    commands.add_parser("demo", help="release, grade a sample class, print the grade table")

    z = commands.add_parser("gradescope", help="build the Gradescope autograder zip of an "
                            "assignment")
    z.add_argument("assignment")
    z.add_argument("-o", "--output", help="the zip to write (default: "
                   "gradescope-ASSIGNMENT.zip)")
    z.add_argument("--visibility", default="after_due_date",
                   choices=["visible", "after_due_date", "after_published", "hidden"],
                   help="when learners see the hidden tests (default %(default)s; the visible "
                        "checks always show)")

    t = commands.add_parser("gradescope-try", help="grade a notebook with an autograder zip in "
                            "Gradescope's layout on this machine (root, bubblewrap)")
    t.add_argument("zip")
    t.add_argument("notebook", help="a notebook, or a folder standing for the whole upload")
    t.add_argument("--results", metavar="FILE", help="also write results.json here")

    p = commands.add_parser("privacy", help="warn when other users can read the suites, the "
                            "solutions or the gradebook")
    p.add_argument("course_root", nargs="?", help="the course root (default: this checkout or "
                   "the one nbgrader's configuration names)")

    args = parser.parse_args(argv)
    if args.command == "grade":
        return grade_command(args)
    if args.command == "release":
        from .course.instructor import release
        return release(args.assignments or reference.assignments())
    if args.command == "autograde":
        from .course.instructor import GradebookBusy, RecordingFailed, autograde, refusals
        from .course.formats import flag_lines
        from .grade.grade import StateFull
        try:
            results = autograde(args.assignment, args.jobs, students=args.student,
                                options=options_from(args), lock_wait=args.lock_wait)
        except StateFull as error:
            return state_full(error)
        except GradebookBusy as error:
            print(f"error: {error}", file=sys.stderr)
            return 4
        except RecordingFailed as error:
            print(f"error: recording in the gradebook failed: {error}", file=sys.stderr)
            return 5
        finally:
            refused = refusals(args.assignment, students=args.student)
            if refused:
                print("refused, not graded (the name is not a valid id, or the files do not "
                      "belong to the learner's account, or the timestamp is wrong; see "
                      "docs/jupyterhub.md):")
                print("\n".join(f"  {line}" for line in refused))
        print(f"graded {len(results)} submissions of {args.assignment}; see `nbgrader formgrader` "
              f"or `nbgrader export`")
        flagged = flag_lines(results)
        if flagged:
            print("flagged for review (code that patches modules or names the grader's agent):")
            print("\n".join(flagged))
        return 0
    if args.command == "gradescope":
        from .course.gradescope import build
        path = build(args.assignment, args.output or f"gradescope-{args.assignment}.zip",
                     args.visibility)
        print(f"wrote {path}: upload it as the autograder of {args.assignment} "
              f"(see docs/gradescope.md)")
        return 0
    if args.command == "gradescope-try":
        from .course.gradescope import try_zip
        payload = try_zip(args.zip, args.notebook, args.results)
        payload.pop("_stdout", None)
        json.dump(payload, sys.stdout, indent=2)
        print()
        return 0
    if args.command == "privacy":
        from .course.privacy import main as privacy
        return privacy([args.course_root] if args.course_root else [])
    if args.command == "demo":
        from .tools.demo import main as demo
        return demo()
    return 2


def state_full(error):
    print(f"error: grading stopped: {error.strerror}. Every result already kept there is "
          f"intact; free some space and run the same command again to grade the rest.",
          file=sys.stderr)
    return 3


def grade_command(args):
    from .grade.batch import grade_many
    from .course.formats import table, write_csv
    from .grade.grade import StateFull, keep
    from .sandbox.confinement import SandboxUnavailable
    options = options_from(args)
    try:
        results = grade_many([Path(p) for p in args.notebooks], args.assignment, options,
                             args.jobs, args.state, progress=True)
    except SandboxUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except StateFull as error:
        return state_full(error)
    payload = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
    if args.json == "-":
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.json:
        keep(args.json, json.dumps(payload, indent=2) + "\n")
    if args.gradescope:
        from .course.gradescope import results_json
        keep(args.gradescope, json.dumps(results_json(results, args.visibility), indent=2) + "\n")
    if args.csv:
        write_csv(results, args.csv)
    if args.json != "-":
        print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
