"""Starting a learner's kernel (autograder/engine/kernel_start.py): its home, seeded with what the
grader built once.
"""
import json

import pytest

from autograder.engine import kernel
from autograder.engine.kernel import KernelSession
from autograder.sandbox import confinement


def test_a_kernel_starts_with_matplotlibs_font_list_and_never_rebuilds_it():
    """Every kernel's empty home gets the font list the grader built once, so matplotlib's first
    import does not rebuild it; the folder stays writable, the list read-only."""
    if not confinement.available():
        pytest.skip("bubblewrap is not installed")
    fonts = kernel.matplotlib_font_list
    fonts.get()
    fonts.thread.join(120)
    name, text = fonts.get()
    assert name.startswith("fontlist-") and json.loads(text)["ttflist"]
    with KernelSession(mode=confinement.BUBBLEWRAP) as session:
        result = session.execute(
            "import os, json, matplotlib, matplotlib.font_manager as fm\n"
            "folder = matplotlib.get_cachedir()\n"
            "path = os.path.join(folder, os.listdir(folder)[0])\n"
            "print(json.dumps([sorted(os.listdir(folder)), os.access(folder, os.W_OK),"
            " os.access(path, os.W_OK), len(fm.fontManager.ttflist)]))", 60)
    text_out = "".join(o.get("text", "") for o in result.outputs)
    listed, folder_writable, list_writable, fonts = json.loads(text_out.strip().splitlines()[-1])
    assert listed == [name] and folder_writable and not list_writable and fonts > 0
    assert "Matplotlib" not in text_out and "cache" not in text_out.lower()
