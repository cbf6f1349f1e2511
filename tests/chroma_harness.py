"""A real Chroma server on 127.0.0.1 (`chroma run`), for the tests of server mode.

Only tests start one, so it lives here, not in index/vectors.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslake_index.errors import CatalogError

# The heartbeat goes straight to the local server, never through a proxy from the environment.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class ChromaServer:
    """A `chroma run` process serving one folder on host:port."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    path: Path
    log_path: Path
    _log: Any = field(default=None, repr=False)
    _own_log: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        """Return http://HOST:PORT for VectorStore.open(url=…)."""
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        """Return the chroma process id."""
        return self.process.pid

    def log_tail(self, n_bytes: int = 2000) -> str:
        """Return the end of the server's output."""
        try:
            return self.log_path.read_bytes()[-n_bytes:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> int:
        """Stop the server with SIGTERM (SIGKILL after timeout) and return its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_log:
            self.log_path.unlink(missing_ok=True)
        return int(self.process.returncode)

    def __enter__(self) -> ChromaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def chroma_executable() -> str:
    """Return the `chroma` CLI that ships with chromadb (next to this Python, else on PATH)."""
    beside = Path(sys.executable).parent / "chroma"
    if beside.exists():
        return str(beside)
    found = shutil.which("chroma")
    if not found:
        raise CatalogError("the `chroma` command is not installed", hint="pip install chromadb")
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on host right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def start_chroma_server(
    path: Path, port: int = 0, host: str = "127.0.0.1", timeout: float = 60.0, log_path: Path | None = None
) -> ChromaServer:
    """Start `chroma run --path DIR --host HOST --port P` and wait until its heartbeat answers (port 0 = free)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    port = port or free_port(host)
    own_log = log_path is None
    if log_path is None:
        fd, name = tempfile.mkstemp(prefix=f"chroma-{port}-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    log = open(log_path, "wb")
    command = [chroma_executable(), "run", "--path", str(path), "--host", host, "--port", str(port)]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
    )
    server = ChromaServer(process, host, port, path, log_path, log, own_log)
    deadline = time.monotonic() + timeout
    heartbeat = f"http://{host}:{port}/api/v2/heartbeat"
    while True:
        if process.poll() is not None:
            tail = server.log_tail(600)
            server.stop()
            raise CatalogError(
                f"chroma run exited with code {process.returncode} before answering",
                hint=f"its output ends with: {tail}",
            )
        try:
            with _NO_PROXY.open(heartbeat, timeout=1) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            tail = server.log_tail(600)
            server.stop()
            raise CatalogError(
                f"chroma server on {host}:{port} did not answer within {timeout:.0f} s",
                hint=f"its output ends with: {tail}",
            )
        time.sleep(0.05)
