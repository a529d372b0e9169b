"""Learner-facing helpers: plots, toy data and visible checks for attention-course."""
