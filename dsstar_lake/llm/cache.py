"""The response cache: one SQLite file of answers keyed by provider, model, role, prompt hash and call index.

Its SQL stays here, not in index/: this is the LLM layer's own database (llm_cache.sqlite), not the catalog's
manifest, and index/ knows nothing of models.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path

from dsstar_lake.base.errors import CatalogError
from dsstar_lake.llm.base import Completion

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    role TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    call_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (provider, model, role, prompt_hash, call_index)
)
"""


def prompt_hash(prompt: str, system: str | None) -> str:
    """Hash a prompt and its system text (a separator keeps ("ab", "c") apart from ("a", "bc"))."""
    digest = hashlib.sha256()
    digest.update((system or "").encode("utf-8"))
    digest.update(b"\x00")
    digest.update(prompt.encode("utf-8"))
    return digest.hexdigest()


class ResponseCache:
    """Store and look up answers; safe to share between threads, and between processes through SQLite."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise CatalogError(f"response cache {self.path} is from a newer dslake (schema {version})")
            with self._db:
                self._db.execute(SCHEMA)
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except (OSError, sqlite3.Error) as exc:
            raise CatalogError(f"cannot open the response cache {self.path}: {exc}") from exc

    def get(self, provider: str, model: str, role: str, key: str, index: int) -> Completion | None:
        """Return the stored answer for this key and call index, marked cached, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens FROM responses WHERE provider=? AND model=? "
                "AND role=? AND prompt_hash=? AND call_index=?",
                (provider, model, role, key, index),
            ).fetchone()
        if row is None:
            return None
        return Completion(row[0], row[1], row[2], 0.0, model, provider, cached=True)

    def put(self, provider: str, model: str, role: str, key: str, index: int, completion: Completion) -> None:
        """Store an answer, replacing what was there for the same key and call index."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (provider, model, role, key, index, completion.text,
                 completion.input_tokens, completion.output_tokens, time.time()),
            )

    def count(self) -> int:
        """Return the number of stored answers."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
