"""Group files that share a name pattern and a schema into families (one entry each), across sibling folders.

A family's key is (folder pattern, name pattern, schema): digit runs and dates are wildcards in every folder
name and in the file name, so per-day folders that each hold one orbit file and its header make two families,
not two entries a day. Values that every member shares go back into the glob (`SP3ACOM_2__*T235942`), so a glob
only says '*' where members differ. A small metadata file next to a data file of the same stem (X.HDR by X.sp3)
is a sidecar: the two groups are linked so each entry can say what the other is.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

# Dates first, so 2024-01-31 becomes one wildcard instead of three.
_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}([-_.]?)(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?!\d)")
_DIGITS = re.compile(r"\d+")
_DATE_OR_DIGITS = re.compile(f"{_DATE.pattern}|{_DIGITS.pattern}")
_WILDCARD = "*"
_SEPARATORS = "_-. "
# Formats whose files all share one record layout: the format is their schema (a family may form).
FIXED_LAYOUTS = {"sp3", "tle"}
# What a sidecar (a header or metadata file next to the data file it documents) is written in.
SIDECAR_FORMATS = {"xml", "json", "text", "markdown", "html"}
SIDECAR_EXTENSIONS = {"hdr", "xml", "json", "yaml", "yml", "txt", "md", "lbl", "met", "meta", "info", "aux", "ini"}
SIDECAR_MAX_SIZE_SHARE = 0.25  # a sidecar is at most this share of its data file's size (median over pairs)
SIDECAR_MIN_PAIRED = 0.8  # share of a sidecar group's members that must sit next to a data file of their stem


def name_pattern(name: str) -> str:
    """Return a file name with its dates and digit runs replaced by '*' (the family's glob)."""
    pattern = _DATE.sub(_WILDCARD, name)
    return _DIGITS.sub(_WILDCARD, pattern)


def name_values(name: str) -> list[str]:
    """Return the dates and digit runs of a name, in order: the values behind the pattern's wildcards."""
    return [match.group(0) for match in _DATE_OR_DIGITS.finditer(name)]


def folder_pattern(folder: str) -> str:
    """Return a lake-relative folder with dates and digit runs as '*' in every part: sibling folders that differ
    only by them (one folder per day, per run) share it."""
    return "/".join(name_pattern(part) for part in folder.split("/")) if folder else ""


@dataclass
class Member:
    """A file that may join a family, with the facts its family's description sums up."""

    path: str
    name: str
    signature: str
    size: int = 0
    tables: list[tuple[int | None, bool, str | None]] = field(default_factory=list)  # (rows, exact, read hint)

    @property
    def folder(self) -> str:
        """Return the member's lake-relative folder ('' at the root)."""
        return self.path.rpartition("/")[0]

    @property
    def format(self) -> str:
        """Return the member's format (the first part of its signature)."""
        return self.signature.split("\x1f", 1)[0]

    @property
    def stem(self) -> str:
        """Return the name without its last extension (what a data file and its sidecar share)."""
        return self.name.rsplit(".", 1)[0] if "." in self.name[1:] else self.name


@dataclass
class Group:
    """A family (several members) or a single file (one member), in one folder or across sibling folders."""

    folder: str  # the real folder, or the folder pattern when the members sit in several folders
    pattern: str  # the name pattern: digits and dates as '*' (or one word as '*' when by_word)
    signature: str
    members: list[Member] = field(default_factory=list)
    by_word: bool = False  # members differ by a word (a place, a variable), not by digits or dates
    sidecars: list[Group] = field(default_factory=list)  # header/metadata groups that document this one
    strays: list[str] = field(default_factory=list)  # files the glob matches that are not members (another schema)
    documents: Group | None = None  # for a sidecar group: the data group it documents
    _columns: tuple[int, list[list[str]]] | None = field(default=None, repr=False, compare=False)

    @property
    def is_family(self) -> bool:
        """Return True when the group is a family entry rather than one file."""
        return len(self.members) > 1

    @property
    def spans_folders(self) -> bool:
        """Return True when the members sit in more than one folder."""
        return len({m.folder for m in self.members}) > 1

    @property
    def glob(self) -> str:
        """Return the lake-relative glob that matches the members: '*' only where their values differ."""
        if len(self.members) < 2:
            return self.members[0].path if self.members else self._template()
        template, columns = self._template(), self.slot_columns()
        parts = template.split(_WILDCARD)
        if len(parts) != len(columns) + 1:
            return template  # a literal '*' in a name: keep the plain pattern
        out = [parts[0]]
        for column, part in zip(columns, parts[1:], strict=True):
            out.append(column[0] if len(set(column)) == 1 else _WILDCARD)
            out.append(part)
        return "".join(out)

    def _template(self) -> str:
        folder = folder_pattern(self.members[0].folder) if self.members else self.folder
        return f"{folder}/{self.pattern}" if folder else self.pattern

    def member_slots(self, member: Member) -> list[str]:
        """Return what a member puts in each '*' of the family's untightened pattern, folders first."""
        name = [self._variant(member.name)] if self.by_word else name_values(member.name)
        return name_values(member.folder) + name

    def slot_columns(self) -> list[list[str]]:
        """Return, per '*' of the untightened pattern, the values of every member (in member order)."""
        key = len(self.members)
        if self._columns is None or self._columns[0] != key:  # a description asks many times; members are fixed
            rows = [self.member_slots(m) for m in self.members]
            width = min((len(r) for r in rows), default=0)
            self._columns = (key, [[r[i] for r in rows] for i in range(width)])
        return self._columns[1]

    def varying(self) -> list[list[str]]:
        """Return the value columns of the '*'s that stay in the glob (where members differ), in glob order."""
        return [column for column in self.slot_columns() if len(set(column)) > 1]

    def value_ranges(self) -> list[tuple[str, str]]:
        """Return (min, max) of each varying wildcard's values across members."""
        return [(min(col, key=value_sort_key), max(col, key=value_sort_key)) for col in self.varying()]

    def variants(self) -> list[str]:
        """Return what each member's name puts in the pattern's '*' (word families), in member order."""
        return [self._variant(m.name) for m in self.members]

    def _variant(self, name: str) -> str:
        head, _, tail = self.pattern.partition(_WILDCARD)
        return name[len(head) : len(name) - len(tail)]


def value_sort_key(value: str) -> tuple[int, str]:
    """Order name values by their number (so 9 comes before 10), then as text."""
    digits = re.sub(r"\D", "", value)
    return (int(digits) if digits else 0, value)


def family_id(folder: str, pattern: str, signature: str) -> str:
    """Return a stable entry id for a family."""
    key = f"{folder}\x1f{pattern}\x1f{signature}".encode()
    return "fam-" + hashlib.sha1(key).hexdigest()[:20]


def file_entry_id(path: str) -> str:
    """Return a stable entry id for a single-file entry."""
    return "file-" + hashlib.sha1(path.encode()).hexdigest()[:20]


def layout_signature(signature: str, structure: Any) -> str:
    """Return the signature files are grouped by: a file without columns but with a fixed layout (an SP3 orbit
    file, an XML header, a CDF or npz with named variables) gets that layout as its schema; prose gets none."""
    if _has_schema(signature):
        return signature
    fmt = signature.split("\x1f", 1)[0]
    if fmt in FIXED_LAYOUTS:
        return f"{signature}\x1flayout:{fmt}"
    if not isinstance(structure, dict):
        return signature
    if fmt == "xml" and structure.get("fields"):
        return f"{signature}\x1f<{structure.get('root')}>:" + "|".join(sorted(structure["fields"]))
    items = structure.get("variables") or structure.get("arrays")
    if isinstance(items, list) and items and all(isinstance(i, dict) and "name" in i for i in items):
        return f"{signature}\x1fvars:" + "|".join(f"{i['name']}:{i.get('dtype') or i.get('type') or ''}"
                                                   for i in items)
    return signature


def group_folder(folder: str, members: list[Member], min_members: int) -> list[Group]:
    """Split one folder's files into families and singles (see group_files)."""
    return group_files(members, min_members)


def group_files(members: list[Member], min_members: int) -> list[Group]:
    """Split files (one folder, or sibling folders whose names differ only by digits and dates) into groups.

    In each folder, a family is >= min_members files sharing a schema signature and either a name pattern with
    digits or dates as wildcards (daily files), or, for tables, names that differ only in one word (one file per
    town or state). Then groups of sibling folders merge when they share name pattern and schema: per-day folders
    that each hold one file of a kind become one family. Documents without a schema (prose: notes, memos, plain
    text) never form a family: each says something of its own, and a family's card, written from one member,
    could not speak for the others. Sidecars (headers next to their data files) are linked to their data group.
    """
    minimum = max(2, min_members)
    by_folder: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        by_folder[member.folder].append(member)
    groups: list[Group] = []
    for folder in sorted(by_folder):
        groups += _group_one_folder(folder, by_folder[folder], minimum)
    if len(by_folder) > 1:
        groups = _merge_siblings(groups, minimum)
    groups.sort(key=lambda g: g.members[0].path)
    link_sidecars(groups)
    _find_strays(groups, members)
    return groups


def glob_regex(glob: str) -> re.Pattern[str]:
    """Return a regex that matches what glob.glob would for a family's glob ('*' stays inside one folder)."""
    return re.compile("[^/]*".join(re.escape(part) for part in glob.split(_WILDCARD)) + r"\Z")


def _find_strays(groups: list[Group], members: list[Member]) -> None:
    """Note, per family, the files its glob matches that belong elsewhere (a glob alone would read them too)."""
    families = [g for g in groups if g.is_family]
    if not families:
        return
    for family in families:
        regex = glob_regex(family.glob)
        own = {m.path for m in family.members}
        family.strays = sorted(m.path for m in members if m.path not in own and regex.match(m.path))


def _group_one_folder(folder: str, members: list[Member], minimum: int) -> list[Group]:
    buckets: dict[tuple[str, str], list[Member]] = defaultdict(list)
    for member in members:
        buckets[(name_pattern(member.name), member.signature)].append(member)
    groups: list[Group] = []
    leftovers: dict[str, list[Member]] = defaultdict(list)
    for (pattern, signature), bucket in sorted(buckets.items()):
        bucket.sort(key=lambda m: m.path)
        if _WILDCARD in pattern and len(bucket) >= minimum and _has_schema(signature):
            groups.append(Group(folder, pattern, signature, bucket))
        else:
            for member in bucket:
                leftovers[member.signature].append(member)
    for signature, bucket in sorted(leftovers.items()):
        bucket.sort(key=lambda m: m.path)
        pattern = _word_pattern([m.name for m in bucket]) if _is_tabular(signature) else None
        if pattern is not None and len(bucket) >= minimum:
            groups.append(Group(folder, pattern, signature, bucket, by_word=True))
        else:
            groups.extend(Group(folder, m.name, signature, [m]) for m in bucket)
    return groups


def _merge_siblings(groups: list[Group], minimum: int) -> list[Group]:
    """Merge groups of different sibling folders that share (name pattern, schema, kind of pattern)."""
    keyed: dict[tuple[str, str, bool], list[Group]] = defaultdict(list)
    for group in groups:
        pattern = group.pattern if group.is_family else name_pattern(group.members[0].name)
        keyed[(pattern, group.signature, group.by_word)].append(group)
    out: list[Group] = []
    for (pattern, signature, by_word), parts in keyed.items():
        members = sorted((m for g in parts for m in g.members), key=lambda m: m.path)
        folders = {m.folder for m in members}
        if len(folders) > 1 and len(members) >= minimum and _has_schema(signature):
            out.append(Group(folder_pattern(members[0].folder), pattern, signature, members, by_word=by_word))
        else:
            out += parts
    return out


def link_sidecars(groups: list[Group]) -> None:
    """Link each header/metadata group to the data group whose members sit next to its members, stem for stem.

    A sidecar group's members are small files in a metadata format (XML, JSON, text) or with a header extension
    (.HDR, .xml, .json, .lbl ...), each in the folder of a data file with the same stem and at most a quarter of
    its size: X.HDR beside X.sp3, X.json beside X.csv.
    """
    by_stem: dict[tuple[str, str], list[tuple[Group, Member]]] = defaultdict(list)
    for group in groups:
        for m in group.members:
            by_stem[(m.folder, m.stem)].append((group, m))
    for group in groups:
        if not all(_looks_like_sidecar(m) for m in group.members):
            continue
        partners: dict[int, tuple[Group, list[tuple[Member, Member]]]] = {}
        for m in group.members:
            for other, data in by_stem[(m.folder, m.stem)]:
                if other is not group:
                    partners.setdefault(id(other), (other, []))[1].append((m, data))
        best = max(partners.values(), key=lambda p: len(p[1]), default=None)
        if best is None:
            continue
        data_group, pairs = best
        if len(pairs) < SIDECAR_MIN_PAIRED * len(group.members) or data_group.documents is not None:
            continue
        import statistics  # here: a search imports this module (retrieve, sidecars) and never groups files

        share = statistics.median(m.size / max(d.size, 1) for m, d in pairs)
        if share <= SIDECAR_MAX_SIZE_SHARE:
            group.documents = data_group
            data_group.sidecars.append(group)


def _looks_like_sidecar(member: Member) -> bool:
    ext = member.name.rsplit(".", 1)[-1].lower() if "." in member.name else ""
    return member.format in SIDECAR_FORMATS or ext in SIDECAR_EXTENSIONS


def _has_schema(signature: str) -> bool:
    # Profile.signature (or layout_signature): the format, then one part per table (its columns), the record
    # keys of a JSON file, or a fixed layout.
    return "\x1f" in signature


def _is_tabular(signature: str) -> bool:
    # Only tables with real column names make a word family: free text shares no schema worth the name.
    return any("|" in part for part in signature.split("\x1f")[1:]) and "\x1flayout:" not in signature \
        and "\x1f<" not in signature and "\x1fvars:" not in signature


def _word_pattern(names: list[str]) -> str | None:
    """Return 'prefix*suffix' cut at word boundaries that all names share, or None if nothing is shared."""
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    shortest = min(len(n) for n in names)
    if len(prefix) + len(suffix) > shortest:
        suffix = suffix[len(prefix) + len(suffix) - shortest :]
    prefix = prefix[: max((prefix.rfind(c) + 1 for c in _SEPARATORS), default=0)]
    cut = [i for i, c in enumerate(suffix) if c in _SEPARATORS]
    suffix = suffix[cut[0] :] if cut else ""
    if not suffix.startswith(".") and "." not in suffix:
        return None  # names do not even share an extension
    return f"{prefix}{_WILDCARD}{suffix}"


# ---- the values behind a '*', said compactly -------------------------------------------------------------------


def as_date(value: str) -> date | None:
    """Return the date a name value writes (20240131, 2024-01-31), or None."""
    if not _DATE.fullmatch(value):
        return None
    digits = re.sub(r"\D", "", value)
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:
        return None


def _steps(value_list: list[str]) -> tuple[list[int], str] | None:
    """Return the values as integers on one scale (days, months, years or numbers) and the scale's name."""
    dates = [as_date(v) for v in value_list]
    if all(dates):
        ds = [d for d in dates if d is not None]
        if len({d.day for d in ds}) == 1 and len({d.month for d in ds}) == 1:
            return [d.year for d in ds], "year"
        if len({d.day for d in ds}) == 1:
            return [d.year * 12 + d.month - 1 for d in ds], "month"
        return [d.toordinal() for d in ds], "day"
    if all(v.isdigit() for v in value_list):
        numbers = [int(v) for v in value_list]
        years = all(len(v) == 4 and 1800 <= n <= 2200 for v, n in zip(value_list, numbers, strict=True))
        return numbers, "year" if years else "number"
    return None


def _every(step: int, unit: str) -> str:
    return f"every {unit}" if step == 1 else f"every {step} {unit}s"


def describe_values(values: list[str], max_listed: int = 40, max_chars: int = 700) -> str:
    """Return the distinct values behind one '*', compactly: consecutive runs as 'first … last, every day',
    a few gaps named, words listed (up to max_listed and max_chars); what is left out is said to be left out."""
    distinct = sorted(set(values), key=value_sort_key)
    n = len(distinct)
    scaled = _steps(distinct)
    if scaled is None or n < 3:
        shown: list[str] = []
        used = 0
        for value in distinct:
            if shown and (len(shown) >= max_listed or used + len(value) + 2 > max_chars):
                break
            shown.append(value)
            used += len(value) + 2
        if len(shown) < n:
            return f"{', '.join(shown)}, … and {n - len(shown)} more (the last is {distinct[-1]})"
        return ", ".join(shown)
    ints, unit = scaled
    order = sorted(range(n), key=lambda i: ints[i])
    ints = [ints[i] for i in order]
    distinct = [distinct[i] for i in order]
    gaps = [b - a for a, b in zip(ints, ints[1:], strict=False)]
    step = min(gaps, key=lambda g: (-gaps.count(g), g))
    every = _every(step, unit)
    if all(g == step for g in gaps):
        return f"{distinct[0]} … {distinct[-1]}, {every} ({n} values)"
    present = set(ints)
    missing = [v for v in range(ints[0], ints[-1], step) if v not in present] \
        if all(g % step == 0 for g in gaps) else None
    if missing is not None and len(missing) <= 5:
        names = ", ".join(_from_scale(v, unit, distinct[0]) for v in missing)
        return f"{distinct[0]} … {distinct[-1]}, {every} except {names} ({n} values)"
    runs: list[tuple[int, int]] = []  # index ranges of runs with the common step
    start = 0
    for i, gap in enumerate(gaps, start=1):
        if gap != step:
            runs.append((start, i - 1))
            start = i
    runs.append((start, n - 1))
    shown_runs = runs[: max(2, max_listed // 4)]
    text = ", ".join(distinct[a] if a == b else f"{distinct[a]} … {distinct[b]}" for a, b in shown_runs)
    if len(shown_runs) < len(runs):
        left = sum(b - a + 1 for a, b in runs[len(shown_runs):])
        return (f"{text}, … and {left} more in {len(runs) - len(shown_runs)} more runs up to {distinct[-1]} "
                f"({n} values; {every} within a run)")
    return f"{text} ({n} values; {every} within each run)"


def _from_scale(value: int, unit: str, like: str) -> str:
    """Write a value of a scale back the way the names write it (a date in the names' own format)."""
    if unit == "number" or (unit == "year" and not as_date(like)):
        return str(value).zfill(len(like)) if like.startswith("0") else str(value)
    if unit == "day":
        d = date.fromordinal(value)
    elif unit == "month":
        d = date(value // 12, value % 12 + 1, as_date(like).day)  # type: ignore[union-attr]
    else:
        first = as_date(like)
        d = date(value, first.month, first.day)  # type: ignore[union-attr]
    sep = re.sub(r"\d", "", like)[:1]
    return f"{d.year:04d}{sep}{d.month:02d}{sep}{d.day:02d}"
