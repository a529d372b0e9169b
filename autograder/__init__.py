"""A grading engine for Jupyter courses: hidden pytest suites grade learners' notebooks, whose code
runs in a sandboxed kernel, from a trusted process; nbgrader and Gradescope integrations.

The package is built in floors; each imports only from the floors below it (tests/test_engine_design.py
keeps it so):

| floor | folder | what | may import |
|---|---|---|---|
| 1 | ``sandbox/`` | confining a learner's kernel: bubblewrap, another identity, limits; processes that die with their parent | the standard library |
| 2 | ``engine/`` | grading one notebook or many: the kernel and the wire to it, the hidden suite's runner, its kit and catalogue, results, the cache | ``sandbox`` |
| 3 | ``course/`` | a course around the engine: nbgrader (configuration, collect, autograde, recording, export), Gradescope, privacy | ``engine``, ``sandbox`` |
| 4 | ``tools/`` | this course's own tools (not in the engine's distribution, packaging/engine/): the benchmark, the demo, its report, notebooks as text | ``course``, ``engine``, ``sandbox`` |
| 5 | ``__main__`` | the command line | everything |

``kit`` is the suite kit's one import path (``from autograder.kit import ...``), over the engine.
``suites/`` is course content, not code of the engine: this course's hidden suites, found through
the course root like the solutions and releases (``engine.assignment.Course``), never next to the
engine's own files.
"""
