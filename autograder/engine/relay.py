"""A kernel's sockets, made by the grader, and the relay that bounds what the grader reads from them.

**No path the kernel controls.** For each channel the grader reads (shell, iopub, control, stdin) it
makes a listening Unix socket in a folder of its own and hands it to the kernel as an open
descriptor (:mod:`autograder.sandbox.launcher`); the kernel serves the channel on it, but never
sees its path, so it cannot replace or link it. The grader's client connects to a second socket of the same
folder, served by :class:`Relay`, which connects to the kernel's socket for it. Both paths are
reached through a descriptor of the folder (``/proc/self/fd/N/...``), so no path is long or
resolved anew through anything but the grader's own folder.

**Bounded before buffering.** libzmq refuses a *frame* over ``ZMQ_MAXMSGSIZE``, but a message of
many frames is buffered whole, however large, before the grader reads any of it (600 frames of
1 MiB took a receiver with ``RCVHWM=1`` to 600 MiB). The relay reads the ZMTP framing of
everything the kernel sends as it passes (:class:`FrameLimits`) and closes the connection as soon
as a frame or a message exceeds :data:`MAX_MESSAGE_BYTES` or :data:`MAX_FRAMES`, or the kernel's
bytes in all exceed the submission's total (:class:`Allowance`). It keeps at most
:data:`CHUNK` bytes per direction per connection and stops reading from the kernel while the
grader has not taken what it already has, so a flood waits in the kernel's own buffers (where its
publisher drops it), never in the grader's.
"""
from __future__ import annotations

import os
import selectors
import socket
import threading
from pathlib import Path

from . import wire

CHANNELS = ("shell", "iopub", "control", "stdin")
MAX_MESSAGE_BYTES = wire.MAX_REPLY_CHARS + (1 << 20)  # a reply and its message's envelope
MAX_FRAMES = 32            # a Jupyter message has 7 frames, and a few more for routing or buffers
MAX_TOTAL_BYTES = 1 << 30  # everything one submission's kernels may send the grader, in all
CHUNK = 1 << 16            # bytes read at a time, and the most kept per direction per connection
GREETING = 64              # bytes of a ZMTP 3 greeting


class Allowance:
    """The bytes a submission's kernels may still send the grader: one for the whole submission,
    shared by every kernel started for it (restarts included)."""

    def __init__(self, total: int = MAX_TOTAL_BYTES) -> None:
        self.total = total
        self.used = 0

    @property
    def exhausted(self) -> bool:
        return self.used > self.total


class FrameLimits:
    """Reads a ZMTP 3 byte stream as it passes and says when it breaks a limit.

    The stream is a 64-byte greeting, then frames: a flags byte (MORE, LONG, COMMAND), a size of one
    byte (or eight, big-endian, with LONG), and that many bytes of body. A message is a run of
    frames with MORE set, and the one after it."""

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES, max_frames: int = MAX_FRAMES) -> None:
        self.max_message, self.max_frames = max_message, max_frames
        self.greeting = bytearray()
        self.state = "flags"
        self.size = bytearray()
        self.size_length = 1
        self.body = 0
        self.more = self.command = False
        self.message = self.frames = 0

    def feed(self, data: bytes) -> str:
        """Check ``data``, the next bytes of the stream; return why it breaks a limit, or ""."""
        index, length = 0, len(data)
        while index < length:
            if len(self.greeting) < GREETING:
                taken = data[index:index + GREETING - len(self.greeting)]
                self.greeting += taken
                index += len(taken)
                head = self.greeting
                if head[0] != 0xFF or (len(head) > 9 and not head[9] & 1) or (
                        len(head) > 10 and head[10] < 3):
                    return "the kernel does not speak ZMTP 3"
            elif self.state == "flags":
                flags = data[index]
                index += 1
                if flags & ~0x07 or (flags & 0x04 and flags & 0x01):
                    return "a malformed frame"
                self.more, self.command = bool(flags & 0x01), bool(flags & 0x04)
                self.size_length = 8 if flags & 0x02 else 1
                self.size.clear()
                self.state = "size"
            elif self.state == "size":
                taken = data[index:index + self.size_length - len(self.size)]
                self.size += taken
                index += len(taken)
                if len(self.size) == self.size_length:
                    problem = self._frame(int.from_bytes(self.size, "big"))
                    if problem:
                        return problem
            else:  # the body: skipped, only counted
                skipped = min(self.body, length - index)
                self.body -= skipped
                index += skipped
                if self.body == 0:
                    self._end_frame()
        return ""

    def _frame(self, size: int) -> str:
        if size > self.max_message:
            return f"a frame of {size} bytes"
        if not self.command:
            self.message += size
            self.frames += 1
            if self.message > self.max_message:
                return f"a message of more than {self.max_message} bytes"
            if self.frames > self.max_frames:
                return f"a message of more than {self.max_frames} frames"
        self.body = size
        self.state = "body"
        if size == 0:
            self._end_frame()
        return ""

    def _end_frame(self) -> None:
        self.state = "flags"
        if not self.command and not self.more:
            self.message = self.frames = 0


class _Pair:
    """One connection of the grader's client and the relay's connection to the kernel for it."""

    def __init__(self, grader: socket.socket, kernel: socket.socket) -> None:
        self.grader, self.kernel = grader, kernel
        self.to_grader = b""   # read from the kernel, not yet taken by the grader
        self.to_kernel = b""
        self.limits = FrameLimits()
        self.waiting: dict[str, int] = {}  # "kernel"/"grader" -> the events the selector waits for


class Relay:
    """Listening sockets for one kernel, and a thread that relays between them and the grader."""

    def __init__(self, folder: str | Path, allowance: Allowance, ports: dict[str, int]) -> None:
        """Make the sockets in ``folder`` (the grader's own, private runtime folder); ``ports``
        maps each channel to its port in the kernel's connection file."""
        self.allowance = allowance
        self.folder_path = str(folder)
        self.folder = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.kernel_sockets: dict[str, socket.socket] = {}  # channel -> handed to the kernel
        self.listeners: dict[str, socket.socket] = {}  # channel -> the grader's client's
        self.broken = ""           # why the relay last closed a connection, if it did
        for channel in CHANNELS:
            self.kernel_sockets[channel] = self._listen(f"kernel-{channel}")
            self.listeners[channel] = self._listen(f"grader-{ports[channel]}")
            self.listeners[channel].setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = socket.socketpair()
        self.pairs: dict[int, _Pair] = {}
        self.stopping = False
        self.thread: threading.Thread | None = None

    def _path(self, name: str) -> str:
        if os.path.isdir("/proc/self/fd"):
            return f"/proc/self/fd/{self.folder}/{name}"
        return os.path.join(self.folder_path, name)  # no /proc (macOS): the folder's own path

    def _listen(self, name: str) -> socket.socket:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self._path(name))
        os.chmod(name, 0o600, dir_fd=self.folder)  # only the grader may connect
        listener.listen(8)
        return listener

    def descriptors(self) -> dict[str, int]:
        """channel -> descriptor of the listening socket the kernel is to serve it on."""
        return {channel: s.fileno() for channel, s in self.kernel_sockets.items()}

    @property
    def address(self) -> str:
        """What the grader's client takes for the kernel's ``ip``: jupyter_client connects each
        channel to ``ipc://<address>-<port>``, a socket of this relay."""
        return self._path("grader")

    def start(self) -> None:
        """Start relaying; the kernel has its descriptors now, so the grader's copies close."""
        for listener in self.kernel_sockets.values():
            listener.close()
        self.selector.register(self.wake_read, selectors.EVENT_READ, ("wake", None))
        for channel, listener in self.listeners.items():
            self.selector.register(listener, selectors.EVENT_READ, ("accept", channel))
        self.thread = threading.Thread(target=self._loop, daemon=True, name="kernel-relay")
        self.thread.start()

    def close(self) -> None:
        self.stopping = True
        if self.thread is not None:
            try:
                self.wake_write.send(b"x")
            except OSError:
                pass
            self.thread.join(5)
        for pair in list(self.pairs.values()):
            self._drop(pair)
        for listener in [*self.listeners.values(), *self.kernel_sockets.values()]:
            listener.close()  # closing a closed socket does nothing
        self.selector.close()
        self.wake_read.close()
        self.wake_write.close()
        if self.folder >= 0:  # closed once: the number may be another descriptor's after
            os.close(self.folder)
            self.folder = -1

    # ------------------------------------------------------------ the thread
    def _loop(self) -> None:
        while not self.stopping:
            for key, events in self.selector.select(timeout=1.0):
                kind, item = key.data
                if kind == "wake":
                    return
                try:
                    if kind == "accept":
                        self._accept(item)
                    elif kind == "kernel":
                        self._from_kernel(item, events)
                    else:
                        self._from_grader(item, events)
                except (OSError, ValueError, KeyError):  # a connection gone: the thread goes on
                    if kind != "accept":
                        self._drop(item)

    def _accept(self, channel: str) -> None:
        try:
            grader, _ = self.listeners[channel].accept()
        except (BlockingIOError, InterruptedError):
            return
        kernel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        kernel.setblocking(False)
        grader.setblocking(False)
        try:
            if self.allowance.exhausted:
                raise ConnectionRefusedError
            kernel.connect(self._path(f"kernel-{channel}"))
        except OSError:  # the kernel is gone, or not accepting: the client will try again
            kernel.close()
            grader.close()
            return
        pair = _Pair(grader, kernel)
        self.pairs[id(pair)] = pair
        self._wait(pair, kernel, "kernel", selectors.EVENT_READ)
        self._wait(pair, grader, "grader", selectors.EVENT_READ)

    def _from_kernel(self, pair: _Pair, events: int) -> None:
        if events & selectors.EVENT_READ and not pair.to_grader:
            data = pair.kernel.recv(CHUNK)
            if not data:
                return self._drop(pair)
            self.allowance.used += len(data)
            problem = pair.limits.feed(data)
            if self.allowance.exhausted:
                problem = (f"it sent the grader more than {self.allowance.total >> 20} MiB "
                           f"in all")
            if problem:
                self.broken = problem
                return self._drop(pair)
            pair.to_grader = data
        if events & selectors.EVENT_WRITE and pair.to_kernel:
            pair.to_kernel = pair.to_kernel[pair.kernel.send(pair.to_kernel):]
        self._flush(pair)

    def _from_grader(self, pair: _Pair, events: int) -> None:
        if events & selectors.EVENT_READ and not pair.to_kernel:
            data = pair.grader.recv(CHUNK)
            if not data:
                return self._drop(pair)
            pair.to_kernel = data
        if events & selectors.EVENT_WRITE and pair.to_grader:
            pair.to_grader = pair.to_grader[pair.grader.send(pair.to_grader):]
        self._flush(pair)

    def _flush(self, pair: _Pair) -> None:
        """Send what can go at once, then wait only for what is pending: a side with bytes
        waiting for the other is not read from until they have gone."""
        for data, target in (("to_grader", pair.grader), ("to_kernel", pair.kernel)):
            pending = getattr(pair, data)
            if pending:
                try:
                    setattr(pair, data, pending[target.send(pending):])
                except BlockingIOError:
                    pass
        if id(pair) not in self.pairs:
            return
        read, write = selectors.EVENT_READ, selectors.EVENT_WRITE
        self._wait(pair, pair.kernel, "kernel", (0 if pair.to_grader else read) |
                   (write if pair.to_kernel else 0))
        self._wait(pair, pair.grader, "grader", (0 if pair.to_kernel else read) |
                   (write if pair.to_grader else 0))

    def _wait(self, pair: _Pair, side: socket.socket, kind: str, events: int) -> None:
        waiting = pair.waiting.get(kind, 0)
        if events == waiting:
            return
        if not events:
            self.selector.unregister(side)
        elif not waiting:
            self.selector.register(side, events, (kind, pair))
        else:
            self.selector.modify(side, events, (kind, pair))
        pair.waiting[kind] = events

    def _drop(self, pair: _Pair) -> None:
        if self.pairs.pop(id(pair), None) is None:
            return
        for side, kind in ((pair.kernel, "kernel"), (pair.grader, "grader")):
            if pair.waiting.get(kind):
                try:
                    self.selector.unregister(side)
                except (KeyError, ValueError, OSError):
                    pass
            side.close()
