"""Terminal rendering for report: a live table of the sub-questions and their status, then a summary."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from dsstar_lake.terminal.results import safe

STYLE = {"queued": "dim", "running": "cyan", "answered": "green", "unverified": "yellow",
         "unanswered": "red", "skipped": "red"}


def _short(text: str, limit: int) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def question_table(questions: list[Any], whole: bool = False) -> Table:
    """Return the table of sub-questions: number, question, status, what it is doing or its answer.

    whole: keep every character of questions and answers (piped output, where cells fold) instead of one line.
    """
    table = Table("#", "sub-question", "status", "answer / doing", "run", expand=False)
    question_chars, answer_chars = (10_000, 10_000) if whole else (60, 50)
    for q in questions:
        shown = q.answer if q.answered else q.detail
        table.add_row(str(q.n), safe(_short(q.text, question_chars)), f"[{STYLE.get(q.status, '')}]{safe(q.status)}[/]",
                      safe(_short(shown or "", answer_chars)), safe(q.run_id or ""))
    return table


@contextlib.contextmanager
def report_progress(console: Console, enabled: bool = True) -> Iterator[Any]:
    """Yield a progress callback for Lake.report: a live table on a terminal, one line per event elsewhere."""
    if not enabled:
        yield lambda event, data: None
        return
    lock = threading.Lock()  # sub-questions report from their worker threads
    now: dict[str, Any] = {"questions": [], "phase": "starting"}

    def view() -> Group:
        return Group(question_table(now["questions"]), Text(now["phase"], style="dim"))

    live = None
    if console.is_terminal:  # the live view goes away at the end; print_report prints the final table
        live = Live(console=console, refresh_per_second=4, get_renderable=view, transient=True)

    def line(text: str) -> None:
        if live is None:
            console.print(text, highlight=False)

    def callback(event: str, data: dict[str, Any]) -> None:
        with lock:
            if event == "run":
                line(f"[dim]report run {data['run_id']}[/dim]")
            elif event == "context":
                line(f"context: {len(data['entries'])} entries retrieved")
            elif event == "phase":
                now["phase"] = data["text"]
                line(safe(data["text"]))
            elif event == "questions":
                now["questions"] = list(data["questions"])
                for q in data["questions"]:
                    if q.round == data["round"]:
                        line(f"  [{q.n}] {safe(q.text)}")
            elif event == "question" and data["question"].status not in ("queued", "running"):
                q = data["question"]
                line(f"  [{q.n}] [{STYLE.get(q.status, '')}]{q.status}[/]: "
                     f"{safe(_short(q.answer if q.answered else q.detail, 80))}")
            elif event == "done":
                now["phase"] = "done"

    with live if live is not None else contextlib.nullcontext():
        yield callback


def print_report(console: Console, report: Any) -> None:
    """Print where the report is, how many sub-questions were answered, what was flagged, and the cost."""
    console.print(question_table(report.questions, whole=not console.is_terminal))
    answered = len(report.answered)
    console.print(f"[bold]{safe(report.title)}[/bold]", highlight=False)
    for path in report.files:
        if path.endswith((".md", ".html")):
            console.print(f"  {safe(path)}", highlight=False)
    console.print(
        f"run {report.run_id} · {answered} of {len(report.questions)} sub-questions answered · "
        f"{report.rounds} refinement round{'s' if report.rounds != 1 else ''} · {report.llm_calls} calls · "
        f"{report.input_tokens}+{report.output_tokens} tokens · ${report.cost_usd:.4f} · "
        f"{report.seconds:.1f} s",
        highlight=False)
    for text in report.notes:
        console.print(f"[dim]note:[/dim] {safe(text)}", highlight=False)
    for text in report.problems:
        console.print(f"[yellow]flagged:[/yellow] {safe(text)}", highlight=False)

