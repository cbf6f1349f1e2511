"""A run's view of a lake in object storage: the folder the sandbox binds at data/, filled from the blob cache.

Scripts read `data/<path>` as over a local lake. The view mirrors the lake-relative paths of the files fetched so
far, each a hard link into the content-addressed blob cache (a copy where the sandbox has no read-only mount, so
that the change check around each script sees inodes no other run touches). Before each script runs, the view
fetches the context's files (a family's first members) and the files the script's code names: string literals
that are lake paths, globs or folders (an f-string's fields count as `*`). `_dslake_manifest.csv` in the view
lists every file of the lake and whether it is fetched, so a script can see what exists without listing data/.
"""

from __future__ import annotations

import ast
import bisect
import csv
import os
import re
import shutil
import uuid
import weakref
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from dslake_index.blobcache import BlobCache, ObjectChanged, Wanted
from dslake_index.objectstore import check_access, object_lake

VIEWS = "views"  # per-run view folders, inside the catalog
BLOBS = "blobs"  # the default blob cache, inside the catalog
MANIFEST = "_dslake_manifest.csv"
_GLOB = re.compile(r"[*?\[]")
_NOT_FOUND = re.compile(r"No such file or directory: '([^'\n]+)'")
_QUOTED = re.compile(r"""(?:'([^'\n]*)'|"([^"\n]*)")""")


def blob_folder(catalog_dir: Path, settings: Any) -> Path:
    """Return the blob cache folder: remote.cache_dir, else the catalog's blobs/."""
    given = settings.remote.cache_dir.strip()
    return Path(given).expanduser() if given else catalog_dir / BLOBS


def literals(code: str) -> list[str]:
    """Return the string literals of a script; an f-string's fields become `*` (a script that does not parse: quotes)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return [a or b for a, b in _QUOTED.findall(code)]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*"
                               for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


def named_paths(code: str, paths: list[str]) -> list[str]:
    """Return the lake paths (sorted list `paths`) a script names: exact paths, globs, folders, base names."""
    known = set(paths)
    by_name: dict[str, list[str]] = {}
    found: dict[str, None] = {}
    for raw in literals(code):
        text = raw.strip()
        if len(text) > 1000 or "\n" in text:
            continue
        for prefix in ("./", "data/", "/data/"):
            text = text.removeprefix(prefix) if text.startswith(prefix) else text
        text = text.strip("/")
        if not text or text in ("data", ".", "*"):
            continue
        if _GLOB.search(text):
            found.update((p, None) for p in paths if fnmatchcase(p, text))
        elif text in known:
            found[text] = None
        else:
            # A folder (os.path.join("data", "daily")), else a base name joined to its folder elsewhere in the code.
            start = bisect.bisect_left(paths, text + "/")
            under = [p for p in paths[start:start + 100_000] if p.startswith(text + "/")]
            if not under and not by_name:
                for p in paths:
                    by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
            found.update((p, None) for p in under or by_name.get(text, []))
    return list(found)


class LakeView:
    """The folder a run's scripts see at data/, for a lake in object storage."""

    def __init__(self, url: str, catalog_dir: Path, settings: Any, rows: list[tuple[str, int, str | None]],
                 datasets: list[str] | tuple[str, ...] = ()) -> None:
        """rows: (path, size, content hash) of every file the catalog records (lookup.file_hashes); datasets: the
        roots of dataset and table entries (lookup.dataset_roots), fetched whole when a script names one."""
        self.datasets = tuple(datasets)
        self.url = url
        views = catalog_dir / VIEWS
        _sweep(views)
        self.root = views / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.root.mkdir(parents=True)
        weakref.finalize(self, shutil.rmtree, str(self.root), True)
        self.cache = BlobCache(blob_folder(catalog_dir, settings), settings.remote.cache_mb * 1024 * 1024,
                               settings.index.hash_algorithm)
        self.cache.claim()  # a folder of the user's that is not a cache is refused before a run starts
        self.left_alone_told: list[str] = []
        self.family_files = max(0, settings.remote.family_files)
        self.fetch_files = max(0, settings.remote.fetch_files)
        self.files = {path: (size, digest) for path, size, digest in rows}
        self.paths = [path for path, _, _ in rows]
        self.lake = object_lake(url, self.root)
        self.fs: Any = None
        self.link = True  # hard links into the cache; the sandbox turns this off where it cannot mount read-only
        self.fetched: set[str] = set()
        self.problems: dict[str, str] = {}
        self.manifest = next(name for i in range(len(self.paths) + 1)
                             if (name := MANIFEST if i == 0 else f"_dslake_manifest_{i}.csv") not in self.files)
        self._write_manifest()

    def note_values(self) -> dict[str, str]:
        """Return the variables of the prompts' paragraph on this lake (prompts/remote_data.txt)."""
        problems = "".join(f"\n[data/{path}: {why}; it is left out of data/ until the lake is indexed again.]"
                           for path, why in sorted(self.problems.items()))
        return {"fetch_files": str(self.fetch_files), "family_files": str(self.family_files),
                "manifest": f"data/{self.manifest}", "problems": problems}

    def prepare(self, code: str, context: list[str]) -> list[str]:
        """Fetch what a script about to run needs: the context's files and those its code names; return notes."""
        notes = []
        wanted: list[str] = []
        for path in context:
            if path in self.files:
                wanted.append(path)
                continue
            members = [p for p in self.paths if fnmatchcase(p, path)]  # a family: its pattern names its members
            wanted += members[:self.family_files]
        named = [p for p in named_paths(code, self.paths) if p not in self.fetched and p not in wanted]
        # A dataset or table named by its root is read whole (a partial folder would give wrong rows, silently):
        # its files do not count against remote.fetch_files.
        roots = self._named_datasets(code)
        whole = [p for p in self.paths if p not in self.fetched and p not in wanted
                 and any(p.startswith(root + "/") for root in roots)] if roots else []
        named = [p for p in named if p not in set(whole)]
        wanted += whole
        if len(named) > self.fetch_files:
            notes.append(f"the script names {len(named)} lake files not fetched yet; the first {self.fetch_files} "
                         "were fetched (remote.fetch_files)")
        new, downloaded = self.materialise(wanted + named[:self.fetch_files])
        if new:
            notes.append(f"fetched {new} lake files into data/ ({downloaded} downloaded, {new - downloaded} from the "
                         "cache)")
        return notes + self._left_alone_note() + [f"data/{p}: {why}" for p, why in self.problems.items() if p in set(wanted) | set(named)]

    def _named_datasets(self, code: str) -> list[str]:
        """Return the dataset roots a script's string literals name (data/sales, or a table's metadata file)."""
        if not self.datasets:
            return []
        named = []
        for raw in literals(code):
            text = raw.strip().removeprefix("./").removeprefix("/").removeprefix("data/").strip("/")
            named += [root for root in self.datasets if text == root or text.startswith(root + "/")]
        return named

    def fetch_missing(self, stderr: str) -> list[str]:
        """Fetch the lake files a failed script could not open (FileNotFoundError under data/); return notes."""
        wanted = []
        for raw in _NOT_FOUND.findall(stderr):
            rel = raw.split("/data/", 1)[1] if "/data/" in raw else raw.removeprefix("./").removeprefix("data/")
            if rel in self.files and rel not in self.fetched and rel not in self.problems:
                wanted.append(rel)
        wanted = list(dict.fromkeys(wanted))[:self.fetch_files]
        new, downloaded = self.materialise(wanted) if wanted else (0, 0)
        notes = [f"the script could not open {new} lake files not fetched yet; fetched them ({downloaded} "
                 "downloaded) and ran it again"] if new else []
        return notes + self._left_alone_note()

    def _left_alone_note(self) -> list[str]:
        """Name, once per change, what the cache's eviction found in its folder that is not its own and kept."""
        found = self.cache.left_alone
        if not found or found == self.left_alone_told:
            return []
        self.left_alone_told = list(found)
        shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
        return [f"the blob cache {self.cache.folder} holds {len(found)} entries that are not its blobs, left alone: "
                f"{shown}"]

    def materialise(self, paths: list[str]) -> tuple[int, int]:
        """Place these lake files in the view from the cache, fetching what is missing; return (placed, downloaded)."""
        new = downloaded = 0
        for path in paths:
            if path in self.fetched or path in self.problems:
                continue
            if not _safe(path):
                self.problems[path] = "its key is no file path ('..', '.' or an empty part)"
                continue
            size, digest = self.files.get(path, (0, None))
            if not digest:
                self.problems[path] = "not hashed when the lake was indexed (it failed to download)"
                continue
            fresh = self.cache.cached(digest) is None
            if fresh and self.fs is None:
                self.fs = check_access(self.lake)
            try:
                blob = self.cache.fetch(self.lake, self.fs, Wanted(path, size, digest))
            except ObjectChanged as exc:
                self.problems[path] = f"changed in the store since the index ({exc})"
                continue
            downloaded += fresh
            try:
                self._place(blob, self.root / path)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                # S3 keeps `a` and `a/b` side by side; a folder tree cannot: the first one placed wins.
                self.problems[path] = "its key clashes with another object's (a file and a folder of one name)"
                continue
            self.fetched.add(path)
            new += 1
        if new:
            self.cache.evict()
        if new or self.problems:
            self._write_manifest()
        return new, downloaded

    def _place(self, blob: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if self.link:
            try:
                os.link(blob, target)
                return
            except OSError:
                pass  # another filesystem, or a blob evicted meanwhile by another run: a copy still holds
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
        shutil.copyfile(blob, tmp)
        tmp.chmod(0o444)
        os.replace(tmp, target)

    def _write_manifest(self) -> None:
        tmp = self.root / f".{self.manifest}.tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["path", "size", "cached"])
            for path in self.paths:
                state = "yes" if path in self.fetched else "unavailable" if path in self.problems else "no"
                writer.writerow([path, self.files[path][0], state])
        tmp.chmod(0o444)
        os.replace(tmp, self.root / self.manifest)


def _safe(path: str) -> bool:
    """Return whether an object key maps to a path inside the view (no '..', no empty or hidden parts)."""
    return all(part and part not in (".", "..") and not part.startswith(".") for part in path.split("/"))


def _sweep(views: Path) -> None:
    """Remove the views of processes that are gone (a run killed before it could remove its own)."""
    for folder in views.iterdir() if views.is_dir() else []:
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["MANIFEST", "LakeView", "blob_folder", "literals", "named_paths"]
