"""The render version: a fingerprint of the code that writes descriptions and cards (entries are rebuilt when it
changes).

It hashes the modules' source files by name, without importing them: every index asks for it, and a no-change
index must not load the whole rendering code (entries, families, layouts, datasets: ~25 ms) to learn that nothing
needs rendering. The files and their order are those of the fingerprint before it moved here, so a catalog's
stored version stays valid.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

RENDER_MODULES = ("cards", "families", "family_stats", "layouts", "entries", "datasets", "dataset_entries",
                  "dataset_build", "folder_totals",
                  "profilers/redaction",  # the analyses and a table log's bounds are redacted as they are rendered
                  "name_checks", "name_dates", "name_fields", "id_periods",  # what names claim, checked at render
                  # PROFILER_VERSION: profiles made again by a new profiler hold new facts under the same content
                  # hash, and an unchanged file's entry is kept by its content hash unless rendering changed
                  "profilers/base")


def render_version() -> str:
    """Return the fingerprint of the rendering modules' source (16 hex digits of a SHA-1 over their bytes)."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for name in RENDER_MODULES:
        digest.update((here / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]
