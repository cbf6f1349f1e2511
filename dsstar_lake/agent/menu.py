"""The menu: the candidates retrieval found for a question, one line each, for the selector to choose from.

A search hit folds near-identical files and files of the same layout into its slot; here each of them is a
candidate of its own (its own description, a line that tells it apart), so that the file a question is about can be
chosen even when search ranked a sibling above it. A line says what the file holds as search shows it (index/gist.py):
title, shape, date coverage, columns, key values; a family also its member count and name pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dslake_index.gist import cut_words

from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.base.untrusted import visible

LINE_CHARS = 420  # a menu line's longest form: three gist lines of ~120 characters and the path
KIN_SHOWN = 8  # folded files listed by a line each under their candidate; the rest share one line of names
# Every role prompt repeats the candidates not chosen: the first few in a few words each, the rest by path.
SHORT_SHOWN = 12
SHORT_CHARS = 160


def candidates(hits: Sequence[Any]) -> list[ContextEntry]:
    """Return the hits as menu candidates, best first: each hit, then each file folded under it, all at line level."""
    out: list[ContextEntry] = []
    for hit in hits:
        own = getattr(hit, "solo_description", "") or hit.description
        out.append(ContextEntry(hit.entry_id, hit.kind, hit.path, own, int(hit.member_count), "retrieval",
                                getattr(hit, "score", None), level="line", line=hit_line(hit)))
        descriptions = list(getattr(hit, "kin_descriptions", []) or [])
        if len(descriptions) != len(hit.kin):
            continue  # a store that does not say what the folded files hold (remote): they stay in the hit's text
        notes = list(getattr(hit, "kin_notes", []) or [])
        kinds = list(getattr(hit, "kin_kinds", []) or [])
        counts = list(getattr(hit, "kin_member_counts", []) or [])
        companions = set(hit.companions)
        for i, (path, entry_id) in enumerate(zip(hit.kin, hit.kin_ids, strict=True)):
            note = notes[i] if i < len(notes) else f"data/{path}"
            if path in companions:
                how, series = f" (same layout as data/{hit.path})", ""
            else:
                how, series = f" (near-identical to data/{hit.path})", hit.path
            kind = kinds[i] if i < len(kinds) else hit.kind
            count = counts[i] if i < len(counts) else 1
            out.append(ContextEntry(entry_id, kind, path, descriptions[i], count, "retrieval",
                                    getattr(hit, "score", None), level="line",
                                    line=_clip(note, LINE_CHARS - len(how)) + how, folded_under=hit.path,
                                    series=series))
    return out


def hit_line(hit: Any) -> str:
    """Return a hit's menu line: its path, for a family its member count, then what it holds."""
    parts = [f"data/{hit.path}"]
    if hit.kind == "family":
        parts.append(f"family of {hit.member_count} files named like this")
    elif hit.kind == "dataset":
        parts.append(f"dataset folder of {hit.member_count} files")
    parts += [line for line in hit.summary if line]
    if not hit.summary and getattr(hit, "card_line", ""):
        parts.append(hit.card_line)
    return _clip(" · ".join(parts))


def short_list(entries: Sequence[ContextEntry], shown: int = SHORT_SHOWN) -> str:
    """Return candidates as every role prompt lists them: the first few by path and what they hold in a few words
    (the selector saw the whole lines), the rest by path only."""
    lines = [f"- {visible(_short(e))}" for e in entries[:shown]]
    rest = [visible(f"data/{e.path}") for e in entries[shown:]]
    if rest:
        lines.append(f"- and {len(rest)} more: " + ", ".join(rest))
    return "\n".join(lines)


def _short(entry: ContextEntry) -> str:
    parts = (entry.line or f"data/{entry.path}").split(" · ")
    head = " · ".join(parts[:3])
    return cut_words(head, SHORT_CHARS)


def menu_text(entries: Sequence[ContextEntry]) -> str:
    """Return the candidates as the selector and the prompts show them: one line each, folded files indented
    under their candidate (past KIN_SHOWN, one line of their names); a folded file whose candidate is not in the list
    stands on its own line (its line names the file it is near-identical to)."""
    tops = [e for e in entries if not e.folded_under]
    under: dict[str, list[ContextEntry]] = {}
    for e in entries:
        if e.folded_under:
            under.setdefault(e.folded_under, []).append(e)
    lines: list[str] = []
    for top in tops:
        lines.append(f"- {_shown(top)}")
        group = under.pop(top.path, [])
        lines += [f"  - {_shown(e)}" for e in group[:KIN_SHOWN]]
        if len(group) > KIN_SHOWN:
            names = ", ".join(visible(f"data/{e.path}") for e in group[KIN_SHOWN:])
            lines.append(f"  - and {len(group) - KIN_SHOWN} more near-identical to data/{visible(top.path)}: {names}")
    for group in under.values():
        lines += [f"- {_shown(e)}" for e in group]
    return "\n".join(lines)


def _shown(entry: ContextEntry) -> str:
    return visible(entry.line or f"data/{entry.path}")


def _clip(text: str, limit: int = LINE_CHARS) -> str:
    return cut_words(text, limit)
