"""Model keys kept in a file of the user's own (mode 0600) instead of the environment, as `llm keys set` does.

An environment variable still wins: a CI job or a one-off shell sets one without touching the file. The file sits
beside the user config (`~/.config/dslake/keys.json`), is written whole through a private temporary file and a
rename, and is refused when others can read it, as ssh refuses a private key that is not private.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from dsstar_lake.base import settings as settings_module
from dsstar_lake.base.errors import ConfigError, UsageError
from dsstar_lake.base.modelnames import KEYED_PROVIDERS

FILE_NAME = "keys.json"


def keys_path() -> Path:
    """Return the keys file's path: beside the user config."""
    return settings_module.USER_CONFIG_PATH.parent / FILE_NAME


def _checked_provider(provider: str) -> str:
    name = provider.strip().lower()
    if name not in KEYED_PROVIDERS:
        raise UsageError(f"no key to keep for {provider!r}; keys are for {', '.join(KEYED_PROVIDERS)}")
    return name


def _read() -> dict[str, str]:
    path = keys_path()
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read the keys file {path}: {exc.strerror}") from exc
    with os.fdopen(fd, encoding="utf-8") as handle:
        if stat.S_IMODE(os.fstat(handle.fileno()).st_mode) & 0o077:
            raise ConfigError(f"the keys file {path} can be read by other users",
                              hint=f"chmod 600 {path}", api_hint=f"make {path} private (mode 0600)")
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"the keys file {path} is not JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"the keys file {path} must hold one JSON object of provider names to keys")
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str) and v}


def _write(keys: dict[str, str]) -> Path:
    path = keys_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkstemp creates the file with mode 0600 before a byte of the key is in it; the rename replaces a link
    # planted at the name instead of writing through it.
    fd, temporary = tempfile.mkstemp(prefix=".keys-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(keys, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def stored_key(provider: str) -> str | None:
    """Return the key the file keeps for a provider, or None."""
    return _read().get(_checked_provider(provider))


def set_key(provider: str, value: str) -> Path:
    """Keep a provider's key in the keys file; return the file's path."""
    name = _checked_provider(provider)
    value = value.strip()
    if not value:
        raise UsageError("an empty key was given; nothing was stored")
    return _write({**_read(), name: value})


def remove_key(provider: str) -> bool:
    """Forget a provider's key; return whether there was one."""
    name = _checked_provider(provider)
    keys = _read()
    if name not in keys:
        return False
    del keys[name]
    _write(keys)
    return True


def stored_providers() -> list[str]:
    """Return the providers that have a key in the file (never the keys)."""
    return sorted(_read())


def find_key(provider: str, variables: Sequence[str], environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """Return (key, where from) for a provider: its first set variable, else the keys file's; None when neither.

    The variables are the ones the provider declares (its key_vars), read in that order.
    """
    env = os.environ if environ is None else environ
    found = next((var for var in variables if env.get(var)), None)
    if found:
        return env[found], found
    stored = stored_key(provider) if provider in KEYED_PROVIDERS else None
    return (stored, source_label()) if stored else None


def source_label() -> str:
    """Name the keys file as a credentials source, for `dslake models` and `dslake doctor`."""
    return f"keys file {keys_path()}"
