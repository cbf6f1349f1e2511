"""Moved: the catalog's handles are index/'s front door, dslake_index.front_door.Catalog (`lake.catalog`).

This name stays only so that code written against CatalogAccess keeps importing while branches merge; new code
imports Catalog from dslake_index.front_door.
"""

from dslake_index.front_door import CHROMA_DIR, Catalog

CatalogAccess = Catalog

__all__ = ["CHROMA_DIR", "CatalogAccess"]
