"""dslake: DS-STAR over data lakes, retrieval-first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsstar_lake.lake import Lake

__all__ = ["Lake"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Load the Lake facade on first use: every dsstar_lake module is a submodule of this package, and a command
    that never opens a lake (`dslake --help`, `dslake keys`) or a sandboxed script's helpers must not pay for the
    facade's imports (the catalog, the index pipeline) just to reach one of them."""
    if name == "Lake":
        from dsstar_lake.lake import Lake

        return Lake
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
