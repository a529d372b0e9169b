"""A learner's kernel: start it confined, run cells with timeouts, call functions through the wire.

The kernel is an ordinary IPython kernel started inside the sandbox (:mod:`autograder.sandbox`).
Its sockets live in the sandbox's own scratch tmpfs, which nothing on the host can write to; the
grader reaches them through ``/proc/<pid>/root``, the sandbox's root as the host sees it. Every
socket the grader opens refuses messages over :data:`MAX_MESSAGE_BYTES`, so no single output can
swell the grader's memory.

Every way a kernel can misbehave (a cell that never returns, a crash, an exit, a flood of output,
replies that are not replies) ends in a :class:`CellResult` or :class:`CallFailed` with a sentence
for the learner, never in an exception that stops the grading of the class.
"""
import dataclasses
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import zmq
from jupyter_client import BlockingKernelClient
from zmq.utils.monitor import recv_monitor_message
from jupyter_client.connect import write_connection_file

from . import agent, lifetime, sandbox, wire

MAX_OUTPUT_CHARS = 20_000       # of one cell's outputs; the rest is dropped with a note
MAX_NOTEBOOK_OUTPUT_CHARS = 2_000_000  # of all cells' outputs together
MAX_MESSAGE_BYTES = wire.MAX_REPLY_CHARS + (1 << 20)  # zmq drops (and reconnects) above this
IDLE_GRACE = 1.0  # seconds to wait for iopub's idle message after the shell's execute_reply


@dataclasses.dataclass
class CellResult:
    outputs: list
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

    def __init__(self):
        self.lock = threading.Lock()
        self.thread = None
        self.value = None

    def get(self):
        """``(file name, text)`` if ready, else None (and the reading starts)."""
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._read, daemon=True)
                self.thread.start()
        return self.value

    def _read(self):
        try:
            done = subprocess.run([sys.executable, "-c", FONT_LIST], capture_output=True,
                                  text=True, timeout=120, env={**os.environ, "MPLBACKEND": "Agg"})
            [path] = json.loads(done.stdout.strip().splitlines()[-1])
            path = Path(path)
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


def home_seeds(folder):
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

    def __init__(self, message, kind="no-reply"):
        super().__init__(message)
        self.kind = kind


class KernelSession:
    """One learner kernel, started confined, with its own runtime folder on the host."""

    def __init__(self, mode=sandbox.LIMITS, limits=None, private=(), startup_timeout=60):
        self.mode = mode  # sandbox.BUBBLEWRAP, USER or LIMITS
        self.limits = limits or sandbox.Limits()
        self.private = tuple(str(p) for p in private)  # folders to cover if ever made visible
        self.startup_timeout = startup_timeout
        self.process = None
        self.client = None
        self.context = None
        self.cgroup = None
        self.runtime = None
        self.seeds = []
        self.monitor = None
        self.restarts = 0
        self.output_budget = MAX_NOTEBOOK_OUTPUT_CHARS

    @property
    def sandboxed(self):
        return self.mode == sandbox.BUBBLEWRAP

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout=None):
        """Start the kernel and wait until it answers; raise CallFailed if it does not."""
        self.runtime = lifetime.runtime_folder()
        # Another user (the kernel's) must reach its home and the connection file, not list them.
        self.runtime.chmod(0o711 if self.mode == sandbox.USER else 0o700)
        self.home = self.runtime / "home"
        self.seeds = home_seeds(self.runtime)
        if self.sandboxed:
            inside = sandbox.INSIDE_SOCKETS
        else:
            self.home.mkdir(mode=0o700)
            (self.home / ".kernel").mkdir()
            inside = str(self.home / ".kernel" / "ipc")
            for source, relative in self.seeds:  # a copy: the home is a folder on the host
                (self.home / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, self.home / relative)
        connection = self.runtime / "kernel.json"
        _, info = write_connection_file(str(connection), transport="ipc", ip=inside,
                                        key=secrets.token_hex(32).encode())
        connection.chmod(0o644)  # the kernel's user must read it
        self.uid = sandbox.kernel_uid() if os.geteuid() == 0 else None
        if self.mode == sandbox.USER:
            for path in (self.home, *self.home.rglob("*")):
                os.chown(path, self.uid, self.uid)
        self.cgroup = sandbox.Cgroup(f"attention-{os.getpid()}-{secrets.token_hex(4)}",
                                     self.limits)
        command = self._command(connection)
        log = open(self.runtime / "kernel.log", "wb")
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self._launch_environment(), cwd=str(self.runtime if self.sandboxed
                                                         else self.home),
                start_new_session=True, close_fds=True)
        finally:
            log.close()
        info = dict(info)
        if self.sandboxed:
            root = self._sandbox_root(timeout or self.startup_timeout)
            info["ip"] = f"/proc/{root}/root{inside}"
        self.context = zmq.Context()
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.context.setsockopt(zmq.LINGER, 0)
        self.client = BlockingKernelClient(context=self.context)
        self.client.load_connection_info(info)
        self.client.start_channels(hb=False)
        self.monitor = self.client.iopub_channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._wait_ready(timeout or self.startup_timeout)
        self.output_budget = MAX_NOTEBOOK_OUTPUT_CHARS
        return self

    def _command(self, connection):
        kernel = [sys.executable, "-m", "ipykernel_launcher", "-f",
                  sandbox.INSIDE_CONNECTION if self.sandboxed else str(connection)]
        # Limits are set on the kernel itself, inside the sandbox's user namespace where there is
        # one: set on bubblewrap, the process limit would count every process of the grading
        # user, and one learner's fork bomb would stop another's kernel from starting.
        limits = sandbox.limit_prefix(self.limits)
        if self.mode == sandbox.LIMITS:  # dies with the grader, where setpriv can arrange it
            dies = sandbox.setpriv_prefix() if sandbox.setpriv() else []
            return self.cgroup.prefix() + dies + limits + kernel
        if self.mode == sandbox.USER:  # root without namespaces: at least another identity
            return self.cgroup.prefix() + sandbox.setpriv_prefix(self.uid) + limits + kernel
        passwd = self.runtime / "passwd"
        passwd.write_text(sandbox.passwd_text(self.uid if self.uid is not None else 1000))
        passwd.chmod(0o644)
        args = sandbox.bubblewrap_args(connection, self.limits, passwd, self.uid, self.private,
                                       self.seeds)
        return self.cgroup.prefix() + args + limits + kernel

    def _launch_environment(self):
        if self.sandboxed:  # bubblewrap clears it and sets the kernel's own
            return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        return sandbox.kernel_environment(str(self.home), {"JPY_PARENT_PID": str(os.getpid())})

    def _sandbox_root(self, timeout):
        """The pid of the sandbox's first process, whose /proc root is the sandbox's root."""
        deadline = time.monotonic() + timeout
        pid = self.process.pid
        while time.monotonic() < deadline:
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                children = []
            if children:
                return int(children[0])
            if self.process.poll() is not None:
                break
            time.sleep(0.005)
        tail = self._log_tail()
        self.shutdown()
        raise CallFailed("the sandbox did not start" + tail, "start")

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        msg_id = self.client.kernel_info()
        while time.monotonic() < deadline:
            try:
                reply = self.client.get_shell_msg(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                self._drain_iopub()
                return
        tail = self._log_tail()
        exited = self.process.poll() is not None
        self.shutdown()
        raise CallFailed(("the kernel exited while starting" if exited else
                          f"the kernel did not start within {timeout:g} s") + tail, "start")

    def _log_tail(self):
        try:
            text = (self.runtime / "kernel.log").read_bytes()[-800:].decode("utf-8", "replace")
        except (OSError, TypeError, AttributeError):
            return ""
        return f" ({text.strip()})" if text.strip() else ""

    def _iopub_dropped(self):
        """Whether the kernel's publisher was dropped, and iopub had to be connected again.

        A subscriber that refuses a message over :data:`MAX_MESSAGE_BYTES` is disconnected for
        good; this notices (a socket monitor) and connects a fresh one, which the kernel greets
        with ``iopub_welcome`` once it is subscribed. What was published in between is lost."""
        try:
            recv_monitor_message(self.monitor, zmq.NOBLOCK)
        except zmq.Again:
            return False
        if not self.alive():
            return False
        self.monitor.close(linger=0)
        self.client.iopub_channel.close()
        self.client._iopub_channel = None
        channel = self.client.iopub_channel
        channel.start()
        self.monitor = channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                if channel.get_msg(timeout=0.1)["msg_type"] == "iopub_welcome":
                    break
            except (queue.Empty, KeyError, TypeError):
                continue
        return True

    def shutdown(self):
        if self.monitor is not None:
            self.monitor.close(linger=0)
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
        if self.cgroup is not None:
            self.cgroup.close()  # whatever the kernel started dies with it
        if self.runtime is not None:
            shutil.rmtree(self.runtime, ignore_errors=True)
        self.process = self.client = self.context = self.cgroup = self.runtime = None
        self.monitor = None

    def start_with_retry(self, timeout=None, attempts=3):
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

    def restart(self, timeout=None):
        self.shutdown()
        self.restarts += 1
        self.start_with_retry(timeout)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.shutdown()

    # ------------------------------------------------------------ running code
    def _drain_iopub(self):
        while True:  # drop anything left over from an earlier, interrupted request
            try:
                self.client.get_iopub_msg(timeout=0)
            except queue.Empty:
                return

    def _run(self, code, timeout, on_output):
        """Execute ``code``; hand every output to ``on_output``; return (error, timed_out, died).

        The cell is over when iopub says the kernel is idle again, or shortly after the shell's
        execute_reply when iopub's idle message was lost (a subscriber that refused an oversized
        message is disconnected, and misses what is published before it reconnects)."""
        if not self.alive():
            return "the kernel is not running", False, True
        self._drain_iopub()
        self._drain_shell()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False,
                                     stop_on_error=False)
        deadline = time.monotonic() + timeout
        error, replied = "", None
        while True:
            now = time.monotonic()
            if deadline - now <= 0:
                return error, True, self._interrupt(msg_id)
            if replied is None and self._replied(msg_id):
                replied = now
            if replied is not None and now - replied > IDLE_GRACE:
                return error, False, False
            self._iopub_dropped()
            try:
                msg = self.client.get_iopub_msg(timeout=min(0.1, deadline - now))
            except queue.Empty:
                if not self.alive():
                    return error, False, True
                continue
            try:  # the kernel can send anything: read only well-formed messages
                if msg["parent_header"].get("msg_id") != msg_id:
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

    def _replied(self, msg_id):
        while True:
            try:
                msg = self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return False
            try:
                if msg["parent_header"].get("msg_id") == msg_id:
                    return True
            except (AttributeError, KeyError, TypeError):
                continue

    def _drain_shell(self):
        while True:
            try:
                self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return

    def execute(self, code, timeout):
        """Run a cell; collect its outputs within the caps; never raise for what the code does."""
        outputs, used, noted = [], [0], [False]

        def keep(output):
            size = len(json.dumps(output))
            self.output_budget -= size
            if wire.MIME in output.get("data", {}):
                return  # a reply outside any call: counted, never kept
            used[0] += size
            if used[0] <= MAX_OUTPUT_CHARS and self.output_budget >= 0:
                outputs.append(output)
            elif not noted[0]:
                noted[0] = True
                outputs.append(_output_from("stream", {
                    "name": "stdout", "text": "\n[output truncated by the grader]\n"}))

        error, timed_out, died = self._run(code, timeout, keep)
        if timed_out:
            return CellResult(outputs, f"timed out after {timeout:g} s", timed_out=True, died=died)
        if died:
            return CellResult(outputs, "the kernel died (crashed, exited, or ran out of memory "
                              "or CPU time)", died=True)
        return CellResult(outputs, error)

    def _interrupt(self, msg_id):
        """Interrupt the running cell; return True when the kernel had to be killed."""
        try:
            message = self.client.session.msg("interrupt_request", content={})
            self.client.control_channel.send(message)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                try:
                    msg = self.client.get_iopub_msg(timeout=0.25)
                except queue.Empty:
                    continue
                if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                        and msg["content"].get("execution_state") == "idle"):
                    return False
        except Exception:
            pass
        self.shutdown()  # ignored the interrupt: kill it; the caller may restart
        return True

    # ------------------------------------------------------------ calling functions
    def call(self, name, args, kwargs, timeout):
        """One call of the learner's ``name``; return the reply read by :func:`wire.read_reply`.

        Exactly one reply is accepted: the first output that carries this call's nonce and reads
        as a reply. Every other output of the call is counted against the notebook's output cap
        and dropped.
        """
        nonce = secrets.token_hex(16)
        text = wire.request(name, args, kwargs, nonce)
        found, problems, seen = [], [], [0]

        def take(output):
            data = output.get("data", {})
            seen[0] += len(json.dumps(output))
            if found or wire.MIME not in data or seen[0] > 2 * wire.MAX_REPLY_CHARS:
                return  # counted and dropped: only this call's first reply is read
            try:
                found.append(wire.read_reply(data[wire.MIME], nonce))
            except wire.BadReply as problem:
                problems.append(str(problem))

        error, timed_out, died = self._run(f"__attention_course_call__({text!r})", timeout, take)
        if found:
            return found[0]
        if timed_out:
            raise CallFailed(f"did not return within {timeout:g} s", "timeout")
        if died:
            raise CallFailed("crashed the kernel (it exited, or ran out of memory or CPU time)",
                             "crashed")
        if seen[0] > 2 * wire.MAX_REPLY_CHARS:
            raise CallFailed("printed or displayed more output than the grader accepts", "flood")
        raise CallFailed("gave no reply the grader could read" +
                         (f" ({problems[0]})" if problems else f" ({error})" if error else ""))

    def install_agent(self, timeout=30):
        if self.alive():
            self.execute(agent.bootstrap(), timeout)


def _output_from(kind, content):
    if kind == "stream":
        return {"output_type": "stream", "name": str(content.get("name", "stdout")),
                "text": str(content.get("text", ""))}
    if kind == "error":
        return {"output_type": "error", "ename": str(content.get("ename")),
                "evalue": str(content.get("evalue")),
                "traceback": [str(t) for t in content.get("traceback", [])][:200]}
    kind = "display_data" if kind == "update_display_data" else kind
    output = {"output_type": kind, "data": dict(content.get("data", {})),
              "metadata": dict(content.get("metadata", {}))}
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output
