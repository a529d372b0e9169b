"""The launcher (autograder/sandbox/launcher.py), which starts the kernel on the grader's sockets."""


def test_the_launcher_finds_the_private_hook_it_needs_in_ipykernel():
    """The launcher serves each channel on the grader's socket through ipykernel's private
    ``IPKernelApp._bind_socket(socket, port)`` (ipykernel has no public hook for it): this fails,
    rather than every kernel failing to start, the day ipykernel drops or changes it."""
    import inspect

    from ipykernel.kernelapp import IPKernelApp
    assert list(inspect.signature(IPKernelApp._bind_socket).parameters) == ["self", "s", "port"]
