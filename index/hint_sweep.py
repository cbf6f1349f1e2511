"""Old catalogs: a stored load hint that does not parse into the safe form sends its file back to the profilers.

Hints were once evaluated as Python; since they are parsed (index/load_hint.py), a hint of another form (written
by an older dslake, or by hand into a shared catalog) is refused at load time. So that the entry gets a usable
load line again, `dslake index` looks at every stored hint once per hint grammar (meta key `load_hint_form`) and
marks the profiles holding a refused one as from no profiler version: plan_changes() then re-profiles just those
files, and nothing else in the lake. Distinct hint texts are few (most csv files share `pd.read_csv({path})`), so
the look costs one pass over the profiles' JSON in SQLite and one parse per distinct text.
"""

from __future__ import annotations

import sqlite3

from dslake_index.catalog import get_meta, set_meta, transaction
from dslake_index.load_hint import FORM_VERSION, HintRefused, parse

META_KEY = "load_hint_form"
STALE_VERSION = 0  # no profiler writes version 0: a profile marked with it counts as one from an older profiler

_HINTS = (
    "SELECT hash, json_extract(profile, '$.read_hint') FROM profiles WHERE profiler_version != ? "
    "UNION ALL SELECT p.hash, json_extract(t.value, '$.read_hint') FROM profiles p, json_each(p.profile, '$.tables') t "
    "WHERE p.profiler_version != ?"
)


def recheck_hints(conn: sqlite3.Connection, force: bool = False) -> int:
    """Mark the profiles whose load hints do not parse as stale, once per hint grammar; return how many."""
    if not force and get_meta(conn, META_KEY) == str(FORM_VERSION):
        return 0
    verdicts: dict[str, bool] = {}
    bad: set[str] = set()
    for content_hash, hint in conn.execute(_HINTS, (STALE_VERSION, STALE_VERSION)):
        if hint is None or content_hash in bad:
            continue
        ok = verdicts.get(hint)
        if ok is None:
            ok = verdicts[hint] = _parses(hint)
        if not ok:
            bad.add(content_hash)
    with transaction(conn):
        conn.executemany("UPDATE profiles SET profiler_version = ? WHERE hash = ?",
                         [(STALE_VERSION, h) for h in sorted(bad)])
        set_meta(conn, META_KEY, str(FORM_VERSION))
    return len(bad)


def _parses(hint: object) -> bool:
    try:
        parse(hint)  # type: ignore[arg-type]
    except HintRefused:
        return False
    return True
