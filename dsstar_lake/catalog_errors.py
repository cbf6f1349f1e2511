"""Moved to index/catalog_errors.py (the catalog's own errors belong beside it); this name stays for old imports."""

from dslake_index.catalog_errors import REBUILD_API_HINT, disk_full, manifest_errors, read_only

__all__ = ["REBUILD_API_HINT", "disk_full", "manifest_errors", "read_only"]
