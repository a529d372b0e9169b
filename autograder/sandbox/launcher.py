"""The first code a learner's kernel runs: it forbids new processes, then starts ipykernel on the
sockets the grader made.

The grading engine is not visible inside the sandbox, so this module's source is handed to the
kernel's interpreter as text (``python -c``, see :func:`command`). It runs before any learner
code and needs only the standard library, pyzmq and ipykernel.

- **One process.** A seccomp filter refuses every way of making a new process (``fork``,
  ``vfork``, ``clone`` without ``CLONE_THREAD``; ``clone3`` answers "not implemented", so the C
  library falls back to ``clone`` for threads), a new namespace (``unshare``, ``setns``: a user
  namespace of its own could mount a tmpfs outside every limit) and memory-backed files
  (``memfd_create``, ``memfd_secret``). Threads stay allowed: numpy, zmq and ipykernel use them.
  The kernel's one process then holds all of its memory, so its address-space limit is the
  kernel's total in every layout, with a control group or without one.
- **Sockets by descriptor.** The grader made a listening socket for each channel it reads (shell,
  iopub, control, stdin) in a folder of its own, and passed them to this process as open descriptors;
  ipykernel binds those channels to them (``ZMQ_USE_FD``) instead of creating socket files. No
  socket the grader connects to is a path the kernel can create, replace or link.

- **Dies with its grader.** The grader keeps one end of a socket pair whose other end this
  process holds (``lifeline=<fd>``); when the grader exits, however it exits, its end closes and
  this process exits. The parent-death signal on bubblewrap and its ``--die-with-parent`` should
  do the same, yet a grader killed at random once left bubblewrap and its kernel running (Linux
  clears a parent-death signal when a process changes its credentials, as bubblewrap does while
  it sets the sandbox up: the likely cause). The grader's end closes whatever the processes in
  between do. Learner code cannot hold it open: a socket, unlike a pipe, cannot be opened again
  through ``/proc``; the watcher's own ``read`` and ``_exit`` are taken before learner code runs,
  and a read already waiting goes on waiting on the socket when its descriptor is replaced.

``python -c SOURCE '{"<port>": <fd>, ...}' [lifeline=<fd>] -f CONNECTION_FILE``
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import struct
import sys
import threading
from pathlib import Path
from typing import Any

# Per machine: (audit architecture, new-process calls refused with EPERM, clone, clone3).
SYSCALLS = {
    "x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "unshare": 272, "setns": 308,
                            "memfd_create": 319, "memfd_secret": 447}, 56, 435),
    "aarch64": (0xC00000B7, {"unshare": 97, "setns": 268, "memfd_create": 279,
                             "memfd_secret": 447}, 220, 435),
}
CLONE_THREAD = 0x00010000
EPERM, ENOSYS = 1, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|..|K, BPF_RET|K


def one_process_filter(machine: str | None = None) -> bytes | None:
    """The seccomp program (classic BPF, as bytes) for this machine, or None where unknown."""
    known = SYSCALLS.get(machine or platform.machine())
    if known is None:
        return None
    arch, refused, clone, clone3 = known
    program = [(_LOAD, 0, 0, 4)]                                 # A = seccomp_data.arch
    program.append((_JEQ, 1, 0, arch))                           # another ABI (i386): refuse all
    program.append((_RET, 0, 0, _ERRNO | EPERM))
    program.append((_LOAD, 0, 0, 0))                             # A = seccomp_data.nr
    program.append((_JGE, 0, 1, 0x40000000))                     # the x32 ABI: refuse
    program.append((_RET, 0, 0, _ERRNO | EPERM))
    program.append((_JEQ, 0, 1, clone3))                         # flags unreadable: fall back
    program.append((_RET, 0, 0, _ERRNO | ENOSYS))
    for number in refused.values():
        program.append((_JEQ, 0, 1, number))
        program.append((_RET, 0, 0, _ERRNO | EPERM))
    program.append((_JEQ, 1, 0, clone))
    program.append((_RET, 0, 0, _ALLOW))
    program.append((_LOAD, 0, 0, 16))                            # A = low half of clone's flags
    program.append((_JSET, 0, 1, CLONE_THREAD))
    program.append((_RET, 0, 0, _ALLOW))                         # a thread of this process
    program.append((_RET, 0, 0, _ERRNO | EPERM))                 # a new process
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def forbid_new_processes() -> bool:
    """Install :func:`one_process_filter` in this process (and every thread it starts); return
    True when it holds."""
    program = one_process_filter()
    if program is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    word, zero = ctypes.c_ulong, ctypes.c_ulong(0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, word(1), zero, zero, zero) != 0:
        return False
    return bool(libc.prctl(PR_SET_SECCOMP, word(SECCOMP_MODE_FILTER), ctypes.byref(fprog), zero,
                           zero) == 0)


def watch_lifeline(fd: int) -> threading.Thread:
    """Exit this process as soon as the other end of the socket ``fd`` is closed (the grader that
    holds it has exited), from a thread of its own. The functions it calls are taken now, before
    any learner code runs, which could replace ``os.read`` or ``os._exit``."""
    read, exit_now = os.read, os._exit

    def wait() -> None:
        try:
            while read(fd, 4096):
                pass
        except OSError:
            pass
        exit_now(1)
    thread = threading.Thread(target=wait, name="lifeline", daemon=True)
    thread.start()
    return thread


def main() -> None:
    descriptors = {int(port): int(fd) for port, fd in json.loads(sys.argv.pop(1)).items()}
    if len(sys.argv) > 1 and sys.argv[1].startswith("lifeline="):
        watch_lifeline(int(sys.argv.pop(1).partition("=")[2]))
    if sys.path and sys.path[0] == "":  # as ipykernel_launcher: not the kernel's folder
        del sys.path[0]
    if not forbid_new_processes():
        sys.stderr.write("kernel launcher: new processes could not be forbidden here\n")
    # ipykernel imports debugpy, when it is installed, for a debugger no grading uses: a tenth of
    # a second of every kernel's start. A None in sys.modules makes that import fail at once.
    sys.modules["debugpy"] = None  # type: ignore[assignment]
    import zmq
    from ipykernel import kernelapp

    # ipykernel binds each channel in IPKernelApp._bind_socket(socket, port), a private method:
    # it has no public hook to serve a channel on a socket made by someone else. Wrapped here to
    # set ZMQ_USE_FD first; tests/sandbox/test_launcher.py fails if ipykernel drops or renames it.
    bind: Any = kernelapp.IPKernelApp._bind_socket

    def bind_to_descriptor(app: Any, socket: Any, port: int) -> Any:
        if port in descriptors:
            socket.setsockopt(zmq.USE_FD, descriptors[port])
        return bind(app, socket, port)

    setattr(kernelapp.IPKernelApp, "_bind_socket", bind_to_descriptor)
    # ipykernel sleeps 0.5 ms after every execution, once a tenth of a call's round trip: the
    # grader tells outputs apart by their request's id, and iopub keeps their order.
    kernelapp.launch_new_instance(sys.argv[1:] + ["--Kernel._execute_sleep=0"])


def source() -> str:
    """This module's source text: what the kernel's interpreter runs (the engine is not visible
    inside the sandbox)."""
    with open(__file__.replace(".pyc", ".py"), encoding="utf-8") as handle:
        return handle.read()


def command(python: str, descriptors: dict[int, int], connection_file: str | Path,
            lifeline: int | None = None) -> list[str]:
    """The kernel's command line: ``descriptors`` maps each port of the connection file to the
    listening socket (an inherited descriptor) that channel is served on; ``lifeline`` is the
    inherited descriptor of the kernel's end of the grader's socket pair (see the module's notes)."""
    return [python, "-c", source() + "\nmain()\n", json.dumps(descriptors),
            *([f"lifeline={lifeline}"] if lifeline is not None else []), "-f",
            str(connection_file)]
