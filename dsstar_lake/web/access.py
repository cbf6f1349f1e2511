"""Who may reach `dslake serve`: loopback by default; another address only with --allow-remote and a token.

On loopback the Host header is checked too, so a page elsewhere cannot reach the server through DNS rebinding
(a name of its own that resolves to 127.0.0.1). Remotely every request carries the token: as `?token=` once,
which sets a cookie, or as `Authorization: Bearer TOKEN`.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any
from urllib.parse import parse_qs

from dsstar_lake.base.errors import UsageError

LOOPBACK_NAMES = ("localhost",)
MIN_TOKEN = 16  # characters: short enough to paste, long enough not to guess
COOKIE = "dslake_token"


def is_loopback(host: str) -> bool:
    """Return whether a bind address or Host name is this machine only (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool, token: str | None) -> None:
    """Refuse a non-loopback bind without --allow-remote and a long enough token (a UsageError says which)."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise UsageError(f"{host} is not a loopback address: the pages would be open to the network",
                         hint="keep the default 127.0.0.1, or give --allow-remote with --token "
                              "(or DSLAKE_SERVE_TOKEN)")
    if not token or len(token) < MIN_TOKEN:
        raise UsageError(f"--allow-remote needs a token of at least {MIN_TOKEN} characters",
                         hint="give --token TOKEN or set DSLAKE_SERVE_TOKEN, e.g. to the output of "
                              "`python -c 'import secrets; print(secrets.token_urlsafe())'`")


def check_port(host: str, port: int) -> None:
    """Raise UsageError when host:port cannot be bound (in use, or not an address of this machine)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closing socket is no bar
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(f"port {port} on {host} is in use", hint="give another with --port") from None
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


class Guard:
    """ASGI middleware: a Host check on loopback, a token check when serving remotely."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.token is None:
            if not is_loopback(_host_name(headers.get("host", ""))):
                await _refuse(send, 400, "this server answers only to 127.0.0.1, localhost or [::1]")
                return
            await self.app(scope, receive, send)
            return
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        bearer = headers.get("authorization", "")
        cookie = _cookie(headers.get("cookie", ""))
        candidates = [given, bearer[7:] if bearer.lower().startswith("bearer ") else "", cookie]
        if not any(c and secrets.compare_digest(c.encode(), self.token.encode()) for c in candidates):
            await _refuse(send, 401, "a token is needed: open the address with ?token=TOKEN")
            return
        if given:  # remember the token for the page's own links and forms
            await self.app(scope, receive, _with_cookie(send, self.token))
        else:
            await self.app(scope, receive, send)


def same_origin(origin: str | None, host: str | None) -> bool:
    """Return whether a POST's Origin header is this server (browsers send it on every form post)."""
    return bool(origin and host) and origin in (f"http://{host}", f"https://{host}")


def _host_name(header: str) -> str:
    """Return the name of a Host header without its port: `[::1]:8765` -> `::1`, `localhost:8765` -> `localhost`."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _cookie(header: str) -> str:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


def _with_cookie(send: Any, token: str) -> Any:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")
            message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
        await send(message)
    return wrapped


async def _refuse(send: Any, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})
