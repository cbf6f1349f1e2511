"""The Chroma servers a user trusts a catalog's config to name: `catalog.trusted_servers` in the user's own config.

A catalog remembers the server its vectors live on (its config.toml's catalog.chroma_url), so that a search
needs no flag. A catalog can be someone else's, though, and a server it names would receive the user's lake
(paths, columns, values) on the next index. So a server a catalog names is used only when the user trusts it; an
index the user points at a server (`--chroma-url`, DSLAKE_CATALOG_CHROMA_URL or their config) adds it to that
list in the user's config file, so the catalogs they index themselves keep working without a flag.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

TRUSTED_KEY = "catalog.trusted_servers"
DEFAULT_PORTS = {"http": 8000, "https": 443}  # as index/vectors.py reads a URL without a port


def server_identity(url: str) -> str:
    """Return what names a server: scheme, host and port, lower-cased (a trailing slash or case never matter).

    A URL that does not parse as http(s)://HOST[:PORT] is its own stripped text: it matches only itself.
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return text
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return text
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}:{port}"


def is_trusted(url: str, trusted: Iterable[str]) -> bool:
    """Tell whether a server URL is one of the trusted ones."""
    wanted = server_identity(url)
    return any(server_identity(other) == wanted for other in trusted)


def trust_server(config_path: Path, url: str) -> bool:
    """Add url to catalog.trusted_servers in the user's config file, keeping its comments and layout; return
    whether it was added (False: it was there already). The file is replaced whole through a rename.

    OSError: the file cannot be written. tomlkit's ParseError: the file is not TOML (the settings refuse it first).
    """
    import tomlkit  # only an index given a server writes the user's config

    path = Path(os.path.realpath(config_path))  # a config kept elsewhere through a link stays linked
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        document = tomlkit.document()
    section = document.get("catalog")
    if section is None:
        section = tomlkit.table()
        document["catalog"] = section
    listed = section.get("trusted_servers")
    if listed is not None and is_trusted(url, listed):
        return False
    if listed is None:
        listed = tomlkit.array()
        section["trusted_servers"] = listed
    listed.append(url.strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(tomlkit.dumps(document))
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


__all__ = ["TRUSTED_KEY", "is_trusted", "server_identity", "trust_server"]
