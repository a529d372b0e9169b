"""Flags for the instructor: submitted code that reaches for what grading rests on.

Some of what a hidden test checks is reported by the learner's own kernel: that a call left its
arguments unchanged, emitted no numpy warning and printed nothing (see
:mod:`autograder.engine.agent`).
Code that patches numpy, the standard library or the grader's agent inside the kernel can forge
those reports. Such code has no place in this course's answers, so the grader reads the submitted
source (parsed, never run, on the trusted side, in a bounded child process: see
:func:`autograder.engine.notebook.read_submission`) and lists every place that:

- assigns or deletes an attribute of an imported module or of a name bound to one of its members
  (``np.allclose = ...``, ``f = np.array_equal; f.__code__ = ...``), or does so through
  ``setattr``/``delattr``, ``vars(module)[...]`` or ``module.__dict__[...]``;
- replaces an entry of ``sys.modules``;
- names the grader's agent or its reply format;
- uses a facility that reaches objects by a name built at run time, or the interpreter's own
  machinery, which is how the agent can be found without naming it: ``globals()``, ``vars()``,
  ``locals()``, ``eval``, ``exec``, ``compile``, ``__import__``, ``getattr`` with a name that is
  not a literal, ``setattr``/``delattr``, ``get_ipython``, ``__builtins__``; attributes such as
  ``__dict__``, ``__globals__``, ``__code__``, ``__subclasses__`` and those of frames and
  tracebacks; modules such as ``gc``, ``inspect``, ``ctypes``, ``importlib``, ``pickle``,
  ``builtins`` and ``__main__``, and ``sys`` beyond its plain values; IPython's escapes other
  than ``%time``, ``%timeit``, ``%matplotlib``, help (``?``) and shell lines (which cannot start a
  process in the sandbox).

No course answer uses any of these (tested over every solution, mutant and alternative of the
catalogue). A flag is a reason to look at a submission, not a verdict: the score is not changed.
Every pattern here runs in linear time: lines are read with string methods, never a regular
expression that can backtrack across lines.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Callable

AGENT_WORDS = ("__autograder", "grader-agent", "autograder_agent", "vnd.autograder")
# Names that reach objects or code by a name built at run time, whatever they are called on.
DYNAMIC_NAMES = {"globals", "vars", "locals", "eval", "exec", "compile", "__import__",
                 "get_ipython", "__builtins__", "breakpoint", "setattr", "delattr",
                 "__loader__", "__spec__"}
DYNAMIC_MODULES = {"gc", "inspect", "ctypes", "_ctypes", "cffi", "importlib", "imp", "pkgutil",
                   "pydoc", "runpy", "code", "codeop", "builtins", "__builtin__", "__main__",
                   "pickle", "_pickle", "cPickle", "copyreg", "marshal", "shelve", "dill",
                   "cloudpickle", "unittest", "IPython", "ipykernel", "jupyter_client", "zmq",
                   "mmap", "_thread", "logging.config"}
# Attributes that reach frames, code, namespaces or raw memory, whatever they are read from.
DYNAMIC_ATTRIBUTES = {"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
                      "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame", "cr_code",
                      "ag_frame", "ag_code", "cell_contents", "co_consts", "co_code",
                      "attrgetter", "methodcaller", "get_field", "settrace", "setprofile",
                      "ctypes", "ctypeslib", "_getframe", "_ip", "ev", "ex", "user_ns",
                      "user_global_ns", "user_module", "all_ns_refs", "ns_table", "run_cell",
                      "run_line_magic", "run_cell_magic"}
# Dynamic names also flagged as attributes (``IPython.get_ipython``, ``builtins.getattr``).
DYNAMIC_MEMBERS = {"get_ipython", "globals", "locals", "vars", "getattr", "setattr", "delattr",
                   "exec", "__import__"}
# Modules of DYNAMIC_MODULES some of which plain code uses: ``from IPython.display import HTML``.
PLAIN_PARTS = {"IPython.display"}
# Dunder attributes plain code reads; every other one is flagged (``__dict__``, ``__globals__``...).
PLAIN_DUNDERS = {"__name__", "__qualname__", "__doc__", "__init__", "__class__", "__len__",
                 "__call__", "__version__", "__file__", "__module__", "__annotations__"}
# What of ``sys`` plain code reads.
PLAIN_SYS = {"exit", "float_info", "int_info", "maxsize", "version", "version_info", "platform",
             "byteorder", "stdout", "stderr", "getrecursionlimit", "getsizeof", "argv",
             "prefix", "base_prefix", "exec_prefix", "executable", "hexversion"}
# IPython escapes: magics whose argument (or cell) is ordinary Python, and harmless ones.
CODE_MAGICS = {"time", "timeit"}
HARMLESS_MAGICS = {"matplotlib"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_reference(node: ast.AST) -> bool:
    """A name or a chain of attributes (no call, no subscript): an alias, not a new object."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _dynamic_module(name: str) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:depth]) in DYNAMIC_MODULES for depth in range(1, len(parts) + 1))


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class _Finder(ast.NodeVisitor):
    def __init__(self, modules: dict[str, str]) -> None:
        self.modules = modules  # name -> module, shared by all cells: imported once, used later
        self.found: list[str] = []

    def _flag(self, text: str) -> None:
        self.found.append(text)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _dynamic_module(alias.name):
                self._flag(f"imports {alias.name}")
            if alias.asname:
                self.modules[alias.asname] = alias.name
            else:  # `import numpy.linalg` binds numpy
                self.modules[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if _dynamic_module(base) and base not in PLAIN_PARTS:
            self._flag(f"imports from {base}")
        for alias in node.names:  # `from numpy import linalg` binds a module too, often
            full = f"{base}.{alias.name}"
            if _dynamic_module(full) and not _dynamic_module(base):
                self._flag(f"imports {full}")
            elif alias.name in DYNAMIC_NAMES or alias.name in DYNAMIC_ATTRIBUTES or (
                    _dunder(alias.name) and alias.name not in PLAIN_DUNDERS) or (
                    base == "sys" and alias.name not in PLAIN_SYS):
                self._flag(f"imports {alias.name} from {base}")
            self.modules[alias.asname or alias.name] = full

    def _target(self, target: ast.expr, verb: str) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, verb)
        elif isinstance(target, ast.Starred):
            self._target(target.value, verb)
        elif isinstance(target, ast.Attribute):
            if _root(target) in self.modules:
                self._flag(f"{verb} {_dotted(target)}")
            elif _dunder(target.attr):
                self._flag(f"{verb} the attribute {target.attr}")
        elif isinstance(target, ast.Subscript):
            holder = target.value
            if _dotted(holder) == "sys.modules" or (
                    isinstance(holder, ast.Attribute) and holder.attr == "modules"
                    and self.modules.get(_root(holder) or "") == "sys"):
                self._flag(f"{verb} an entry of sys.modules")
            elif (isinstance(holder, ast.Attribute) and holder.attr == "__dict__"
                  and _root(holder) in self.modules):
                self._flag(f"{verb} an entry of {_dotted(holder)}")
            elif (isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name)
                  and holder.func.id == "vars" and holder.args
                  and _root(holder.args[0]) in self.modules):
                self._flag(f"{verb} an entry of vars({_dotted(holder.args[0])})")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, "assigns")
        # `f = np.array_equal`: f is another name for the module's member from now on.
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and _is_reference(node.value) and _root(node.value) in self.modules):
            self.modules[node.targets[0].id] = _dotted(node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        if isinstance(function, ast.Name) and function.id in ("setattr", "delattr") and node.args:
            first = node.args[0]
            if _root(first) in self.modules or not isinstance(first, (ast.Name, ast.Attribute)):
                self._flag(f"calls {function.id} on {_dotted(first) or 'an expression'}")
            else:
                self._flag(f"calls {function.id}")
            for argument in node.args + [k.value for k in node.keywords]:
                self.visit(argument)
            return
        if isinstance(function, ast.Name) and function.id == "getattr":
            name = node.args[1] if len(node.args) >= 2 else None
            if (isinstance(name, ast.Constant) and isinstance(name.value, str)
                    and not any(isinstance(a, ast.Starred) for a in node.args)):
                # getattr(x, "name") is x.name
                self._attribute(name.value, node.args[0])
                for argument in node.args + [k.value for k in node.keywords]:
                    self.visit(argument)
                return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if any(word in node.id for word in AGENT_WORDS):
            self._flag(f"names the grader's agent ({node.id})")
        elif node.id in DYNAMIC_NAMES or node.id == "getattr":
            self._flag(f"uses {node.id}" + ("" if node.id.startswith("__") else "()")
                       + (" with a name that is not a literal" if node.id == "getattr" else ""))

    def _attribute(self, name: str, holder: ast.expr) -> None:
        if any(word in name for word in AGENT_WORDS):
            self._flag(f"names the grader's agent ({name})")
        elif _dunder(name) and name not in PLAIN_DUNDERS:
            self._flag(f"uses the attribute {name}")
        elif name in DYNAMIC_ATTRIBUTES or name in DYNAMIC_MEMBERS:
            self._flag(f"uses the attribute {name}")
        elif self.modules.get(_root(holder) or "") == "sys" and name not in PLAIN_SYS \
                and isinstance(holder, ast.Name):
            self._flag(f"uses sys.{name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._attribute(node.attr, node.value)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and any(w in node.value for w in AGENT_WORDS):
            self._flag("names the grader's agent in a string")


# ------------------------------------------------------------------ IPython's escapes

def _magic(text: str) -> tuple[str, str]:
    """``(name, argument)`` of ``%name argument`` (text after the ``%``)."""
    name, _, argument = text.partition(" ")
    return name.strip(), argument.strip()


def _options_removed(argument: str) -> str:
    """A ``%timeit -n 10 -r 3 code`` argument without its options."""
    words = argument.split(" ")
    while words and (words[0].startswith("-") or words[0].isdigit() or words[0] == ""):
        words.pop(0)
    return " ".join(words)


def python_of(source: str) -> tuple[str, list[str]]:
    """``(python, notes)``: the Python IPython would run for a cell, as far as flags need it.

    Shell lines become blank (no process can start in the sandbox); ``%time``, ``%timeit`` and
    help lines (``x?``) become the code they run or name; any other magic, a cell magic other
    than ``%%time``/``%%timeit`` and IPython's autocall escapes are flagged (``notes``) and
    dropped."""
    lines, notes = source.split("\n"), list[str]()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name, _ = _magic(lines[first].lstrip()[2:])
        if name not in CODE_MAGICS:
            return "", [f"uses the cell magic %%{name}"]
        lines[first] = ""
    python: list[str] = []
    for line in lines:
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        assigned, equals, rest = stripped.partition("=")
        if equals and rest.lstrip()[:1] in ("%", "!") and WORD.fullmatch(
                assigned.strip().replace(".", "_").replace(",", "_").replace(" ", "") or "-"):
            stripped, indent = rest.lstrip(), indent + assigned.strip() + " = "
        if stripped.startswith("!"):
            python.append("")
        elif stripped.startswith("%"):
            name, argument = _magic(stripped.lstrip("%"))
            if name in CODE_MAGICS:
                python.append(indent + _options_removed(argument))
            elif name in HARMLESS_MAGICS:
                python.append("")
            else:
                notes.append(f"uses the magic %{name}")
                python.append("")
        elif stripped[:1] in ("/", ",", ";") and stripped[1:2].isidentifier():
            notes.append("uses IPython's autocall escape")
            python.append("")
        elif stripped.endswith("?") or stripped.startswith("?"):
            python.append(indent + stripped.strip("?"))
        else:
            python.append(line)
    return "\n".join(python), notes


def _readable(python: str) -> ast.Module | None:
    """The syntax tree of ``python``, trying what IPython does before it runs a cell (it drops
    the first line's indentation and ``>>>`` or ``In [n]:`` prompts); None when nothing parses."""
    attempts = [python]
    lines = python.split("\n")
    first = next((line for line in lines if line.strip()), "")
    indent = first[:len(first) - len(first.lstrip())]
    if indent:
        attempts.append("\n".join(line[len(indent):] if line.startswith(indent) else line
                                  for line in lines))
    for prompt, more in ((">>> ", "... "), ("In [", "...: ")):
        if first.lstrip().startswith(prompt):
            kept: list[str] = []
            for line in lines:
                text = line.lstrip()
                if text.startswith(prompt):
                    text = text[len(prompt):]
                    if prompt == "In [":
                        text = text.partition("]:")[2][1:]
                elif text.startswith(more):
                    text = text[len(more):]
                kept.append(text)
            attempts.append("\n".join(kept))
    for attempt in attempts:
        tree = _parsed(attempt)
        if tree is not None:
            return tree
    return None


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):  # RecursionError: nested past the parser
        return None


def _words(source: str) -> list[str]:
    """For a cell that is not Python: the flagged names it contains, as words."""
    found: list[str] = []
    for word in dict.fromkeys(WORD.findall(source)):
        if any(w in word for w in AGENT_WORDS):
            found.append(f"names the grader's agent ({word})")
        elif word in DYNAMIC_NAMES or word in DYNAMIC_MODULES or word in DYNAMIC_ATTRIBUTES \
                or (_dunder(word) and word not in PLAIN_DUNDERS):
            found.append(f"names {word}")
    if any(w in source for w in AGENT_WORDS) and not any("agent" in f for f in found):
        found.append("names the grader's agent")
    return found


def scan(notebook: dict[str, Any],
         label: Callable[[dict[str, Any], int], str] | None = None) -> list[str]:
    """Flags, one line each, for the code cells of ``notebook`` (a cleaned notebook dict), each
    naming its cell as ``label(notebook, number)`` says (JupyterLab shows no cell numbers:
    :func:`autograder.engine.notebook.cell_label` names a cell by what it defines or checks).
    MemoryError when a cell is too large to parse within the memory this process has."""
    flags: list[str] = []
    modules = {name: name for name in ("builtins", "np", "numpy", "sys", "json", "warnings")}
    modules["np"] = "numpy"
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        where = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        named = label(notebook, number) if label else f"cell {number}"
        named += f" ('{where}')" if where and where not in named else ""
        finder = _Finder(modules)
        # What parses as Python, IPython runs as it is; the rest goes through its escapes. A
        # cell too large to parse raises MemoryError: the reader refuses the notebook.
        tree = _parsed(source)
        if tree is None:
            python, notes = python_of(source)
            finder.found += notes
            tree = _readable(python)
        if tree is None:  # IPython could not run it either: only its words are read
            finder.found += _words(source)
        else:
            try:
                finder.visit(tree)
            except RecursionError:
                finder.found.append("is nested too deeply to be read")
        for finding in dict.fromkeys(finder.found):  # once each, in order
            flags.append(f"{named} {finding}")
    return flags[:50]
