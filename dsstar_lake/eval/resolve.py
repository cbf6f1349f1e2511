"""Resolve KramaBench's loose `data_sources` against the files of one domain of the lake.

KramaBench names a task's files loosely. Each source is tried against the domain's files (and the files known
to be missing from the snapshot) by these rules, in order; the first rule that matches anything wins:

| rule | source form | matches |
|---|---|---|
| folder | ``dir/``, ``./``, or the name of a folder | every file under that folder (a folder path may be a suffix: ``CSVs/x/``) |
| exact | ``a/b.csv`` relative to the domain folder (or to the lake) | that file |
| glob | ``x/*.csv``, ``SB_??.txt``, ``[ab].csv`` | files whose path ends with a match (``*`` and ``?`` stay inside one folder) |
| basename | ``b.csv`` or ``sub/b.csv`` for a file in a subfolder | files whose path ends with those components |

Each of these is tried case-sensitively first, then case-insensitively (``case_insensitive`` is set). Then
three rules for plain mistakes, all case-insensitive:

| rule | mistake | matches |
|---|---|---|
| stem | wrong or missing extension (``x.txt`` for ``x.csv``) | files with the same path-suffix and stem |
| glob_relaxed | a glob with too few ``?`` (``_?_`` for ``_01_``) | each run of n ``?`` read as n or more characters |
| date_range | digits that match no file (``wu334-20160824_to_20161023.csv``) | among files of the same name shape (digits as wildcards) that share a telling digit run (one that differs between such files), those sharing the most, then the nearest numbers |

A source whose matches are all in the missing list gets rule ``missing``; one that matches nothing,
``unresolved``. A resolution is ``complete`` when every source matched present files only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GLOB_CHARS = frozenset("*?[")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class SourceMatch:
    """How one data source resolved: the rule, the present files and the missing files it matched."""

    source: str
    rule: str  # folder | exact | glob | basename | stem | glob_relaxed | date_range | missing | unresolved
    files: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    case_insensitive: bool = False
    via: str = ""  # for rule "missing": the rule that matched the missing files

    @property
    def resolved(self) -> bool:
        """Return True when the source matched present files and nothing missing."""
        return bool(self.files) and not self.missing


@dataclass(frozen=True)
class Resolution:
    """The resolution of one task's sources: per source, the union of files (in source order), completeness."""

    sources: tuple[SourceMatch, ...]
    files: tuple[str, ...]
    complete: bool

    @property
    def absent_sources(self) -> list[str]:
        """Return the sources that matched only missing files, or nothing."""
        return [m.source for m in self.sources if m.rule in ("missing", "unresolved")]

    def rules(self) -> dict[str, str]:
        """Return {source: rule}."""
        return {m.source: m.rule for m in self.sources}


@dataclass(frozen=True)
class _File:
    path: str  # as given (lake-relative)
    rel: str  # relative to the domain root
    present: bool


def resolve_sources(
    sources: Iterable[str], domain_files: Iterable[str], *, root: str = "", missing: Iterable[str] = ()
) -> Resolution:
    """Resolve loose data_sources against a domain's files.

    `domain_files` and `missing` are paths as the caller names them (e.g. lake-relative "legal/a/b.csv");
    `root` is the domain folder within those paths ("legal"), stripped before matching and kept in the results.
    """
    prefix = root.strip("/") + "/" if root.strip("/") else ""
    files = [_File(p, _rel(p, prefix), True) for p in domain_files]
    files += [_File(p, _rel(p, prefix), False) for p in missing]
    matches = tuple(_resolve_one(source, files) for source in sources)
    union: dict[str, None] = {}
    for match in matches:
        union.update(dict.fromkeys(match.files))
    complete = bool(matches) and all(m.resolved for m in matches)
    return Resolution(matches, tuple(union), complete)


def list_domain_files(lake: str | Path, domain: str) -> list[str]:
    """List the lake-relative POSIX paths of every file under lake/domain (hidden entries skipped), sorted."""
    lake = Path(lake)
    found = []
    for dirpath, dirnames, filenames in os.walk(lake / domain):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.startswith("."):
                found.append(Path(dirpath, name).relative_to(lake).as_posix())
    return sorted(found)


def read_missing(path: str | Path) -> list[str]:
    """Read a list of missing lake-relative files, one a line (KramaBench's missing_blobs.txt)."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


# ---------------------------------------------------------------- rules


def _resolve_one(source: str, files: list[_File]) -> SourceMatch:
    src = _clean(source)
    for nocase in (False, True):
        for rule, matcher in (
            ("folder", _folder),
            ("exact", _exact),
            ("glob", _glob),
            ("basename", _basename),
        ):
            hits = matcher(src, files, nocase)
            if hits:
                return _match(source, rule, hits, nocase)
    for rule, matcher in (("stem", _stem), ("glob_relaxed", _glob_relaxed), ("date_range", _date_range)):
        hits = matcher(src, files, True)
        if hits:
            return _match(source, rule, hits, True)
    return SourceMatch(source, "unresolved")


def _match(source: str, rule: str, hits: list[_File], nocase: bool) -> SourceMatch:
    hits = sorted(hits, key=lambda f: f.rel)
    present = tuple(f.path for f in hits if f.present)
    absent = tuple(f.path for f in hits if not f.present)
    if not present:
        return SourceMatch(source, "missing", (), absent, nocase, via=rule)
    return SourceMatch(source, rule, present, absent, nocase)


def _folder(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if src == "":
        return list(files)
    if _has_glob(src):
        return []
    parts = _parts(src, nocase)
    hits = [f for f in files if _dir_suffix_match(_parts(f.rel, nocase)[:-1], parts)]
    if src.endswith("/") or not hits:
        return hits
    # Without a trailing slash a name is a folder only when no file has that path itself.
    return [] if any(_parts(f.rel, nocase) == parts for f in files) else hits


def _exact(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if _has_glob(src) or src.endswith("/"):
        return []
    key = _fold(src, nocase)
    return [f for f in files if _fold(f.rel, nocase) == key or _fold(f.path, nocase) == key]


def _glob(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if not _has_glob(src):
        return []
    regex = _glob_regex(src.rstrip("/"), nocase)
    return [f for f in files if regex.search(f.rel)]


def _basename(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if _has_glob(src) or src.endswith("/"):
        return []
    parts = _parts(src, nocase)
    return [f for f in files if _parts(f.rel, nocase)[-len(parts) :] == parts]


def _stem(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if _has_glob(src) or src.endswith("/"):
        return []
    parts = _parts(src, nocase)
    want = parts[:-1] + [_stem_of(parts[-1])]
    hits = []
    for f in files:
        fparts = _parts(f.rel, nocase)
        tail = fparts[-len(parts) :]
        if len(tail) == len(parts) and tail[:-1] + [_stem_of(tail[-1])] == want:
            hits.append(f)
    return hits


def _glob_relaxed(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if "?" not in src:
        return []
    regex = _glob_regex(src.rstrip("/"), nocase, relax_marks=True)
    return [f for f in files if regex.search(f.rel)]


def _date_range(src: str, files: list[_File], nocase: bool) -> list[_File]:
    if _has_glob(src) or src.endswith("/") or not _DIGITS.search(PurePosixPath(src).name):
        return []
    parts = _parts(src, nocase)
    shape = _DIGITS.sub("#", parts[-1])
    want = [int(d) for d in _DIGITS.findall(parts[-1])]
    candidates: list[tuple[_File, list[int]]] = []
    for f in files:
        fparts = _parts(f.rel, nocase)
        if len(fparts) >= len(parts) and fparts[-len(parts) : -1] == parts[:-1]:
            if _DIGITS.sub("#", fparts[-1]) == shape:
                candidates.append((f, [int(d) for d in _DIGITS.findall(fparts[-1])]))
    if not candidates:
        return []
    # Only digit runs that differ between candidates say which file is meant ("2" in "omni2" says nothing).
    varying = [i for i in range(len(want)) if len({runs[i] for _, runs in candidates}) > 1]
    positions = varying or list(range(len(want)))
    best: list[_File] = []
    best_key: tuple[int, int] | None = None
    for f, runs in candidates:
        equal = sum(runs[i] == want[i] for i in positions)
        if equal == 0:
            continue
        key = (-equal, sum(abs(runs[i] - want[i]) for i in positions))
        if best_key is None or key < best_key:
            best, best_key = [f], key
        elif key == best_key:
            best.append(f)
    return best


# ---------------------------------------------------------------- helpers


def _clean(source: str) -> str:
    src = source.strip().replace("\\", "/")
    src = re.sub(r"/{2,}", "/", src)
    while src.startswith("./"):
        src = src[2:]
    if src in (".", "/"):
        return ""
    return src.lstrip("/")


def _rel(path: str, prefix: str) -> str:
    path = path.replace("\\", "/")
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def _has_glob(src: str) -> bool:
    return any(ch in GLOB_CHARS for ch in src)


def _fold(text: str, nocase: bool) -> str:
    return text.casefold() if nocase else text


def _parts(path: str, nocase: bool) -> list[str]:
    return [p for p in _fold(path, nocase).split("/") if p]


def _dir_suffix_match(dir_parts: list[str], want: list[str]) -> bool:
    """Return True when some ancestor folder of a file has `want` as its trailing components."""
    n = len(want)
    return any(dir_parts[end - n : end] == want for end in range(n, len(dir_parts) + 1))


def _stem_of(name: str) -> str:
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def _glob_regex(pattern: str, nocase: bool, relax_marks: bool = False) -> re.Pattern[str]:
    """Translate a glob into a regex that matches a whole path or its trailing components."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            j = i
            while j < len(pattern) and pattern[j] == "?":
                j += 1
            n = j - i
            out.append(f"[^/]{{{n},}}" if relax_marks else f"[^/]{{{n}}}")
            i = j
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("(?:^|/)" + "".join(out) + "$", re.IGNORECASE if nocase else 0)
