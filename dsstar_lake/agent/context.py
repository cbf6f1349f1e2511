"""The data context {d_i}: which catalog entries a run sees, and how the prompts show them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.gist import gist

from dsstar_lake.agent.brief import brief, one_line, pointer
from dsstar_lake.agent.relevance import allocation_order
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.base.errors import CatalogError, UsageError
from dsstar_lake.base.untrusted import frame, quote, visible

if TYPE_CHECKING:
    from dsstar_lake.runs.setup import RunSetup

CHARS_PER_TOKEN = 4  # a rough, model-independent estimate of prompt tokens from characters
_FRAME_CHARS = 80  # a data frame's tags and attributes besides the path (which it names twice)


def shown_path(entry: ContextEntry) -> str:
    """Return the path a script uses for an entry: data/<lake-relative path or glob>."""
    return f"data/{entry.path}"


def filenames(entries: list[ContextEntry]) -> str:
    """Return the comma-separated list of quoted paths for the '# Given data:' line."""
    # Quoted: a name holding a newline or '# Question' stays one literal on this one line.
    return ", ".join(quote(shown_path(e)) for e in entries) or "(no files)"


def data_block(entries: list[ContextEntry], max_chars: int = 0, budget_tokens: int = 0, question: str = "") -> str:
    """Return every entry's description in its own <data path=… tag=…> frame (the paper's {filename}/{summary}).

    With a budget, entries are taken in order of relevance (relevance.py): each is shown whole while the block
    stays within budget_tokens, else in its brief form, else as one line; the block keeps the rank order. The
    first entry and entries the user gave are always whole. The agent's prompts render its view (agent/view.py);
    this block is the report's, and the relevance budget is the view's fallback without a selection.
    """
    forms = shown_forms(entries, max_chars, budget_tokens, question)
    parts = []
    for e, (form, text) in zip(entries, forms, strict=True):
        if visible(shown_path(e)) != shown_path(e):
            # A name with a newline or a control character: where the description repeats it, it is quoted too.
            text = text.replace(shown_path(e), quote(shown_path(e)))
        family = {"family": f"{e.member_count} files"} if e.kind == "family" else {}
        shown = {"shown": form} if form != "full" else {}
        parts.append(frame(text, "data", path=shown_path(e), **family, **shown))
    return "\n\n".join(parts)


def shown_forms(entries: list[ContextEntry], max_chars: int = 0, budget_tokens: int = 0,
                question: str = "") -> list[tuple[str, str]]:
    """Return (form, text) per entry: form is full, brief or named, as data_block shows it."""
    budget = budget_tokens * CHARS_PER_TOKEN if budget_tokens > 0 else 0
    fulls = [capped(e.description.strip(), max_chars) for e in entries]
    named = [pointer(e.path, full) for e, full in zip(entries, fulls, strict=True)]
    # Room is kept for every later entry's one-line form, so the last entries are never crowded out entirely.
    reserve = sum(len(text) + _FRAME_CHARS + 2 * len(e.path) for e, text in zip(entries, named, strict=True))
    used = 0
    out: dict[int, tuple[str, str]] = {}
    pinned = [i == 0 or e.source == "given" for i, e in enumerate(entries)]
    # What the model works with first, then the rest by relevance to the question (rank order without one).
    order = [i for i in range(len(entries)) if pinned[i]]
    order += [i for i in allocation_order(entries, fulls, question) if not pinned[i]]
    for i in order:
        e = entries[i]
        overhead = _FRAME_CHARS + 2 * len(e.path)
        reserve -= len(named[i]) + overhead
        room = budget - used - reserve - overhead
        if not budget or pinned[i] or len(fulls[i]) <= room:
            form, text = "full", fulls[i]
        else:
            short = brief(fulls[i])
            form, text = ("brief", short) if len(short) <= room else ("named", named[i])
        used += len(text) + overhead
        out[i] = (form, text)
    return [out[i] for i in range(len(entries))]


def block_tokens(entries: list[ContextEntry], max_chars: int = 0, budget_tokens: int = 0, question: str = "") -> int:
    """Return the estimated tokens of the given-data block (what evaluations report as context size)."""
    return len(data_block(entries, max_chars, budget_tokens, question=question)) // CHARS_PER_TOKEN


def named_in(entries: list[ContextEntry], text: str) -> list[str]:
    """Return the paths of the entries a text names: a file by its path or name, a family by its pattern or a member."""
    named = []
    # A file that is an entry of its own is named as itself, never as a member of a family whose pattern it fits.
    own = {e.path.rsplit("/", 1)[-1] for e in entries if e.kind != "family"}
    words = [word for word in _PATHLIKE.findall(text) if word not in own]
    for e in entries:
        name = e.path.rsplit("/", 1)[-1]
        if e.kind == "family":
            member = re.compile(_glob_regex(name))
            hit = name in text or any(member.fullmatch(word) for word in words)
        else:
            hit = name in text
        if hit:
            named.append(e.path)
    return named


def _glob_regex(pattern: str) -> str:
    """Return the regular expression of a glob's file name ('readings_*.csv'), without fnmatch's anchors."""
    return ".*".join(re.escape(part) for part in pattern.split("*")).replace(r"\?", ".")


_PATHLIKE = re.compile(r"[^\s'\"`/(),]+\.[A-Za-z0-9]{1,8}")  # file names as a plan writes them


def capped(text: str, max_chars: int) -> str:
    """Return a description cut at max_chars (0: whole), saying where it was cut."""
    if max_chars and len(text) > max_chars:
        return text[:max_chars].rstrip() + f"\n[... description cut at {max_chars} characters ...]"
    return text


def example_path(entries: list[ContextEntry]) -> str:
    """Return one quoted data/ path to show as an example in the coder prompts (a described file's, if any)."""
    for e in sorted(entries, key=lambda e: e.level == "line"):
        if e.kind == "file":
            return quote(shown_path(e))
    return quote(shown_path(entries[0]) if entries else "data/file.csv")


def retrieve(retriever: Any, query: str, k: int, exclude: list[str], source: str) -> list[ContextEntry]:
    """Return the top-k entries for a query as context entries, skipping those already in context."""
    return [ContextEntry.from_hit(hit, source) for hit in retriever.search(query, k, exclude=exclude)]


def given_files(setup: RunSetup, paths: list[str]) -> list[ContextEntry]:
    """Return context entries for files named by the user (--files), described from the catalog.

    A file that belongs to a family gets its own description when the profile can be read back, else
    the family's. A file the catalog does not know is still given, with a one-line description.
    """
    out: list[ContextEntry] = []
    seen: set[str] = set()
    for raw in paths:
        rel = setup.relative(raw)
        if setup.root is not None and not (setup.root / rel).exists():
            raise UsageError(f"--files: {rel} is not in the lake {setup.root}")
        if setup.root is None and setup.access.remote is not None and setup.access.file_record(rel) is None:
            raise UsageError(f"--files: {rel} is not in the lake {setup.access.remote} (as of its last index)")
        if rel in seen:
            continue
        seen.add(rel)
        out.append(_describe_given(setup, rel))
    return _as_series(setup, out)


def _as_series(setup: RunSetup, entries: list[ContextEntry]) -> list[ContextEntry]:
    """Mark given files that are members of one family, or near-identical by name (same folder and extension, names
    differing only in digits), as one series: the prompts describe its first file and list the others by a line."""
    keys: dict[str, str] = {}
    for e in entries:
        try:
            row = setup.access.entry_of_file(e.path) if setup.root is not None else None
        except CatalogError:
            row = None
        keys[e.path] = f"family:{row['path']}" if row is not None and row["kind"] == "family" else _name_pattern(e.path)
    counts: dict[str, int] = {}
    for key in keys.values():
        counts[key] = counts.get(key, 0) + 1
    for e in entries:
        if counts[keys[e.path]] > 1:
            e.series, e.line = keys[e.path], one_line(e.path, e.description)
    return entries


def _name_pattern(path: str) -> str:
    folder, _, name = path.rpartition("/")
    return f"{folder}/{re.sub(r'[0-9]+', '#', name)}"


def _describe_given(setup: RunSetup, rel: str) -> ContextEntry:
    catalog = setup.access
    try:
        row = catalog.file_record(rel)
    except CatalogError:
        row = None  # not indexed: the files can still be given, with what little is known of them
    entry = None
    if row is not None and row["entry_id"]:
        entry = catalog.entry_record(row["entry_id"])
    if entry is not None and entry["kind"] == "file":
        return ContextEntry(entry["id"], "file", rel, entry["description"], 1, "given")
    own = _own_description(catalog, rel) if row is not None else None
    if own is None and entry is not None:
        own = (f"This file is one member of the family `data/{entry['path']}`; the family's description "
               f"follows.\n{entry['description']}")
    if own is None:
        size = (Path(setup.root) / rel).stat().st_size if setup.root is not None else 0
        own = f"A file of {size} bytes that the catalog has not described (run `dslake index`)."
    return ContextEntry(f"file:{rel}", "file", rel, own, 1, "given")


def _own_description(catalog: Any, rel: str) -> str | None:
    """Describe one family member from its cached profile (None: none stored, or one this version cannot read)."""
    try:
        return catalog.file_description(rel)
    except (ValueError, KeyError, TypeError):
        return None


def read_entry(setup: RunSetup, rel: str) -> ContextEntry | None:
    """Return the catalog entry describing a lake file a script read (its own, or its family's), or None."""
    try:
        row = setup.access.entry_of_file(rel)
    except CatalogError:
        return None
    if row is None:
        return None
    line = " · ".join([f"data/{row['path']}", *gist(row["card"] or "")]) + " (a script read it)"
    return ContextEntry(row["id"], row["kind"], row["path"], row["description"], int(row["member_count"]), "read",
                        line=line)
