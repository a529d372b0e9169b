"""A learner's kernel started confined, and the channels the grader reads it by.

The kernel is an ordinary IPython kernel started inside the sandbox
(:mod:`autograder.sandbox.confinement`) by :mod:`autograder.sandbox.launcher`, which forbids it new
processes and serves its channels on listening sockets the grader made in its own runtime folder
and handed over as descriptors: the grader never connects to a path the kernel could create,
replace or link. What the kernel sends reaches the grader through :class:`relay.Relay`, which
closes a connection over :data:`relay.MAX_MESSAGE_BYTES` per message or the submission's total
before anything is buffered; each of the grader's sockets queues at most :data:`RECEIVE_QUEUE`
messages, and each message's JSON is counted before it is parsed (:func:`wire.loads`). Every loop
here that reads from the kernel has a deadline within the time it was given.

How the kernel is confined is one :class:`~autograder.sandbox.confinement.Confinement` object
(the command that wraps it, its environment, the folder its sockets are named in): the kernel
asks it and never branches on the mode. It talks to the kernel through jupyter_client's public
API only; it keeps an iopub channel of its own (:meth:`ConfinedKernel._connect_iopub`) so that a
publisher the relay had to drop can be connected to again.

:class:`ConfinedKernel` starts, restarts and stops the kernel and reads its channels;
:mod:`autograder.engine.kernel_exec` runs code in it.
"""
from __future__ import annotations

import functools
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Self, cast

import zmq
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from zmq.utils.monitor import recv_monitor_message

from . import relay, wire
from ..sandbox import confinement, launcher, lifetime

MAX_MESSAGE_BYTES = relay.MAX_MESSAGE_BYTES
RECEIVE_QUEUE = 2  # messages each of the grader's sockets holds before the kernel must wait
ANSWER_SEND_SECONDS = 1.0      # the most an answer may wait to be taken by the kernel
DRAIN_SECONDS = 0.5  # the most spent dropping what an earlier request left unread

Message = dict[str, Any]


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


class ConfinedKernel:
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
        self.lifeline: socket.socket | None = None  # our end of the pair the kernel exits with
        self.allowance = relay.Allowance(received_bytes)  # for all its kernels, restarts included
        self.restarts = 0

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float | None = None) -> Self:
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
        # The kernel exits when this process closes its end of the socket pair, as it does when it
        # exits (see launcher.py); that end is not inherited by anything this process starts.
        self.lifeline, kernels_end = socket.socketpair()
        lifeline = kernels_end.fileno()
        kernel = launcher.command(confinement.interpreter(),
                                  {ports[c]: fd for c, fd in descriptors.items()},
                                  self.confinement.connection(connection), lifeline)
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
                close_fds=True, pass_fds=(*descriptors.values(), lifeline),
                preexec_fn=functools.partial(lifetime.die_with_parent, os.getpid()))
        except OSError as error:
            self.shutdown()
            raise CallFailed(f"the kernel could not be started ({error})", "start") from None
        finally:
            log.close()
            kernels_end.close()
        self.relay.start()  # the kernel holds its sockets now; the grader's copies close
        self.context = zmq.Context()
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.context.setsockopt(zmq.RCVHWM, RECEIVE_QUEUE)
        self.context.setsockopt(zmq.SNDHWM, RECEIVE_QUEUE)  # (answers a kernel has not taken)
        self.context.setsockopt(zmq.LINGER, 0)
        self.client = BlockingKernelClient(context=self.context)
        self.client.load_connection_info(dict(info, ip=self.relay.address))
        self.client.session.unpack = wire.loads  # counted before it is parsed
        self.client.start_channels(iopub=False, stdin=True, hb=False)
        # An answer to a stand-in is sent without waiting for long: a kernel that asks and does
        # not read would otherwise hold the grader in a send (see kernel_exec's _answered).
        self.client.stdin_channel.socket.setsockopt(zmq.SNDTIMEO,
                                                    int(1000 * ANSWER_SEND_SECONDS))
        self._connect_iopub()
        self._wait_ready(timeout or self.startup_timeout)
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
            if parent_id(reply) == msg_id:
                self._drain("iopub", deadline)
                return
        tail = self._log_tail()
        exited = self.process is None or self.process.poll() is not None
        self.shutdown()
        raise CallFailed(("the kernel exited while starting" if exited else
                          f"the kernel did not start within {timeout:g} s") + tail, "start")

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
        if self.lifeline is not None:
            self.lifeline.close()
        if self.cgroup is not None:
            self.cgroup.close()  # whatever the kernel started dies with it
        if self.runtime is not None:
            shutil.rmtree(self.runtime, ignore_errors=True)
        self.process = self.client = self.iopub = self.context = self.cgroup = None
        self.runtime = self.monitor = self.relay = self.lifeline = None

    def start_with_retry(self, timeout: float | None = None, attempts: int = 3) -> Self:
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

    # ------------------------------------------------------------ reading its channels
    def _next(self, channel: str, timeout: float) -> Message | None:
        """The next message on ``channel`` ("shell", "iopub" or "stdin") within ``timeout``
        seconds, or None. A message that cannot be read (a bad signature, JSON with too many
        values) is consumed and comes back as an empty dict, so that a reader's deadline still
        holds."""
        # the channels' own reads: the client's get_shell_msg wraps the same read in an event
        # loop's turn, which cost every call into the kernel more than the read itself
        get: Callable[..., Any] = {"shell": self.client.shell_channel.get_msg,
                                   "stdin": self.client.stdin_channel.get_msg}.get(
                                       channel, self.iopub.get_msg)
        try:
            message = get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError,
                zmq.ZMQError):
            return {}
        return message if isinstance(message, dict) else {}

    def _drain(self, channel: str, deadline: float) -> None:
        """Drop what an earlier, interrupted request left on ``channel``, for at most
        :data:`DRAIN_SECONDS` and never past ``deadline``: a kernel that never stops sending
        cannot hold the grader here (what is left is told apart by its parent's id)."""
        deadline = min(deadline, time.monotonic() + DRAIN_SECONDS)
        while time.monotonic() < deadline and self._next(channel, 0) is not None:
            pass


def parent_id(message: Any) -> str | None:
    """The id of the request a message answers, or None for anything malformed."""
    try:
        parent = message["parent_header"].get("msg_id")
    except (AttributeError, KeyError, TypeError):
        return None
    return parent if isinstance(parent, str) else None


