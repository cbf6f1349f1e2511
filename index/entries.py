"""What an entry says: the description and card of a single file or of a family of files."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from index.families import Group, family_id, file_entry_id
from index.profilers.base import Profile


def render_version() -> str:
    """Return a fingerprint of the code that writes descriptions and cards; entries are rebuilt when it changes."""
    from index import cards, families

    digest = hashlib.sha1()
    for module in (cards, families, sys.modules[__name__]):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class EntryRow:
    """One row of the entries table, ready to write."""

    id: str
    kind: str
    folder: str
    path: str
    format: str | None
    content_hash: str | None
    member_count: int
    description: str
    card: str
    members: list[str]

    @property
    def card_hash(self) -> str:
        """Return the hash of the card: the vector store re-embeds only when it changes."""
        return hashlib.sha1(self.card.encode()).hexdigest()


def with_analysis(description: str, analysis: tuple[str, str] | None) -> str:
    """Append a cached analysis (text, source) to a description; the profiler's text always stays."""
    if not analysis:
        return description
    text, source = analysis
    return f"{description}\n\nAnalysis ({source}; what a model-written script printed about the file):\n{text}"


def file_entry(path: str, folder: str, content_hash: str, profile: Profile,
               analysis: tuple[str, str] | None = None) -> EntryRow:
    """Build the entry of a single file (analysis: cached (text, source) appended to the description)."""
    from index.cards import card, describe

    return EntryRow(
        id=file_entry_id(path),
        kind="file",
        folder=folder,
        path=path,
        format=profile.format,
        content_hash=content_hash,
        member_count=1,
        description=with_analysis(describe(profile, path), analysis),
        card=card(profile, path),
        members=[path],
    )


TEXT_FORMATS = {"text", "markdown", "tle", "sp3", "code", "xml", "html"}


def _family_loader(representative: Profile, glob: str) -> str:
    """Return how to read every member: texts are read whole, tables with the member's reader."""
    if representative.format in TEXT_FORMATS:
        # bulletins and documents: pd.read_csv would read one incidental table of each and lose the rest
        return ("Read them all with glob, e.g. "
                f"`texts = {{p: open(p).read() for p in sorted(glob.glob('data/{glob}'))}}` "
                "(each member is a text document like the one described below).")
    reader = "pd.read_excel" if representative.format == "xlsx" else "pd.read_csv"
    return ("Load them all with glob, e.g. "
            f"`pd.concat({reader}(p) for p in sorted(glob.glob('data/{glob}')))` "
            "(adapt the reader to the member description below).")


def family_entry(group: Group, representative: Profile, max_listed: int,
                 analysis: tuple[str, str] | None = None) -> EntryRow:
    """Build the entry of a family: pattern, count, name ranges, shared schema, one member's description."""
    from index.cards import card, describe

    members = [m.path for m in group.members]
    first, last = members[0], members[-1]
    if group.by_word:
        ranges = []
        variants = group.variants()
        range_text = ", ".join(variants[:max_listed])
    else:
        ranges = group.value_ranges()
        range_text = "; ".join(f"{lo} … {hi}" for lo, hi in ranges)
    header = [
        f"Family of {len(members)} files matching `{group.glob}` (one schema, one name pattern).",
        f"First: {first}; last: {last}."
        + (f" Values in the names range over: {range_text}." if ranges else "")
        + (f" The '*' in the names stands for: {range_text}." if group.by_word else ""),
        _family_loader(representative, group.glob),
        "",
        "Member description (every member shares this schema):",
        with_analysis(describe(representative, first), analysis),
        "",
        "Members:" if len(members) <= max_listed else f"Members (first {max_listed} of {len(members)}):",
    ]
    header.extend(f"- {m}" for m in members[:max_listed])
    card_head = f"family of {len(members)} files {group.glob} " + (f"names {range_text} " if range_text else "")
    return EntryRow(
        id=family_id(group.folder, group.pattern, group.signature),
        kind="family",
        folder=group.folder,
        path=group.glob,
        format=representative.format,
        content_hash=None,
        member_count=len(members),
        description="\n".join(header),
        card=card_head + "\n" + card(representative, group.glob),
        members=members,
    )
