"""The report as Markdown: a header, the writer's body, a note on what the check flagged, the evidence appendix."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection

from dsstar_lake.report.citations import check
from dsstar_lake.report.questions import SubQuestion

STATUS_TEXT = {"answered": "answered (verified)", "unverified": "answered, not verified",
               "unanswered": "unanswered", "skipped": "unanswered (not started)",
               "queued": "unanswered (not started)", "running": "unanswered (interrupted)"}
MD_SPECIAL = re.compile(r"([\\`*\[\]<>!|#])|(?<!\w)_|_(?!\w)")


def md_escape(text: str) -> str:
    """Escape Markdown in text that must read as plain words (a sub-question, a reason, a run id)."""
    return MD_SPECIAL.sub(lambda m: "\\" + m.group(0), " ".join(str(text).split()))


def fenced(text: str, lang: str = "") -> str:
    """Return text in a code fence longer than any backtick run inside it (so it cannot break out)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def title_of(body: str, request: str) -> str:
    """Return the report's title: its first '# ' heading, else one made from the request."""
    found = re.search(r"^#[ \t]+(.+?)[ \t#]*$", body, re.M)
    raw = found.group(1) if found else f"Report: {' '.join(request.split())[:100]}"
    return re.sub(r"[*_`\\]", "", raw).strip() or "Report"


def header(request: str, created_at: float, lake: str, provider: str, models: list[str], run_id: str,
           questions: list[SubQuestion]) -> str:
    """Return the lines under the title: the request, when, over which lake, with which model, which run."""
    when = dt.datetime.fromtimestamp(created_at).astimezone().isoformat(timespec="seconds")
    answered = sum(q.answered for q in questions)
    model = ", ".join(md_escape(m) for m in models) or "unknown"
    return "\n".join([
        f"- **Request:** {md_escape(request)}",
        f"- **Date:** {when}",
        f"- **Lake:** {md_escape(lake)}",
        f"- **Model:** {model} (provider {md_escape(provider)})",
        f"- **Run:** `{run_id}` · {len(questions)} sub-questions, {answered} answered",
    ]) + "\n"


def appendix(questions: list[SubQuestion], shown: Collection[str] = ()) -> str:
    """Return the evidence appendix: every sub-question with its status, answer, figures, script and run.

    shown: figures the body already embeds; the appendix links to those instead of embedding them again.
    """
    lines = ["## Evidence appendix", "",
             "Each sub-question was answered by its own DS-STAR run over the lake; the script shown printed "
             "the answer and can be run again (in the run's work folder, the lake is `data/`).", ""]
    for q in questions:
        origin = "from the request" if q.round == 0 else f"from refinement round {q.round}"
        facts = [f"*{STATUS_TEXT.get(q.status, q.status)}*", origin]
        if q.run_id:
            facts.append(f"run `{q.run_id}`")
        lines += [f"### [{q.n}] {md_escape(q.text)}", "", " · ".join(facts), ""]
        if q.answered:
            lines += ["**Answer**", "", fenced(q.answer, "text"), ""]
            used = ", ".join(md_escape(f) for f in q.files_used) or "none detected"
            lines += [f"Files used: {used}", ""]
            lines += readings_lines(q)
            if not q.verified and q.detail:
                lines += [f"Note: {md_escape(q.detail)}.", ""]
        else:
            lines += [f"**Unanswered:** {md_escape(q.detail or 'the run printed no answer')}.", ""]
            if q.answer:
                lines += ["What the last round printed:", "", fenced(q.answer, "text"), ""]
        lines += [f"Figure (shown in the report above): [{f}]({f})" if f in shown else f"![Figure for [{q.n}]]({f})"
                  for f in q.figures]
        if q.figures:
            lines.append("")
        if q.script:
            lines += [f"Script (`{q.script_name}`):", "", fenced(q.script, "python"), ""]
    return "\n".join(lines).rstrip() + "\n"


def readings_lines(q: SubQuestion) -> list[str]:
    """Return the appendix lines for the assumptions an answer rests on and its other readings' values."""
    lines = []
    if q.chosen.get("reading"):
        lines += [f"Chosen reading: {md_escape(q.chosen['reading'])} because {md_escape(q.chosen.get('because', ''))}",
                  ""]
    if q.assumptions:
        lines += ["Assumptions:", "", *(f"- {md_escape(a)}" for a in q.assumptions), ""]
    if q.alternatives:
        lines += ["Other readings:", ""]
        lines += [f"- {md_escape(a.get('reading', ''))}: {md_escape(a.get('value', ''))}"
                  + (f" ({md_escape(a['how'])})" if a.get("how") else "") for a in q.alternatives]
        lines.append("")
    return lines


def note(problems: list[str]) -> str:
    """Return the warning put atop a report whose check still found problems after the writer's fix."""
    items = "\n".join(f"> - {md_escape(p)}" for p in problems)
    return ("> **Citation check:** the writer could not fix everything; these are marked in the text "
            "(`[n?]`, or a note where a figure was left out):\n" + items + "\n")


def assemble(body: str, questions: list[SubQuestion], problems: list[str], head: str = "") -> str:
    """Return the whole report: title and header, note (if any), body, then the evidence appendix."""
    body = body.strip() + "\n"
    title, rest = "", body
    if head and re.match(r"#[ \t]", body):  # the header goes under the writer's title
        title, _, rest = body.partition("\n")
        title += "\n"
    parts = [title] if title else []
    parts += [head] if head else []
    parts += [note(problems)] if problems else []
    parts += [rest, "---\n", appendix(questions, embedded(body))]
    return "\n".join(parts)


def embedded(body: str) -> set[str]:
    """Return the figures a body embeds (outside code), as the appendix names them."""
    return set(check(body, []).embedded)
