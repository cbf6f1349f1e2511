"""Ask from the page: `lake.ask` in a background thread, and the manual provider's prompts answered in a form.

The run page follows a running run through server-sent events (web/live.py), or by reloading itself without
JavaScript. With the manual provider and a prompt folder, each run's pending prompts (their NNNN-ROLE.meta.json
names the run) are shown with a box for the answer, which is written where the provider waits for it
(NNNN-ROLE.response.md, through a temporary file and a rename, so it is never read half-written).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import DslakeError

if TYPE_CHECKING:
    # Typing only: the front doors sit above the facade they serve (tests/test_layers.py).
    from dsstar_lake.lake import Lake

STEM = re.compile(r"^\d{4,}-[A-Za-z0-9_-]{1,60}$")
START_WAIT_S = 20.0  # how long POST /ask waits for the run's folder to appear before showing the run list
MAX_QUESTION = 4000
PICK_WAIT_S = 600.0  # how long a run waits for the person to pick a reading on its page; then the model chooses
PICKED_ON_PAGE = "the user picked it on the web page"


class Asks:
    """Start asks in background threads and hand manual prompts to the page."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.failures: dict[str, str] = {}  # question -> why it stopped before its run existed
        # run id -> the readings a run waits for the person to pick between (ask --clarify, on the page)
        self.picks: dict[str, dict[str, Any]] = {}
        self.picks_changed = 0  # counts picks offered and settled: the run page's event stream follows it

    def ready(self) -> str | None:
        """Return None when the page may start an ask, else why not (one line)."""
        from dsstar_lake.llm.registry import check_configured, provider_name

        try:
            check_configured(self.lake.settings)
        except DslakeError as exc:  # with the hint: the ways to configure a model, every provider named
            return f"{exc.message}; {exc.hint}" if exc.hint else exc.message
        if provider_name(self.lake.settings) == "manual" and not self.manual_dir():
            return "the manual provider answers from the page only with a prompt folder: give --manual-dir DIR"
        return None

    def start(self, question: str, clarify: bool = False) -> str | None:
        """Start `lake.ask(question)` in the background; return its run id once its folder exists (else None).

        clarify: when the readings give different answers, the run waits for the person to pick one on its page
        (PICK_WAIT_S at most, then the model chooses), as `dslake ask --clarify` does on a terminal."""
        from dsstar_lake.runs.record import list_runs

        before = {r["id"] for r in list_runs(self.lake.catalog_dir)}
        slot: dict[str, str | None] = {"run_id": None}

        def pick(question: str, readings: list[dict[str, str]]) -> int | None:
            run_id = slot["run_id"]
            if run_id is None:
                return None
            waiting: dict[str, Any] = {"readings": readings, "done": threading.Event(), "choice": None}
            self.picks[run_id] = waiting
            self.picks_changed += 1
            try:
                waiting["done"].wait(PICK_WAIT_S)
            finally:
                self.picks.pop(run_id, None)
                self.picks_changed += 1
            return waiting["choice"]

        pick.because = PICKED_ON_PAGE  # type: ignore[attr-defined]

        def run() -> None:
            try:
                self.lake.ask(question, clarify=pick if clarify else None)
            except DslakeError as exc:  # the run record keeps the failure; this keeps one that came before it
                self.failures[question] = exc.message
            finally:
                self.lake.close()  # this thread's connection

        worker = threading.Thread(target=run, name="dslake-serve-ask", daemon=True)
        worker.start()
        deadline = time.monotonic() + START_WAIT_S
        while time.monotonic() < deadline:
            new = [r["id"] for r in list_runs(self.lake.catalog_dir) if r["id"] not in before]
            if new:
                slot["run_id"] = new[0]
                return new[0]
            if not worker.is_alive():
                return None
            time.sleep(0.1)
        return None

    def pick(self, run_id: str, choice: str) -> bool:
        """Settle a run's waiting pick: a reading's number, or '' to let the model choose; False when none waits."""
        waiting = self.picks.get(run_id)
        if waiting is None or waiting["done"].is_set():
            return False
        n = int(choice) if choice.isdigit() else None
        waiting["choice"] = n if n is not None and 1 <= n <= len(waiting["readings"]) else None
        waiting["done"].set()
        return True

    def manual_dir(self) -> Path | None:
        """Return the manual provider's prompt folder, when that is the provider and it has one."""
        from dsstar_lake.llm.registry import provider_name

        if provider_name(self.lake.settings) != "manual":
            return None
        folder = self.lake.settings.llm.manual_dir
        return Path(folder).expanduser() if folder else None

    def pending(self, run_id: str | None = None) -> list[dict[str, str]]:
        """Return the manual prompts still waiting for an answer, oldest first (only run_id's, when given)."""
        folder = self.manual_dir()
        if folder is None or not folder.is_dir():
            return []
        out = []
        for prompt in sorted(folder.glob("*.prompt.md")):
            stem = prompt.name.removesuffix(".prompt.md")
            if not STEM.match(stem) or (folder / f"{stem}.response.md").exists() or prompt.is_symlink():
                continue
            if run_id is None or _run_of(folder, stem) == run_id:
                text = prompt.read_text(encoding="utf-8", errors="replace")
                context, instructions = split_instructions(text)
                out.append({"stem": stem, "prompt": text, "context": context, "instructions": instructions})
        return out

    def answer(self, stem: str, text: str) -> bool:
        """Write the answer to a pending manual prompt; False when there is no such prompt waiting."""
        folder = self.manual_dir()
        if folder is None or not STEM.match(stem) or not text.strip():
            return False
        if stem not in {p["stem"] for p in self.pending()}:
            return False
        partial = folder / f".{stem}.response.part"
        partial.write_text(text.strip() + "\n", encoding="utf-8")
        os.replace(partial, folder / f"{stem}.response.md")
        return True


def _run_of(folder: Path, stem: str) -> str | None:
    """Return the run a manual prompt belongs to, from its meta file (None when it has none)."""
    try:
        meta = json.loads((folder / f"{stem}.meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("run_id") if isinstance(meta, dict) else None


# The heading under which a prompt says what to answer (agent/prompts/*.txt: '# Your task', '# Task', '# Requirement',
# a repeated prompt's '# Reminder'); the question and the data come above it.
_TASK_HEADING = re.compile(r"^# (?:Your task|Task|Requirements?|Reminder)\b.*$", re.M)


def split_instructions(prompt: str) -> tuple[str, str]:
    """Return (what a prompt gives: question and data, what it asks: from its last task heading to the end), so a
    person reads what to answer first; ('', prompt) when it has no such heading. The last heading: the data above
    it is the lake's text and may hold a heading of the same name."""
    found = list(_TASK_HEADING.finditer(prompt))
    if not found:
        return "", prompt
    at = found[-1].start()
    return prompt[:at].rstrip("\n"), prompt[at:]
