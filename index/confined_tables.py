"""Delta and Iceberg tables' logs and metadata read in a confined profile server of their own, started at the first
table an index renders: pyiceberg builds a table's FileIO from what its metadata says, so never in dslake's process.

Kept apart from confined_pool.py, which it imports only when a table is read: an index that renders no table (a
no-change one above all) imports nothing of the server's machinery (concurrent.futures, multiprocessing).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dslake_index.confined_pool import ConfinedPool


class ConfinedTables:
    """Reads local Delta and Iceberg tables' logs and metadata in a profile server of its own, started at the first
    table an index renders (pyiceberg builds a table's FileIO from what its metadata says: never in dslake's
    process). Call it as tables.read_table(root, kind); close it when the index ends."""

    def __init__(self, lake: Path, hidden: list[Path], backend: str, timeout_s: float, memory_mb: int) -> None:
        self.lake, self.hidden, self.backend = lake, hidden, backend
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self.server: ConfinedPool | None = None
        self.note: str | None = None

    def __call__(self, root: Path, kind: str) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        from dslake_index.confined_pool import TABLE_READERS, ConfinedPool
        from dslake_index.tables import TableUnreadable, facts_from_plain

        if self.server is None:
            # The readers imported before a worker's memory cap: imported under it, pyiceberg's threads could not
            # start (each thread's stack and malloc arena count towards the address space).
            self.server = ConfinedPool(self.lake, self.hidden, self.backend, TABLE_READERS)
            self.server.start(1, self.memory_mb, {}, "blake2b", [])
            self.note = self.server.note
        try:
            answer = self.server.schedule({"task": "table", "root": str(root), "kind": kind}, self.timeout_s,
                                          check=lambda raw: raw).result()
        except BrokenProcessPool as exc:
            raise TableUnreadable(f"its reader's process ended ({exc})") from None
        if isinstance(answer, dict) and "facts" in answer:
            return facts_from_plain(answer["facts"])
        if isinstance(answer, dict) and isinstance(answer.get("unreadable"), str):
            raise TableUnreadable(answer["unreadable"][:500])
        error = answer.get("error") if isinstance(answer, dict) else None  # stopped at the time limit, or crashed
        raise TableUnreadable(str(error)[:500] if error else "its reader sent no facts")

    def close(self) -> None:
        """End the server, when one was started."""
        if self.server is not None:
            self.server.close()
            self.server = None
