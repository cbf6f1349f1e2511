"""What commands print: rich tables and panels, plain text into a pipe (terminal/console.py); JSON bypasses them."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.markup import escape

from dsstar_lake.base.untrusted import visible
from dsstar_lake.terminal.quick_index import summary_line


def safe(text: object, multiline: bool = False) -> str:
    """Return lake- or model-derived text ready for rich markup: control characters and brackets escaped."""
    # rich drops only a few control characters (\a \b \v \f \r): ESC (OSC 52, clear-screen) and bidi get through.
    return escape(visible(text, multiline))


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


@contextlib.contextmanager
def index_progress(console: Console, enabled: bool = True) -> Iterator[Any]:
    """Yield a progress callback for Lake.index that draws bars on a terminal (and nothing elsewhere)."""
    if not enabled:
        yield lambda event, data: None
        return
    if not console.is_terminal:
        yield lambda event, data: _print_estimate(console, event, data)
        return
    # Bars only on a terminal: a search, or an index into a pipe or a job's log, never loads them.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def callback(event: str, data: dict[str, Any]) -> None:
            if event == "plan" and data["total"]:
                tasks["file"] = bar.add_task("profiling", total=data["total"], rate="")
            elif event == "file" and "file" in tasks:
                bar.advance(tasks["file"])
                task = bar.tasks[tasks["file"]]
                if task.elapsed:
                    bar.update(tasks["file"], rate=f"{task.completed / task.elapsed:.0f} files/s")
            elif event == "embed":
                tasks["embed"] = bar.add_task("embedding", total=data["total"], rate="")
            elif event == "embedded" and "embed" in tasks:
                bar.advance(tasks["embed"], data["n"])
            elif event == "analyze":
                tasks["analyze"] = bar.add_task("analyzing (LLM)", total=data["total"], rate="")
            elif event == "analyzed" and "analyze" in tasks:
                bar.advance(tasks["analyze"])
            elif event == "summarize":
                tasks["summarize"] = bar.add_task("summarizing (LLM)", total=data["total"], rate="")
            elif event == "summarized" and "summarize" in tasks:
                bar.advance(tasks["summarize"])
            else:
                _print_estimate(bar.console, event, data)

        yield callback


def _print_estimate(console: Console, event: str, data: dict[str, Any]) -> None:
    """Print the summarizer's cost estimate before it asks anything (the one progress event that is a line)."""
    if event == "summarize_estimate":
        console.print(safe(data["line"]), highlight=False)


def print_index_summary(console: Console, summary: Any, failures: list[tuple[str, str]] | None = None) -> None:
    """Print the one summary line of an index run (and the failures, if any).

    failures: the failed files to list (None: all of them); --watch lists only the new ones, those whose error
    changed and those of files that changed (usecases/watch.py), and the summary line still counts them all.
    """
    s = summary
    listed = s.failures if failures is None else failures
    console.print(summary_line(s), highlight=False)  # the line a no-change index prints before rich loads, too
    for path, error in listed[:20]:
        console.print(f"  [yellow]failed[/yellow] {safe(path)}: {safe(error or '')}", highlight=False)
    if len(listed) > 20:
        console.print(f"  … and {len(listed) - 20} more (dslake status)")
    skipped = getattr(s, "skipped_files", [])
    for path, why in skipped[:20]:
        console.print(f"  [dim]skipped[/dim] {safe(path)}: {safe(why)}", highlight=False)
    if len(skipped) > 20:
        console.print(f"  … and {len(skipped) - 20} more skipped (--json lists them all)")
    c = getattr(s, "cluster", None)
    if c:
        console.print(f"cluster {safe(c['address'])}: {_count(c['workers'], 'worker')}, {_count(c['tasks'], 'task')} "
                      f"for {_count(c['files'], 'file')}", highlight=False)
    a = getattr(s, "analysis", None)
    if a:
        console.print(
            f"analyzer ({a['mode']}): {a['analyzed']} analysed, {a['failed']} failed (profiler description kept), "
            f"{a['not_started']} left for the next index · {a['llm_calls']} LLM calls, ${a['cost_usd']:.4f}"
            + (f" · stopped: {safe(a['stopped'])}" if a["stopped"] else ""), highlight=False)
    m = getattr(s, "summaries", None)
    if m and m["wanted"]:
        console.print(
            f"summarizer ({safe(m['model'])}): {m['written']} summarised, {m['failed']} failed (entry kept as it "
            f"was), {m['not_started']} left for the next index · {m['llm_calls']} LLM calls, ${m['cost_usd']:.4f}"
            + (f" · stopped: {safe(m['stopped'])}" if m["stopped"] else ""), highlight=False)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def print_status(console: Console, st: Any) -> None:
    """Print a catalog's status."""
    from rich.table import Table

    when = dt.datetime.fromtimestamp(st.last_index_at).isoformat(timespec="seconds") if st.last_index_at else "never"
    table = Table(show_header=False, box=None)
    for key, value in [
        ("lake", st.lake), ("catalog", f"{st.catalog} ({_size(st.catalog_bytes)})"), ("schema", st.schema),
        ("files", f"{st.files} ({_size(st.bytes)})"), ("entries", f"{st.entries} ({st.families} families)"),
        ("formats", ", ".join(f"{k} {v}" for k, v in st.formats.items())), ("last index", when),
        ("changed since", f"{len(st.stale)} changed, {len(st.new)} new, {len(st.removed)} removed"),
    ]:
        if console.is_terminal:
            table.add_row(f"[bold]{key}[/bold]", safe(str(value)))
        else:  # piped: one line per fact, never wrapped or padded
            console.print(f"{key + ':':<14} {safe(str(value))}", highlight=False)
    if console.is_terminal:
        console.print(table)
    for path, error in st.failed:
        console.print(f"[yellow]failed[/yellow] {safe(path)}: {safe(error)}", highlight=False)
    for label, paths in (("changed", st.stale), ("new", st.new), ("removed", st.removed)):
        for path in paths[:10]:
            console.print(f"[cyan]{label}[/cyan] {safe(path)}", highlight=False)
        if len(paths) > 10:
            console.print(f"[cyan]{label}[/cyan] … {len(paths) - 10} more")
    for problem in st.problems:
        console.print(f"[red]problem:[/red] {safe(problem)}", highlight=False)
    if st.problems:
        console.print("[dim]hint:[/dim] run `dslake index LAKE` to finish, or `dslake index LAKE --rebuild` to repair")


def print_show(console: Console, result: dict[str, Any]) -> None:
    """Print one file's record, description and card."""
    from rich.panel import Panel

    file = result.get("file")
    if file:
        console.print(f"[bold]{safe(file['path'])}[/bold]  {safe(file['format'] or '')}  {_size(file['size'])}  "
                      f"status {safe(file['status'])}  hash {safe(str(file['hash'])[:16])}", highlight=False)
        if file.get("error"):
            console.print(f"[yellow]error:[/yellow] {safe(file['error'])}", highlight=False)
    entry = result.get("entry")
    if entry:
        if entry["kind"] == "family":
            console.print(f"member of family [bold]{safe(entry['path'])}[/bold] ({entry['member_count']} files)")
        for title in ("description", "card"):
            # piped, the console prints the text as stored under `title:`, with no frame to cut or strip
            console.print(Panel(safe(entry[title], multiline=True), title=title, title_align="left"))


def print_hits(console: Console, hits: list[Any], timing: Any = None, query: str = "") -> None:
    """Print search results: each entry, what it holds (matched words marked on a terminal), the near-identical
    files folded under it, and its score parts. Piped, a plain table: aligned columns, no frame, no colour, every
    summary line whole beneath its entry (a line never wraps or is cut)."""
    from rich.text import Text

    from dsstar_lake.views.empty_states import empty_words
    from dsstar_lake.views.hitlines import FOLDED_NOTE, folded_lines, marked_rich, terms_of

    words = empty_words(getattr(hits, "empty_state", None)) if not hits else None
    if words:  # a catalog without entries: why, instead of a bare header
        console.print(words, markup=False, highlight=False)
        return
    if not console.is_terminal:
        _print_plain_hits(console, hits)
    else:
        # Imported here: a piped search prints no table, and imports none (terminal/console.py).
        from rich.table import Table

        terms = terms_of(query)
        table = Table("#", "entry", "format", "score", "dense", "text")
        table.columns[1].overflow = "fold"
        for i, hit in enumerate(hits, start=1):
            name = Text()
            name.append(visible(hit.path), style="bold")
            if hit.kind == "family":
                name.append(f"  ({hit.member_count} files)")
            for line in hit.summary:
                name.append("\n")
                name.append_text(marked_rich(line, terms, rest="dim"))
            for line in folded_lines(hit):
                name.append("\n" + visible(line), style="cyan")
            table.add_row(str(i), name, safe(hit.format or ""), f"{hit.score:.4f}",
                          "" if hit.dense is None else f"{hit.dense:.3f}",
                          "" if hit.fulltext is None else f"{hit.fulltext:.2f}")
        console.print(table)
    if any(hit.kin for hit in hits):
        console.print(f"[dim]{FOLDED_NOTE}[/dim]" if console.is_terminal else FOLDED_NOTE, highlight=False)
    if timing is not None:
        console.print(f"[dim]search {timing.total_ms:.1f} ms (embed {timing.embed_ms:.1f}, dense "
                      f"{timing.dense_ms:.1f}, full-text {timing.fulltext_ms:.1f}, "
                      f"completing {timing.complete_ms:.1f})[/dim]")


def _print_plain_hits(console: Console, hits: list[Any]) -> None:
    """Print hits as plain text for a pipe: one aligned row per hit, its summary and folded files indented under it."""
    from dsstar_lake.views.hitlines import folded_lines

    rows = [("#", "entry", "format", "score", "dense", "text")]
    for i, hit in enumerate(hits, start=1):
        name = visible(hit.path) + (f" ({hit.member_count} files)" if hit.kind == "family" else "")
        rows.append((str(i), name, visible(hit.format or ""), f"{hit.score:.4f}",
                     "" if hit.dense is None else f"{hit.dense:.3f}",
                     "" if hit.fulltext is None else f"{hit.fulltext:.2f}"))
    widths = [max(len(row[c]) for row in rows) for c in range(6)]
    indent = " " * (widths[0] + 2)
    for n, row in enumerate(rows):
        console.print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip(),
                      markup=False, highlight=False)
        if n:
            for line in [*hits[n - 1].summary, *folded_lines(hits[n - 1])]:
                console.print(indent + visible(line), markup=False, highlight=False)


def print_retrieval_report(console: Console, report: Any) -> None:
    """Print recall@K / all-found@K / context tokens and the first prompt's levels per domain and overall; when the
    selector was asked, its choice per task and per domain."""
    from rich.table import Table

    summary = report.summary()
    table = Table("domain", "n", *[f"R@{k}" for k in report.ks], *[f"all@{k}" for k in report.ks],
                  *[f"tok@{k}" for k in report.ks], "all whole", "strict", "files whole/kin/brief/named/absent",
                  "prompt tok",
                  caption="R = recall, all = all files found, tok = context tokens; all whole = share of tasks whose "
                          "files are all described whole in the first planner prompt without a selection (the "
                          "relevance order), or folded as a line under a whole near-identical entry (kin); strict = "
                          "kin not counted; the levels count files (named: a menu line); prompt tok = that first "
                          "prompt's data block")
    for name, row in summary.items():
        table.add_row(safe(name), str(row["n"]), *[f"{row[f'recall@{k}']:.2f}" for k in report.ks],
                      *[f"{row[f'all_found@{k}']:.2f}" for k in report.ks],
                      *[str(row[f"tokens@{k}"]) for k in report.ks], f"{row['all_whole']:.2f}",
                      f"{row['all_whole_strict']:.2f}", _level_counts(row["levels"]), str(row["prompt_tokens"]))
    console.print(table)
    if report.selected:
        _print_selection(console, report, summary)
    if report.skipped:
        console.print(f"skipped {len(report.skipped)} task(s) whose files are absent from the lake: "
                      + safe(", ".join(task_id for task_id, _ in report.skipped)), highlight=False)


def _level_counts(levels: dict[str, int]) -> str:
    return "/".join(str(n) for n in levels.values())


def _prf(precision: float | None, recall: float, f1: float) -> str:  # "89/87/88": whole percents
    return "/".join("-" if v is None else f"{100 * v:.0f}" for v in (precision, recall, f1))


def _print_selection(console: Console, report: Any, summary: dict[str, Any]) -> None:
    """Print the selector's choice per task, then per domain."""
    from rich.table import Table

    tasks = Table("task", "by", "selected P/R/F1 %", "chosen", "gold files' levels", title="selection per task",
                  caption="by = who chose: the selector, or the relevance order when no answer named a candidate; "
                          "the levels are those of the task's files in the first prompt built from the choice")
    for t in report.tasks:
        chosen = t.selection
        if chosen is None:
            continue
        counts: dict[str, int] = {}
        for level in t.selection.levels.values():
            counts[level] = counts.get(level, 0) + 1
        tasks.add_row(safe(t.id), chosen.selected_by, _prf(chosen.precision, chosen.recall, chosen.f1),
                      str(len(chosen.selected)), ", ".join(f"{n} {level}" for level, n in counts.items()))
    console.print(tasks)
    table = Table("domain", "n", "by selector", "selected P/R/F1 %", "all whole", "strict",
                  "files whole/kin/brief/named/absent", "prompt tok", title="selection",
                  caption="the selector asked once per task over the menu a run offers it; P/R/F1 against the task's "
                          "files (means over the tasks); all whole, strict, the levels and prompt tok as above, "
                          "for the first prompt built from the choice")
    for name, row in summary.items():
        chosen = row.get("selection")
        if not chosen:
            continue
        table.add_row(safe(name), str(chosen["n"]), str(chosen["by_selector"]),
                      _prf(chosen["precision"], chosen["recall"], chosen["f1"]), f"{chosen['all_whole']:.2f}",
                      f"{chosen['all_whole_strict']:.2f}", _level_counts(chosen["levels"]),
                      str(chosen["prompt_tokens"]))
    console.print(table)
    failed = {t.selection.why for t in report.tasks if t.selection is not None and t.selection.why}
    for why in sorted(failed):
        console.print(safe(f"the relevance order chose where {why}"), highlight=False)


def print_models(console: Console, info: dict[str, Any]) -> None:
    """Print the model configuration per role (never the credentials themselves)."""
    from rich.table import Table

    creds = "present" if info.get("credentials_present") else "missing"
    console.print(f"provider [bold]{info['provider']}[/bold]"
                  + (f" at {info['base_url']}" if info.get("base_url") else "")
                  + f" · credentials {creds} ({info.get('credentials_source', '')})", highlight=False)
    table = Table("role", "provider", "model", "$ in / Mtok", "$ out / Mtok")
    for row in info["roles"]:
        price_in, price_out = row.get("input_usd_per_mtok"), row.get("output_usd_per_mtok")
        table.add_row(row["role"], row["provider"], row["model"], "?" if price_in is None else f"{price_in:g}",
                      "?" if price_out is None else f"{price_out:g}")
    console.print(table)


def benchmark_progress(console: Console) -> Any:
    """Return a progress callback for run_benchmark: the plan, then one line per finished task."""

    def callback(event: str, data: dict[str, Any]) -> None:
        if event == "plan":
            notes = [f"{data['resumed']} already in the results file" if data["resumed"] else "",
                     f"{data['skipped']} skipped (sources absent from the lake)" if data["skipped"] else ""]
            console.print(f"{data['todo']} task(s) to run, {data['jobs']} at a time"
                          + "".join(f"; {n}" for n in notes if n), highlight=False)
        elif event == "task":
            row = data["result"]
            mark = "error" if row.method == "error" else f"{row.score:.2f}"
            files = "".join(f" · {label} F1 {value:.2f}" for label, value in
                            (("selected", row.selection_f1), ("read", row.reads_f1)) if value is not None)
            line = (f"[{data['done']}/{data['total']}] {row.id}: {mark} · {row.seconds:.0f} s · "
                    f"{row.llm_calls} calls{files}" + (" · an other reading matched" if row.alternative_matched else "")
                    + (f" · {row.error}" if row.error else ""))
            console.print(safe(line), highlight=False)

    return callback


def print_benchmark_readings(console: Console, results: list[Any]) -> None:
    """Print per run the reading chosen between differing ones and whether an alternative matched a missed truth."""
    from rich.table import Table

    rows = [r for r in results if (r.chosen or {}).get("reading") or r.alternative_matched]
    if not rows:
        return
    table = Table("task", "score", "answer", "chosen reading (because)", "alt matched", title="readings by run",
                  caption="alt matched: the answer missed the truth but a recorded alternative matched it")
    for r in rows:
        chosen = r.chosen or {}
        said = f"{chosen['reading']} ({chosen.get('because', '')})" if chosen.get("reading") else "-"
        table.add_row(safe(r.id), f"{r.score:.2f}", safe(r.answer), safe(said),
                      "yes" if r.alternative_matched else "-")
    console.print(table)


def print_benchmark_report(console: Console, report: Any) -> None:
    """Print the benchmark's score, errors, the files selected and read against the gold ones, and cost per task,
    per domain and overall."""
    from rich.table import Table


    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.2f}"

    def prf(row: dict[str, Any], which: str) -> str:  # "89/87/88": whole percents keep three figures one cell
        if row[f"{which}_f1"] is None:
            return "-"
        return "/".join("-" if row[f"{which}_{part}"] is None else f"{100 * row[f'{which}_{part}']:.0f}"
                        for part in ("precision", "recall", "f1"))

    mode = "oracle files" if report.oracle else "retrieval"
    table = Table("domain", "n", "score %", "errors", "alt matched", "selected P/R/F1 %", "read P/R/F1 %", "R ctx %",
                  "tokens", "$", "calls", "s", title=f"KramaBench ({mode})",
                  caption="score = sum of task scores / tasks (KramaBench's support-weighted mean); alt matched = "
                          "tasks whose answer missed but a recorded other reading matched (not in the score); "
                          "selected / read P/R/F1 = precision, recall and F1 against the gold files of the entries "
                          "the agent selected for the first round (mean over the tasks it selected for, their count "
                          "in brackets when not all: given files are not scored) and of the files the run's scripts "
                          "read; R ctx = share of the gold files the run had in context; "
                          "tokens, $, calls and s are per task")
    rows = list(report.summary().items())
    for i, (name, row) in enumerate(rows):
        selected = prf(row, "selection")
        if 0 < row["selected"] < row["n"]:
            selected += f" ({row['selected']})"
        table.add_row(safe(name), str(row["n"]), pct(row["score"]), str(row["errors"]),
                      str(row.get("alternative_matched", 0)), selected, prf(row, "reads"),
                      pct(row["context_recall"]), str(row["tokens"]), f"{row['cost_usd']:.4f}",
                      f"{row['llm_calls']:.1f}", f"{row['seconds']:.1f}", end_section=i == len(rows) - 2)
    console.print(table)
    print_benchmark_readings(console, report.results)
    console.print(safe(report.judging_note()), highlight=False)
    console.print(safe(report.readings_note()), highlight=False)
    if report.skipped:
        console.print(f"skipped {len(report.skipped)} task(s) whose sources are absent from the lake (or that have "
                      "no answer to score): " + safe(", ".join(task_id for task_id, _ in report.skipped)), highlight=False)
        first_id, first_reason = report.skipped[0]
        console.print(safe(f"  {first_id}: {first_reason}"), highlight=False)
    if report.out:
        console.print(f"rows: {report.out}" + (f" ({report.resumed} from an earlier run)" if report.resumed else ""),
                      highlight=False)
