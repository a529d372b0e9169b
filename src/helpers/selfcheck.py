"""Check a notebook yourself before submitting it.

    python -m helpers.selfcheck notebooks/02-scoring/scoring.ipynb

Runs the notebook from a fresh kernel, top to bottom, the way the grader will, and prints one line
per graded function: whether its visible check passes and, if not, why. Cells that fail elsewhere
are named by the section they sit in, and written answers still left empty are listed. Exits with
status 1 when any check fails or a written answer is still empty (and 2 when the notebook cannot
be run at all), so it gives the same verdict as nbgrader's Validate button.
"""
import argparse
import re
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*m")
EMPTY_ANSWER = "YOUR ANSWER HERE"

# What an error of each kind means, in words; the error's own message follows.
ERRORS = {
    "AssertionError": "an assertion failed",
    "AttributeError": "a name was looked up on an object that does not have it",
    "FloatingPointError": "a floating-point error (an overflow, or 0/0)",
    "ImportError": "an import failed",
    "IndexError": "an index is out of range",
    "KeyError": "a key is missing",
    "LinAlgError": "a linear-algebra routine failed (is a matrix singular?)",
    "ModuleNotFoundError": "a module could not be found",
    "NameError": "a name is not defined (run the cell that defines it, or check its spelling)",
    "RuntimeError": "a runtime error",
    "SyntaxError": "the code is not valid Python",
    "IndentationError": "the code is not indented correctly",
    "TypeError": "a value of the wrong type was used",
    "ValueError": "a value is not acceptable (often shapes that do not fit)",
    "ZeroDivisionError": "a division by zero",
}


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


def explain(ename, evalue):
    """One sentence for an error: the check's own message for a failed visible check, words for
    other errors (never a bare exception name)."""
    evalue = ANSI.sub("", str(evalue or "")).strip()
    if ename == "CheckFailed":
        return evalue or "a visible check failed"
    if ename == "NotImplementedError":
        return "not implemented yet: replace `raise NotImplementedError()` with your code"
    meaning = ERRORS.get(ename, f"your code raised an error of type {ename}")
    return f"{meaning}: {evalue}" if evalue else meaning


def _source(cell):
    return "".join(cell.source) if isinstance(cell.source, list) else cell.source


def _heading(cells, index):
    """The title of the section cell ``index`` belongs to: the last markdown heading before it."""
    for cell in reversed(cells[:index]):
        if cell.cell_type == "markdown":
            headings = [line.lstrip("#").strip() for line in _source(cell).splitlines()
                        if line.startswith("#")]
            if headings:
                return headings[-1]
    return "the start of the notebook"


def empty_answers(notebook):
    """The sections of the written answers still left as YOUR ANSWER HERE."""
    cells = notebook.cells
    return [_heading(cells, index) for index, cell in enumerate(cells)
            if cell.cell_type == "markdown" and cell.metadata.get("nbgrader", {}).get("solution")
            and cell.metadata.get("nbgrader", {}).get("grade") and EMPTY_ANSWER in _source(cell)]


def verdicts(notebook):
    """[(function, passed, message)] for every graded function's visible check, and notes: cells
    that failed elsewhere (named by their section) and written answers left empty. An experiment
    that fails after a visible check has failed is most likely that function's doing: such cells
    are counted in one note, not explained one by one (their errors, a figure's tick labels or a
    shape deep inside numpy, would only distract from the check that says what is wrong)."""
    rows, notes = [], []
    consequences = 0
    cells = notebook.cells
    for index, cell in enumerate(cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown":
            if meta.get("solution") and meta.get("grade") and EMPTY_ANSWER in _source(cell):
                notes.append(f"the written answer under '{_heading(cells, index)}' is still empty "
                             f"(your instructor grades it by hand)")
            continue
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if meta.get("grade") and not meta.get("solution"):
            name = meta.get("grade_id", "").removeprefix("check_") or _heading(cells, index)
            if errors:
                rows.append((name, False, explain(errors[0].ename, errors[0].evalue)))
            else:
                rows.append((name, True, "visible checks pass"))
        elif errors and not meta.get("solution") and any(not passed for _, passed, _ in rows):
            consequences += 1
        elif errors:
            where = (f"the cell that defines `{meta['grade_id']}`" if meta.get("solution")
                     else f"a cell in '{_heading(cells, index)}'")
            notes.append(f"{where} failed: {explain(errors[0].ename, errors[0].evalue)}")
    if consequences:
        notes.append(f"{consequences} later cell{'s' if consequences > 1 else ''} (experiments, "
                     f"figures) failed too, most likely because of a function whose visible check "
                     f"fails above: fix that first")
    return rows, notes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m helpers.selfcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    try:
        notebook, seconds = run(args.notebook, args.timeout)
    except FileNotFoundError:
        print(f"error: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    except Exception as error:  # an unreadable notebook or a kernel that cannot start
        print(f"error: the notebook could not be run ({explain(type(error).__name__, error)}). "
              f"Is it a valid notebook? Try opening and saving it in JupyterLab.", file=sys.stderr)
        return 2
    rows, notes = verdicts(notebook)
    width = max([len(name) for name, _, _ in rows] + [8])
    print(f"{'function':<{width}}  result")
    for name, passed, message in rows:
        print(f"{name:<{width}}  {'PASS' if passed else 'FAIL'}  {'' if passed else message}")
    for line in notes:
        print(f"note: {line}")
    failed = sum(not passed for _, passed, _ in rows)
    empty = len(empty_answers(notebook))
    print(f"\n{len(rows) - failed} of {len(rows)} visible checks pass ({seconds:.1f} s)"
          + (f"; {empty} written answer{'s are' if empty > 1 else ' is'} still empty. " if empty
             else ". ")
          + ("Fix what is listed, then run this again." if failed or empty else
             "The hidden tests check more cases when your work is graded."))
    return 1 if failed or empty else 0


if __name__ == "__main__":
    sys.exit(main())
