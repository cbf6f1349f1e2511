"""Errors the agent raises for the user (kinds of DslakeError)."""

from __future__ import annotations

from dsstar_lake.base.errors import DslakeError


class LakeModified(DslakeError):
    """A script changed a file in the lake or the catalog (detected without bubblewrap); the run is aborted.

    catalog_paths: what it changed in the catalog (catalog-relative as the sandbox names them), else empty: the
    run then marks the catalog caught (index/caught.py).
    """

    exit_code = 7

    def __init__(self, message: str, hint: str | None = None, api_hint: str | None = None,
                 catalog_paths: list[str] | None = None) -> None:
        super().__init__(message, hint, api_hint)
        self.catalog_paths = list(catalog_paths or [])
