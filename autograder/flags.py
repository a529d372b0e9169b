"""Flags for the instructor: submitted code that reaches for what grading rests on.

Some of what a hidden test checks is reported by the learner's own kernel: that a call left its
arguments unchanged, emitted no numpy warning and printed nothing (see :mod:`autograder.agent`).
Code that patches numpy, the standard library or the grader's agent inside the kernel can forge
those reports. Such code has no place in this course's answers, so the grader reads the submitted
source (parsed, never run, on the trusted side) and lists every place that:

- assigns or deletes an attribute of an imported module (``np.allclose = ...``,
  ``json.dumps = ...``, ``builtins.print = ...``), or does so through ``setattr``/``delattr``,
  ``vars(module)[...]`` or ``module.__dict__[...]``;
- replaces an entry of ``sys.modules``;
- names the grader's agent or its reply format.

A flag is a reason to look at a submission, not a verdict: the score is not changed.
"""
import ast
import re

AGENT_WORDS = ("__attention_course", "attention-course-agent", "attention_course_agent",
               "vnd.attention-course")
MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


class _Finder(ast.NodeVisitor):
    def __init__(self, modules):
        self.modules = modules  # shared by all cells: a module imported once is used later
        self.found = []

    def visit_Import(self, node):
        for alias in node.names:
            self.modules.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        for alias in node.names:  # `from numpy import linalg` binds a module too, often
            self.modules.add(alias.asname or alias.name)

    def _target(self, target, verb):
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, verb)
        elif isinstance(target, ast.Attribute) and _root(target) in self.modules:
            self.found.append(f"{verb} {_dotted(target)}")
        elif isinstance(target, ast.Subscript):
            holder = target.value
            if _dotted(holder) in ("sys.modules",):
                self.found.append(f"{verb} an entry of sys.modules")
            elif (isinstance(holder, ast.Attribute) and holder.attr == "__dict__"
                  and _root(holder) in self.modules):
                self.found.append(f"{verb} an entry of {_dotted(holder)}")
            elif (isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name)
                  and holder.func.id == "vars" and holder.args
                  and _root(holder.args[0]) in self.modules):
                self.found.append(f"{verb} an entry of vars({_dotted(holder.args[0])})")

    def visit_Assign(self, node):
        for target in node.targets:
            self._target(target, "assigns")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") and node.args:
            first = node.args[0]
            if _root(first) in self.modules or not isinstance(first, (ast.Name, ast.Attribute)):
                self.found.append(f"calls {node.func.id} on {_dotted(first) or 'an expression'}")
        self.generic_visit(node)

    def visit_Name(self, node):
        if any(word in node.id for word in AGENT_WORDS):
            self.found.append(f"names the grader's agent ({node.id})")

    def visit_Attribute(self, node):
        if any(word in node.attr for word in AGENT_WORDS):
            self.found.append(f"names the grader's agent ({node.attr})")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and any(w in node.value for w in AGENT_WORDS):
            self.found.append("names the grader's agent in a string")


def scan(notebook):
    """Flags, one line each, for the code cells of ``notebook`` (a cleaned notebook dict)."""
    flags, modules = [], {"__builtins__", "builtins", "np", "numpy", "sys", "json", "warnings"}
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        where = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        label = f"cell {number}" + (f" ('{where}')" if where else "")
        finder = _Finder(modules)
        try:
            tree = ast.parse(MAGIC.sub("", source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if any(word in source for word in AGENT_WORDS):
                flags.append(f"{label} names the grader's agent")
            continue
        try:
            finder.visit(tree)
        except RecursionError:
            flags.append(f"{label} is nested too deeply to be read")
            continue
        for finding in dict.fromkeys(finder.found):  # once each, in order
            flags.append(f"{label} {finding}")
    return flags[:50]
