"""A learner's kernel: start it confined, run cells with timeouts, call functions through the wire.

:class:`KernelSession` is what the grading uses of a kernel, built of three parts, one job each:

- :mod:`autograder.engine.kernel_start` starts the kernel inside the sandbox, restarts and stops
  it, and reads its channels through the relay, each read with a deadline
  (:class:`~autograder.engine.kernel_start.ConfinedKernel`);
- :mod:`autograder.engine.kernel_exec` runs code in it with a timeout, interrupting it (or
  killing it) at the deadline, and answers the questions of the course's stand-ins meanwhile
  (:class:`~autograder.engine.kernel_exec.RunningKernel`);
- :mod:`autograder.engine.kernel_outputs` keeps what a cell outputs within the cell's caps, and
  reads a call's one reply from what it outputs.

Here a cell's run becomes a :class:`CellResult`, and a call its reply or a :class:`CallFailed`.
Every way a kernel can misbehave (a cell that never returns, a crash, an exit, a flood of output,
replies that are not replies) ends in a :class:`CellResult` or :class:`CallFailed` with a sentence
for the learner, never in an exception that stops the grading of the class.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import secrets
from typing import Any, Callable

from . import agent, wire
from .kernel_exec import IDLE_GRACE, MAX_ANSWERED_CHARS, MAX_QUESTIONS, RunningKernel
from .kernel_outputs import (MAX_CELL_FIGURE_CHARS, MAX_CELL_OUTPUTS, MAX_FIGURE_CHARS,
                             MAX_NOTEBOOK_OUTPUT_CHARS, MAX_OUTPUT_CHARS, CallReply, CellOutputs,
                             Output, is_figure)
from .kernel_start import (ANSWER_SEND_SECONDS, DRAIN_SECONDS, FONT_LIST, MAX_MESSAGE_BYTES,
                           RECEIVE_QUEUE, CallFailed, Message, home_seeds, matplotlib_font_list)

__all__ = ["KernelSession", "CellResult", "CallFailed", "Answers", "Output", "Message",
           "is_figure", "home_seeds", "matplotlib_font_list", "FONT_LIST", "MAX_OUTPUT_CHARS",
           "MAX_FIGURE_CHARS", "MAX_CELL_FIGURE_CHARS", "MAX_CELL_OUTPUTS",
           "MAX_NOTEBOOK_OUTPUT_CHARS", "MAX_MESSAGE_BYTES", "RECEIVE_QUEUE", "IDLE_GRACE",
           "MAX_QUESTIONS", "MAX_ANSWERED_CHARS", "ANSWER_SEND_SECONDS", "DRAIN_SECONDS"]


@dataclasses.dataclass
class CellResult:
    outputs: list[Output]
    error: str = ""          # one line for the learner, empty when the cell ran cleanly
    timed_out: bool = False
    died: bool = False


#: ``answers(prompt, allowed, deadline)``: the answer to a stand-in's question (see
#: :meth:`KernelSession.call`)
Answers = Callable[[str, dict[str, Any], float], str]


class KernelSession(RunningKernel):
    """One learner kernel, started confined (``mode``: see
    :func:`~autograder.sandbox.confinement.resolve_mode`), with its own runtime folder on the host:
    :class:`~autograder.engine.kernel_start.ConfinedKernel` says what it is started with
    (``private``, ``visible``, ``seed_home``, ``figures``). A context manager: started on entry,
    shut down on exit."""

    def __enter__(self) -> KernelSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ------------------------------------------------------------ running cells
    def execute(self, code: str, timeout: float) -> CellResult:
        """Run a cell; collect its outputs within the cell's caps (text, figures, and
        :data:`MAX_CELL_OUTPUTS` outputs: consecutive text of one stream is one output, as
        JupyterLab shows it: :class:`~autograder.engine.kernel_outputs.CellOutputs`); never raise
        for what the code does. The notebook's own budget (:class:`figures.Budget`) is the
        caller's to apply to what it keeps."""
        kept = CellOutputs()
        error, timed_out, died = self._run(code, timeout, kept.keep)
        outputs = kept.kept()
        if timed_out:
            return CellResult(outputs, f"timed out after {timeout:g} s", timed_out=True, died=died)
        if died:
            return CellResult(outputs, self.exhausted() or "the kernel died (crashed, exited, "
                              "or ran out of memory or CPU time)", died=True)
        return CellResult(outputs, error)

    def install_agent(self, timeout: float = 30) -> None:
        if self.alive():
            self.execute(agent.bootstrap(), timeout)

    # ------------------------------------------------------------ calling functions
    def call(self, name: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any],
             timeout: float, answers: Answers | None = None) -> wire.Reply:
        """One call of the learner's ``name``; return the reply read by :func:`wire.read_reply`.

        Exactly one reply is accepted: the first output that carries this call's nonce and reads
        as a reply (:class:`~autograder.engine.kernel_outputs.CallReply`). Every other output of
        the call is counted against the notebook's output cap and dropped.

        ``answers`` answers the questions of the course's stand-ins during the call
        (``answers(prompt, allowed, deadline)``, where ``allowed`` maps the canonical text of each
        function marker among this call's arguments, as the suite wrote them, to that marker:
        :mod:`autograder.engine.oracle`).
        """
        nonce = secrets.token_hex(16)
        text = wire.request(name, args, kwargs, nonce)
        answer = None
        if answers is not None:
            given = json.loads(text)
            allowed = {wire.canonical(marker): marker for marker in
                       wire.function_markers([given["args"], given["kwargs"]])}
            answer = functools.partial(_with_allowed, answers, allowed)
        reply = CallReply(nonce)
        # The request travels in the message's metadata: the cell stays a few characters long,
        # where IPython would tokenize arguments of megabytes (a tenth of a second per MiB).
        error, timed_out, died = self._run("__autograder_call__()", timeout, reply.take,
                                           {agent.REQUEST_KEY: text}, answer)
        if reply.reply is not None:
            return reply.reply
        if timed_out:
            raise CallFailed(f"did not return within {timeout:g} s", "timeout")
        if self.exhausted():
            raise CallFailed(f"was not called: {self.exhausted()}", "flood")
        if died:
            raise CallFailed("crashed the kernel (it exited, or ran out of memory or CPU time)",
                             "crashed")
        if reply.flooded:
            raise CallFailed("printed or displayed more output than the grader accepts", "flood")
        problems = reply.problems
        raise CallFailed("gave no reply the grader could read" +
                         (f" ({problems[0]})" if problems else f" ({error})" if error else ""))


def _with_allowed(answers: Answers, allowed: dict[str, Any], prompt: str, deadline: float) -> str:
    return answers(prompt, allowed, deadline)
