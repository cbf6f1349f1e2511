"""What an entry says: the description and card of a single file or of a family of files."""

from __future__ import annotations

import ast
import hashlib
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from dslake_index.families import Group, as_date, describe_values, family_id, file_entry_id, value_sort_key
from dslake_index.family_stats import FamilyView, MemberFacts, family_view
from dslake_index.id_periods import IdPeriods, card_words, periods_line
from dslake_index.profilers.base import PATH_PLACEHOLDER, Profile
from dslake_index.profilers.textio import clip
from dslake_index.stored_json import collector_paused


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
    """Append a cached analysis (text, source) to a description; the profiler's text always stays.

    The script that wrote it read the file itself, so what it printed is redacted as a profile is."""
    if not analysis:
        return description
    from dslake_index.profilers.redaction import redact_text

    text, redacted = redact_text(analysis[0])
    heading = f"Analysis ({analysis[1]}; what a model-written script printed about the file"
    if redacted:
        heading += f"; {redacted} secret{'s' if redacted != 1 else ''} redacted"
    return f"{description}\n\n{heading}):\n{text}"


def file_entry(path: str, folder: str, content_hash: str, profile: Profile,
               analysis: tuple[str, str] | None = None) -> EntryRow:
    """Build the entry of a single file (analysis: cached (text, source) appended to the description)."""
    from dslake_index.cards import card, describe
    from dslake_index.name_checks import name_notes

    profile = name_notes(path, profile)
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
# Reader arguments that do no harm to a member that does not need them: one reader may carry them for all.
HARMLESS_ARGS = {"thousands", "na_values", "keep_default_na", "skipinitialspace"}
SIDE_FIELDS = 12  # field names of a header that a data entry quotes
CARD_NUMBERS = 30  # a family's card names every value of a '*' up to this many when they are ids, not a run


def family_entry(group: Group, representative: Profile, max_listed: int,
                 analysis: tuple[str, str] | None = None,
                 related: Callable[[Group], Profile] | None = None,
                 facts: list[MemberFacts] | None = None, id_periods: list[IdPeriods] = ()) -> EntryRow:
    """Build the entry of a family: glob, count, the values behind each '*', rows across members, one reader for
    all, how members relate, sidecars, and the first member's description with each column's statistics over
    every member (related: the representative profile of a linked group; facts: every member's stored profile
    facts, in member order)."""
    # The members' facts are up to millions of dicts and lists, alive all along: with the cyclic collector running,
    # every collection the rendering sets off would walk them again (see stored_json).
    with collector_paused():
        return _family_entry(group, representative, max_listed, analysis, related, facts, id_periods)


def _family_entry(group: Group, representative: Profile, max_listed: int, analysis: tuple[str, str] | None,
                  related: Callable[[Group], Profile] | None, facts: list[MemberFacts] | None,
                  id_periods: list[IdPeriods] = ()) -> EntryRow:
    from dslake_index.cards import card, describe

    members = [m.path for m in group.members]
    first, last = members[0], members[-1]
    glob = group.glob
    values_text, card_values = _values_text(group, max_listed)
    where = ", in sibling folders" if group.spans_folders else ""
    view = family_view(representative, facts) if facts and len(facts) == len(members) else None
    header = [
        f"Family of {len(members)} files matching `{glob}` (one schema, one name pattern{where}).",
        f"First: {first}; last: {last}. {values_text} {_listing_text(group)}",
        _family_loader(group, representative, glob, named=_names_strays(group), view=view),
        *_rows_lines(group, representative),
        *(view.lines if view else []),
    ]
    periods = [(line, card_words(found)) for found in id_periods if (line := periods_line(found)) is not None]
    header += [line for line, _ in periods]
    side_lines, side_card, tail = _relations(group, related)
    header += side_lines
    own = describe(view.profile if view else representative, first)
    if group.documents is not None:
        own = _without_sample(own)  # a header's fields say what its text sample would
    header += ["", _member_heading(group, representative, view is not None), with_analysis(own, analysis), *tail]
    card_head = (f"family of {len(members)} files {glob} " + (f"names {card_values} " if card_values else "")
                 + _card_rows(group) + ("dates: " + "; ".join(view.coverage) + " " if view and view.coverage else "")
                 + "".join(words + " " for _, words in periods))
    return EntryRow(
        id=family_id(group.folder, group.pattern, group.signature),
        kind="family",
        folder=group.folder,
        path=glob,
        format=representative.format,
        content_hash=None,
        member_count=len(members),
        description="\n".join(header),
        card=card_head + side_card + "\n" + card(representative, glob, family=True),
        members=members,
    )


def _card_rows(group: Group) -> str:
    """Return the family's rows in all for its card ("" when a member's count is unknown or it has no table)."""
    rows = [m.tables[0][0] for m in group.members if m.tables]
    if not rows or len(rows) < len(group.members) or any(r is None for r in rows):
        return ""
    return f"rows in all {sum(rows):,} "


def with_relations(row: EntryRow, group: Group, related: Callable[[Group], Profile]) -> EntryRow:
    """Add to a single file's entry what its sidecar says, or which data file it documents."""
    lines, card_extra, tail = _relations(group, related)
    if not lines:
        return row
    head, _, rest = row.description.partition("\n")
    description = "\n".join([head, *lines, rest, *tail])
    return EntryRow(row.id, row.kind, row.folder, row.path, row.format, row.content_hash, row.member_count,
                    description, row.card + "\n" + card_extra.strip(), row.members)


def _member_heading(group: Group, representative: Profile, aggregated: bool = False) -> str:
    if representative.tables and aggregated:
        return ("Description of the first member (every member has these columns), with each column's missing and "
                "fill values, range, mean and kinds over all members; its rows, load line, notes and first rows are "
                "its own:")
    if representative.tables:
        return ("Description of the first member (every member has these columns; rows and values are each "
                "file's own):")
    return "Description of the first member (every member has this layout; sizes and values are each file's own):"


def _values_text(group: Group, max_listed: int) -> tuple[str, str]:
    """Return what the glob's '*'s stand for (description) and a short form for the card."""
    columns = group.varying()
    unique: list[tuple[list[int], list[str]]] = []  # columns that always hold the same value are said once
    for i, column in enumerate(columns):
        same = next((idx for idx, col in unique if col == column), None)
        if same is not None:
            same.append(i)
        else:
            unique.append(([i], column))
    card_parts = [_card_values(col) for _, col in unique]
    if len(columns) == 1:
        return f"The '*' stands for {describe_values(columns[0], max_listed)}.", card_parts[0]
    parts = []
    for idx, column in unique:
        which = " and ".join(_ordinal(i + 1) for i in idx) + (" (equal in every member)" if len(idx) > 1 else "")
        parts.append(f"{which}: {describe_values(column, max_listed)}")
    return f"The {len(columns)} '*'s stand for, in order: " + "; ".join(parts) + ".", "; ".join(card_parts)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _card_values(column: list[str]) -> str:
    distinct = sorted(set(column), key=value_sort_key)
    if any(not ch.isdigit() and ch not in "-_." for v in distinct for ch in v):
        return clip(", ".join(distinct), 800)  # words (places, variables): every one is a search term
    numbers = [int(v) for v in distinct if v.isdigit()]
    consecutive = len(numbers) == len(distinct) and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    if len(distinct) <= CARD_NUMBERS and not consecutive and not any(as_date(v) for v in distinct):
        return " ".join(distinct)  # a few ids (series, stations, runs): a question names one of them
    return f"{distinct[0]} … {distinct[-1]}"


MAX_STRAYS_NAMED = 10  # files a family's glob matches that are not members, named in its listing code


def listing(group: Group, glob: str | None = None) -> str:
    """Return the code that lists a family's members: its glob, less the files it matches that are not members."""
    glob = glob or group.glob
    found = f"sorted(glob.glob('data/{glob}'))"
    if not group.strays or len(group.strays) > MAX_STRAYS_NAMED:
        return found
    others = ", ".join(repr(f"data/{p}") for p in group.strays)
    return f"[p for p in {found} if p not in {{{others}}}]"


def _names_strays(group: Group) -> bool:
    return 0 < len(group.strays) <= MAX_STRAYS_NAMED


def _listing_text(group: Group) -> str:
    """Return the sentence that says how to list every member, and what else the glob matches."""
    n = len(group.strays)
    if not n:
        return f"List them all with `{listing(group)}`."
    if _names_strays(group):
        return (f"List them all with `files = {listing(group)}`: the glob also matches {n} file{'s' if n > 1 else ''} "
                f"that {'are not members' if n > 1 else 'is not a member'} (another schema, in {'their' if n > 1 else 'its'} "
                "own entry).")
    return (f"List them with `{listing(group)}`, but mind: the glob also matches {n} files that are not members "
            f"(another schema, in their own entries, e.g. {group.strays[0]}): keep only files with the columns below.")


def _rows_lines(group: Group, representative: Profile) -> list[str]:
    """Say how rows (or sizes) vary across members, so the first member's counts are not taken for everyone's."""
    known = [m for m in group.members if m.tables or m.size]
    if not known:
        return []
    if not representative.tables or representative.format in TEXT_FORMATS:
        sizes = [m.size for m in known]
        low, high = min(sizes), max(sizes)
        return [f"Sizes: {low:,} bytes each." if low == high else f"Sizes: {low:,} … {high:,} bytes per member."]
    lines = []
    n_tables = {len(m.tables) for m in known}
    if len(n_tables) > 1:
        lines.append(f"Tables per member: {min(n_tables)} … {max(n_tables)}.")
    for t in range(min(3, len(representative.tables))):
        rows = [m.tables[t][0] for m in known if len(m.tables) > t and m.tables[t][0] is not None]
        if not rows:
            continue
        exact = all(m.tables[t][1] for m in known if len(m.tables) > t)
        which = f" (table {t + 1})" if len(representative.tables) > 1 else ""
        approx = "" if exact else " (approximate where a file was sampled)"
        if min(rows) == max(rows):
            lines.append(f"Rows: {rows[0]:,} in every member{which}{approx}.")
            continue
        own = representative.tables[t].n_rows
        line = (f"Rows per member{which}: {min(rows):,} … {max(rows):,} (median {int(statistics.median(rows)):,}; "
                f"{sum(rows):,} in all){approx}")
        if own is not None:
            line += f"; the first member, described below, has {own:,}"
            if "nrows=" in (representative.tables[t].read_hint or ""):
                line += (f", and the nrows={own} in its load line is its own: every member stops at its own row "
                         "count (read without nrows and drop what follows the table, see Notes)")
        lines.append(line + ".")
    return lines


def _family_loader(group: Group, representative: Profile, glob: str, named: bool = False,
                   view: FamilyView | None = None) -> str:
    """Return how to read every member: texts are read whole, tables with one reader that fits every member
    (named: the members' listing is in a variable `files` the line above defines), de-duplicated when members
    repeat each other's rows."""
    code, remark = _loader(group, representative, glob, named)
    if view is not None and view.dedup and code.startswith("pd.concat("):
        code += view.dedup
        remark = f" ({view.dedup_why}; {remark[2:]}" if remark.startswith(" (") else f" ({view.dedup_why}){remark}"
    verb = "Load" if code.startswith("pd.") else ("List" if code.startswith("sorted(") else "Read")
    return f"{verb} them all with glob, e.g. `{code}`{remark}"


def _loader(group: Group, representative: Profile, glob: str, named: bool = False) -> tuple[str, str]:
    """Return the code that reads every member and what the reader should know about it."""
    found = "files" if named else listing(group, glob)
    if representative.format in TEXT_FORMATS:
        # bulletins and documents: pd.read_csv would read one incidental table of each and lose the rest
        return (f"texts = {{p: open(p).read() for p in {found}}}",
                " (each member is a text document like the one described below).")
    if not representative.tables:
        hint = representative.read_hint
        if hint:
            return f"data = {{p: {hint.replace(PATH_PLACEHOLDER, 'p')} for p in {found}}}", "."
        return found, "."
    hints = [m.tables[0][2] for m in group.members if m.tables and m.tables[0][2]]
    common = _common_reader(hints or [representative.tables[0].read_hint or ""])
    notes = ["table 1; the member description gives the others"] if len(representative.tables) > 1 else []
    if common is None:
        reader = "pd.read_excel(p)" if representative.format == "xlsx" else "pd.read_csv(p)"
        notes.append("adapt the reader to the member description below")
        return f"pd.concat({reader} for p in {found})", f" ({'; '.join(notes)})."
    call, conflicts = common
    if conflicts:
        notes.append("but members need different arguments (" + "; ".join(conflicts) + "): check each file's own "
                     "layout before reading it this way")
    else:
        notes.append("these arguments fit every member")
    if any("nrows=" in h for h in hints):
        notes.append("nrows is left out: each member's table has its own length, see Rows")
    return f"pd.concat({call} for p in {found})", f" ({'; '.join(notes)})."


def _common_reader(hints: list[str]) -> tuple[str, list[str]] | None:
    """Return one reader call (in p) that fits every member's own hint, and the arguments members disagree on."""
    distinct = {h: _parse_hint(h) for h in set(hints)}  # members mostly share one hint: parse it once
    parsed = [distinct[h] for h in hints]
    if not parsed or any(p is None for p in parsed):
        return None
    calls = [p for p in parsed if p is not None]
    if len({(func, tuple(args)) for func, args, _ in calls}) > 1:
        return None
    func, args, first_kwargs = calls[0]
    keys = list(first_kwargs) + sorted({k for _, _, kw in calls for k in kw} - set(first_kwargs))
    kept: list[str] = []
    conflicts: list[str] = []
    for key in keys:
        if key == "nrows":
            continue  # rows are each member's own; the rows line says how many
        values = Counter(kw.get(key) for _, _, kw in calls)
        present = [v for v in values if v is not None]
        if len(values) == 1 or (len(present) == 1 and key in HARMLESS_ARGS):
            kept.append(f"{key}={present[0]}")
            continue
        kept.append(f"{key}={values.most_common(1)[0][0]}" if values.most_common(1)[0][0] is not None else "")
        conflicts.append(f"{key}: " + ", ".join(
            f"{'none' if v is None else v} in {n} file{'s' if n > 1 else ''}" for v, n in values.most_common(4)))
    inside = ", ".join(["p", *args, *(k for k in kept if k)])
    return f"{func}({inside})", conflicts


def _parse_hint(hint: str) -> tuple[str, list[str], dict[str, str]] | None:
    """Return (function, other positional arguments, keyword arguments as source) of a `pd.read_x(path, ...)` hint."""
    try:
        tree = ast.parse(hint.replace(PATH_PLACEHOLDER, "p"), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.Call) or not tree.args or ast.unparse(tree.args[0]) != "p":
        return None
    if any(k.arg is None for k in tree.keywords):
        return None
    return (ast.unparse(tree.func), [ast.unparse(a) for a in tree.args[1:]],
            {k.arg: ast.unparse(k.value) for k in tree.keywords if k.arg is not None})


# ---- sidecars: a header family says what it documents, the data family names its headers ------------------------


def _relations(group: Group, related: Callable[[Group], Profile] | None) -> tuple[list[str], str, list[str]]:
    """Return (lines under the entry's head, card terms, lines at its end) for a group's sidecar links."""
    if related is None:
        return [], "", []
    lines: list[str] = []
    card_terms: list[str] = []
    tail: list[str] = []
    for side in group.sidecars:
        profile = related(side)
        summary = _side_summary(profile)
        paired = _paired(side, group)
        if group.is_family:
            cover = "" if paired >= len(group.members) else f" ({paired} of the {len(group.members)} members have one)"
            count = f", {len(side.members)} files" if side.is_family else ""
            lines.append(f"Headers: beside each member lies a metadata file with the same stem{cover}: `{side.glob}` "
                         f"({profile.format}{count}; its own catalog entry): {summary}")
        else:
            lines.append(f"Header: `{side.glob}` ({profile.format}; its own catalog entry) documents this file: "
                         f"{summary}")
        card_terms.append("headers: " + _side_card(profile, side.glob))
    data = group.documents
    if data is not None:
        profile = related(data)
        what = f"`{data.glob}` ({profile.format}, {len(data.members)} files; its own catalog entry)" \
            if data.is_family else f"`{data.glob}` ({profile.format}; its own catalog entry)"
        load = f"Read the data with `{_loader(data, profile, data.glob)[0]}`." if data.is_family \
            else _hint_of(profile, data.glob)
        lines.append(f"What these files are for: each is the header (metadata) of the data file with the same stem "
                     f"beside it, in {what}; the data is there, not here. {load}")
        card_terms.append(f"header metadata of {data.glob} ({profile.format})")
        tail = ["", f"The data file it documents (the description of {data.members[0].path}, without its sample):",
                _without_sample(_describe(profile, data.members[0].path))]
    return lines, (" ".join(card_terms) + " ") if card_terms else "", tail


def _describe(profile: Profile, path: str) -> str:
    from dslake_index.cards import describe

    return describe(profile, path)


def _hint_of(profile: Profile, path: str) -> str:
    from dslake_index.cards import HINT_PREFIX

    hint = profile.read_hint or (profile.tables[0].read_hint if profile.tables else None)
    return f"Read it with `{hint.replace(PATH_PLACEHOLDER, repr(HINT_PREFIX + path))}`." if hint else ""


def _paired(side: Group, data: Group) -> int:
    stems = {(m.folder, m.stem) for m in side.members}
    return sum((m.folder, m.stem) in stems for m in data.members)


def _side_summary(profile: Profile) -> str:
    """Return a header's title and the names of its fields, in one line."""
    parts = [repr(clip(profile.title, 160))] if profile.title else []
    structure = profile.structure if isinstance(profile.structure, dict) else {}
    names: list[str] = []
    for key in list(structure.get("fields", {}))[:80] or structure.get("keys_list", []) or []:
        name = str(key).rsplit("/", 1)[-1]
        if name not in names:
            names.append(name)
    if names:
        root = f"<{structure['root']}> " if structure.get("root") else ""
        parts.append(f"{root}fields " + ", ".join(names[:SIDE_FIELDS]) + (", …" if len(names) > SIDE_FIELDS else ""))
    return "; ".join(parts) + "." if parts else "a metadata file."


def _side_card(profile: Profile, path: str) -> str:
    from dslake_index.cards import card

    lines = [ln for ln in card(profile, path).splitlines() if ln.startswith(("title:", "fields:", "headings:"))]
    return clip(" ".join(lines), 500)


def _without_sample(description: str) -> str:
    """Drop a description's text sample (its last block): fields or notes already say what it shows."""
    head, marker, _ = description.partition("\nText sample:\n")
    return head if marker else description
