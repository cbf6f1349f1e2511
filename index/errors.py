"""The base of every dslake error and the kinds the index raises; cli.py turns them into a line and an exit code.

They live on the bottom floor so that index/ imports nothing above it: dsstar_lake/base/errors.py re-exports them
beside the agent's own kinds, and code above index/ imports them from there.
"""

from __future__ import annotations

import errno
import re
import sqlite3

# A hint that names a dslake command or a flag is command-line advice: str() never shows it to a Python caller.
_CLI_ADVICE = re.compile(r"\bdslake\s|(?<![\w-])--[a-z]")


class DslakeError(Exception):
    """An error the user can act on: a message, optional advice, an exit code.

    The advice comes in two wordings: `hint` for the command line (flags, `dslake index LAKE`), which only cli.py
    prints, and `api_hint` for a Python caller (`Lake.open(lake).index()`), which str() appends to the message, so
    a notebook's traceback never gives command-line advice.
    """

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, api_hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.api_hint = api_hint

    @property
    def library_hint(self) -> str | None:
        """Return the advice for a Python caller: api_hint, else the hint when it is not command-line advice."""
        if self.api_hint is not None:
            return self.api_hint
        return self.hint if self.hint and not _CLI_ADVICE.search(self.hint) else None

    def __str__(self) -> str:
        advice = self.library_hint
        return f"{self.message}: {advice}" if advice else self.message


class UsageError(DslakeError):
    """Bad arguments or paths given by the user."""

    exit_code = 2


class LakeNotFound(UsageError):
    """The lake path does not exist or is not a folder."""


class CatalogError(DslakeError):
    """The catalog cannot be opened, written, or is damaged."""

    exit_code = 3


class DiskFull(CatalogError):
    """The disk (or a quota) holding the catalog is full; what was being written was rolled back."""


class CatalogCaught(CatalogError):
    """A script was caught changing the catalog (without bubblewrap): it is refused until it is rebuilt."""


class CatalogTooNew(CatalogError):
    """The catalog was written by a newer dslake (a migration this code does not know): read, never written."""


class CatalogLocked(CatalogError):
    """Another process holds the catalog's writer lock."""

    exit_code = 4


class ConfigError(UsageError):
    """A setting has a bad value or a config file cannot be read."""


# Chroma's Rust core reports a full disk only in its message text.
_FULL_TEXTS = ("database or disk is full", "no space left on device", "disk quota exceeded")


def is_disk_full(exc: BaseException | None) -> bool:
    """Tell whether an OS, SQLite or Chroma error (or one it was raised from) means the disk is full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            return True
        if any(text in str(exc).lower() for text in _FULL_TEXTS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
