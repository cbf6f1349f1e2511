"""Terminal rendering for ask and runs: live progress, the answer, run lists and one run (JSON bypasses these)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console

from dsstar_lake.terminal.results import safe
from dsstar_lake.views.selection import selection_heading


def _short(text: str, limit: int = 70) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@contextlib.contextmanager
def ask_progress(console: Console, enabled: bool = True) -> Iterator[Any]:
    """Yield a progress callback for Lake.ask: a live status line (round, role, step) and one line per round."""
    if not enabled:
        yield lambda event, data: None
        return
    live = console.is_terminal
    status = console.status("starting", spinner="dots") if live else contextlib.nullcontext()
    now: dict[str, Any] = {"round": 0, "step": "", "n": 0}

    def say(line: str) -> None:
        if live:
            console.print(line, highlight=False)

    def callback(event: str, data: dict[str, Any]) -> None:
        if event == "warning":
            console.print(f"[yellow]warning:[/yellow] {safe(data['text'])}", highlight=False)
        elif event == "interrupted":
            return
        elif event == "run":
            say(f"[dim]run {safe(data['run_id'])}{' (resumed)' if data.get('resumed') else ''}[/dim]")
        elif event == "context":
            how = "given" if data.get("given") else "candidates retrieved"
            say(f"context: {len(data['entries'])} {how}: {safe(_short(', '.join(data['entries']), 100))}")
        elif event == "selection":
            by = "by the selector" if data["by"] == "selector" else f"by relevance: {data.get('why', '')}"
            chosen = ", ".join(item["path"] for item in data["entries"])
            say(f"chosen {safe(_short(by, 70))}: {safe(_short(chosen, 100))}")
        elif event == "step":
            now.update(round=data["round"], step=data["step"], n=len(data["plan"]))
        elif event == "round":
            mark = "[green]ran[/green]" if data["ok"] else "[red]failed[/red]"
            say(f"round {data['round'] + 1}: step {now['n']} {mark}: {safe(_short(now['step']))}")
        elif event == "verdict":
            say(f"  verifier: {'[green]sufficient[/green]' if data['sufficient'] else 'not yet'}")
        elif event == "view":
            say(f"  described whole from now on: {safe(_short(', '.join(data['whole']), 100))}")
        elif event == "re_retrieval" and not data.get("skipped"):
            added = ", ".join(data["added"]) or "nothing new"
            say(f"  missing data: {safe(_short(data['missing'], 60))} → added {safe(added)}")
        if live and event == "clarify":  # a person is asked to pick: the spinner must not draw over the question
            status.stop()
            now["paused"] = True
            return
        if live and now.get("paused"):
            status.start()
            now["paused"] = False
        if live and event == "run":
            status.update("finding the files for the question" if not data.get("resumed") else "resuming")
        if live and event in ("role", "exec_start", "finalize"):
            what = data.get("role") or ("running " + data["name"] if event == "exec_start" else "finalyzer")
            status.update(f"round {now['round'] + 1} · {what} · step {now['n']}: {safe(_short(now['step'], 60))}")

    with status:
        yield callback


def terminal_pick(console: Console, read_key: Callable[[], str]) -> Callable[[str, list[dict[str, str]]], int | None]:
    """Return the person's pick between readings that give different answers: one keypress, any other key skips."""

    def pick(question: str, readings: list[dict[str, str]]) -> int | None:
        console.print("The readings of the question give different answers; which one does it mean?", highlight=False)
        for i, reading in enumerate(readings, 1):
            console.print(f"  {i}. {safe(reading.get('reading', ''))}: {safe(reading.get('value', ''))}",
                          highlight=False)
        console.print(f"press 1-{len(readings)} (another key lets the model choose): ", end="", highlight=False)
        key = read_key().strip()  # a terminal still in line mode hands the key over with its Enter
        console.print(safe(key), highlight=False)
        return int(key) if key.isdigit() and 1 <= int(key) <= len(readings) else None

    return pick


def print_answer(console: Console, answer: Any) -> None:
    """Print the answer, the files used and the run id, with what the run cost."""
    from rich.panel import Panel

    title = "answer" + ("" if answer.verified else " (not verified)")
    console.print(Panel(safe(answer.text or "(no answer)", multiline=True), title=title, title_align="left"))
    chosen = getattr(answer, "chosen", None) or {}
    if chosen.get("reading"):  # readings gave different answers: which one the answer takes, and why
        console.print(f"chosen reading: {safe(chosen['reading'])} because {safe(chosen.get('because', ''))}",
                      highlight=False)
    overridden = getattr(answer, "overridden", None) or {}
    if overridden.get("by"):  # the answer is not what the final script printed: say whose it is, and both values
        console.print(f"[yellow]answer overridden by the {safe(overridden['by'])}:[/yellow] the final script printed "
                      f"{safe(_short(overridden.get('final_script', ''), 100))}; {safe(overridden.get('reason', ''))}",
                      highlight=False)
    print_readings(console, answer.assumptions, answer.alternatives, getattr(answer, "stated", None) or [])
    console.print(f"files used: {safe(', '.join(answer.files_used) or '(none detected)')} (as the read trace saw "
                  "them)", highlight=False)
    for problem in getattr(answer, "trace_problems", None) or []:
        console.print(f"[yellow]read trace:[/yellow] {safe(problem)}", highlight=False)
    console.print(
        f"run {safe(answer.run_id)} · {answer.rounds} round{'s' if answer.rounds != 1 else ''} · "
        f"{safe(answer.stop_reason or 'stopped')} · "
        f"{answer.re_retrievals} re-retrievals · {answer.backtracks} backtracks · {answer.llm_calls} calls · "
        f"{answer.input_tokens}+{answer.output_tokens} tokens · ${answer.cost_usd:.4f} · {answer.seconds:.1f} s",
        highlight=False,
    )
    if answer.error:
        console.print(f"[yellow]note:[/yellow] {safe(answer.error)}", highlight=False)


def print_readings(console: Console, assumptions: list[str], alternatives: list[dict[str, str]],
                   stated: list[dict[str, str]] | None = None) -> None:
    """Print the assumptions an answer rests on, the other readings' values and the figures the data states."""
    if assumptions:
        console.print("assumptions:", highlight=False)
        for sentence in assumptions:
            console.print(f"  - {safe(sentence)}", highlight=False)
    if alternatives:
        console.print("other readings:", highlight=False)
        for alt in alternatives:
            how = f" ({safe(alt.get('how'))})" if alt.get("how") else ""
            console.print(f"  - {safe(alt.get('reading', ''))}: {safe(alt.get('value', ''))}{how}", highlight=False)
    if stated:
        console.print("stated in the data:", highlight=False)
        for figure in stated:
            console.print(f"  - {safe(figure.get('reading', ''))}: {safe(figure.get('value', ''))}", highlight=False)


def print_runs(console: Console, runs: list[dict[str, Any]]) -> None:
    """Print the runs as a table."""
    from rich.table import Table

    if not runs:
        console.print("no runs yet (dslake ask QUESTION)")
        return
    table = Table("run", "kind", "when", "status", "question / request", "answer / title", "rounds", "cost")
    table.columns[0].no_wrap = True
    # On a terminal a row stays one line; piped, the table keeps whole questions and answers (cells fold).
    question_chars, answer_chars = (50, 30) if console.is_terminal else (10_000, 10_000)
    for run in runs:
        when = dt.datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M") if run["created_at"] else ""
        cost = "" if run["cost_usd"] is None else f"${run['cost_usd']:.4f}"
        table.add_row(safe(run["id"]), safe(run.get("kind") or "ask"), when, safe(run["status"] or ""), safe(_short(run["question"], question_chars)),
                      safe(_short(run["answer"] or "", answer_chars)), str(run["rounds"] or ""), cost)
    console.print(table)


def print_run(console: Console, run: dict[str, Any]) -> None:
    """Print one run: question, status, plan, rounds, answer, calls by role."""
    from rich.table import Table

    meta = run["meta"]
    console.print(f"[bold]run {safe(meta['id'])}[/bold] · {safe(meta.get('status'))} · {safe(run['folder'])}",
                  highlight=False)
    console.print(f"question: {safe(meta.get('question', ''))}", highlight=False)
    if meta.get("error"):
        console.print(f"[yellow]error:[/yellow] {safe(str(meta['error']))}", highlight=False)
    if run.get("questions") is not None:  # a report: its sub-questions and their runs, not a plan
        _print_report_run(console, run)
        return
    console.print(f"context: {safe(', '.join(run['context']))}", highlight=False)
    if run.get("selection"):
        print_selection(console, run["selection"])
    for item in run["re_retrievals"]:
        console.print(f"missing data after round {item['round'] + 1}: {safe(item['missing'])} → "
                      f"{safe(', '.join(item['added']) or 'nothing new')}", highlight=False)
    console.print("[bold]plan[/bold]")
    for i, step in enumerate(run["plan"], 1):
        first, *rest = step.splitlines() or [""]  # a step's Assumption lines go under it
        console.print(f"  {i}. {safe(first)}", highlight=False)
        for line in rest:
            console.print(f"     {safe(line)}", highlight=False)
    table = Table("round", "step", "scripts", "read", "verdict", "route")

    def cut(text: str, limit: int) -> str:  # piped, cells fold: keep every character
        return _short(text, limit if console.is_terminal else 10_000)

    for r in run["rounds"]:
        scripts = safe(", ".join(f"{s['name']} {'ok' if s['ok'] else 'failed'}"
                                 + (" (read trace doubtful)" if s.get("trace_problems") else "") for s in r["scripts"]))
        read = sorted({path for s in r["scripts"] for path in s.get("reads") or []})
        read_text = safe(cut(", ".join(read), 40)) + (f" (+{len(r['read_added'])} in context)"
                                                         if r.get("read_added") else "")
        verdict = {True: "sufficient", False: "insufficient"}.get(r.get("sufficient"), "")
        route = r.get("route") or {}
        route_text = {"add": "add step", "step": f"back to step {route.get('step')}",
                      "missing": f"missing: {cut(route.get('missing') or '', 30)}"}.get(route.get("kind"), "")
        table.add_row(str(r["round"] + 1), safe(cut(r.get("step") or "", 40)), scripts, read_text, verdict,
                      safe(route_text))
    console.print(table)
    calls = Table("role", "calls", "tokens in", "tokens out", "cost")
    for role, c in run["calls"].items():
        calls.add_row(safe(role), str(c["calls"]), str(c["input_tokens"]), str(c["output_tokens"]), f"${c['cost_usd']:.4f}")
    console.print(calls)
    answer = run.get("answer")
    if answer:
        from dsstar_lake.agent.state import Answer

        print_answer(console, Answer.from_dict(answer))


def print_selection(console: Console, selection: dict[str, Any]) -> None:
    """Print the entries chosen for a run's first round, each with its reason, one line each (no frame)."""
    console.print(safe(selection_heading(selection)), highlight=False)
    for entry in selection.get("entries") or []:
        reason = f": {entry['reason']}" if entry.get("reason") else ""
        console.print(f"  - {safe(entry['path'])}{safe(reason)}", highlight=False)


def _print_report_run(console: Console, run: dict[str, Any]) -> None:
    """Print a report run: its sub-questions with the id of each one's own run, what it wrote, its own calls."""
    from rich.table import Table

    report = run.get("report") or {}
    if report.get("title"):
        console.print(f"report: [bold]{safe(report['title'])}[/bold]", highlight=False)
    limit = 60 if console.is_terminal else 10_000  # piped, cells fold: keep every character
    table = Table("#", "sub-question", "status", "answer / why not", "run")
    table.columns[4].no_wrap = True
    for q in run["questions"]:
        shown = q.get("answer") if q.get("status") in ("answered", "unverified") else q.get("detail")
        table.add_row(str(q.get("n")), safe(_short(q.get("text") or "", limit)), safe(q.get("status") or ""),
                      safe(_short(shown or "", limit)), safe(q.get("run_id") or ""))
    console.print(table)
    if any(q.get("run_id") for q in run["questions"]):
        console.print("each sub-question is its own run: dslake runs show RUN", highlight=False)
    for path in report.get("files") or []:
        if str(path).endswith((".md", ".html")):
            console.print(f"  {safe(path)}", highlight=False)
    for text in report.get("notes") or []:
        console.print(f"[dim]note:[/dim] {safe(text)}", highlight=False)
    for text in report.get("problems") or []:
        console.print(f"[yellow]flagged:[/yellow] {safe(text)}", highlight=False)
    calls = Table("role", "calls", "tokens in", "tokens out", "cost", title="the report's own calls")
    for role, c in run["calls"].items():
        calls.add_row(safe(role), str(c["calls"]), str(c["input_tokens"]), str(c["output_tokens"]),
                      f"${c['cost_usd']:.4f}")
    console.print(calls)
