"""A learner's kernel: start it confined, run cells with timeouts, call functions through the wire.

The kernel is an ordinary IPython kernel started inside the sandbox
(:mod:`autograder.sandbox.confinement`) by :mod:`autograder.sandbox.launcher`, which forbids it new
processes and serves its channels on listening sockets the grader made in its own runtime folder
and handed over as descriptors: the grader never connects to a path the kernel could create,
replace or link. What the kernel sends reaches the grader through :class:`relay.Relay`, which
closes a connection over :data:`relay.MAX_MESSAGE_BYTES` per message or the submission's total
before anything is buffered; each of the grader's sockets queues at most :data:`RECEIVE_QUEUE`
messages, and each message's JSON is counted before it is parsed (:func:`wire.loads`). Every loop
that reads from the kernel has a deadline within the time it was given.

How the kernel is confined is one :class:`~autograder.sandbox.confinement.Confinement` object
(the command that wraps it, its environment, the folder its sockets are named in): the session
asks it and never branches on the mode. It talks to the kernel through jupyter_client's public
API only; it keeps an iopub channel of its own (:meth:`KernelSession._connect_iopub`) so that a
publisher the relay had to drop can be connected to again.

Every way a kernel can misbehave (a cell that never returns, a crash, an exit, a flood of output,
replies that are not replies) ends in a :class:`CellResult` or :class:`CallFailed` with a sentence
for the learner, never in an exception that stops the grading of the class.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, cast

import zmq
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from zmq.utils.monitor import recv_monitor_message

from . import agent, figures, relay, wire
from ..sandbox import confinement, launcher, lifetime

MAX_OUTPUT_CHARS = 20_000       # of one cell's outputs but figures; the rest is dropped with a note
MAX_FIGURE_CHARS = figures.MAX_FIGURE_CHARS  # of one figure (an image output: see is_figure)
MAX_CELL_FIGURE_CHARS = figures.MAX_CELL_FIGURE_CHARS  # of one cell's figures together
MAX_NOTEBOOK_OUTPUT_CHARS = 8_000_000  # of all cells' outputs together, figures included
MAX_MESSAGE_BYTES = relay.MAX_MESSAGE_BYTES
RECEIVE_QUEUE = 2  # messages each of the grader's sockets holds before the kernel must wait
IDLE_GRACE = 1.0  # seconds to wait for iopub's idle message after the shell's execute_reply
DRAIN_SECONDS = 0.5  # the most spent dropping what an earlier request left unread

Output = dict[str, Any]
Message = dict[str, Any]

is_figure = figures.is_figure


@dataclasses.dataclass
class CellResult:
    outputs: list[Output]
    error: str = ""          # one line for the learner, empty when the cell ran cleanly
    timed_out: bool = False
    died: bool = False


FONT_LIST = ("import json, os, matplotlib, matplotlib.font_manager as fm; "
             "print(json.dumps([os.path.join(matplotlib.get_cachedir(), "
             "f'fontlist-v{fm.FontManager.__version__}.json')]))")


class _FontList:
    """matplotlib's font list, as the grading user's own matplotlib keeps it, read once per
    grading process by a helper process in the background.

    Every kernel starts with an empty home, where matplotlib would otherwise build this list on
    its first import (about 0.15 s of every submission). It names only font files every kernel
    sees anyway (matplotlib's own, /usr/share/fonts), at the same paths inside and outside.
    Kernels started before it is ready simply build their own, as they always did."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.value: tuple[str, str] | None = None

    def get(self) -> tuple[str, str] | None:
        """``(file name, text)`` if ready, else None (and the reading starts)."""
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._read, daemon=True)
                self.thread.start()
        return self.value

    def _read(self) -> None:
        try:
            done = subprocess.run([sys.executable, "-c", FONT_LIST], capture_output=True,
                                  text=True, timeout=120, env={**os.environ, "MPLBACKEND": "Agg"})
            [name] = json.loads(done.stdout.strip().splitlines()[-1])
            path = Path(name)
            text = path.read_text(encoding="utf-8")
            fonts = json.loads(text)
            files = [f["fname"] for key in ("ttflist", "afmlist") for f in fonts.get(key, [])]
            # Only a list every kernel can use as it is: matplotlib's own fonts (named relative
            # to its data folder) and the system's; no font of the grader's own home.
            if path.name.startswith("fontlist-") and files and all(
                    not os.path.isabs(f) or f.startswith("/usr/share/") for f in files):
                self.value = (path.name, text)
        except (OSError, ValueError, IndexError, TypeError, KeyError, AttributeError,
                subprocess.SubprocessError):
            pass


matplotlib_font_list = _FontList()


def home_seeds(folder: str | Path) -> list[tuple[str, str]]:
    """Write the files every kernel's home starts with into ``folder`` (a kernel's runtime
    folder on the host); return ``(host path, path under the home)`` pairs."""
    seeds = []
    fonts = matplotlib_font_list.get()
    if fonts is not None:
        name, text = fonts
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
        seeds.append((str(path), f".matplotlib/{name}"))
    return seeds


class CallFailed(Exception):
    """A call into the kernel produced no usable reply. ``kind`` says which way: "timeout",
    "crashed" (the kernel died), "flood" (too much output), "no-reply" or "start"."""

    def __init__(self, message: str, kind: str = "no-reply") -> None:
        super().__init__(message)
        self.kind = kind


class KernelSession:
    """One learner kernel, started confined (``mode``: see
    :func:`~autograder.sandbox.confinement.resolve_mode`), with its own runtime folder on the host.

    ``private`` are the course's folders to cover should they ever be visible, ``visible`` the
    packages its notebooks import; ``seed_home=False`` starts the kernel with an empty home (no
    matplotlib font list: ``make bench`` measures what the list saves); ``figures=False`` starts
    it drawing no figures (Agg instead of the inline backend)."""

    def __init__(self, mode: str = confinement.LIMITS, limits: confinement.Limits | None = None,
                 private: tuple[str, ...] = (), visible: tuple[str, ...] = (),
                 startup_timeout: float = 60, received_bytes: int = relay.MAX_TOTAL_BYTES,
                 seed_home: bool = True, figures: bool = True) -> None:
        self.limits = limits or confinement.Limits()
        self.confinement = confinement.confinement(mode, self.limits, private, visible, figures)
        self.startup_timeout = startup_timeout
        self.seed_home = seed_home
        self.process: subprocess.Popen[bytes] | None = None
        self.client: Any = None     # a BlockingKernelClient, once started
        self.iopub: Any = None      # its iopub channel, ours to reconnect
        self.context: zmq.Context[Any] | None = None
        self.cgroup: confinement.Cgroup | None = None
        self.runtime: Path | None = None
        self.seeds: list[tuple[str, str]] = []
        self.monitor: zmq.Socket[Any] | None = None
        self.relay: relay.Relay | None = None
        self.allowance = relay.Allowance(received_bytes)  # for all its kernels, restarts included
        self.restarts = 0
        self.output_budget = MAX_NOTEBOOK_OUTPUT_CHARS

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float | None = None) -> KernelSession:
        """Start the kernel and wait until it answers; raise CallFailed if it does not."""
        self.runtime = runtime = lifetime.runtime_folder()
        runtime.chmod(self.confinement.runtime_permissions)
        self.seeds = home_seeds(runtime) if self.seed_home else []
        uid = confinement.kernel_uid() if os.geteuid() == 0 else None
        sockets = self.confinement.prepare(runtime, self.seeds, uid)
        connection = runtime / "kernel.json"
        _, info = write_connection_file(str(connection), transport="ipc", ip=sockets,
                                        key=secrets.token_hex(32).encode())
        connection.chmod(0o644)  # the kernel's user must read it
        numbers = cast(dict[str, int], info)  # the ports write_connection_file chose
        ports = {channel: numbers[f"{channel}_port"] for channel in relay.CHANNELS}
        self.relay = relay.Relay(runtime, self.allowance, ports)
        descriptors = self.relay.descriptors()
        self.cgroup = confinement.Cgroup(
            f"{confinement.CGROUP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}", self.limits)
        kernel = launcher.command(sys.executable, {ports[c]: fd for c, fd in descriptors.items()},
                                  self.confinement.connection(connection))
        # Limits are set on the kernel itself, inside the sandbox's user namespace where there is
        # one: set on bubblewrap, the process limit would count every process of the grading
        # user, and one learner's fork bomb would stop another's kernel from starting.
        command = (self.cgroup.prefix() + self.confinement.wrap(runtime, connection, uid, self.seeds)
                   + confinement.limit_prefix(self.limits) + kernel)
        log = open(runtime / "kernel.log", "wb")
        try:
            # The kernel dies with this process from the moment it is forked: bubblewrap's own
            # --die-with-parent holds only from bubblewrap's start, and a grader killed in between
            # would leave it running. (The setting survives exec, but for a setuid bubblewrap.)
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.confinement.environment(runtime),
                cwd=self.confinement.working_folder(runtime), start_new_session=True,
                close_fds=True, pass_fds=tuple(descriptors.values()),
                preexec_fn=functools.partial(lifetime.die_with_parent, os.getpid()))
        except OSError as error:
            self.shutdown()
            raise CallFailed(f"the kernel could not be started ({error})", "start") from None
        finally:
            log.close()
        self.relay.start()  # the kernel holds its sockets now; the grader's copies close
        self.context = zmq.Context()
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.context.setsockopt(zmq.RCVHWM, RECEIVE_QUEUE)
        self.context.setsockopt(zmq.LINGER, 0)
        self.client = BlockingKernelClient(context=self.context)
        self.client.load_connection_info(dict(info, ip=self.relay.address))
        self.client.session.unpack = wire.loads  # counted before it is parsed
        self.client.start_channels(iopub=False, stdin=True, hb=False)
        self._connect_iopub()
        self._wait_ready(timeout or self.startup_timeout)
        self.output_budget = MAX_NOTEBOOK_OUTPUT_CHARS
        return self

    def _connect_iopub(self) -> None:
        """Subscribe to the kernel's publisher with a channel of our own, and watch it: a
        connection that breaks a limit of the relay (or of zmq) is closed, and
        :meth:`_iopub_dropped` connects again."""
        self.iopub = self.client.iopub_channel_class(self.client.connect_iopub(),
                                                     self.client.session)
        self.iopub.start()
        self.monitor = self.iopub.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        msg_id = self.client.kernel_info()
        while time.monotonic() < deadline:
            reply = self._next("shell", min(0.1, max(0.0, deadline - time.monotonic())))
            if reply is None:
                if self.process is None or self.process.poll() is not None:
                    break
                continue
            if _parent(reply) == msg_id:
                self._drain("iopub", deadline)
                return
        tail = self._log_tail()
        exited = self.process is None or self.process.poll() is not None
        self.shutdown()
        raise CallFailed(("the kernel exited while starting" if exited else
                          f"the kernel did not start within {timeout:g} s") + tail, "start")

    def _next(self, channel: str, timeout: float) -> Message | None:
        """The next message on ``channel`` ("shell", "iopub" or "stdin") within ``timeout``
        seconds, or None. A message that cannot be read (a bad signature, JSON with too many
        values) is consumed and comes back as an empty dict, so that a reader's deadline still
        holds."""
        get: Callable[..., Any] = {"shell": self.client.get_shell_msg,
                                   "stdin": self.client.get_stdin_msg}.get(channel,
                                                                           self.iopub.get_msg)
        try:
            message = get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError,
                zmq.ZMQError):
            return {}
        return message if isinstance(message, dict) else {}

    def _log_tail(self) -> str:
        try:
            assert self.runtime is not None
            text = (self.runtime / "kernel.log").read_bytes()[-800:].decode("utf-8", "replace")
        except (OSError, TypeError, AttributeError, AssertionError):
            return ""
        return f" ({text.strip()})" if text.strip() else ""

    def _iopub_dropped(self, deadline: float) -> bool:
        """Whether the kernel's publisher was dropped, and iopub had to be connected again.

        A connection that breaks a limit of the relay (or of zmq) is closed; this notices (a
        socket monitor) and connects a fresh subscriber, which the kernel greets with
        ``iopub_welcome`` once it is subscribed, waiting at most until ``deadline``. What was
        published in between is lost."""
        if self.monitor is None:
            return False
        try:
            recv_monitor_message(self.monitor, zmq.NOBLOCK)
        except zmq.Again:
            return False
        if not self.alive():
            return False
        self.monitor.close(linger=0)
        self.iopub.close()
        self._connect_iopub()
        deadline = min(deadline, time.monotonic() + 2)
        while time.monotonic() < deadline:
            message = self._next("iopub", min(0.1, deadline - time.monotonic()))
            if message and message.get("msg_type") == "iopub_welcome":
                break
        return True

    def shutdown(self) -> None:
        if self.monitor is not None:
            self.monitor.close(linger=0)
        if self.iopub is not None:
            try:
                self.iopub.close()
            except Exception:
                pass
        if self.client is not None:
            try:
                self.client.stop_channels()
            except Exception:
                pass
        if self.context is not None:
            self.context.destroy(linger=0)
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.relay is not None:
            self.relay.close()
        if self.cgroup is not None:
            self.cgroup.close()  # whatever the kernel started dies with it
        if self.runtime is not None:
            shutil.rmtree(self.runtime, ignore_errors=True)
        self.process = self.client = self.iopub = self.context = self.cgroup = None
        self.runtime = self.monitor = self.relay = None

    def start_with_retry(self, timeout: float | None = None, attempts: int = 3) -> KernelSession:
        """:meth:`start`, tried again when the machine itself failed to start the kernel (a
        busy machine, a transient resource shortage): that must never cost a learner points."""
        deadline = time.monotonic() + (timeout or self.startup_timeout)
        for attempt in range(attempts):
            try:
                return self.start(max(1.0, deadline - time.monotonic()))
            except CallFailed:
                if attempt == attempts - 1 or deadline - time.monotonic() < 2:
                    raise
                time.sleep(0.5)
        raise CallFailed("the kernel could not be started", "start")

    def restart(self, timeout: float | None = None, crashed: bool = True) -> None:
        """A new kernel in a new sandbox (nothing of the old one's memory or scratch folder
        remains); ``crashed`` counts it in :attr:`restarts`."""
        self.shutdown()
        self.restarts += crashed
        self.start_with_retry(timeout)

    def alive(self) -> bool:
        return (self.process is not None and self.process.poll() is None
                and not self.allowance.exhausted)

    def exhausted(self) -> str:
        """Why grading stopped listening to this submission's kernels, or "" while it listens."""
        if not self.allowance.exhausted:
            return ""
        return (f"its kernel sent the grader more than {self.allowance.total >> 20} MiB in all; "
                f"the grader stopped listening to it")

    def __enter__(self) -> KernelSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ------------------------------------------------------------ running code
    def _drain(self, channel: str, deadline: float) -> None:
        """Drop what an earlier, interrupted request left on ``channel``, for at most
        :data:`DRAIN_SECONDS` and never past ``deadline``: a kernel that never stops sending
        cannot hold the grader here (what is left is told apart by its parent's id)."""
        deadline = min(deadline, time.monotonic() + DRAIN_SECONDS)
        while time.monotonic() < deadline and self._next(channel, 0) is not None:
            pass

    def _run(self, code: str, timeout: float, on_output: Callable[[Output], None],
             metadata: dict[str, Any] | None = None,
             answer: Callable[[str, float], str] | None = None) -> tuple[str, bool, bool]:
        """Execute ``code``; hand every output to ``on_output``; return (error, timed_out, died).

        The cell is over when iopub says the kernel is idle again, or shortly after the shell's
        execute_reply when iopub's idle message was lost (a subscriber whose connection was
        closed for breaking a limit misses what is published before it reconnects). Nothing
        here waits past ``timeout``, but the interrupt that follows it (:meth:`_interrupt`).

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
        while True:
            now = time.monotonic()
            if deadline - now <= 0:
                return error, True, self._interrupt(msg_id)
            if replied is None and self._replied(msg_id, deadline):
                replied = now
            if replied is not None and now - replied > IDLE_GRACE:
                return error, False, False
            self._iopub_dropped(deadline)
            if answer is not None and self._answered(msg_id, answer, deadline):
                continue
            # (with ``answer``, _answered has just waited for iopub too)
            msg = self._next("iopub", 0 if answer else min(0.1, deadline - time.monotonic()))
            if msg is None:
                if not self.alive():
                    return error, False, True
                continue
            try:  # the kernel can send anything: read only well-formed messages
                if _parent(msg) != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "status" and content.get("execution_state") == "idle":
                    return error, False, False
                if kind not in ("stream", "display_data", "execute_result", "error",
                                "update_display_data"):
                    continue
                output = _output_from(kind, content)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue
            if kind == "error":
                error = f"{output['ename']}: {output['evalue']}"[:500]
            on_output(output)

    def _answered(self, msg_id: str, answer: Callable[[str, float], str],
                  deadline: float) -> bool:
        """Wait, at most a tenth of a second, for a question of execution ``msg_id`` on the
        stdin channel or an output on iopub; answer the question if there is one (True)."""
        poller = zmq.Poller()
        poller.register(self.client.stdin_channel.socket, zmq.POLLIN)
        poller.register(self.iopub.socket, zmq.POLLIN)
        ready = dict(poller.poll(max(0, int(1000 * min(0.1, deadline - time.monotonic())))))
        if self.client.stdin_channel.socket not in ready:
            return False
        message = self._next("stdin", 0)
        try:
            if message is None or message["msg_type"] != "input_request" or \
                    _parent(message) != msg_id:
                return True  # read and dropped: only this execution's questions are answered
            prompt = message["content"]["prompt"]
        except (KeyError, TypeError):
            return True
        reply = answer(prompt if isinstance(prompt, str) else "", deadline)
        self.client.input(reply)
        return True

    def _replied(self, msg_id: str, deadline: float) -> bool:
        """Whether the shell holds the reply to ``msg_id``, reading it for at most
        :data:`DRAIN_SECONDS` (and never past ``deadline``)."""
        deadline = min(deadline, time.monotonic() + DRAIN_SECONDS)
        while time.monotonic() < deadline:
            msg = self._next("shell", 0)
            if msg is None:
                return False
            if _parent(msg) == msg_id:
                return True
        return False

    def execute(self, code: str, timeout: float) -> CellResult:
        """Run a cell; collect its outputs within the caps; never raise for what the code does."""
        outputs: list[Output] = []
        used, figures, noted, left_out = [0], [0], [False], [0]

        def keep(output: Output) -> None:
            size = len(json.dumps(output))
            self.output_budget -= size
            if wire.MIME in output.get("data", {}):
                return  # a reply outside any call: counted, never kept
            if is_figure(output):
                figures[0] += size
                if size <= MAX_FIGURE_CHARS and figures[0] <= MAX_CELL_FIGURE_CHARS and \
                        self.output_budget >= 0:
                    outputs.append(output)
                else:
                    left_out[0] += 1
                return
            used[0] += size
            if used[0] <= MAX_OUTPUT_CHARS and self.output_budget >= 0:
                outputs.append(output)
            elif not noted[0]:
                noted[0] = True
                outputs.append(_output_from("stream", {
                    "name": "stdout", "text": "\n[output truncated by the grader]\n"}))

        error, timed_out, died = self._run(code, timeout, keep)
        if left_out[0]:
            outputs.append(_output_from("stream", {"name": "stdout", "text": (
                f"\n[{left_out[0]} figure(s) left out by the grader: a figure may take up to "
                f"{MAX_FIGURE_CHARS:,} characters, a cell's figures {MAX_CELL_FIGURE_CHARS:,}]\n")}))
        if timed_out:
            return CellResult(outputs, f"timed out after {timeout:g} s", timed_out=True, died=died)
        if died:
            return CellResult(outputs, self.exhausted() or "the kernel died (crashed, exited, "
                              "or ran out of memory or CPU time)", died=True)
        return CellResult(outputs, error)

    def _interrupt(self, msg_id: str) -> bool:
        """Interrupt the running cell; return True when the kernel had to be killed."""
        try:
            message = self.client.session.msg("interrupt_request", content={})
            self.client.control_channel.send(message)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                msg = self._next("iopub", min(0.25, deadline - time.monotonic()))
                if (msg and _parent(msg) == msg_id and msg.get("msg_type") == "status"
                        and (msg.get("content") or {}).get("execution_state") == "idle"):
                    return False
        except Exception:
            pass
        self.shutdown()  # ignored the interrupt: kill it; the caller may restart
        return True

    # ------------------------------------------------------------ calling functions
    def call(self, name: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any],
             timeout: float, answers: Answers | None = None) -> wire.Reply:
        """One call of the learner's ``name``; return the reply read by :func:`wire.read_reply`.

        Exactly one reply is accepted: the first output that carries this call's nonce and reads
        as a reply. Every other output of the call is counted against the notebook's output cap
        and dropped.

        ``answers`` answers the questions of the course's stand-ins during the call
        (``answers(prompt, allowed, deadline)``, where ``allowed`` are the canonical texts of the
        function markers among this call's arguments: :mod:`autograder.engine.oracle`).
        """
        nonce = secrets.token_hex(16)
        text = wire.request(name, args, kwargs, nonce)
        answer = None
        if answers is not None:
            given = json.loads(text)
            allowed = frozenset(wire.canonical(marker) for marker in
                                wire.function_markers([given["args"], given["kwargs"]]))
            answer = functools.partial(_with_allowed, answers, allowed)
        found: list[wire.Reply] = []
        problems: list[str] = []
        seen = [0]

        def take(output: Output) -> None:
            data = output.get("data", {})
            seen[0] += len(json.dumps(output))
            if found or wire.MIME not in data or seen[0] > 2 * wire.MAX_REPLY_CHARS:
                return  # counted and dropped: only this call's first reply is read
            try:
                found.append(wire.read_reply(data[wire.MIME], nonce))
            except wire.BadReply as problem:
                problems.append(str(problem))

        # The request travels in the message's metadata: the cell stays a few characters long,
        # where IPython would tokenize arguments of megabytes (a tenth of a second per MiB).
        error, timed_out, died = self._run("__autograder_call__()", timeout, take,
                                           {agent.REQUEST_KEY: text}, answer)
        if found:
            return found[0]
        if timed_out:
            raise CallFailed(f"did not return within {timeout:g} s", "timeout")
        if self.exhausted():
            raise CallFailed(f"was not called: {self.exhausted()}", "flood")
        if died:
            raise CallFailed("crashed the kernel (it exited, or ran out of memory or CPU time)",
                             "crashed")
        if seen[0] > 2 * wire.MAX_REPLY_CHARS:
            raise CallFailed("printed or displayed more output than the grader accepts", "flood")
        raise CallFailed("gave no reply the grader could read" +
                         (f" ({problems[0]})" if problems else f" ({error})" if error else ""))

    def install_agent(self, timeout: float = 30) -> None:
        if self.alive():
            self.execute(agent.bootstrap(), timeout)


#: ``answers(prompt, allowed, deadline)``: the answer to a stand-in's question (see
#: :meth:`KernelSession.call`)
Answers = Callable[[str, frozenset[str], float], str]


def _with_allowed(answers: Answers, allowed: frozenset[str], prompt: str, deadline: float) -> str:
    return answers(prompt, allowed, deadline)


def _parent(message: Any) -> str | None:
    """The id of the request a message answers, or None for anything malformed."""
    try:
        parent = message["parent_header"].get("msg_id")
    except (AttributeError, KeyError, TypeError):
        return None
    return parent if isinstance(parent, str) else None


def _output_from(kind: str, content: dict[str, Any]) -> Output:
    if kind == "stream":
        return {"output_type": "stream", "name": str(content.get("name", "stdout")),
                "text": str(content.get("text", ""))}
    if kind == "error":
        return {"output_type": "error", "ename": str(content.get("ename")),
                "evalue": str(content.get("evalue")),
                "traceback": [str(t) for t in content.get("traceback", [])][:200]}
    kind = "display_data" if kind == "update_display_data" else kind
    output: dict[str, Any] = {"output_type": kind, "data": dict(content.get("data", {})),
              "metadata": dict(content.get("metadata", {}))}
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output
