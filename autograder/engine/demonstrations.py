"""Demonstration cells: the notebook's experiments, which no grade depends on, are not re-run.

Most of a heavy notebook's run time is demonstrations: training runs, sweeps and figures in
locked cells the learner cannot change. An author marks such a cell with the cell tag
``demonstration``; the grader reads the mark from the release (``restore_locked`` puts the
released cell, its metadata included, in place of the learner's copy), never from the
submission, and only a locked cell can be one.

What makes skipping safe is checked in three ways:

- :func:`problems`, a static check of the solution notebook and the catalogue run by the
  project's tests: a demonstration cell binds no name that a later cell which is not a
  demonstration reads, nor any name a graded function reads (the reference's and every catalogue
  entry's); it stores into no attribute or item of a name it did not bind, and calls no method of
  such a name that later code reads.
- A test grades the reference and every mutant and alternative in the catalogue with and without
  skipping, and requires identical results.
- At grading time, :func:`needs_full_run` sends a submission whose skipped run raised a
  ``NameError`` (its own code read a name only a demonstration binds) to be graded again with
  every cell run.

A cell that is not re-run keeps the figures of the learner's own submitted copy, images only, as
many as the notebook's one budget of outputs allows (:func:`keep_submitted_figures`), labelled as
such.
"""
from __future__ import annotations

import ast
from typing import Iterable, Iterator

from . import figures, notebook
from .figures import Output

TAG = "demonstration"
NOT_RERUN = ("[{count} figure(s) from your submitted notebook; this demonstration cell was not "
             "re-run by the grader: no grade depends on it]\n")
NOT_RERUN_EMPTY = ("[this demonstration cell was not re-run by the grader: no grade depends on "
                   "it]\n")


def is_demonstration(cell: notebook.Cell) -> bool:
    """A locked code cell tagged ``demonstration`` that is not a graded one (a visible check is
    always run): read this from the release's cell."""
    graded = cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    return cell.get("cell_type") == "code" and tagged(cell) and notebook.is_locked(cell) \
        and not graded


def tagged(cell: notebook.Cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return isinstance(tags, list) and TAG in tags


# ------------------------------------------------------------------ names (trusted sources only)

def _module_level(tree: ast.AST) -> Iterator[ast.AST]:
    """Nodes executed in the cell's own (global) scope: not inside a function, class or
    comprehension body (their definitions' names are bound, though)."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.ClassDef):
            todo += node.decorator_list + node.bases + [k.value for k in node.keywords]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
            if not isinstance(node, ast.Lambda):
                todo += node.decorator_list
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.append(node.generators[0].iter)  # the one part run in the enclosing scope
        else:
            todo += ast.iter_child_nodes(node)


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import statement binds."""
    return {(alias.asname or alias.name).split(".")[0] for alias in node.names}


def bound(source: str) -> set[str]:
    """Names a cell binds in the notebook's global namespace."""
    return _bound_in(ast.parse(source))


def _bound_in(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in _module_level(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= _imported(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
    for node in ast.walk(tree):  # globals declared in functions, and := anywhere
        if isinstance(node, ast.Global):
            names |= set(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def reads(source: str) -> set[str]:
    """Names a cell reads from the notebook's global namespace: before it binds them itself, or
    free in a function it defines (which reads them whenever it is called)."""
    found: set[str] = set()
    _reads_in(ast.parse(source).body, set(), found)
    return found


def _loads(node: ast.AST) -> set[str]:
    """Names an expression or simple statement loads, less those its own lambdas and
    comprehensions bind for themselves."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    local: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            local |= {n.id for g in inner.generators for n in ast.walk(g.target)
                      if isinstance(n, ast.Name)}
        elif isinstance(inner, ast.Lambda):
            local |= {a.arg for a in ast.walk(inner.args) if isinstance(a, ast.arg)}
    return names - local


def _free(function: ast.AST) -> set[str]:
    """Names a function (or class) body reads that it does not bind itself."""
    return _loads(function) - _all_bound(function)


def _reads_in(statements: list[ast.stmt], bound_so_far: set[str], found: set[str]) -> None:
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found |= _free(statement)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            found |= _loads(statement.iter) - bound_so_far
            bound_so_far |= {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
            _reads_in(statement.body + statement.orelse, bound_so_far, found)
        elif isinstance(statement, (ast.While, ast.If)):
            found |= _loads(statement.test) - bound_so_far
            _reads_in(statement.body + statement.orelse, bound_so_far, found)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                found |= _loads(item.context_expr) - bound_so_far
                if item.optional_vars is not None:
                    bound_so_far |= {n.id for n in ast.walk(item.optional_vars)
                                     if isinstance(n, ast.Name)}
            _reads_in(statement.body, bound_so_far, found)
        elif isinstance(statement, ast.Try):
            _reads_in(statement.body, bound_so_far, found)
            for handler in statement.handlers:
                if handler.type is not None:
                    found |= _loads(handler.type) - bound_so_far
                _reads_in(handler.body, bound_so_far | ({handler.name} if handler.name else set()),
                          found)
            _reads_in(statement.orelse + statement.finalbody, bound_so_far, found)
        else:
            found |= _loads(statement) - bound_so_far
            functions = [n for n in ast.walk(statement) if isinstance(n, ast.Lambda)]
            for function in functions:
                found |= _free(function)
        bound_so_far |= _bound_in(ast.Module(body=[statement], type_ignores=[]))


def _all_bound(tree: ast.AST) -> set[str]:
    """Every name the cell binds anywhere: globals, and its functions' parameters and locals."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, (ast.Store, ast.Del))}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= _imported(node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _base(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def changes_outside(source: str, modules: set[str], read_later: set[str],
                    demonstrated: Iterable[str] = ()) -> list[str]:
    """What a cell may change of objects it did not create: a store into an attribute or item of
    a name it does not bind (nor only ``demonstrated`` cells do), or a method called on such a
    name that later code reads (modules excepted: ``np.zeros(...)`` changes nothing of ``np``)."""
    tree = ast.parse(source)
    own = _all_bound(tree) | set(demonstrated)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.ctx, (ast.Store, ast.Del)):
            name = _base(node)
            if name is not None and name not in own:
                found.append(f"stores into {ast.unparse(node)}, which it did not create")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = _base(node.func)
            if name is not None and name not in own and name not in modules \
                    and name in read_later:
                found.append(f"calls {ast.unparse(node.func)}(), which may change {name}, "
                             f"read later")
    return found


def _modules(cells: Iterable[notebook.Cell]) -> set[str]:
    names: set[str] = set()
    for cell in cells:
        for node in ast.walk(ast.parse(notebook.source(cell))):
            if isinstance(node, ast.Import):
                names |= _imported(node)
            elif isinstance(node, ast.ImportFrom):  # from helpers import plots: a module too
                names |= {a.asname or a.name for a in node.names}
    return names


def problems(solution: notebook.Notebook, graded_sources: Iterable[str]) -> list[str]:
    """Why skipping a demonstration cell of ``solution`` could change a grade; empty when it
    cannot. ``graded_sources``: the code the hidden suite runs besides the notebook's cells (every
    catalogue entry's source); the solution's own answer cells are among its cells."""
    cells = [c for c in solution["cells"] if c.get("cell_type") == "code"]
    graded_reads: set[str] = set()
    for text in graded_sources:
        graded_reads |= reads(text)
    for cell in cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            graded_reads |= reads(notebook.source(cell))
    modules = _modules(cells)
    # names only demonstration cells bind: objects that no code run when skipping can reach
    demonstrated = set().union(*(bound(notebook.source(c)) for c in cells if is_demonstration(c)))
    demonstrated -= set().union(*(bound(notebook.source(c)) for c in cells
                                  if not is_demonstration(c)))
    found = []
    for index, cell in enumerate(cells):
        if not tagged(cell):
            continue
        label = notebook.grade_id(cell) or f"code cell {index + 1}"
        if not is_demonstration(cell):
            found.append(f"{label}: tagged {TAG!r} but not a locked cell that is not graded; "
                         f"the learner could change it, or it is a check, so it must be run")
            continue
        later = set(graded_reads)
        for other in cells[index + 1:]:
            if not is_demonstration(other):
                later |= reads(notebook.source(other))
        source = notebook.source(cell)
        for name in sorted(bound(source) & later):
            found.append(f"{label}: binds {name!r}, which code that is run later reads")
        found += [f"{label}: {change}" for change in changes_outside(source, modules, later,
                                                                     demonstrated)]
    return found


# ------------------------------------------------------------------ grading (untrusted input)

def not_rerun_outputs(shown: list[Output]) -> list[Output]:
    """A demonstration cell's outputs: a label saying it was not re-run, then what the learner's
    submitted copy shows of it (its figures, and the reader's note of any left out)."""
    count = sum(1 for output in shown if figures.is_figure(output))
    text = NOT_RERUN.format(count=count) if count else NOT_RERUN_EMPTY
    return [{"output_type": "stream", "name": "stdout", "text": text}, *shown]


def keep_submitted_figures(executed: notebook.Notebook, submitted: notebook.Notebook,
                           budget: figures.Budget | None = None) -> None:
    """Give each demonstration cell of ``executed`` (a restored notebook) what the learner's own
    copy of it shows in ``submitted`` (read by :func:`notebook.read_submission`: its figures,
    within a cell's allowance), labelled as not re-run, within ``budget``, the notebook's one
    budget of outputs (the kernel's outputs get what is left)."""
    budget = budget or figures.Budget()
    shown = {gid: cell.get("outputs", []) for cell in submitted["cells"]
             if cell.get("cell_type") == "code" and (gid := notebook.grade_id(cell)) is not None}
    for cell in executed["cells"]:
        if is_demonstration(cell):
            cell["outputs"] = budget.fit(not_rerun_outputs(
                [o for o in shown.pop(notebook.grade_id(cell) or "", [])
                 if figures.is_figure(o) or o.get("output_type") == "stream"]))


def needs_full_run(messages: Iterable[str]) -> bool:
    """Whether a submission graded with its demonstration cells skipped must be graded again in
    full: something raised a NameError (a name a skipped cell binds, perhaps). The release's own
    code cannot (the authoring check and the proof say so); a learner's can, by reading a name
    only a demonstration binds."""
    return any("NameError" in message for message in messages)
