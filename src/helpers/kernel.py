"""The course's Python kernel: IPython's own, reporting its language without the interpreter's
version.

JupyterLab writes the ``language_info`` a kernel reports into a notebook's metadata as soon as the
kernel starts, and marks the notebook modified when that differs from what the file holds.
IPython's kernel reports the interpreter's full version ("3.11.2", "3.12.7", ...), which differs
from one machine to the next, so no notebook file could match it everywhere: every released
notebook would open as modified, and closing it unchanged would ask to save. The course's
notebooks record :data:`LANGUAGE_INFO`, and the kernel that ``make lab`` and a JupyterHub's
learners run (``learner/jupyter/kernels/python3``) reports exactly that, so they open as they are.
Nothing else changes: it is IPython's kernel, started by ``ipykernel_launcher``.
"""
from ipykernel.ipkernel import IPythonKernel

LANGUAGE_INFO = {key: value for key, value in IPythonKernel.language_info.items()
                 if key != "version"}


class Kernel(IPythonKernel):
    """IPython's kernel with :data:`LANGUAGE_INFO` as its language."""

    language_info = LANGUAGE_INFO
