"""One error hierarchy for everything a user can cause; cli.py turns these into a line and an exit code."""

from __future__ import annotations


class DslakeError(Exception):
    """An error the user can act on: a message, an optional hint, an exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(DslakeError):
    """Bad arguments or paths given by the user."""

    exit_code = 2


class LakeNotFound(UsageError):
    """The lake path does not exist or is not a folder."""


class CatalogError(DslakeError):
    """The catalog cannot be opened, written, or is damaged."""

    exit_code = 3


class CatalogLocked(CatalogError):
    """Another process holds the catalog's writer lock."""

    exit_code = 4


class ConfigError(UsageError):
    """A setting has a bad value or a config file cannot be read."""


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
