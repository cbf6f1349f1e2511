"""Follow a running run with server-sent events: the run page's parts, sent again whenever they change.

The stream reads the run record (trace.jsonl, run.json, state.json, answer.json) and the manual prompt folder
rather than subscribing to the run's EventStream in this process: the record is where every run's events land,
whether the run was started from this page, from another server or by `dslake ask` in a terminal. Each tick a
stat of those files says whether anything changed; only then is the page rendered again, by the same templates
as the whole page, and only the parts whose HTML changed are sent. static/live.js puts them in place.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

POLL_S = 0.25  # how often the record is looked at (a stat of four files): rounds take seconds at least
KEEPALIVE_S = 15.0  # a comment line this often keeps proxies and the browser from closing a quiet stream
RECORD_FILES = ("trace.jsonl", "run.json", "state.json", "answer.json")


def message(event: str, data: dict[str, Any]) -> str:
    """Return one server-sent event (json.dumps writes no newline, so the data is one line)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def signature(folder: Path, manual: Path | None) -> tuple[Any, ...]:
    """Return what changes when the run writes anything, or a prompt is asked or answered."""
    seen: list[Any] = []
    for path in [*(folder / name for name in RECORD_FILES), *([manual] if manual else [])]:
        try:
            st = os.stat(path)
            seen.append((st.st_size, st.st_mtime_ns))
        except OSError:
            seen.append(None)
    return tuple(seen)


async def follow(parts: Callable[[], Any], call: Callable[..., Any], folder: Path, manual: Path | None,
                 disconnected: Callable[[], Any], extra: Callable[[], Any] | None = None) -> AsyncIterator[str]:
    """Yield the run page's changed parts as events until the run stops running (then `end`) or the client goes.

    parts: returns (the page's parts as {id, html, into?, keep?}, whether the run is still running);
    call: runs a function on the pages' worker thread; extra: what else changes the page (a pick offered).
    """
    sent: dict[str, str] = {}
    last: tuple[Any, ...] | None = None
    quiet_since = time.monotonic()
    while not await disconnected():
        now = (await call(signature, folder, manual), extra() if extra else None)
        if now != last:
            last = now
            shown, running = await call(parts)
            for part in shown:
                if sent.get(part["id"]) != part["html"]:
                    sent[part["id"]] = part["html"]
                    yield message("part", part)
            ids = {part["id"] for part in shown}
            for gone in [key for key in sent if key not in ids]:  # an answered prompt, a part no longer shown
                del sent[gone]
                yield message("gone", {"id": gone})
            if not running:
                yield message("end", {})
                return
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"
        await asyncio.sleep(POLL_S)
