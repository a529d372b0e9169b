"""The grader's bounds per submission, and the hostile notebooks that hold every reader of a
learner's file to them: read by the engine's reader, the grading process and the course's commands
alike (tests/engine/test_notebook.py, tests/engine/test_grade_bounds.py,
tests/end_to_end/test_hostile_files.py)."""
import json

from support import figure_flood, metadata_bomb
from support.attacks import ASSIGNMENT

# The bounds "What the grader guarantees" states, per submission.
GRADER_PEAK_MIB = 512   # the grading process's own memory (the kernel and the reader apart)


# ------------------------------------------------------------------ notebooks no reader may choke on

def raw_notebook(cells, **extra):
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
                       **extra}, ensure_ascii=False).encode()


def code(source):
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [],
            "execution_count": None}


READER_BOMBS = {
    # the issue: blank lines made the magic-line pattern quadratic (20k lines took 3.4 s)
    "200k blank lines then a magic": raw_notebook([code("\n" * 200_000 + "%time x = 1\n")]),
    "a million blank lines in a cell": raw_notebook([code("\n" * 1_000_000 + "x = 1\n")]),
    "200k lines of magics": raw_notebook([code("%who\n" * 200_000)]),
    "200k help lines": raw_notebook([code("x?\n" * 200_000)]),
    "a 4 MiB cell of [a,a,...]": raw_notebook([code("[" + "a," * 2_000_000 + "a]")]),
    "a 16 MiB cell of [a,a,...]": raw_notebook([code("[" + "a," * 8_000_000 + "a]")]),
    "a cell nested 100k deep": raw_notebook([code("(" * 100_000 + ")" * 100_000)]),
    "JSON nested 1M deep": b"[" * 1_000_000 + b"]" * 1_000_000,
    "18 MiB of empty objects": raw_notebook([code("x = 1")], extra=[{}] * 4_500_000),
    "100k cells": raw_notebook([code("")] * 100_000),
    "an 18 MiB markdown cell": raw_notebook([{"cell_type": "markdown", "metadata": {},
                                              "source": "é" * (9 << 20)}]),
    # one 4-byte character makes Python hold the whole string at 4 bytes a character
    "an 18 MiB string and an emoji in a code cell": raw_notebook([code(
        'x = "' + "a" * (18 << 20) + '\U0001F600"\n')]),
}
# the fourth round's, made when a test needs them: a metadata of 6.3 million empty lists (19 MB);
# 300,000 figures in the demonstrations (20 MB, kept within a cell's and the notebook's allowances)
MADE_BOMBS = {"6.3 million empty lists of metadata": lambda: metadata_bomb(ASSIGNMENT),
              "300,000 figures in the demonstrations": lambda: figure_flood(ASSIGNMENT)}


def bomb_bytes(name):
    return MADE_BOMBS[name]() if name in MADE_BOMBS else READER_BOMBS[name]
