"""A catalog a script was caught changing stays refused until it is rebuilt.

Without bubblewrap a script can write the catalog; the sandbox notices afterwards (catalog_modified) and the run
stops, but what the script wrote (a description in the manifest, a setting in config.toml) would be served by the
next `show`, `search` or `ask`. So the run leaves a mark, and every read of the catalog refuses while it is there;
only a rebuild (`dslake index LAKE --rebuild`, which then keeps nothing the old manifest held) clears it.

The mark is kept twice, both written once the script and its processes have ended. `caught.json` in the catalog
travels with it (another user, another machine, a copy); a record in the user's own state folder
(`$XDG_STATE_HOME` or ~/.local/state, then dslake/caught/), named by the catalog's real path, is outside the
catalog, which is the scripts' to write without bubblewrap: emptying or replacing the catalog folder (a later
script of another run, a process that outlived its script) does not lift it. Either one refuses. A mark planted
in a catalog from elsewhere costs a rebuild, nothing more.

Standard library only, and cheap: the quick no-change `dslake index` checks it before any settings are read.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from dslake_index.errors import CatalogCaught

MARK_NAME = "caught.json"  # in the catalog folder
_RUN_ID = re.compile(r"[\w.-]{1,80}")  # a run id as RunRecord makes them; anything else is shown as unknown


class Caught(NamedTuple):
    """Which run's script changed the catalog, what it changed, and when it was found."""

    run_id: str
    paths: tuple[str, ...]
    at: float


def state_record(catalog_dir: Path) -> Path | None:
    """Return the user's own record for this catalog (named by its real path), or None without a home."""
    try:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    except RuntimeError:
        return None
    real = os.path.realpath(catalog_dir)
    name = real.replace("%", "%25").replace("/", "%2F")  # the path itself, readable, one file name
    if len(os.fsencode(name)) > 200:  # past what a file name may hold: a digest of it
        import hashlib

        name = hashlib.sha256(os.fsencode(real)).hexdigest()
    return Path(base) / "dslake" / "caught" / f"{name}.json"


def mark_places(catalog_dir: Path) -> tuple[str, ...]:
    """Return where this catalog's mark is kept: the user's record (when there is a home), then the catalog's."""
    record = state_record(catalog_dir)
    inside = os.path.join(catalog_dir, MARK_NAME)
    return (str(record), inside) if record is not None else (inside,)


def mark_caught(catalog_dir: Path, run_id: str, paths: list[str]) -> bool:
    """Record that a script of run_id changed these catalog paths: in the user's state folder and the catalog.

    Return whether either place holds the mark now (False: neither could be written; the run's abort says the rest).
    """
    import tempfile

    body = json.dumps({"catalog": os.path.realpath(catalog_dir), "run_id": run_id, "paths": list(paths),
                       "at": time.time()})
    written = 0
    for place in map(Path, mark_places(catalog_dir)):
        if place.is_file() and not place.is_symlink():
            written += 1  # the first run caught keeps its name (a report's other sub-questions see the mark appear)
            continue
        try:
            place.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=place.parent, delete=False, suffix=".tmp",
                                             encoding="utf-8") as fh:
                fh.write(body)
            os.replace(fh.name, place)  # a link or a file the script left at the name is replaced, not followed
            written += 1
        except OSError:
            continue  # the other place still holds it
    return written > 0


def caught(catalog_dir: Path, places: tuple[str, ...] | None = None) -> Caught | None:
    """Return the mark of a catalog a script was caught changing (the user's record first), else None.

    places: mark_places(catalog_dir), when the caller keeps them (a check on every read costs two opens then).
    """
    for place in places or mark_places(catalog_dir):
        try:
            with open(place, "rb") as fh:
                raw = fh.read(1 << 16)
        except (FileNotFoundError, NotADirectoryError):  # no mark (a file on the way: no catalog folder there either)
            continue
        except OSError:  # there but unreadable (a folder at the name, no permission): still a mark
            return Caught("unknown", (), 0.0)
        try:
            data = json.loads(raw)
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        run_id = data.get("run_id")
        paths = data.get("paths")
        return Caught(run_id if isinstance(run_id, str) and _RUN_ID.fullmatch(run_id) else "unknown",
                      tuple(p for p in paths if isinstance(p, str))[:5] if isinstance(paths, list) else (),
                      float(data["at"]) if isinstance(data.get("at"), int | float) else 0.0)
    return None


def clear_caught(catalog_dir: Path) -> None:
    """Forget the mark (a rebuild finished): both places."""
    import shutil
    for place in map(Path, mark_places(catalog_dir)):
        if place.is_dir() and not place.is_symlink():
            shutil.rmtree(place)  # something else made at the mark's name: gone with it
        elif os.path.lexists(place):
            place.unlink()


def refuse_if_caught(catalog_dir: Path, places: tuple[str, ...], rebuild_command: Callable[[], str]) -> None:
    """Raise CatalogCaught when a script was caught changing this catalog and it was not rebuilt since.

    places: mark_places(catalog_dir); rebuild_command: returns the `dslake index … --rebuild` line, for the hint.
    """
    mark = caught(catalog_dir, places)
    if mark is None:
        return
    what = f" ({', '.join(mark.paths)})" if mark.paths else ""
    raise CatalogCaught(
        f"the catalog {catalog_dir} was changed by a script in run {mark.run_id}{what}; it is not read until it "
        "is rebuilt",
        hint=f"rebuild it: {rebuild_command()}",
        api_hint="rebuild it with lake.index(rebuild=True); nothing of the old manifest is kept",
    )
