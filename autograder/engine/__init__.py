"""Floor 2, the engine: grade one notebook (``grade``) or many (``batch``) of an assignment.

A course reaches the engine only as an :class:`~autograder.engine.assignment.Assignment` (or the
:class:`~autograder.engine.assignment.Course` that yields them), built from a course root: no
module here knows where a course lives or what it is called.

May import: ``autograder.sandbox``, the standard library and third-party packages; nothing of
``course``, ``tools`` or ``__main__``, and nothing of any course (its learner packages, its suites).
"""
