"""Group files of one folder that share a name pattern and a schema into families (one entry each)."""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field

# Dates first, so 2024-01-31 becomes one wildcard instead of three.
_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}([-_.]?)(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?!\d)")
_DIGITS = re.compile(r"\d+")
_DATE_OR_DIGITS = re.compile(f"{_DATE.pattern}|{_DIGITS.pattern}")
_WILDCARD = "*"
_SEPARATORS = "_-. "


def name_pattern(name: str) -> str:
    """Return a file name with its dates and digit runs replaced by '*' (the family's glob)."""
    pattern = _DATE.sub(_WILDCARD, name)
    return _DIGITS.sub(_WILDCARD, pattern)


def name_values(name: str) -> list[str]:
    """Return the dates and digit runs of a name, in order: the values behind the pattern's wildcards."""
    return [match.group(0) for match in _DATE_OR_DIGITS.finditer(name)]


@dataclass
class Member:
    """A file that may join a family."""

    path: str
    name: str
    signature: str


@dataclass
class Group:
    """A family (several members) or a single file (one member)."""

    folder: str
    pattern: str
    signature: str
    members: list[Member] = field(default_factory=list)
    by_word: bool = False  # members differ by a word (a place, a variable), not by digits or dates

    @property
    def is_family(self) -> bool:
        """Return True when the group is a family entry rather than one file."""
        return len(self.members) > 1

    @property
    def glob(self) -> str:
        """Return the lake-relative glob that matches the members."""
        return f"{self.folder}/{self.pattern}" if self.folder else self.pattern

    def value_ranges(self) -> list[tuple[str, str]]:
        """Return (min, max) of each wildcard's values across members, for the description."""
        columns: list[list[str]] = []
        for member in self.members:
            for i, value in enumerate(name_values(member.name)):
                if i == len(columns):
                    columns.append([])
                columns[i].append(value)
        return [(min(col, key=_sort_key), max(col, key=_sort_key)) for col in columns if len(set(col)) > 1]


    def variants(self) -> list[str]:
        """Return what each member's name puts in the pattern's '*' (word families), in member order."""
        head, _, tail = self.pattern.partition(_WILDCARD)
        return [m.name[len(head) : len(m.name) - len(tail)] for m in self.members]


def _sort_key(value: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", value)
    return (int(digits) if digits else 0, value)


def family_id(folder: str, pattern: str, signature: str) -> str:
    """Return a stable entry id for a family."""
    key = f"{folder}\x1f{pattern}\x1f{signature}".encode()
    return "fam-" + hashlib.sha1(key).hexdigest()[:20]


def file_entry_id(path: str) -> str:
    """Return a stable entry id for a single-file entry."""
    return "file-" + hashlib.sha1(path.encode()).hexdigest()[:20]


def group_folder(folder: str, members: list[Member], min_members: int) -> list[Group]:
    """Split one folder's files into families and singles.

    A family is >= min_members files sharing a schema signature and either a name pattern with digits or dates
    as wildcards (daily files), or, for tables, names that differ only in one word (one file per town or state).
    Documents without a schema (prose: notes, memos, plain text) never form a family: each says something of its
    own, and a family's card, written from one member, could not speak for the others.
    """
    minimum = max(2, min_members)
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


def _has_schema(signature: str) -> bool:
    # Profile.signature: the format, then one part per table (its columns) or the record keys of a JSON file.
    return "\x1f" in signature


def _is_tabular(signature: str) -> bool:
    # Only tables with real column names make a word family: free text shares no schema worth the name.
    return any("|" in part for part in signature.split("\x1f")[1:])


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
