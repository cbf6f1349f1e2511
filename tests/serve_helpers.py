"""Shared pieces for the `dslake serve` tests: a real server on 127.0.0.1, urllib fetches and event streams, and\nDebian's headless Chromium driven by playwright."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None  # Debian's package
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


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


def fetch_bytes(url: str) -> tuple[int, bytes, dict[str, str]]:
    """GET a URL as bytes (an image): status, body and headers (an error status is returned, not raised)."""
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def events(url: str, deadline_s: float = 240.0) -> Iterator[tuple[str, dict[str, Any]]]:
    """Read a server-sent event stream: (event, data) as each arrives, until the server ends it or the deadline."""
    deadline = time.monotonic() + deadline_s
    with urllib.request.urlopen(url, timeout=120) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event, data = "message", []
        for raw in response:
            assert time.monotonic() < deadline, f"no end of {url} in {deadline_s:g} s"
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                yield event, json.loads("\n".join(data))
                event, data = "message", []


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """Launch Debian's Chromium through playwright's driver (never a downloaded browser), headless."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()
