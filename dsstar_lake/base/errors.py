"""One error hierarchy for everything a user can cause; cli.py turns these into a line and an exit code.

The base and the kinds the index raises are defined in index/errors.py (so index/ imports nothing above it)
and re-exported here; the kinds only the agent and the models raise are defined here.
"""

from __future__ import annotations

from dslake_index.errors import (
    CatalogCaught,
    CatalogError,
    CatalogLocked,
    CatalogTooNew,
    ConfigError,
    DiskFull,
    DslakeError,
    LakeNotFound,
    UsageError,
    is_disk_full,
)

__all__ = [
    "INDEX_FAILURES", "STATUS_PROBLEMS", "BudgetExceeded", "CatalogCaught", "CatalogError", "CatalogLocked", "CatalogTooNew", "ConfigError", "DiskFull", "DslakeError", "LakeNotFound",
    "LoadError", "ModelNotConfigured", "ProviderError", "RunNotFound", "UsageError", "is_disk_full",
]

# `dslake status` exits with this when it reports a problem in the catalog, and `dslake doctor` when a check
# failed (each printed what, and how to fix it).
STATUS_PROBLEMS = 8
# `dslake index --strict` exits with this when any file of the lake failed to index (the summary listed them).
INDEX_FAILURES = 9


class ModelNotConfigured(UsageError):
    """No usable LLM provider is configured."""


class ProviderError(DslakeError):
    """A model call failed for a reason retrying will not fix."""

    exit_code = 5


class BudgetExceeded(DslakeError):
    """A run reached its LLM call or cost budget."""

    exit_code = 6


class RunNotFound(UsageError):
    """No run with that id in the catalog."""


class LoadError(DslakeError):
    """lake.load could not run a file's load line: the file failed to profile, has none, or it failed on the file."""
