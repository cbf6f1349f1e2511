"""Walk the lake: ignore rules, symlink policy, stat, and content hashing."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pathspec

IGNORE_FILE = ".dslakeignore"
HASH_CHUNK = 1 << 20


class FileStat(NamedTuple):
    """One regular file found in the lake (a tuple: a 100k-file scan makes 100k of them)."""

    path: str  # lake-relative, POSIX separators
    size: int
    mtime_ns: int

    @property
    def folder(self) -> str:
        """Return the lake-relative folder ('' at the root)."""
        head, _, _ = self.path.rpartition("/")
        return head


class ScanResult:
    """Files found, and what was skipped and why.

    A plain class, not a dataclass: the no-change check scans before anything imports dataclasses (and with it
    inspect and ast, ~10 ms of a 0.1 s command).
    """

    def __init__(self, files: list[FileStat] | None = None, skipped: list[tuple[str, str]] | None = None,
                 scope: list[str] | None = None, seconds: float = 0.0, cpu_seconds: float = 0.0) -> None:
        self.files: list[FileStat] = [] if files is None else files
        self.skipped: list[tuple[str, str]] = [] if skipped is None else skipped  # (path, reason)
        # None: the whole lake was scanned. Otherwise the lake-relative paths looked at (a folder covers its
        # subtree): files known under them but not found are removed; files elsewhere are left as they are.
        self.scope = scope
        self.seconds = seconds  # wall and CPU time the scan took (the index's per-phase figures)
        self.cpu_seconds = cpu_seconds

    def __repr__(self) -> str:
        return (f"ScanResult(files={len(self.files)}, skipped={len(self.skipped)}, scope={self.scope!r}, "
                f"seconds={self.seconds:.3f})")


def load_ignore(lake: Path) -> pathspec.PathSpec | None:
    """Return the lake's .dslakeignore patterns (gitignore syntax), or None without the file."""
    ignore = lake / IGNORE_FILE
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec  # only a lake with a .dslakeignore pays for it (~35 ms of every no-change index otherwise)

    return pathspec.PathSpec.from_lines("gitignore", lines)


class _Catalog:
    """dslake's catalog folder, to be left out of a scan however it is reached (its name, a link to it or into it).

    Its own record (manifest, run records with every question and answer) is not lake data: a link such as
    `history -> .dslake/runs` must not put earlier questions into search results.
    """

    def __init__(self, folder: Path | None, root: Path) -> None:
        self.key: tuple[int, int] | None = None
        self.real: Path | None = None
        self.root = root
        if folder is None:
            return
        try:
            st = folder.stat()
        except OSError:
            return  # not created yet: nothing to skip
        self.key, self.real = (st.st_dev, st.st_ino), folder.resolve()

    def holds(self, real: Path) -> bool:
        """Tell whether a resolved path is the catalog or lies inside it (a catalog around the lake: outside it)."""
        if self.real is None or not real.is_relative_to(self.real):
            return False
        return not (self.root.is_relative_to(self.real) and real.is_relative_to(self.root))


INTO_CATALOG = "link into dslake's catalog (never indexed)"


# A whole-lake scan the no-change check made and handed to the index that follows it in the same process
# (Catalog.index_if_unchanged): taken once, by the next scan of the same lake with the same options.
_handed_over: tuple[tuple[Path, Path | None, bool], ScanResult] | None = None


def hand_over(result: ScanResult, lake: Path, catalog_dir: Path | None, follow_symlinks: bool) -> None:
    """Keep a whole-lake scan for the next scan_lake of the same lake and options in this process."""
    global _handed_over
    _handed_over = ((lake.resolve(), catalog_dir, follow_symlinks), result)


def scan_lake(lake: Path, catalog_dir: Path | None = None, follow_symlinks: bool = False,
              only: list[str] | None = None) -> ScanResult:
    """Stat every file under the lake, skipping hidden names, ignored patterns, the catalog and special files.

    only: lake-relative paths to look at instead of the whole lake (what a watcher saw change); a folder among
    them is scanned whole, a path that no longer exists is simply not found.
    """
    global _handed_over
    if _handed_over is not None:
        key, handed = _handed_over
        _handed_over = None
        if only is None and key == (lake.resolve(), catalog_dir, follow_symlinks):
            return handed
    started, cpu = time.perf_counter(), time.process_time()
    root = lake.resolve()
    catalog = _Catalog(catalog_dir, root)
    spec = load_ignore(root)
    result = ScanResult()
    seen_dirs: set[tuple[int, int]] = set()
    root_stat = root.stat()
    seen_dirs.add((root_stat.st_dev, root_stat.st_ino))
    stack: list[tuple[Path, str]] = [(root, "")]
    if only is not None:
        stack = []
        result.scope = sorted(set(only))
        for rel in result.scope:
            entry = _entry_for(root, rel, spec)
            if entry is not None and catalog.holds(Path(entry.path).resolve()):
                result.skipped.append((rel, INTO_CATALOG))  # reached through a linked folder on its way
            elif entry is not None:
                _visit(entry, rel, root, catalog, spec, follow_symlinks, seen_dirs, stack, result)
    while stack:
        folder, rel_folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            result.skipped.append((rel_folder or ".", f"unreadable folder: {exc.strerror or exc}"))
            continue
        plain_folder = rel_folder.isascii()
        for entry in sorted(entries, key=lambda e: e.name):
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            if entry.name.startswith("."):
                continue
            if not (plain_folder and entry.name.isascii()):  # encoding every name costs ~1 µs a file
                try:
                    rel.encode("utf-8")
                except UnicodeEncodeError:
                    result.skipped.append((rel.encode("utf-8", "backslashreplace").decode(), "undecodable file name"))
                    continue
            _visit(entry, rel, root, catalog, spec, follow_symlinks, seen_dirs, stack, result)
    result.files.sort(key=lambda f: f.path)
    result.seconds, result.cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return result


def rescan_scope(rels: list[str]) -> list[str] | None:
    """Return lake-relative paths as a scan's scope, or None when one of them means the whole lake must be scanned.

    The ignore file changes what every path means, and the lake folder itself names nothing smaller.
    """
    return None if any(rel in (".", "", IGNORE_FILE) for rel in rels) else rels


def lake_relative(root: Path, path: str | os.PathLike[str]) -> str | None:
    """Return path relative to the (resolved) lake root in POSIX form, or None if it lies outside the lake.

    The path as written comes first (a symlink in the lake names itself, not its target), then with every link
    resolved (the lake reached through a linked folder). A path that no longer exists works too: a deleted file
    must be named to be removed.
    """
    for candidate in (Path(os.path.abspath(path)), Path(path).resolve()):
        try:
            return candidate.relative_to(root).as_posix()
        except ValueError:
            continue
    return None


def _entry_for(root: Path, rel: str, spec: pathspec.PathSpec | None) -> os.DirEntry | None:
    """Return the directory entry of one lake-relative path, or None if it is gone, hidden or ignored."""
    parts = rel.split("/")
    if any(not part or part.startswith(".") for part in parts):
        return None
    if spec is not None and any(spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts))):
        return None  # inside an ignored folder
    try:
        with os.scandir(root.joinpath(*parts[:-1])) as entries:
            return next((e for e in entries if e.name == parts[-1]), None)
    except OSError:
        return None  # its folder is gone too


def _visit(
    entry: os.DirEntry,
    rel: str,
    root: Path,
    catalog: _Catalog,
    spec: pathspec.PathSpec | None,
    follow_symlinks: bool,
    seen_dirs: set[tuple[int, int]],
    stack: list[tuple[Path, str]],
    result: ScanResult,
) -> None:
    # Path objects are made only for links and folders: at 100k files, one per file costs seconds.
    try:
        is_link = entry.is_symlink()
        if is_link:
            target = Path(entry.path).resolve(strict=True)
            if catalog.holds(target):
                result.skipped.append((rel, INTO_CATALOG))
                return
            if not follow_symlinks and not target.is_relative_to(root):
                result.skipped.append((rel, "symlink leaves the lake (use --follow-symlinks)"))
                return
        st = entry.stat(follow_symlinks=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on older Pythons
        reason = "symlink loop or broken link" if entry.is_symlink() else f"cannot stat: {exc}"
        result.skipped.append((rel, reason))
        return
    if stat.S_ISDIR(st.st_mode):
        key = (st.st_dev, st.st_ino)
        if key == catalog.key:  # the catalog folder itself, by its own name or inside a linked folder
            return
        if spec is not None and spec.match_file(rel + "/"):
            return
        if key in seen_dirs:
            result.skipped.append((rel, "symlink loop (folder already visited)"))
            return
        seen_dirs.add(key)
        stack.append((Path(entry.path), rel))
        return
    if spec is not None and spec.match_file(rel):
        return
    if not stat.S_ISREG(st.st_mode):
        result.skipped.append((rel, "not a regular file (fifo, socket or device)"))
        return
    result.files.append(FileStat(rel, st.st_size, st.st_mtime_ns))


def hash_file(path: Path, algorithm: str = "blake2b") -> str:
    """Return the hex content hash of a file, read in chunks so memory stays flat."""
    import hashlib  # here: a no-change index scans without loading OpenSSL's hashes

    digest = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
