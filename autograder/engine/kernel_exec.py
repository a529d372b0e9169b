"""Code run in a learner's kernel, with a deadline, and the questions its stand-ins ask meanwhile.

:class:`RunningKernel` sends one execute request at a time and hands every output of it, as it
arrives, to whoever reads them (:mod:`autograder.engine.kernel_outputs`). The request is over
when the kernel is idle again, or shortly after its reply when iopub's idle message was lost; it
is interrupted at its deadline, and the kernel killed if it does not stop. Nothing here waits
past the time it was given, whatever the kernel sends (:mod:`autograder.engine.kernel_start`
bounds every read).

While a call of the hidden suite runs, the course's stand-ins in the kernel may ask the grader
questions on the stdin channel (:mod:`autograder.engine.oracle`): only the questions of the
running request are answered, and a kernel that asks too many, is sent too much, or does not
take its answers is not playing by the stand-ins' protocol; the request ends as if it had died.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import zmq

from .kernel_outputs import Output, output_from
from .kernel_start import DRAIN_SECONDS, ConfinedKernel, parent_id

IDLE_GRACE = 1.0  # seconds to wait for iopub's idle message after the shell's execute_reply
MAX_QUESTIONS = 20_000         # stand-ins' questions answered in one execution
MAX_ANSWERED_CHARS = 256 << 20  # characters of answers sent to the kernel in one execution


class RunningKernel(ConfinedKernel):
    """A :class:`~autograder.engine.kernel_start.ConfinedKernel` that runs code (:meth:`_run`)."""

    def _run(self, code: str, timeout: float, on_output: Callable[[Output], None],
             metadata: dict[str, Any] | None = None,
             answer: Callable[[str, float], str] | None = None) -> tuple[str, bool, bool]:
        """Execute ``code``; hand every output to ``on_output``; return (error, timed_out, died).

        The cell is over when iopub says the kernel is idle again, or shortly after the shell's
        execute_reply when iopub's idle message was lost (a subscriber whose connection was
        closed for breaking a limit misses what is published before it reconnects). "Shortly"
        is :data:`IDLE_GRACE` after the reply or after the last output of an earlier request
        that iopub delivered since: a kernel still sending what an earlier cell displayed (a
        loaded machine, a cell that drew hundreds of figures) sends this request's outputs
        after it. Nothing here waits past ``timeout``, but the interrupt that follows it
        (:meth:`_interrupt`), and only a request the shell has not answered is interrupted.

        With ``answer``, the kernel may ask questions on its stdin channel while the code runs
        (the course's functions in a second chance: :mod:`autograder.engine.oracle`): each
        ``input_request`` of this execution gets ``answer(prompt, deadline)`` as its reply.
        Without it, the kernel is told there is no stdin, and nothing it sends there is read."""
        if not self.alive():
            return "the kernel is not running", False, True
        deadline = time.monotonic() + timeout
        self._drain("iopub", deadline)
        self._drain("shell", deadline)
        self._drain("stdin", deadline)
        request = self.client.session.msg("execute_request", {
            "code": code, "silent": False, "store_history": False, "user_expressions": {},
            "allow_stdin": answer is not None, "stop_on_error": False}, metadata=metadata or {})
        self.client.shell_channel.send(request)
        msg_id = request["header"]["msg_id"]
        error, replied = "", None
        asked = _Asked()
        while True:
            now = time.monotonic()
            if deadline - now <= 0:
                if replied is not None:  # done, by the shell's word; iopub was still busy
                    return error, False, False
                return error, True, self._interrupt(msg_id)
            if replied is None and self._replied(msg_id, deadline):
                replied = now
            if replied is not None and now - replied > IDLE_GRACE:
                return error, False, False
            self._iopub_dropped(deadline)
            try:
                if answer is not None and self._answered(msg_id, answer, deadline, asked):
                    continue
            except _Unanswerable as problem:  # the kernel broke the stand-ins' protocol
                self.shutdown()
                return str(problem), False, True
            # (with ``answer``, _answered has just waited for iopub too)
            msg = self._next("iopub", 0 if answer else min(0.1, deadline - time.monotonic()))
            if msg is None:
                if not self.alive():
                    return error, False, True
                continue
            try:  # the kernel can send anything: read only well-formed messages
                if parent_id(msg) != msg_id:
                    if replied is not None:  # an earlier request's outputs, still being read:
                        replied = time.monotonic()  # this one's are behind them
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "status" and content.get("execution_state") == "idle":
                    return error, False, False
                if kind not in ("stream", "display_data", "execute_result", "error",
                                "update_display_data"):
                    continue
                output = output_from(kind, content)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue
            if kind == "error":
                error = f"{output['ename']}: {output['evalue']}"[:500]
            on_output(output)

    def _answered(self, msg_id: str, answer: Callable[[str, float], str], deadline: float,
                  asked: _Asked | None = None) -> bool:
        """Wait, at most a tenth of a second, for a question of execution ``msg_id`` on the
        stdin channel or an output on iopub; answer the question if there is one (True).

        A stand-in asks one question and waits for its answer, so a kernel whose answers are not
        taken (:data:`~autograder.engine.kernel_start.ANSWER_SEND_SECONDS`), or that asks more
        than :data:`MAX_QUESTIONS` or is sent more than :data:`MAX_ANSWERED_CHARS` in one
        execution, is not playing by it: :class:`_Unanswerable`, and the execution ends as if the
        kernel had died."""
        asked = asked or _Asked()
        poller = zmq.Poller()
        poller.register(self.client.stdin_channel.socket, zmq.POLLIN)
        poller.register(self.iopub.socket, zmq.POLLIN)
        ready = dict(poller.poll(max(0, int(1000 * min(0.1, deadline - time.monotonic())))))
        if self.client.stdin_channel.socket not in ready:
            return False
        message = self._next("stdin", 0)
        try:
            if message is None or message["msg_type"] != "input_request" or \
                    parent_id(message) != msg_id:
                return True  # read and dropped: only this execution's questions are answered
            prompt = message["content"]["prompt"]
        except (KeyError, TypeError):
            return True
        asked.questions += 1
        if asked.questions > MAX_QUESTIONS:
            raise _Unanswerable(f"the kernel asked the grader more than {MAX_QUESTIONS} questions "
                                f"in one call")
        reply = answer(prompt if isinstance(prompt, str) else "", deadline)
        asked.characters += len(reply)
        if asked.characters > MAX_ANSWERED_CHARS:
            raise _Unanswerable(f"the kernel asked for more than {MAX_ANSWERED_CHARS >> 20} MiB "
                                f"of answers in one call")
        try:
            self.client.input(reply)
        except zmq.ZMQError:  # not taken within ANSWER_SEND_SECONDS: it asks and does not read
            raise _Unanswerable("the kernel asked the grader questions and did not take the "
                                "answers") from None
        return True

    def _replied(self, msg_id: str, deadline: float) -> bool:
        """Whether the shell holds the reply to ``msg_id``, reading it for at most
        :data:`DRAIN_SECONDS` (and never past ``deadline``)."""
        deadline = min(deadline, time.monotonic() + DRAIN_SECONDS)
        while time.monotonic() < deadline:
            msg = self._next("shell", 0)
            if msg is None:
                return False
            if parent_id(msg) == msg_id:
                return True
        return False

    def _interrupt(self, msg_id: str) -> bool:
        """Interrupt the running cell; return True when the kernel had to be killed."""
        try:
            message = self.client.session.msg("interrupt_request", content={})
            self.client.control_channel.send(message)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                msg = self._next("iopub", min(0.25, deadline - time.monotonic()))
                if (msg and parent_id(msg) == msg_id and msg.get("msg_type") == "status"
                        and (msg.get("content") or {}).get("execution_state") == "idle"):
                    return False
        except Exception:
            pass
        self.shutdown()  # ignored the interrupt: kill it; the caller may restart
        return True


class _Asked:
    """What the stand-ins of one execution asked, and were sent."""

    def __init__(self) -> None:
        self.questions = 0
        self.characters = 0


class _Unanswerable(Exception):
    """The kernel does not play by the stand-ins' protocol (see :meth:`RunningKernel._answered`)."""
