"""A learner's kernel: start it confined, run cells with timeouts, call functions through the wire.

Every way a kernel can misbehave (a cell that never returns, a crash, an exit, a flood of output)
ends in a :class:`CellResult` or :class:`CallFailed` with a sentence for the learner, never in an
exception that stops the grading of the class.
"""
import dataclasses
import json
import os
import queue
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client import KernelManager

from . import sandbox, wire

MAX_OUTPUT_CHARS = 20_000  # per cell; the rest is dropped with a note


@dataclasses.dataclass
class CellResult:
    outputs: list
    error: str = ""          # one line for the learner, empty when the cell ran cleanly
    timed_out: bool = False
    died: bool = False


class CallFailed(Exception):
    """A call into the kernel produced no usable reply (timeout, crash, missing reply)."""


class _ConfinedKernelManager(KernelManager):
    """A KernelManager whose launch command is wrapped by the sandbox and resource limits."""

    wrap = None  # set per instance: list -> list

    def format_kernel_cmd(self, extra_arguments=None):
        return self.wrap(super().format_kernel_cmd(extra_arguments))


class KernelSession:
    """One learner kernel living in its own scratch folder."""

    def __init__(self, workdir=None, sandboxed=False, limits=None, hidden=(),
                 startup_timeout=60, env_extra=None):
        self._own_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="attention-grade-")).resolve()
        self.sandboxed = sandboxed
        self.limits = limits or sandbox.Limits()
        self.hidden = tuple(hidden)
        self.startup_timeout = startup_timeout
        self.env_extra = dict(env_extra or {})
        self.km = None
        self.kc = None
        self.cgroup = None
        self.restarts = 0

    # ------------------------------------------------------------ lifecycle
    def start(self):
        runtime = self.workdir / ".kernel"
        runtime.mkdir(parents=True, exist_ok=True)
        km = _ConfinedKernelManager(kernel_name="python3", transport="ipc",
                                    connection_file=str(runtime / "kernel.json"))
        km.ip = str(runtime / "ipc")
        # Signals reach the sandbox's init, not the kernel: interrupt through the control channel.
        km.kernel_spec.interrupt_mode = "message"
        self.cgroup = sandbox.Cgroup(f"attention-{os.getpid()}-{id(self):x}-{self.restarts}",
                                     self.limits)
        km.wrap = lambda cmd: sandbox.command(
            [sys.executable if c in ("python", "python3", "{python}") else c for c in cmd],
            self.workdir, self.sandboxed, self.limits, self.hidden, self.cgroup)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NBGRADER", "JPY_", "JUPYTER", "PYTEST", "ATTENTION_COURSE"))}
        env.update({
            "HOME": str(self.workdir), "TMPDIR": str(self.workdir),
            "IPYTHONDIR": str(runtime / "ipython"), "MPLCONFIGDIR": str(runtime / "mpl"),
            "JUPYTER_RUNTIME_DIR": str(runtime), "MPLBACKEND": "Agg",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        })
        env.update(self.env_extra)
        km.start_kernel(env=env, cwd=str(self.workdir))
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=self.startup_timeout)
        except RuntimeError as error:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            raise CallFailed(f"the kernel did not start ({error})") from error
        self.km, self.kc = km, kc
        return self

    def shutdown(self):
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:
                pass
        if self.cgroup is not None:
            self.cgroup.close()  # whatever the kernel started dies with it
        self.km = self.kc = self.cgroup = None

    def restart(self):
        self.shutdown()
        self.restarts += 1
        self.start()

    def alive(self):
        return self.km is not None and self.km.is_alive()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.shutdown()

    # ------------------------------------------------------------ running code
    def execute(self, code, timeout):
        """Run ``code``; collect its outputs; never raise for what the code does."""
        if not self.alive():
            return CellResult([], "the kernel is not running", died=True)
        kc = self.kc
        while True:  # drop anything left over from an earlier, interrupted request
            try:
                kc.iopub_channel.get_msg(timeout=0)
            except queue.Empty:
                break
        msg_id = kc.execute(code, store_history=False, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        outputs, size, error, idle = [], 0, "", False
        while not idle:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._timed_out(outputs, timeout, msg_id)
            try:
                msg = kc.iopub_channel.get_msg(timeout=min(0.25, remaining))
            except queue.Empty:
                if not self.km.is_alive():
                    return CellResult(outputs, "the kernel died (crashed, exited, or ran out of "
                                      "memory or CPU time)", died=True)
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                output = _output_from(kind, content)
                if wire.MIME in output.get("data", {}):  # a wire reply is not learner output
                    outputs.append(output)
                    continue
                size += len(json.dumps(output))
                if size <= MAX_OUTPUT_CHARS:
                    outputs.append(output)
                elif size - len(json.dumps(output)) <= MAX_OUTPUT_CHARS:
                    outputs.append(_output_from("stream", {
                        "name": "stdout", "text": "\n[output truncated by the grader]\n"}))
                if kind == "error":
                    error = f"{content['ename']}: {content['evalue']}"[:500]
        return CellResult(outputs, error)

    def _timed_out(self, outputs, timeout, msg_id):
        try:
            self.km.interrupt_kernel()
            reply_deadline = time.monotonic() + 3
            while time.monotonic() < reply_deadline:  # wait for the interrupted cell to finish
                try:
                    msg = self.kc.iopub_channel.get_msg(timeout=0.25)
                except queue.Empty:
                    continue
                if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                        and msg["content"]["execution_state"] == "idle"):
                    break
            else:
                self.shutdown()  # ignored the interrupt: kill it; the caller may restart
        except Exception:
            self.shutdown()
        return CellResult(outputs, f"timed out after {timeout:g} s", timed_out=True,
                          died=not self.alive())

    # ------------------------------------------------------------ calling functions
    def call(self, request_text, timeout):
        """Send one wire request; return the decoded reply dict or raise CallFailed."""
        result = self.execute(f"__attention_course_call__({request_text!r})", timeout)
        if result.timed_out:
            raise CallFailed(f"did not return within {timeout:g} s")
        if result.died:
            raise CallFailed("crashed the kernel (it exited, or ran out of memory or CPU time)")
        for output in result.outputs:
            data = output.get("data", {})
            if wire.MIME in data:
                reply = data[wire.MIME]
                return json.loads(reply) if isinstance(reply, str) else reply
        raise CallFailed("no reply came back from the kernel" +
                         (f" ({result.error})" if result.error else ""))


def _output_from(kind, content):
    if kind == "stream":
        return {"output_type": "stream", "name": content["name"], "text": content["text"]}
    if kind == "error":
        return {"output_type": "error", "ename": content["ename"], "evalue": content["evalue"],
                "traceback": content["traceback"]}
    output = {"output_type": kind, "data": content.get("data", {}),
              "metadata": content.get("metadata", {})}
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output
