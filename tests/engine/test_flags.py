"""Flags for the instructor (autograder/engine/flags.py): what they name, and in what words."""
import json
import re
import time

import pytest

from autograder.engine import catalogue, flags, notebook
from support import ASSIGNMENTS, COURSE


@pytest.mark.slow
def test_no_pattern_of_the_flagger_is_superlinear():
    """Doubling a pathological cell at most about doubles the time to flag it."""
    def cost(lines):
        cells = {"cells": [{"cell_type": "code", "metadata": {}, "source":
                               "\n" * lines + "% x\n" + " \n" * lines + "x?\n" * lines}]}
        started = time.process_time()
        flags.scan(cells)
        return time.process_time() - started
    cost(1000)
    small, large = cost(50_000), cost(200_000)
    assert large < 8 * small + 0.5, (small, large)


def test_flags_name_a_cell_as_a_reader_finds_it_never_by_number():
    """JupyterLab shows no cell numbers: a flag names the cell by the function it defines, the
    heading above it or its first line (what the grader's reader passes, notebook.cell_label)."""
    from autograder.engine import notebook as notebooks
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Setup"},
             {"cell_type": "code", "metadata": {}, "source": "import numpy as np"},
             {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "row_normalize"}},
              "source": "def row_normalize(x):\n    return x\nnp.allclose = lambda *a: True"},
             {"cell_type": "code", "metadata": {}, "source": "np.testing.x = 1"}]
    found = flags.scan({"cells": cells}, notebooks.cell_label)
    assert found[0].startswith("the cell that defines `row_normalize` assigns np.allclose")
    assert found[-1].startswith("a cell under 'Setup' assigns np.testing.x"), found
    assert not [line for line in found if re.search(r"\bcell \d", line)], found
    alone = flags.scan({"cells": [cells[3]]}, notebooks.cell_label)
    assert alone == ["the cell beginning 'np.testing.x = 1' assigns np.testing.x"], alone


def test_flags_name_code_that_patches_modules_or_the_agent():
    notebook = {"cells": [
        {"cell_type": "code", "source": "import numpy as np\nimport json as j\n%matplotlib inline",
         "metadata": {}},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "softmax"}}, "source":
         "np.allclose = lambda *a: True\nj.dumps = None\nsetattr(np.testing, 'x', 1)\n"
         "import sys\nsys.modules['pytest'] = 1\n__autograder_agent__.x = 1\n"
         "del np.linalg.norm\nvars(np)['a'] = 1\nnp.__dict__['b'] = 2\n"},
        {"cell_type": "code", "metadata": {}, "source":
         "def softmax(z, axis=-1):\n    e = np.exp(z - z.max(axis, keepdims=True))\n"
         "    out = e / e.sum(axis, keepdims=True)\n    out.flags.writeable = True\n    return out"},
        {"cell_type": "code", "metadata": {}, "source": "def broken(:\n"},
    ]}
    found = flags.scan(notebook)
    assert all(line.startswith("cell 2 ('softmax') ") for line in found)
    for words in ("assigns np.allclose", "assigns j.dumps", "calls setattr on np.testing",
                  "sys.modules", "__autograder_agent__", "deletes np.linalg.norm",
                  "vars(np)", "np.__dict__"):
        assert any(words in line for line in found), words


def test_ordinary_answers_are_not_flagged():
    """No solution, and no mutant or alternative of the catalogue (wrong and right answers
    written as learners write them), is flagged."""
    for assignment in ASSIGNMENTS:
        solution = json.loads(COURSE.assignment(assignment).solution.read_text())
        for cell in solution["cells"]:
            cell["source"] = "".join(cell["source"])
        assert flags.scan(solution) == [], assignment
        for entry in catalogue.entries(COURSE.assignment(assignment)):
            submitted = notebook.check_structure(catalogue.notebook_with(entry))
            assert flags.scan(submitted) == [], entry.key
