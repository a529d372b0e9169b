"""Learner-facing helpers: plots, toy data and visible checks for attention-course.

Imported in a notebook's kernel, it makes every figure display with its text alternative
(:func:`helpers.plots.show_figures_in_words`).
"""
from . import plots as _plots

_plots.show_figures_in_words()
