"""Group files of one folder that share a name pattern and a schema into families (one entry each)."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field

# Dates first, so 2024-01-31 becomes one wildcard instead of three.
_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}([-_.]?)(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?!\d)")
_DIGITS = re.compile(r"\d+")
_DATE_OR_DIGITS = re.compile(f"{_DATE.pattern}|{_DIGITS.pattern}")
_WILDCARD = "*"


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
    """Split one folder's files into families (>= min_members sharing pattern and signature) and singles."""
    buckets: dict[tuple[str, str], list[Member]] = defaultdict(list)
    for member in members:
        pattern = name_pattern(member.name)
        # Without a wildcard the pattern is the name itself: such files are never a family.
        buckets[(pattern, member.signature)].append(member)
    groups: list[Group] = []
    for (pattern, signature), bucket in sorted(buckets.items()):
        bucket.sort(key=lambda m: m.path)
        if _WILDCARD in pattern and len(bucket) >= max(2, min_members):
            groups.append(Group(folder, pattern, signature, bucket))
        else:
            groups.extend(Group(folder, m.name, signature, [m]) for m in bucket)
    return groups
