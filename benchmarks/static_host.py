"""A live page's folder served as a static host serves it, `python -m http.server` on a free port: the Space and Hub
benchmarks (space_speed.py, hub_live.py) open it in Chromium."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from load import free_port


def served(folder: Path) -> tuple[subprocess.Popen, str]:
    """`python -m http.server` serving `folder`, once it answers: the process (stopped by its id) and its address."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, f"http://127.0.0.1:{port}/"
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise TimeoutError(f"http.server did not answer on port {port}")
