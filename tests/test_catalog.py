import multiprocessing
import time

import pytest
from dslake_index import catalog


def test_fresh_manifest_has_the_pinned_schema(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    assert catalog.migrate(conn) == [name for name, _ in catalog.MIGRATIONS]
    assert catalog.migrate(conn) == []
    columns = {row[1] for row in conn.execute("PRAGMA table_info(files)")}
    assert columns == {"path", "folder", "size", "mtime_ns", "hash", "status", "error", "error_kind", "format",
                       "entry_id", "indexed_at"}
    columns = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
    assert columns == {"id", "kind", "folder", "path", "format", "content_hash", "member_count", "description",
                       "card", "card_hash", "updated_at"}
    assert catalog.schema_version(conn) == catalog.MIGRATIONS[-1][0]


def _hold_lock(path, ready):
    with catalog.writer_lock(path):
        ready.set()
        time.sleep(30)


def test_writer_lock_refuses_a_second_writer_and_is_released_when_the_holder_dies(tmp_path):
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(tmp_path, ready))
    holder.start()
    assert ready.wait(20)
    with pytest.raises(catalog.CatalogLockHeld) as excinfo:
        with catalog.writer_lock(tmp_path):
            pass
    assert f"pid {holder.pid}" in str(excinfo.value)
    holder.kill()
    holder.join()
    with catalog.writer_lock(tmp_path):
        pass


def test_transaction_rolls_back_on_error(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    with pytest.raises(RuntimeError):
        with catalog.transaction(conn):
            catalog.set_meta(conn, "k", "v")
            raise RuntimeError("boom")
    assert catalog.get_meta(conn, "k") is None
