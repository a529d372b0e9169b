"""Reaching for the agent is flagged (autograder/engine/flags.py), however the reach is written:
through globals(), getattr, the garbage collector, a frame, or one of IPython's escapes.
"""
import pytest

from autograder.engine import flags, grade
from autograder.engine import notebook
from support import COURSE, write_notebook
from support.attacks import (ASSIGNMENT, SOLUTION_FILE, expected_score, in_place_with,  # noqa: F401
                             needs_bubblewrap, options)
from support.bounds import code

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ the kernel's word

AGENT_REACHES = {
    "globals() and a name built at run time":
        "g = globals()\nagent = g['__atten' + 'tion_course_agent__']\nagent._array_equal = _same\n",
    "getattr on __main__": "import __main__\nagent = getattr(__main__, '__atten' + "
                           "'tion_course_agent__')\nagent._array_equal = _same\n",
    "vars() of the namespace": "agent = [v for k, v in vars().items() if k.endswith('agent__')][0]"
                               "\nagent._array_equal = _same\n",
    "the exit object's shell": "agent = exit._ip.user_ns['__atten' + 'tion_course_agent__']\n"
                               "agent._array_equal = _same\n",
    "sys.modules and __dict__": "import sys\nagent = sys.modules['__main__'].__dict__['__atten' + "
                                "'tion_course_agent__']\nagent._array_equal = _same\n",
    "the garbage collector": "import gc\nagent = [m for m in gc.get_objects() if "
                             "getattr(m, '__name__', '') == 'autograder' + '_agent'][0]\n"
                             "agent._array_equal = _same\n",
    "a frame's globals": "import inspect\nagent = inspect.currentframe().f_globals['__atten' + "
                         "'tion_course_agent__']\nagent._array_equal = _same\n",
    "numpy's shared function, through an alias": "f = np.array_equal\nf.__code__ = _same.__code__\n",
    "eval of a built name": "agent = eval('__atten' + 'tion_course_agent__')\n"
                            "agent._array_equal = _same\n",
}
SAME = "def _same(*args, **kwargs):\n    return True\n"
# IPython's escapes run code too: what they run is flagged like any cell.
ESCAPES = {
    "a reach inside %time": "%time agent = globals()['__atten' + 'tion_course_agent__']",
    "a reach inside %%timeit": "%%timeit -n 1\nagent = vars()['__atten' + 'tion_course_agent__']",
    "a reach after a prompt": ">>> agent = globals()['__atten' + 'tion_course_agent__']",
    "a reach in an indented cell": "    agent = globals()['__atten' + 'tion_course_agent__']",
    "another magic": "%run -i elsewhere.py",
    "another cell magic": "%%python3\nprint(1)",
    "an autocall": "/getattr np name",
    "an assigned magic": "out = %who_ls",
}


@pytest.mark.parametrize("reach", list(AGENT_REACHES))
def test_every_reach_for_the_agent_is_flagged(reach):
    attacked = in_place_with(SAME + AGENT_REACHES[reach])
    assert flags.scan(notebook.check_structure(attacked)), reach


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_ipython_escapes_are_read_as_what_they_run(escape):
    notebook = {"cells": [code(ESCAPES[escape])]}
    assert flags.scan(notebook), escape


def test_the_escapes_course_work_uses_are_not_flagged():
    sources = ["%matplotlib inline\nimport numpy as np", "%timeit -n 3 -r 1 np.exp(1.0)",
               "%time y = np.ones(3)", "!pip install numpy", "np.exp?",
               'def f():\n    """\n    % of rows\n    !important\n    """\n    return 1']
    assert flags.scan({"cells": [code(source) for source in sources]}) == []


@pytest.mark.parametrize("reach", ["globals() and a name built at run time",
                                   "numpy's shared function, through an alias",
                                   "the exit object's shell"])
def test_a_hidden_in_place_change_ends_at_the_honest_score_or_flagged(reach, tmp_path):
    """The issue's sixth attack, graded: an in-place change hidden by patching the agent reached
    without naming it. It either loses the point it should, or is flagged."""
    path = write_notebook(tmp_path / "reach" / ASSIGNMENT / SOLUTION_FILE.name,
                          in_place_with(SAME + AGENT_REACHES[reach]))
    result = grade.grade_safely(path, COURSE.assignment(ASSIGNMENT), options())
    honest = expected_score("patch numpy to hide an in-place change")
    assert result.score == honest or result.flags, (result.score, result.flags)
    print(f"\n[bounded] {reach}: score {result.score:g} (honest {honest:g}), flags {result.flags}")
