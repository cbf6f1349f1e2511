"""dslake: DS-STAR over data lakes, retrieval-first."""

from dsstar_lake.lake import Lake

__all__ = ["Lake"]
__version__ = "0.1.0"
