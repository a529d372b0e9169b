"""Floor 1, the sandbox: how a learner's kernel is confined (an allowlist of read-only folders,
another identity, no network, one process, resource limits) and how nothing a grading run starts
outlives it.

May import: the standard library only; nothing else of ``autograder``, nothing of the course.
"""
