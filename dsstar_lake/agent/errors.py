"""Errors the agent raises for the user (kinds of DslakeError)."""

from __future__ import annotations

from dsstar_lake.base.errors import DslakeError


class LakeModified(DslakeError):
    """A script changed a file in the lake (detected without bubblewrap); the run is aborted."""

    exit_code = 7
