"""How the facade's results show in Jupyter (`_repr_html_`) and at a Python prompt (`__repr__`).

File names, card lines, questions and answers are untrusted text (a lake's names, a model's words): every value
goes through html.escape before it reaches a page. The wrappers stay a list and a dict, so code that indexes,
iterates, compares or dumps them as JSON sees no difference.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from dsstar_lake.views.selection import selection_heading

_CELL = 160  # characters of a value shown in a cell: a long answer or card line is cut, the data keeps it whole


def html_table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str | None = None) -> str:
    """Return an HTML table of these rows, every header, cell and caption escaped."""
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{_esc(caption, 400)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _esc(value: Any, width: int = _CELL) -> str:
    text = "" if value is None else _fmt(value)
    if len(text) > width:
        text = text[: width - 1] + "…"
    return html.escape(text, quote=True)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def when(ts: Any) -> str:
    """Return a timestamp (seconds, or text already) as a short UTC time."""
    if isinstance(ts, (int, float)):
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "" if ts is None else str(ts)


def _short(text: Any, width: int = 60) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def hit_what(hit: Any) -> str:
    """Return a hit's kind in words: 'csv file' or 'csv family of 12'."""
    fmt = hit.format or "?"
    return f"{fmt} family of {hit.member_count}" if hit.kind == "family" else f"{fmt} {hit.kind}"


class SearchResults(list):  # type: ignore[type-arg]
    """The hits of one search, best first: a list of Hit that shows as a table in Jupyter."""

    def __init__(self, hits: Iterable[Any] = (), query: str = "", empty_state: str | None = None) -> None:
        super().__init__(hits)
        self.query = query
        self.empty_state = empty_state  # why the catalog holds no entry (Catalog.emptiness), when it holds none

    def __repr__(self) -> str:
        from dsstar_lake.views.empty_states import empty_words

        lines = [f"SearchResults({self.query!r}: {len(self)} hit{'s' if len(self) != 1 else ''})"]
        lines += [f"  {i}. {h.path}  [{hit_what(h)}, score {h.score:.3f}]" for i, h in enumerate(self, 1)]
        words = empty_words(self.empty_state) if not self else None
        return "\n".join(lines + ([f"  {words}"] if words else []))

    def _repr_html_(self) -> str:
        from dsstar_lake.views.hitlines import folded_lines, marked_html, terms_of

        terms = terms_of(self.query)
        rows = []
        for i, h in enumerate(self, 1):
            holds = "<br>".join(marked_html(line, terms) for line in h.summary)
            folded = "".join(f"<br><small>{html.escape(line)}</small>" for line in folded_lines(h))
            rows.append(f"<tr><td>{i}</td><td>{_esc(h.path, 400)}</td><td>{_esc(hit_what(h))}</td>"
                        f"<td>{_esc(h.score)}</td><td>{holds}{folded}</td></tr>")
        from dsstar_lake.views.empty_states import empty_words

        words = empty_words(self.empty_state) if not self else None
        if words:
            return f"<p>search: {_esc(self.query, 400)}: {html.escape(words)}</p>"
        return (f"<table><caption>search: {_esc(self.query, 400)}</caption><thead><tr><th>#</th><th>path</th>"
                "<th>what</th><th>score</th><th>holds</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


class ShowView(dict):  # type: ignore[type-arg]
    """One file's or family's record (as `dslake show --json` gives): a dict that shows its description, card,
    members and how to load it."""

    def __repr__(self) -> str:
        entry = self.get("entry") or {}
        what = (f"{entry.get('format') or '?'} family of {entry.get('member_count')}" if entry.get("kind") == "family"
                else f"{entry.get('format') or (self.get('file') or {}).get('format') or '?'} file")
        return f"ShowView({self.get('path')!r}: {what}; ['entry']['description'] has how to read it)"

    def _repr_html_(self) -> str:
        from dslake_index.gist import gist

        entry, file = self.get("entry") or {}, self.get("file") or {}
        members = list(self.get("members") or [])
        facts = [("path", self.get("path")), ("kind", entry.get("kind")),
                 ("format", entry.get("format") or file.get("format")), ("files", entry.get("member_count")),
                 ("status", file.get("status")), ("error", file.get("error")),
                 ("hash", str(file.get("hash") or "")[:16] or None),
                 ("in Python", f"lake.load({entry.get('path') or self.get('path')!r})")]
        facts += [("load line", line.split(": ", 1)[1]) for line in (entry.get("description") or "").splitlines()
                  if line.strip().lower().startswith("load: ")][:3]
        out = html_table(("", ""), [(k, v) for k, v in facts if v not in (None, "")], str(self.get("path")))
        holds = gist(entry.get("card") or "")
        if holds:
            out += html_table(("holds",), [(line,) for line in holds])
        for title in ("description", "card"):
            if entry.get(title):
                out += f"<details{' open' if title == 'description' else ''}><summary>{title}</summary><pre>" \
                       f"{html.escape(entry[title])}</pre></details>"
        if len(members) > 1:
            shown = members[:MEMBERS_SHOWN]
            more = f" (the first {MEMBERS_SHOWN})" if len(members) > MEMBERS_SHOWN else ""
            out += html_table(("member",), [(m,) for m in shown], f"{len(members)} members{more}")
        return out


MEMBERS_SHOWN = 50


class RunList(list):  # type: ignore[type-arg]
    """A catalog's runs, newest first: a list of dicts (as `dslake runs --json` gives) that shows as a table."""

    def __repr__(self) -> str:
        lines = [f"RunList({len(self)} run{'s' if len(self) != 1 else ''})"]
        lines += [f"  {r.get('id')}  {r.get('status')}  {_short(r.get('question'))!r} -> {_short(r.get('answer'), 40)}"
                  for r in self]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = [(r.get("id"), when(r.get("created_at")), r.get("status"), r.get("question"), r.get("answer"),
                 r.get("verified"), r.get("rounds"), r.get("cost_usd")) for r in self]
        return html_table(("id", "started", "status", "question", "answer", "verified", "rounds", "cost $"), rows,
                          "runs")


class RunView(dict):  # type: ignore[type-arg]
    """One run record (as `dslake runs show --json` gives): a dict that shows its answer, rounds and calls."""

    def __repr__(self) -> str:
        meta, answer = self.get("meta") or {}, self.get("answer") or {}
        return (f"RunView({meta.get('id', '?')}: {meta.get('status')}, {len(self.get('rounds') or [])} rounds, "
                f"question {_short(meta.get('question'))!r}, answer {_short(answer.get('value'), 40)!r})")

    def _repr_html_(self) -> str:
        meta, answer = self.get("meta") or {}, self.get("answer") or {}
        head = [("id", meta.get("id")), ("status", meta.get("status")), ("question", meta.get("question")),
                ("answer", answer.get("value")), ("verified", answer.get("verified")),
                *([("answer overridden", f"by the {over['by']}: the final script printed {over.get('final_script')}; "
                                         f"{over.get('reason', '')}")] if (over := answer.get("overridden") or {}).get("by")
                  else []),
                *([("chosen reading", f"{chosen['reading']} because {chosen.get('because', '')}")]
                  if (chosen := answer.get("chosen") or {}).get("reading") else []),
                *(("other reading", f"{a.get('reading')}: {a.get('value')}") for a in answer.get("alternatives") or []),
                *([("selection", selection_heading(selection))] if (selection := self.get("selection")) else []),
                *(("selected", f"{e['path']}: {e['reason']}") for e in (selection or {}).get("entries") or []),
                ("files used", ", ".join(answer.get("files_used") or [])), ("cost $", answer.get("cost_usd")),
                ("folder", self.get("folder"))]
        rounds = [(r.get("round", 0) + 1, r.get("step"), len(r.get("scripts") or []), r.get("sufficient"),
                   (r.get("route") or {}).get("kind")) for r in self.get("rounds") or []]
        calls = [(role, c.get("calls"), c.get("input_tokens"), c.get("output_tokens"), c.get("cost_usd"),
                  c.get("errors")) for role, c in (self.get("calls") or {}).items()]
        questions = [(q.get("n"), q.get("text"), q.get("answer"), q.get("run_id")) for q in self.get("questions") or []]
        report = self.get("report") or {}
        return (html_table(("", ""), head, f"run {meta.get('id', '')}")
                + (html_table(("#", "sub-question", "answer", "run"), questions,
                              f"report: {report.get('title') or meta.get('question') or ''}") if questions else "")
                + html_table(("round", "step", "scripts", "sufficient", "route"), rounds, "rounds")
                + html_table(("role", "calls", "input tokens", "output tokens", "cost $", "errors"), calls, "calls"))


def status_repr(status: Any) -> str:
    """Return a one-line summary of a LakeStatus."""
    extra = "".join(f", {len(getattr(status, k))} {k}" for k in ("failed", "stale", "new", "removed")
                    if getattr(status, k))
    problems = f", {len(status.problems)} problem(s)" if status.problems else ""
    return (f"LakeStatus({status.lake}: {status.files} files in {status.entries} entries "
            f"({status.families} families){extra}{problems}, last index {when(status.last_index_at) or 'never'})")


def status_html(status: Any) -> str:
    """Return a LakeStatus as HTML tables: the summary, then its problems and the files that need attention."""
    formats = ", ".join(f"{k} {v}" for k, v in sorted(status.formats.items(), key=lambda kv: -kv[1]))
    rows = [("lake", status.lake), ("catalog", status.catalog), ("files", status.files),
            ("entries", status.entries), ("families", status.families), ("bytes", status.bytes),
            ("formats", formats), ("catalog bytes", status.catalog_bytes),
            ("last index", when(status.last_index_at) or "never")]
    out = html_table(("", ""), rows, "lake status")
    if status.problems:
        out += html_table(("problem",), [(p,) for p in status.problems], "problems")
    files = [(path, "failed", error) for path, error in status.failed]
    files += [(path, kind, "") for kind in ("stale", "new", "removed") for path in getattr(status, kind)]
    if files:
        out += html_table(("path", "state", "error"), files, "files that need attention")
    return out


PICKED_IN_NOTEBOOK = "the user picked it in the notebook"


def prompt_pick(ask: Any = input, say: Any = print) -> Any:
    """Return a pick between readings for `lake.ask(..., clarify=...)` that asks with input(): no widget needed,
    Jupyter shows a box for the answer. Enter, or anything but a listed number, leaves the choice to the model."""

    def pick(question: str, readings: list[dict[str, str]]) -> int | None:
        say("The readings of the question give different answers; which one does it mean?")
        for i, reading in enumerate(readings, 1):
            say(f"  {i}. {reading.get('reading', '')}: {reading.get('value', '')}")
        key = str(ask(f"pick 1-{len(readings)} (Enter lets the model choose): ")).strip()
        return int(key) if key.isdigit() and 1 <= int(key) <= len(readings) else None

    pick.because = PICKED_IN_NOTEBOOK  # type: ignore[attr-defined]
    return pick
