"""The kernels of the test run use ipc sockets (tests/ipc_kernels.py)."""

from pathlib import Path

from notebook_rules import Kernel, visible_text


def test_a_test_kernel_answers_over_ipc_and_leaves_no_socket(tmp_path):
    with Kernel(tmp_path) as kernel:
        assert kernel.manager.transport == "ipc"
        sockets = [Path(f"{kernel.manager.ip}-{kernel.manager.shell_port}"),
                   Path(f"{kernel.manager.ip}-{kernel.manager.iopub_port}")]
        assert all(path.is_socket() for path in sockets), sockets
        assert visible_text(kernel.run("print(6 * 7)")) == "42\n"
    assert not any(path.exists() for path in sockets), "a socket file was left behind"
