"""Shared pieces for the `dslake serve` tests: a real server on 127.0.0.1, urllib fetches, headless Chromium."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    """Return a port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """uvicorn serving build_app(lake) on 127.0.0.1 in a thread, as `dslake serve` does in its process."""

    def __init__(self, lake: Any, token: str | None = None) -> None:
        import uvicorn

        from dsstar_lake.web.app import SHUTDOWN_S, build_app

        self.port = free_port()
        config = uvicorn.Config(build_app(lake, token), host="127.0.0.1", port=self.port, log_level="warning",
                                timeout_graceful_shutdown=SHUTDOWN_S)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    """GET a URL: status, body text and headers (an error status is returned, not raised)."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8"), dict(exc.headers)


def chromium(url: str, tmp: Path, name: str) -> str:
    """Load a page in headless Chromium: save a screenshot as tmp/NAME.png and return the rendered DOM."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp / 'chromium-profile'}", "--window-size=1280,1600"]
    shot = tmp / f"{name}.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True)
    assert shot.is_file() and shot.stat().st_size > 1000, f"no screenshot of {url}"
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120,
                         check=True)
    return dom.stdout
