"""dsstar_lake reaches index/ through its front door (dslake_index.front_door.Catalog) and a listed set of names.

The catalog's handles, its reads (rows by path or id, stored profiles, the enrichers' store) and the index pipeline
(manifest connection, vector store, embedder, retriever, scan → profile → group → render → enrich → embed, rebuild,
drift check, cluster) are Catalog's: no module above index/
imports indexer, sync, rebuild, retrieve, vectors or cluster. The other names below are value types and helpers
that layers above still use; the list may only shrink: a name that is no longer imported must leave it, and a new
one fails until it is added here with a reason.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from conftest import REPO

FRONT_DOOR = {
    "dslake_index.front_door": {"Catalog", "CatalogStatus", "CATALOG_CONFIG", "CHROMA_DIR", "EnrichmentStore",
                                "MANIFEST_NAME",
                                # the value types of its handles, named (for typing) through the door
                                "Embedder", "IndexSummary", "Retriever", "SearchTiming", "VectorStore",
                                # a no-change index answered before the settings and the Catalog are loaded
                                "index_if_unchanged",
                                # a caught catalog's settings are not read (index/caught.py)
                                "catalog_caught",
                                # a cold search's question embedded in a child before any catalog is open
                                "embedder_for"},
    "dslake_index.sections": {"CatalogSettings", "EmbedSettings", "FamiliesSettings", "IndexSettings", "ProfileSettings",
                              "RetrieveSettings", "typed_section"},  # the typed settings sections index/ reads
    "dslake_index.enrich": {"Enricher", "Enrichment"},  # the model passes plug into the pipeline through it
    "dslake_index.progress": {"Progress"},  # the progress callback's type
    "dslake_index.errors": {"CatalogCaught", "CatalogError", "CatalogLocked", "CatalogTooNew", "ConfigError", "DiskFull", "DslakeError", "LakeNotFound",
                            "UsageError", "is_disk_full"},  # re-exported by dsstar_lake/base/errors.py
    "dslake_index.catalog_errors": {"REBUILD_API_HINT", "disk_full", "manifest_errors", "read_only"},
    # bubblewrap's allow-list of the host: scripts and the index's readers of lake bytes are confined alike
    "dslake_index.bwrap_binds": {"SANDBOX_HOME", "USERNS_FLAGS", "Bind", "closing_argv", "host_argv",
                                 "interpreter_paths", "mib", "system_binds", "trust_userns_flags", "under",
                                 "userns_flags"},
    # where readers of lake bytes run: the serve preview's worker is one of the index's confined servers
    "dslake_index.confined_pool": {"ConfinedPool"},
    # what lake.load's confined worker hands back as plain data, and which load lines stay in the user's process
    "dslake_index.load_transfer": {"TransferError", "decode", "stays_in_process"},
    # what the index skips in a lake, blanked under bubblewrap for scripts as for the index's parsers
    "dslake_index.lakemask": {"Masks", "skipped_names"},
}
# Still imported directly, each with why; the list may only shrink.
NOT_YET_BEHIND_THE_DOOR = {
    "dslake_index": {"embed"},  # doctor checks the packaged model's files and ONNX export, with or without a catalog
    "dslake_index.embed": {"export_onnx"},  # prewarm exports the ONNX model in a child process before any catalog
    "dslake_index.indexer": {"start_in_child", "start_profiler_server"},  # processes forked from the profilers' server
    # lake.load's plan (loading.py) parses and runs the load hints the catalog stores, and checks sizes; the
    # web preview runs the same plan in a bounded worker. Moving that plan behind Catalog is the next step.
    "dslake_index.bigfiles": {"EXPANSION", "load_bytes", "size_text", "stream_hint", "too_big"},
    "dslake_index.cards": {"HINT_PREFIX"},
    "dslake_index.load_hint": {"HintRefused", "LoadHint", "ROW_LIMITED", "parse", "run"},
    "dslake_index.profilers.base": {"Profile"},
    "dslake_index.profile_task": {"limit_memory"},  # the preview worker's memory bound, as a profiler's
    "dslake_index.worker_context": {"worker_context"},  # the preview worker starts as a profiler does
    # the preview shows the lake's own rows and text, with the secrets redacted as the profiles redact them
    "dslake_index.profilers.redaction": {"redact_text", "redact_value"},
    "dslake_index.blobcache": {"BlobCache", "ObjectChanged", "Wanted"},  # the sandbox's view of an object lake
    "dslake_index.objectstore": {"check_access", "object_lake", "remote_lake"},  # opening a lake in a bucket
    "dslake_index.fulltext": {"query_terms"},  # the words a hit line highlights are the ones full text matched
    "dslake_index.gist": {"gist", "matched_spans", "cut_words"},  # what a hit holds, in the card's own words; lines cut between words
    "dslake_index.scan": {"lake_relative", "rescan_scope"},  # --watch's events
    # The summary's stored text format, which the index's rendering and the summarizer's parser share.
    "dslake_index.wordless": {"DESCRIPTION_HEAD", "FIELDS", "without_summary"},
}


def index_names_imported() -> dict[str, dict[str, set[str]]]:
    """Return {index module: {name: files}} of every import from dslake_index in dsstar_lake (lazy ones too)."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted((REPO / "dsstar_lake").rglob("*.py")):
        where = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "dslake_index":
                for alias in node.names:
                    found[node.module][alias.name].add(where)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "dslake_index":
                        module, _, name = alias.name.rpartition(".")
                        found[module or alias.name][name].add(where)
    return found


def test_dsstar_lake_imports_only_the_listed_index_names():
    allowed = defaultdict(set)
    for table in (FRONT_DOOR, NOT_YET_BEHIND_THE_DOOR):
        for module, names in table.items():
            allowed[module] |= names
    found = index_names_imported()
    extra = sorted(f"{module}.{name} ({', '.join(sorted(files))})" for module, names in found.items()
                   for name, files in names.items() if name not in allowed.get(module, ()))
    assert not extra, f"index names imported past the front door (go through dslake_index.front_door): {extra}"
    unused = sorted(f"{module}.{name}" for module, names in NOT_YET_BEHIND_THE_DOOR.items() for name in names
                    if name not in found.get(module, {}))
    assert not unused, f"no longer imported: remove them from NOT_YET_BEHIND_THE_DOOR in {__file__}: {unused}"


def test_the_pipeline_and_the_stores_are_reached_only_through_the_catalog():
    found = index_names_imported()
    for module in ("indexer", "sync", "rebuild", "retrieve", "remote", "vectors", "cluster", "vector_check"):
        names = set(found.get(f"dslake_index.{module}", {})) | ({module} & set(found.get("dslake_index", {})))
        behind = {"indexer": {"start_in_child", "start_profiler_server"}}.get(module, set())
        assert names <= behind, f"dsstar_lake imports dslake_index.{module}: {sorted(names - behind)}"
