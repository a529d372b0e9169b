"""Grading many notebooks (autograder/engine/batch.py): what the workers share."""
import json
import subprocess
import sys
import textwrap

from support import REPO


def test_workers_inherit_each_assignments_version_instead_of_computing_it_again():
    """Before the pool's workers are forked, every assignment's version is computed once in the
    command's process: a forked worker then reads no file's imports and no distribution's
    metadata to compute it again, and finds the same version. An assignment whose version cannot
    be computed is left to its worker, and does not stop the others."""
    code = textwrap.dedent("""
        import json, os, sys, types
        from autograder.engine import batch, cache, closure
        from autograder.engine.assignment import Course
        from autograder.engine.options import Options
        course = Course.from_root(sys.argv[1])
        first, second = course.assignments()[:2]
        broken = types.SimpleNamespace(name="broken")  # version() fails on it
        jobs = [(i, ("x.ipynb", a, Options(), None, None))
                for i, a in enumerate([first, second, broken, first])]
        batch._shared_before_forking(jobs)
        read, write = os.pipe()
        if os.fork() == 0:  # as a pool's worker is made
            def refused(*args, **kwargs):
                raise AssertionError("computed again in the worker")
            closure.ast.parse = refused
            closure.importlib.metadata.version = refused
            closure.importlib.metadata.packages_distributions = refused
            try:
                found = [cache.version(first), cache.version(second)]
                os.write(write, json.dumps(found).encode())
            finally:
                os._exit(0)
        os.close(write)
        found = json.loads(os.read(read, 4096) or b"null")
        os.wait()
        expected = [cache.version(first), cache.version(second)]
        print(json.dumps({"expected": expected, "found": found}))
    """)
    done = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["found"] == seen["expected"], done.stderr[-2000:]
