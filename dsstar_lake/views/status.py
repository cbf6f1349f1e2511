"""`dslake status`: what the catalog holds, and how it compares with the lake right now, shown in Jupyter and at a
Python prompt (the figures come from index/'s Catalog.status)."""

from __future__ import annotations

from dataclasses import dataclass

from dslake_index.front_door import Catalog, CatalogStatus


@dataclass
class LakeStatus(CatalogStatus):
    """What the catalog holds and how it compares with the lake right now."""

    def __repr__(self) -> str:
        from dsstar_lake.views.notebook import status_repr

        return status_repr(self)

    def _repr_html_(self) -> str:
        from dsstar_lake.views.notebook import status_html

        return status_html(self)


def lake_status(access: Catalog, check_vectors: bool = False) -> LakeStatus:
    """Summarise the catalog, and compare it with the lake (stale, new, removed files)."""
    return LakeStatus(**vars(access.status(check_vectors)))
