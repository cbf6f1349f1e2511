"""A catalog's own config.toml is data: an allow-list of what it may set (retrieval and description tuning,
display, its vectors' collection), and the Chroma server it names only when the user trusts that server.

A catalog can be someone else's (a team's shared folder, a lake that ships its own .dslake/), and without
bubblewrap a script can write it. So nothing in it decides code, paths, processes, servers or money: which
scheduler profiles the lake (index.cluster), which links the scan follows, where caches live and what they delete,
how many processes run, the model, its endpoint, budgets and prices, the agent's rounds, the profilers' bounds,
the web preview, the sandbox. Those come only from the user's config, DSLAKE_* variables and flags, which also win
over what a catalog sets (defaults < catalog < user < environment < flags: settings.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from dsstar_lake.base.errors import ConfigError
from dsstar_lake.base.trusted_servers import TRUSTED_KEY, is_trusted

# Every key of default.toml was weighed; what is not here stays with the user (docs/safety.md lists why).
CATALOG_MAY_SET = frozenset({
    # which collection of its store holds the catalog's vectors (written by every index with the server's URL)
    "catalog.collection",
    # description tuning: which files form a family and how many members its description lists
    "families.min_members", "families.max_members_listed",
    # retrieval tuning: ranking, fusion and how many entries a question, a "Missing data" step or a report gets
    "retrieve.k", "retrieve.dense_weight", "retrieve.fulltext_weight", "retrieve.fusion", "retrieve.rrf_k",
    "retrieve.candidates", "retrieve.complete_scores", "retrieve.collapse_kin", "retrieve.folder_weight",
    "agent.k_extra", "report.k",
    # display: how a report is written out and how many figures it keeps per sub-question
    "report.format", "report.max_figures",
})
# The catalog remembers its server here; it is used only when the user trusts it (check_server).
SERVER_KEY = "catalog.chroma_url"


def refused_keys(keys: Iterable[str]) -> list[str]:
    """Return the keys, in order, that a catalog's config may not set."""
    return [key for key in keys if key not in CATALOG_MAY_SET and key != SERVER_KEY]


def refusal(path: Path, keys: list[str], user_config: Path) -> ConfigError:
    """Return the one-line error for a catalog config that sets keys only the user may set."""
    them = "them" if len(keys) > 1 else "it"
    return ConfigError(
        f"{path} sets {', '.join(keys)}, which only your own config, DSLAKE_* variables or flags may set",
        hint=f"a catalog's config may tune retrieval and descriptions, not code, paths, processes, servers or "
             f"money: remove {them} from that file; set {them} in {user_config} if you meant {them}")


def check_server(values: Mapping[str, object], sources: Mapping[str, str], catalog_files: Iterable[Path],
                 user_config: Path) -> None:
    """Refuse a Chroma server that a catalog's config names and the user does not trust (ConfigError).

    Checked on the resolved values: a server the user set (config, DSLAKE_*, --chroma-url) wins over the
    catalog's, which is then never used, and the trusted list is the user's alone.
    """
    url = str(values.get(SERVER_KEY) or "").strip()
    origin = sources.get(SERVER_KEY, "default")
    catalog = next((path for path in catalog_files if str(path) == origin), None)
    if not url or catalog is None:
        return
    trusted = values.get(TRUSTED_KEY) or []
    if is_trusted(url, trusted):  # type: ignore[arg-type]  # a list of strings (settings.py checks its type)
        return
    raise ConfigError(
        f"{catalog} names the Chroma server {url}, which you have not trusted: dslake did not connect to it",
        hint=f"if you trust it, add it to your config ({user_config}): [catalog] trusted_servers = "
             f"[\"{url}\"], or give --chroma-url {url}; an index you run with --chroma-url trusts its server")


__all__ = ["CATALOG_MAY_SET", "SERVER_KEY", "check_server", "refusal", "refused_keys"]
