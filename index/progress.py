"""Progress: the callback a long command reports to, as (event name, data); defined once for every layer.

It sits in index/, the bottom floor, because the indexer reports through it too; the agent, the report, the
evaluation and the CLI's live displays import it from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Progress = Callable[[str, dict[str, Any]], None]


def quiet(event: str, data: dict[str, Any]) -> None:
    """Report nothing (the default when no one listens)."""
