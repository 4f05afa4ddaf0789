"""Test kernels talk over Unix sockets (ZeroMQ ipc), not TCP ports.

jupyter_client chooses a kernel's five TCP ports by binding port 0 and closing
the socket; the kernel binds them a moment later. `make test` starts kernels on
two workers beside Chromium, JupyterLab and pip, whose connections draw from
the same ephemeral range, so a port can be taken in between. If it is the
IOPub port, the kernel process stays alive and never replies (measured: an
ipykernel given a taken IOPub port answers no kernel_info in 30 s), and nbval
waits out its 60 s startup timeout: CI failed so on 2026-12-01 ("Kernel didn't
respond in 60 seconds" at the start of chapter 31's nbval). A socket file named
after a fresh uuid cannot be taken by anyone else.

Loaded by the repository's conftest.py (every pytest run in the repository)
and with ``-p ipc_kernels`` by the course test's nbval run.
"""

import os
import tempfile
import uuid

import nbval.kernel
from jupyter_client.manager import KernelManager


def socket_folder() -> str:
    """The temp folder, or /tmp when it is too long: a socket path has at most
    107 bytes, and a kernel's is this folder plus about 50."""
    folder = tempfile.gettempdir()
    return folder if len(folder) <= 48 else "/tmp"


class IpcKernelManager(KernelManager):
    """A KernelManager whose sockets are files under ``socket_folder()``."""

    def __init__(self, **kwargs):
        stem = os.path.join(socket_folder(), f"kernel-{uuid.uuid4()}")
        super().__init__(transport="ipc", ip=f"{stem}-ipc",
                         connection_file=f"{stem}.json", **kwargs)


def pytest_configure(config):
    # nbval.kernel.start_new_kernel (nbval's cells and tests/notebook_rules.Kernel)
    # looks KernelManager up in its module at each call.
    nbval.kernel.KernelManager = IpcKernelManager
