"""The course's Python kernel: IPython's own, reporting its language without the interpreter's
version.

JupyterLab writes the ``language_info`` a kernel reports into a notebook's metadata as soon as the
kernel starts, and marks the notebook modified when that differs from what the file holds.
IPython's kernel reports the interpreter's full version ("3.11.2", "3.12.7", ...), which differs
from one machine to the next, so no notebook file could match it everywhere: every released
notebook would open as modified, and closing it unchanged would ask to save. The course's
notebooks record :data:`LANGUAGE_INFO`, and the kernel that ``make lab`` and a JupyterHub's
learners run (``learner/jupyter/kernels/python3``, which docs/jupyterhub.md installs into the
learners' environment) reports exactly that, so they open as they are.

It also shows every matplotlib figure with its description as alt text
(:func:`helpers.plots.show_figures_in_words`) from the start, once its shell exists: this module
imports ``helpers`` before there is a shell, so that package's own import cannot do it here.
Otherwise it is IPython's kernel, started by ``ipykernel_launcher``.
"""
from ipykernel.ipkernel import IPythonKernel

from .plots import show_figures_in_words

LANGUAGE_INFO = {key: value for key, value in IPythonKernel.language_info.items()
                 if key != "version"}


class Kernel(IPythonKernel):
    """IPython's kernel with :data:`LANGUAGE_INFO` as its language, showing figures in words."""

    language_info = LANGUAGE_INFO

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        show_figures_in_words(self.shell)
