"""What the index skips in a lake (hidden names, `.dslakeignore` patterns), found so bubblewrap can blank it for
scripts and for the index's own parsers (dsstar_lake/sandbox/bwrap.py, index/confined_pool.py).

A lake folder can hold things that are not data: `.env`, `.git/config`, a `.dslakeignore`d credentials file.
The index never reads them; a script should not either. Under bubblewrap each such file is covered by an
empty file and each such folder by an empty read-only tmpfs, wherever the lake is mounted. The walk is
bounded (MAX_ENTRIES entries looked at, MAX_MASKS names blanked) so a huge lake starts as fast as a small
one; what lies past the bound stays visible, and `Masks.complete` says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dslake_index.scan import load_ignore

MAX_ENTRIES = 20000  # entries of the lake looked at per sandbox (a stat-free scandir: ~20 ms here)
MAX_MASKS = 200  # names blanked; each is two mounts (the lake's path and data/)


@dataclass
class Masks:
    """Lake-relative paths to blank: files and folders, and whether the walk saw the whole lake."""

    files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    complete: bool = True


def skipped_names(lake: Path, private: list[Path] | None = None) -> Masks:
    """Walk the lake (links not followed) and return what the index skips: hidden names and ignored paths.

    private: folders inside the lake the sandbox hides anyway (the catalog); not walked, not listed.
    """
    spec = load_ignore(lake)  # the index's own rule: what it skips is what is blanked
    skip = {p.resolve() for p in private or []}
    masks = Masks()
    stack, seen = [("", lake)], 0
    while stack:
        rel_dir, folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES or len(masks.files) + len(masks.folders) >= MAX_MASKS:
                masks.complete = False
                return masks
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and Path(entry.path) in skip:
                continue
            if entry.name.startswith(".") or (spec is not None and spec.match_file(rel + "/" if is_dir else rel)):
                (masks.folders if is_dir else masks.files).append(rel)
            elif is_dir:
                stack.append((rel, Path(entry.path)))
    return masks
