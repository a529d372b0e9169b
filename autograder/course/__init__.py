"""Floor 3, a course around the engine: nbgrader's configuration, collect, autograde with its
recording in the gradebook and export; Gradescope's autograder zip; the privacy check.

May import: ``autograder.engine`` and ``autograder.sandbox``; nothing of ``tools`` or
``__main__``.
"""
