"""Flags for the instructor (autograder/engine/flags.py): what they name, and in what words."""
import time

import pytest

from autograder.engine import flags


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
