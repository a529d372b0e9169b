"""`make demo`: the instructor's loop on a sample class whose every grade is known. The whole demo,
from a fresh clone in an ordinary (755) folder, installed from a wheelhouse with no index
reachable, as the README runs both, is tests/end_to_end/test_wheelhouse.py; it checks every
artefact the demo writes (tests/support/demo_output.py). Here: how the demo stops, and its parts."""
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from autograder.tools import demo
from support import COURSE


@pytest.fixture
def ordinary_folder():
    """A folder other accounts may pass through (755, under /var/tmp), as a home, /srv or /opt
    is: pytest's own temporary folders lie under one only this account can enter, where any
    exchange is private whatever its own mode."""
    folder = Path(tempfile.mkdtemp(prefix="attention-demo-", dir="/var/tmp"))
    folder.chmod(0o755)
    for above in [folder, *folder.parents]:
        assert os.stat(above).st_mode & stat.S_IXOTH, f"{above} shuts others out"
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_when_collect_refuses_the_demo_stops_saying_how_many_for_whom_and_why(
        ordinary_folder, monkeypatch):
    """The demo's state and exchange opened to others (as nbgrader left them before): collect
    refuses every sample learner, and the demo stops with that sentence, not with a traceback
    from a later step."""
    def opened(path):
        path.mkdir(mode=0o755)
        path.chmod(0o755)
        (path / "exchange").mkdir()
        (path / "exchange").chmod(0o777)
        return path
    monkeypatch.setattr(demo, "private_folder", opened)
    with pytest.raises(demo.DemoStopped) as stopped:
        demo.run(output=ordinary_folder / "demo", size=2, quiet=True)
    message = str(stopped.value)
    first = demo.assignments()[0]
    assert f"collect refused 2 submission(s) of {first}, for 2 learner(s) " \
           f"(learner01, learner02)" in message, message
    assert "learner01 is not an account on this machine, and other accounts can write" in message


def test_the_table_says_1_point_and_2_points():
    assert demo.points(1) == "1 point" and demo.points(2) == "2 points"
    assert demo.points(0.5) == "0.5 points"
    learners = {"learner01": {"a": demo.Plan("blank")}}
    table = demo.grade_table(learners, {"learner01": {"a": 0}}, {"learner01": {"a": 0}}, ["a"],
                             {"a": 3}, {"a": 1})
    assert "a 1 point." in table.splitlines()[0]


def test_the_sample_learners_run_their_notebooks_with_the_courses_kernel():
    """As in `make lab`: the kernel spec the demo's runs start is the course's own."""
    from jupyter_client.kernelspec import KernelSpecManager
    before = dict(os.environ)
    with demo.lab_environment(COURSE):
        spec = KernelSpecManager().get_kernel_spec("python3")
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "--IPKernelApp.kernel_class=helpers.kernel.Kernel" in spec.argv
    assert dict(os.environ) == before
