"""A loopback HTTP server speaking the Gemini and OpenAI REST shapes, for tests that use the real SDKs.

Only tests use it, so it lives here, not in the library (the scripted provider, a feature, stays there).
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):generateContent$")
OPENAI_PATH = re.compile(r"/chat/completions$")


@dataclass
class FakeReply:
    """One queued reply: an HTTP status, and either answer text or a raw body."""

    status: int = 200
    text: str | None = None
    body: str | bytes | dict | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class SeenRequest:
    """A request the server received."""

    api: str  # "gemini" | "openai"
    path: str
    model: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """Return the user text of the request."""
        if self.api == "gemini":
            return "".join(p.get("text", "") for c in self.body.get("contents", []) for p in c.get("parts", []))
        return "".join(m.get("content") or "" for m in self.body.get("messages", []) if m.get("role") == "user")

    @property
    def system(self) -> str | None:
        """Return the system text of the request, if any."""
        if self.api == "gemini":
            parts = (self.body.get("systemInstruction") or {}).get("parts", [])
            return "".join(p.get("text", "") for p in parts) or None
        texts = [m.get("content") or "" for m in self.body.get("messages", []) if m.get("role") == "system"]
        return "".join(texts) or None


class FakeLLMServer:
    """Serve `.../models/M:generateContent` and `.../chat/completions` on 127.0.0.1 from a reply queue.

    Queued FakeReply objects are used first, in order; when the queue is empty the server answers
    200 with `responder(request)` (default: "ok"). Usage counts are 1 token per 4 characters.
    """

    def __init__(self, responder: Callable[[SeenRequest], str] | None = None) -> None:
        self.responder = responder or (lambda request: "ok")
        self.replies: deque[FakeReply] = deque()
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # a short poll interval keeps stop() (shutdown waits for one poll) fast
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, status: int = 200, text: str | None = None, body: Any = None, **headers: str) -> None:
        """Queue one reply."""
        with self._lock:
            self.replies.append(FakeReply(status, text, body, {k.replace("_", "-"): v for k, v in headers.items()}))

    def start(self) -> FakeLLMServer:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, request: SeenRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        return FakeReply(200, self.responder(request))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                path = self.path.split("?", 1)[0]
                gemini = GEMINI_PATH.search(path)
                if gemini:
                    api, model = "gemini", gemini["model"]
                elif OPENAI_PATH.search(path):
                    api, model = "openai", str(body.get("model", ""))
                else:
                    self._send(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})
                    return
                request = SeenRequest(api, path, model, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._next(request)
                if reply.body is not None:
                    self._send(reply.status, reply.body, reply.headers)
                elif reply.status != 200:
                    self._send(reply.status, _error_body(api, reply.status), reply.headers)
                else:
                    text = reply.text if reply.text is not None else server.responder(request)
                    self._send(200, _success_body(request, text), reply.headers)

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body))
                payload = data.encode() if isinstance(data, str) else data
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _success_body(request: SeenRequest, text: str) -> dict[str, Any]:
    prompt_tokens = _tokens((request.system or "") + request.prompt)
    output_tokens = _tokens(text)
    if request.api == "gemini":
        return {
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}],
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": output_tokens,
                "totalTokenCount": prompt_tokens + output_tokens,
            },
            "modelVersion": request.model,
        }
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
        },
    }


_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def _error_body(api: str, status: int) -> dict[str, Any]:
    name = _STATUS.get(status, "UNKNOWN")
    if api == "gemini":
        return {"error": {"code": status, "message": f"fake {name}", "status": name}}
    return {"error": {"message": f"fake {name}", "type": name.lower(), "code": None}}


def gemini_bad_key_body() -> dict[str, Any]:
    """Return the body Gemini sends with a 400 for an invalid API key."""
    return {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}],
        }
    }


# Variables that change how the providers find keys and endpoints; tests clear them all.
LLM_ENV_VARS = (
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL",
    "OPENAI_API_KEY", "OPENAI_BASE_URL",
)


def llm_settings(**llm: Any):  # -> Settings
    """Return settings from the defaults only, with `llm.<key>` overrides and tiny retry delays.

    Keys with a dot go to open sections: llm_settings(**{"models.coder": "m", "pricing.m": [1, 2]}).
    """
    from dsstar_lake.base.settings import Settings

    overrides = {"llm.backoff_initial_s": 0.001, "llm.backoff_max_s": 0.01, "llm.max_retries": 2, "llm.timeout_s": 10.0}
    overrides.update({f"llm.{key}": value for key, value in llm.items()})
    return Settings.load(overrides=overrides, config_files=[], environ={})
