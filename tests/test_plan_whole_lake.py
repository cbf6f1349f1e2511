"""plan_changes over a whole-lake scan (index/plan.py) makes the plan a row-by-row reading of the manifest makes,
over a real manifest an index wrote and after each kind of change the plan looks for (a file's size, time, a new
or removed file, a state to look at again, a lost or outdated profile), alone and together; and the no-change
check's plan, handed over, is taken only for its own scan and an unchanged manifest."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_table_lake
from dslake_index.catalog import connect
from dslake_index.plan import RECHECK_KINDS, hand_over_plan, plan_changes
from dslake_index.profilers.base import PROFILER_VERSION
from dslake_index.scan import FileStat, ScanResult, scan_lake

from dsstar_lake.lake import Lake


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = write_table_lake(tmp_path_factory.mktemp("plan") / "lake")
    (root / "sub").mkdir()
    (root / "sub" / "ünïcode name.csv").write_text("a,b\n1,2\n")  # byte order and code point order agree
    Lake.open(root).index()
    return root, root / ".dslake" / "manifest.sqlite"


def _row_by_row(conn: sqlite3.Connection, scan: ScanResult) -> tuple[list[FileStat], list[FileStat], list[str], int]:
    """The plan as the manifest's rows say it, one file at a time (what plan_changes did before the sets)."""
    known = {row["path"]: row for row in conn.execute("SELECT * FROM files")}
    current = {row[0] for row in conn.execute("SELECT hash FROM profiles WHERE profiler_version = ?",
                                              (PROFILER_VERSION,))}
    new, changed = [], []
    for f in scan.files:
        row = known.pop(f.path, None)
        if row is None:
            new.append(f)
        elif (row["size"], row["mtime_ns"]) != (f.size, f.mtime_ns) or row["status"] == "stale" or (
                row["error_kind"] in RECHECK_KINDS or (row["status"] == "ok" and row["hash"] not in current)):
            changed.append(f)
    return new, changed, sorted(known), len(scan.files) - len(new) - len(changed)


def _planned(conn: sqlite3.Connection, root: Path) -> tuple[list[FileStat], list[FileStat], list[str], int]:
    """Return plan_changes's plan of a fresh whole-lake scan, having checked it against the row-by-row one."""
    scan = scan_lake(root, root / ".dslake")
    plan = plan_changes(conn, scan, PROFILER_VERSION)
    assert plan == _row_by_row(conn, scan)
    return plan


def _nothing(plan: tuple[list[FileStat], list[FileStat], list[str], int]) -> bool:
    return not (plan[0] or plan[1] or plan[2])


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
        assert _nothing(_planned(conn, root))  # as the index left it
        undo = change(root, conn)
        try:
            assert not _nothing(_planned(conn, root))
        finally:
            undo()
        assert _nothing(_planned(conn, root))
    finally:
        conn.close()


def test_every_change_at_once(indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    conn = connect(db)
    undos = []
    try:
        for change in (_grow, _add, _row("error_kind", "timeout"), _lost_profile):
            undos.append(change(root, conn))
        new, changed, removed, unchanged = _planned(conn, root)
        assert [f.path for f in new] == ["zz_new.csv"] and not removed
        assert _first_csv(root).relative_to(root).as_posix() in [f.path for f in changed]
        undos.append(_remove(root, conn))
        new, changed, removed, unchanged = _planned(conn, root)
        assert len(removed) == 1 and unchanged == len(scan_lake(root, root / ".dslake").files) - 1 - len(changed)
    finally:
        for undo in reversed(undos):
            undo()
        conn.close()


def test_the_no_change_checks_plan_is_taken_only_for_its_scan_and_manifest(indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    conn = connect(db)
    undo = _add(root, conn)
    try:
        scan = scan_lake(root, root / ".dslake")
        plan = plan_changes(conn, scan, PROFILER_VERSION)
        marked = ([], [], ["as handed over"], 0)  # what only the hand-over could return
        hand_over_plan(conn, scan, PROFILER_VERSION, marked)
        assert plan_changes(conn, scan, PROFILER_VERSION) == marked  # the same scan, the same manifest
        assert plan_changes(conn, scan, PROFILER_VERSION) == plan  # taken once
        hand_over_plan(conn, scan, PROFILER_VERSION, marked)
        assert plan_changes(conn, scan_lake(root, root / ".dslake"), PROFILER_VERSION) == plan  # another scan
        hand_over_plan(conn, scan, PROFILER_VERSION, marked)
        assert plan_changes(conn, scan, PROFILER_VERSION, reuse=False) == plan  # profiles changed since
        hand_over_plan(conn, scan, PROFILER_VERSION, marked)
        conn.execute("UPDATE files SET indexed_at = indexed_at + 1 WHERE path = (SELECT min(path) FROM files)")
        try:
            assert plan_changes(conn, scan, PROFILER_VERSION) == plan  # an index wrote a file row in between
        finally:
            conn.execute("UPDATE files SET indexed_at = indexed_at - 1 WHERE path = (SELECT min(path) FROM files)")
    finally:
        undo()
        conn.close()
