"""Sub-questions: what the generator proposes (from the request, then from a draft's gaps), and reading it."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from dsstar_lake.agent.prompts import ask_with_reminder
from dsstar_lake.base.untrusted import visible

if TYPE_CHECKING:
    from dsstar_lake.llm.call import LLM

JSON_LIST = re.compile(r"\[.*\]", re.S)
LISTED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(?P<text>.+?)\s*$")
EXPECTED = 'a JSON list of {"question": "...", "chart": "..."} objects'
# Statuses of a sub-question, in the order it goes through them.
STATUSES = ("queued", "running", "answered", "unverified", "unanswered", "skipped")


@dataclass
class SubQuestion:
    """One analytical sub-question ([n] in the report), and what answering it produced."""

    n: int
    text: str
    round: int = 0  # 0 = from the request; r = proposed from the draft of refinement round r
    chart: str = ""  # the chart the generator asked for, if any
    status: str = "queued"
    detail: str = ""  # what is happening now (running) or why it failed (unanswered, skipped)
    answer: str = ""
    verified: bool = False
    run_id: str | None = None
    figures: list[str] = field(default_factory=list)  # report-relative paths: figures/q<n>-<name>
    script: str = ""  # the script that printed the answer (solution.py of its run)
    script_name: str = ""
    seconds: float = 0.0
    # The readings the answer rests on (dsstar_lake/agent/readings.py): stated with the figures cited from it.
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[dict[str, str]] = field(default_factory=list)  # reading, value, how
    chosen: dict[str, str] = field(default_factory=dict)  # the reading chosen among differing ones, and why
    files_used: list[str] = field(default_factory=list)  # lake files its run's final script read (its answer.json)

    @property
    def answered(self) -> bool:
        """Tell whether this sub-question has an answer that can be cited."""
        return self.status in ("answered", "unverified")

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubQuestion:
        """Rebuild from to_dict()."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def parse_questions(text: str) -> list[tuple[str, str]] | None:
    """Return (question, chart) pairs from a JSON list (objects or strings), else a numbered list; or None."""
    text = text or ""
    for candidate in [m.group(0) for m in JSON_LIST.finditer(text)] + [text]:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            data = data.get("questions", data.get("sub_questions"))
        if isinstance(data, list):
            return [pair for item in data if (pair := _pair(item))]
    lines = [m["text"] for line in text.splitlines() if (m := LISTED.match(line))]
    found = [(line.strip("*_ "), "") for line in lines if line.rstrip("*_ ").endswith("?")]
    return found or None


def _pair(item: Any) -> tuple[str, str] | None:
    if isinstance(item, str):
        return (item.strip(), "") if item.strip() else None
    if isinstance(item, dict):
        question = str(item.get("question") or item.get("text") or "").strip()
        chart = item.get("chart") or ""
        return (question, str(chart).strip()) if question else None
    return None


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def new_questions(pairs: list[tuple[str, str]], asked: list[SubQuestion], limit: int, round_no: int
                  ) -> list[SubQuestion]:
    """Number the proposed questions after those already asked, dropping repeats, keeping at most `limit`."""
    seen = {_key(q.text) for q in asked}
    out: list[SubQuestion] = []
    for text, chart in pairs:
        if _key(text) in seen or len(out) >= limit:
            continue
        seen.add(_key(text))
        out.append(SubQuestion(n=len(asked) + len(out) + 1, text=text, round=round_no, chart=chart))
    return out


def asked_text(questions: list[SubQuestion]) -> str:
    """Return the numbered list of sub-questions asked so far, for the refinement prompt."""
    # One line each: a model-written question with a newline cannot start a section of the prompt.
    return "\n".join(f"[{q.n}] {visible(q.text)}" for q in questions) or "(none)"


def generate(llm: LLM, prompt: str) -> list[tuple[str, str]] | None:
    """Ask the sub-question generator; if unreadable, ask once more with a reminder; None if still unread."""
    pairs, _ = ask_with_reminder(lambda text: llm.complete("subquestion", text).text, prompt, parse_questions, EXPECTED)
    return pairs
