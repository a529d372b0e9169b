"""Floor 4, tools for maintainers and instructors: the benchmark (``make bench``), the demo
(``make demo``) and its report, notebooks as plain text.

May import: ``autograder.course``, ``autograder.engine`` and ``autograder.sandbox``; nothing of
``__main__``.
"""
