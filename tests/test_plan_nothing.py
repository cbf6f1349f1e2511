"""nothing_to_plan (index/plan.py), the no-change check's shortcut, says "nothing" exactly when plan_changes finds
no file new, changed or removed: over a real manifest an index wrote, and after each kind of change the plan
looks for (a file's size, time, a new or removed file, a state to look at again, a lost or outdated profile)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_table_lake
from dslake_index.catalog import connect
from dslake_index.plan import nothing_to_plan, plan_changes
from dslake_index.profilers.base import PROFILER_VERSION
from dslake_index.scan import scan_lake

from dsstar_lake.lake import Lake


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = write_table_lake(tmp_path_factory.mktemp("plan") / "lake")
    (root / "sub").mkdir()
    (root / "sub" / "ünïcode name.csv").write_text("a,b\n1,2\n")  # byte order and code point order agree
    Lake.open(root).index()
    return root, root / ".dslake" / "manifest.sqlite"


def _planned(conn: sqlite3.Connection, root: Path) -> tuple[bool, bool]:
    """Return (nothing_to_plan's answer, whether plan_changes found nothing) for a fresh scan."""
    scan = scan_lake(root, root / ".dslake")
    new, changed, removed, _ = plan_changes(conn, scan, PROFILER_VERSION)
    return nothing_to_plan(conn, scan, PROFILER_VERSION), not (new or changed or removed)


def _first_csv(root: Path) -> Path:
    return sorted(root.rglob("*.csv"))[0]


def _touch(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    path = _first_csv(root)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    return lambda: os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _grow(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    path = _first_csv(root)
    data, st = path.read_bytes(), path.stat()
    path.write_bytes(data + b"\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same time: the size alone tells

    def undo() -> None:
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return undo


def _add(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    extra = root / "zz_new.csv"
    extra.write_text("x\n1\n")
    return extra.unlink


def _remove(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    path = _first_csv(root)
    aside = path.with_name(".aside")  # a hidden name: not scanned
    path.rename(aside)
    return lambda: aside.rename(path)


def _row(column: str, value: str) -> Callable[[Path, sqlite3.Connection], Callable[[], None]]:
    def change(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
        path = conn.execute("SELECT path FROM files WHERE status = 'ok' ORDER BY path").fetchone()[0]
        before = conn.execute(f"SELECT {column} FROM files WHERE path = ?", (path,)).fetchone()[0]
        conn.execute(f"UPDATE files SET {column} = ? WHERE path = ?", (value, path))
        return lambda: conn.execute(f"UPDATE files SET {column} = ? WHERE path = ?", (before, path))
    return change


def _profile_version(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    digest = conn.execute("SELECT hash FROM files WHERE status = 'ok' ORDER BY path").fetchone()[0]
    conn.execute("UPDATE profiles SET profiler_version = profiler_version - 1 WHERE hash = ?", (digest,))
    return lambda: conn.execute("UPDATE profiles SET profiler_version = profiler_version + 1 WHERE hash = ?",
                                (digest,))


def _lost_profile(root: Path, conn: sqlite3.Connection) -> Callable[[], None]:
    digest = conn.execute("SELECT hash FROM files WHERE status = 'ok' ORDER BY path").fetchone()[0]
    row = conn.execute("SELECT * FROM profiles WHERE hash = ?", (digest,)).fetchone()
    conn.execute("DELETE FROM profiles WHERE hash = ?", (digest,))
    return lambda: conn.execute(f"INSERT INTO profiles VALUES ({', '.join('?' * len(row))})", tuple(row))


@pytest.mark.parametrize("change", [_touch, _grow, _add, _remove, _row("status", "stale"),
                                    _row("error_kind", "timeout"), _row("error_kind", "unreadable"),
                                    _profile_version, _lost_profile],
                         ids=["mtime", "size", "new file", "removed file", "stale", "timeout", "unreadable",
                              "older profiler", "lost profile"])
def test_agrees_with_the_plan(indexed: tuple[Path, Path], change: Callable) -> None:
    root, db = indexed
    conn = connect(db)
    try:
        assert _planned(conn, root) == (True, True)  # as the index left it
        undo = change(root, conn)
        try:
            assert _planned(conn, root) == (False, False)
        finally:
            undo()
        assert _planned(conn, root) == (True, True)
    finally:
        conn.close()


def test_a_scoped_scan_is_never_nothing(indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    conn = connect(db)
    try:
        scan = scan_lake(root, root / ".dslake", only=[_first_csv(root).relative_to(root).as_posix()])
        assert nothing_to_plan(conn, scan, PROFILER_VERSION) is False  # the check is for whole-lake scans only
    finally:
        conn.close()
