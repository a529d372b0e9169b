"""The class report (autograder/tools/report.py)."""
from support import COURSE


def test_report_labels_are_whole_test_names():
    from autograder.engine import grade, reference
    from autograder.tools.report import pass_rate_labels
    keys = [(a.name, t.name) for a in COURSE.assignments()
            for t in grade.grade_local(a, reference.namespace(a)).tests]
    labels = pass_rate_labels(keys)
    assert len(set(labels)) == len(set(keys))
    assert all(label.replace("\n", " ").endswith(name) for label, (_, name) in zip(labels, keys))
