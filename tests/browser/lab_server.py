"""Wait for a JupyterLab server started with ``--port=0``.

With port 0 the server binds a port the OS picks and prints its URL; a port
chosen beforehand (bind port 0, close, pass the number) could be taken by
another process of the test run before the server binds it.
"""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

SERVED = re.compile(r"http://127\.0\.0\.1:(\d+)/lab\?token=")


def lab_url(process: subprocess.Popen, log: Path, token: str, timeout_s: float) -> str:
    """The server's ``http://127.0.0.1:PORT`` once its status API answers."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        found = SERVED.search(log.read_text(errors="replace"))
        if found:
            url = f"http://127.0.0.1:{found.group(1)}"
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as answer:
                    if answer.status == 200:
                        return url
            except OSError:
                pass
        if time.monotonic() > deadline:
            pytest.fail(f"JupyterLab did not answer in {timeout_s} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
