"""The attention-course grading engine and its hidden suites."""
