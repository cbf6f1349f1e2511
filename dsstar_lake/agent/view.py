"""The round's view of the data: one set of files, at one level each, that every role of a round sees.

An entry is shown whole (its description), brief (agent/brief.py), or as its menu line. The levels live on the
state's entries, so the roles that see data (planner, coder, router, debugger, finalyzer) render the same block in
a round; the levels change only where the loop says (the selection, a step that names a menu file, a re-selection
for missing data), never by which role is asking. Chosen files are whole: no budget cuts them; only the hard cap on
whole descriptions (agent.view_cap_tokens) does, and the prompt says so when it is reached. More than SERIES_WHOLE
chosen files of one series of near-identical files are one description plus the others' lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dsstar_lake.agent import context
from dsstar_lake.agent.brief import brief
from dsstar_lake.agent.menu import short_list
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.base.untrusted import frame, quote, visible

CANDIDATES_NOTE = ("Other candidates (not described here). If the question needs one, name it in a step: its "
                   "description comes with the next prompt.")
SERIES_HEADING = ("Also chosen, near-identical to the file above (same layout; read each like it, with its own "
                  "path):")
SERIES_WHOLE = 3  # chosen files of one series described each; past this, the first and a line per other member
CAP_MARK = ("[brief: the prompt's cap of {cap} tokens for whole descriptions was reached; a step that names this file "
            "does not bring more of it: read it in a script]")


def shown(entries: Sequence[ContextEntry]) -> list[ContextEntry]:
    """Return the entries the prompts describe (whole or brief), in the view's order."""
    return [e for e in entries if e.level != "line"]


def filenames(entries: Sequence[ContextEntry]) -> str:
    """Return the '# Given data:' line: the described entries' quoted data/ paths."""
    return context.filenames(shown(entries))


def data_block(entries: Sequence[ContextEntry], max_chars: int = 0, cap_tokens: int = 0) -> str:
    """Return the view as the prompts show it: each described entry in its <data> frame, then the menu lines."""
    parts: list[str] = []
    for e, form, text, series in _rendered(entries, max_chars, cap_tokens):
        if series:
            # A member folded under this very entry already has its line in the description: its path is enough.
            said = [f"- data/{visible(m.path)}" if m.series == e.path else f"- {visible(m.line or 'data/' + m.path)}"
                    for m in series]
            text = "\n".join([text, SERIES_HEADING, *said])
        parts.append(_framed(e, form, text))
    lines = listed(entries)
    if lines:
        parts.append(frame(f"{CANDIDATES_NOTE}\n{short_list(lines)}", "candidates"))
    return "\n\n".join(parts) if parts else "(no files)"


def listed(entries: Sequence[ContextEntry]) -> list[ContextEntry]:
    """Return the candidates the prompts list by a line: those at line level, but for a near-identical file of an
    entry described whole or brief (its line is inside that description already)."""
    described = {e.path for e in shown(entries)}
    return [e for e in entries if e.level == "line" and not (e.series and e.series in described)]


def shown_levels(entries: Sequence[ContextEntry], max_chars: int = 0,
                 cap_tokens: int = 0) -> list[tuple[ContextEntry, str]]:
    """Return each entry with its level as data_block shows it: whole, brief (its own level or past the cap), kin
    (a later member of a series, one line under its first member's description) or line (a menu line)."""
    rendered = _rendered(entries, max_chars, cap_tokens)
    forms = {id(e): form for e, form, _, _ in rendered}
    kin = {id(m) for *_, series in rendered for m in series}
    return [(e, forms.get(id(e)) or ("kin" if id(e) in kin else "line")) for e in entries]


def _rendered(entries: Sequence[ContextEntry], max_chars: int,
              cap_tokens: int) -> list[tuple[ContextEntry, str, str, list[ContextEntry]]]:
    """Return each described entry's form (whole or brief), text and later series members, in the view's order."""
    cap = cap_tokens * context.CHARS_PER_TOKEN if cap_tokens > 0 else 0
    used = 0
    out: list[tuple[ContextEntry, str, str, list[ContextEntry]]] = []
    later, members_of = _series_members(entries)
    for e in shown(entries):
        if id(e) in later:
            continue
        full = context.capped(e.description.strip(), max_chars)
        form, text = e.level, full
        if form == "brief":
            text = brief(full)
        elif cap and used and used + len(full) > cap:
            form, text = "brief", brief(full).rsplit("\n", 1)[0] + "\n" + CAP_MARK.format(cap=cap_tokens)
        used += len(text)
        out.append((e, form, text, members_of.get(id(e), [])))
    return out


def _framed(entry: ContextEntry, form: str, text: str) -> str:
    path = context.shown_path(entry)
    if visible(path) != path:
        text = text.replace(path, quote(path))  # a name with a newline or a control character is quoted where repeated
    family = {"family": f"{entry.member_count} files"} if entry.kind == "family" else {}
    level = {"shown": form} if form != "whole" else {}
    return frame(text, "data", path=path, **family, **level)


def _series_members(entries: Sequence[ContextEntry]) -> tuple[set[int], dict[int, list[ContextEntry]]]:
    """Return the whole entries that are later members of a series of more than SERIES_WHOLE whose first member is
    shown (by id), and each shown first member's later members. A few near-identical files are each described: their
    sites and columns differ; a long series (28 orbit files) is one description and a line per member."""
    groups: dict[str, list[ContextEntry]] = {}
    for e in shown(entries):
        if e.level == "whole":
            key = e.series or e.path
            groups.setdefault(key, []).append(e)
    later: set[int] = set()
    of: dict[int, list[ContextEntry]] = {}
    for group in groups.values():
        if len(group) > SERIES_WHOLE:
            head, *rest = group
            later.update(id(e) for e in rest)
            of[id(head)] = rest
    return later, of


def choose(entries: list[ContextEntry], chosen: Sequence[tuple[str, str]]) -> list[ContextEntry]:
    """Return the entries with the chosen ones (path, reason) whole, first and in the order chosen; the rest as lines."""
    by_path = {e.path: e for e in entries}
    picked = []
    for path, reason in chosen:
        e = by_path.get(path)
        if e is None or e in picked:
            continue
        e.level, e.reason = "whole", reason
        picked.append(e)
    rest = [e for e in entries if e not in picked]
    for e in rest:
        if e.line:  # a given file has no menu line: it stays as it was given
            e.level = "line"
    return picked + rest


def promote(entries: Sequence[ContextEntry], paths: Iterable[str]) -> list[str]:
    """Show these entries whole from now on (a step named them); return the paths that changed."""
    wanted = set(paths)
    changed = []
    for e in entries:
        if e.path in wanted and e.level != "whole":
            e.level = "whole"
            changed.append(e.path)
    return changed


def named_in_step(entries: Sequence[ContextEntry], step: str) -> list[str]:
    """Return the paths of menu or brief entries a step names (a file by its path or name, a family by a member)."""
    waiting = {e.path for e in entries if e.level != "whole"}
    return [path for path in context.named_in(list(entries), step) if path in waiting]


def by_relevance(entries: list[ContextEntry], k: int, max_chars: int, budget_tokens: int,
                 question: str) -> list[ContextEntry]:
    """Return the view without a selection: the best k candidates and the files folded under them as same-layout
    companions, at the levels the relevance budget gives (agent/relevance.py); the other candidates are dropped.

    Near-identical files stay inside their candidate's description as a line each (as search shows them).
    """
    leaders = [e for e in entries if not e.folded_under][: max(1, k)]
    kept = {e.path for e in leaders}
    ordered: list[ContextEntry] = []
    for leader in leaders:
        ordered.append(leader)
        ordered += [e for e in entries if e.folded_under == leader.path and not e.series and leader.path in kept]
    forms = context.shown_forms(ordered, max_chars, budget_tokens, question=question)
    for e, (form, _) in zip(ordered, forms, strict=True):
        e.level = {"full": "whole", "brief": "brief"}.get(form, "line")
    return ordered
