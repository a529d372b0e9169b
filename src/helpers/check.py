"""Check a notebook yourself before submitting it.

    python -m helpers.check notebooks/02-scoring/scoring.ipynb

Runs the notebook from a fresh kernel, top to bottom, the way the grader will, and prints one line
per graded function: whether its visible check passes and, if not, why. Exits with status 1 when
any check fails (and 2 when the notebook cannot be run at all), so it gives the same verdict as
nbgrader's Validate button.
"""
import argparse
import re
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(path, timeout=120):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(_folder(path))}})
    started = time.monotonic()
    client.execute()
    return notebook, time.monotonic() - started


def _folder(path):
    from pathlib import Path
    return Path(path).resolve().parent


def verdicts(notebook):
    """[(function, passed, message)] for every graded function's visible check, and cell errors."""
    rows, other_errors = [], []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if meta.get("grade") and not meta.get("solution"):
            name = meta.get("grade_id", f"cell {number}").removeprefix("check_")
            if errors:
                rows.append((name, False, ANSI.sub("", f"{errors[0].ename}: {errors[0].evalue}")))
            else:
                rows.append((name, True, "visible checks pass"))
        elif errors:
            other_errors.append(f"cell {number}: {errors[0].ename}: {ANSI.sub('', errors[0].evalue)}")
    return rows, other_errors


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m helpers.check", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    try:
        notebook, seconds = run(args.notebook, args.timeout)
    except FileNotFoundError:
        print(f"error: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    except Exception as error:  # an unreadable notebook or a kernel that cannot start
        print(f"error: the notebook could not be run ({type(error).__name__}: {error}). "
              f"Is it a valid notebook? Try opening and saving it in JupyterLab.", file=sys.stderr)
        return 2
    rows, other_errors = verdicts(notebook)
    width = max([len(name) for name, _, _ in rows] + [8])
    print(f"{'function':<{width}}  result")
    for name, passed, message in rows:
        print(f"{name:<{width}}  {'PASS' if passed else 'FAIL'}  {'' if passed else message}")
    for line in other_errors:
        print(f"note: {line}")
    failed = sum(not passed for _, passed, _ in rows)
    print(f"\n{len(rows) - failed} of {len(rows)} visible checks pass ({seconds:.1f} s). "
          + ("Fix the failing functions, then run this again." if failed else
             "The hidden tests check more cases when your work is graded."))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
