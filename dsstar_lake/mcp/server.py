"""`dslake mcp`: one lake's catalog served to other agents over MCP on stdio, with the official SDK's MCPServer.

Tools: `search`, `show`, `status`, and `ask` when a model is configured. Nothing writes the lake; the catalog is
only read, except that an `ask` keeps its run record under runs/ as `dslake ask` does. stdout is the protocol:
while it serves, the SDK's stdio transport points file descriptor 1 at stderr and writes the protocol through a
private copy, so a stray print, a warning or a model-loading bar (here or in a sandboxed script) lands on
stderr, and the server's own log goes there too.

cli.py opens the Lake and hands it over (this module does not import the facade, as watch.py does not).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, Field

from dsstar_lake.base.errors import DslakeError

if TYPE_CHECKING:
    # Typing only: the front doors sit above the facade they serve (tests/test_layers.py).
    from mcp.server.mcpserver import MCPServer

    from dsstar_lake.agent.state import Answer
    from dsstar_lake.base.settings import Settings
    from dsstar_lake.lake import Lake

log = logging.getLogger("dslake.mcp")
T = TypeVar("T")
MAX_LISTED = 20  # paths per list in `status` (a big lake can have thousands of changed files)
MAX_MEMBERS = 50  # member paths `show` lists for a family

INSTRUCTIONS = (
    "dslake knows every file of one data lake (the folder {root}): a catalog describes each file (format, how to "
    "load it, columns and types, units, example rows) and groups files of one schema and name pattern into "
    "families. Use `search` to find the files for a question, `show` for one file's full description before "
    "writing code that reads it, `status` for what the catalog holds and whether it is current{ask}. Paths are "
    "relative to the lake folder."
)
ASK_NOTE = ", and `ask` to have dslake's own agent compute an answer from the files (slow; it calls a model)"


class SearchHit(BaseModel):
    """One catalog entry that matches the query."""

    path: str = Field(description="Lake-relative path; for a family, a glob pattern covering its member files.")
    score: float = Field(description="Relevance, higher is better; comparable only within one search.")
    kind: str = Field(description="'file', or 'family' (files of one schema and name pattern, one entry).")
    format: str | None = Field(description="File format, e.g. csv, xlsx, json, parquet.")
    member_count: int = Field(description="Files in the entry (1 for a file).")
    summary: str = Field(description="What the entry holds, in up to three lines: title, shape, column or sheet "
                                     "names, date range, key values. `show` gives the full description.")
    folded: list[str] = Field(description="Near-identical files (same folder, name pattern and layout) that share "
                                          "this hit's slot: each is a lake file of its own, to `show` and read by "
                                          "its own path.")


class SearchResult(BaseModel):
    """The best entries for a query."""

    query: str
    hits: list[SearchHit] = Field(description="Best first.")


class ShowResult(BaseModel):
    """One file's or family's full catalog record."""

    path: str = Field(description="The path as asked, lake-relative.")
    kind: str | None = Field(description="'file' or 'family'; null when the file failed to profile.")
    format: str | None
    status: str | None = Field(description="The file's state: ok, failed or stale; null for a family pattern.")
    error: str | None = Field(description="Why profiling failed, when it did.")
    description: str | None = Field(description="How to read the data: format, load hint, shape, columns and "
                                                "dtypes, sheets, example rows, caveats.")
    card: str | None = Field(description="The short text search matches against.")
    member_count: int
    members: list[str] = Field(description=f"The entry's files (the first {MAX_MEMBERS}).")


class StatusResult(BaseModel):
    """What the catalog holds and how it compares with the lake now."""

    lake: str
    files: int
    entries: int
    families: int
    bytes: int = Field(description="Total size of the lake's indexed files.")
    formats: dict[str, int] = Field(description="Files per format.")
    failed: list[str] = Field(description=f"'path: reason' of files that failed to profile (the first {MAX_LISTED}).")
    failed_count: int
    changed: list[str] = Field(description=f"Files added, changed or removed since the last index (the first "
                                           f"{MAX_LISTED}); search does not reflect them until `dslake index`.")
    changed_count: int
    last_index_at: str | None = Field(description="ISO 8601 UTC time of the last index.")
    problems: list[str] = Field(description="Problems the catalog needs fixed (by `dslake index`); empty when none.")


class AskResult(BaseModel):
    """The agent's answer."""

    answer: str = Field(description="What the final script printed.")
    verified: bool = Field(description="Whether the verifier judged the plan sufficient.")
    files_used: list[str] = Field(description="Lake files the scripts read: what their Python "
                                  "reported (a script can forge it) and, on Linux, what the lake's open watch saw "
                                  "opened in C (pyarrow, DuckDB...).")
    trace_problems: list[str] = Field(default_factory=list, description="Scripts whose read trace was closed "
                                      "early, forged or cut: files_used is then doubtful.")
    run_id: str = Field(description="The run's id: `dslake runs show ID` shows its plan, scripts and cost.")
    stop_reason: str | None = Field(description="verified, max_rounds, budget or error.")
    error: str | None = Field(description="Why the run stopped short of a verified answer, when it did.")
    assumptions: list[str] = Field(description="Readings of the question the answer relies on.")
    alternatives: list[dict[str, str]] = Field(description="Other readings of the question and their values "
                                                           "(reading, value, how).")
    chosen: dict[str, str] = Field(default_factory=dict,
                                   description="Where readings gave different answers: the reading chosen and why "
                                               "(reading, because, value); empty when they agreed.")
    selection: list[dict[str, str]] = Field(default_factory=list,
                                            description="The entries chosen for the first round, in the order "
                                                        "chosen: path (a lake file, or a family's glob) and reason.")
    selected_by: str = Field(default="", description="Who chose them: 'selector' (a model), 'relevance' (the "
                                                     "fallback, no model choice) or 'given' (the files were named).")
    readings: list[dict[str, Any]] = Field(default_factory=list,
                                           description="Every reading the run's roles named: kind, label, value, "
                                                       "how, by, status (open, rejected or chosen) and reason.")
    overridden: dict[str, str] = Field(default_factory=dict,
                                       description="When the answer is not what the final script printed: by, "
                                                   "final_script, answer and reason; empty otherwise.")
    cost_usd: float


def _one_line(exc: DslakeError) -> str:
    text = exc.message if not exc.hint else f"{exc.message} (hint: {exc.hint})"
    return " ".join(text.split())


class _Server:
    """The tools over one opened Lake; catalog reads run on one thread, asks on another."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        # One thread for catalog reads: the facade keeps a connection and a retriever per thread, so every read
        # reuses them (and the process-wide embedding model loads once). Asks get their own thread, so that a
        # search is not stuck behind a minutes-long run.
        self.reads = ThreadPoolExecutor(1, thread_name_prefix="dslake-mcp-read")
        self.asks = ThreadPoolExecutor(1, thread_name_prefix="dslake-mcp-ask")

    async def _run(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        from mcp.server.mcpserver.exceptions import ToolError

        def guarded() -> T:
            try:
                return fn()
            except DslakeError as exc:  # the user's or the model's mistake: a tool error the caller reads
                raise ToolError(_one_line(exc)) from None

        return await asyncio.wrap_future(pool.submit(guarded))

    def warm(self) -> None:
        """Load the embedding model and open the stores now, so that the first search is quick."""
        try:
            self.lake.search("warm up", 1)
        except Exception as exc:  # a later search reports it to the caller; here it is only logged
            log.warning("warm-up search failed: %s", exc)

    async def search(
        self,
        query: Annotated[str, Field(description="A question or topic in plain words, e.g. 'ozone by county in "
                                                "2024'. Column names, units, places and years help.")],
        k: Annotated[int | None, Field(ge=1, le=100, description="How many entries (default: the catalog's "
                                                                 "retrieve.k, usually 10).")] = None,
    ) -> SearchResult:
        """Find the lake files that best match a question or topic: hybrid search (embeddings + full text) over
        the catalog's descriptions. Returns the best entries first, each with its lake-relative path, score, kind
        (a 'family' is many files of one schema, named by a glob), format, what it holds (title, shape, columns,
        dates, key values) and the near-identical files folded under it. Call `show` with a path for the full
        description before reading the file."""
        hits = await self._run(self.reads, lambda: self.lake.search(query, k))
        return SearchResult(query=query, hits=[
            SearchHit(path=h.path, score=round(h.score, 4), kind=h.kind, format=h.format,
                      member_count=h.member_count, summary="\n".join(h.summary), folded=list(h.kin))
            for h in hits])

    async def show(
        self,
        path: Annotated[str, Field(description="Lake-relative path of a file, or a family's glob pattern, as "
                                               "`search` returns it.")],
    ) -> ShowResult:
        """Return the full catalog description of one lake file or family: format, how to load it (a pandas read
        hint naming the file by its absolute path), shape, columns with types and units, sheets, example rows and caveats; for a family its member
        files; for a file that failed to profile, why. A path the catalog does not hold is an error."""
        record = await self._run(self.reads, lambda: self.lake.show(path, absolute=True))
        return _show_result(record)

    async def status(self) -> StatusResult:
        """Summarise the catalog: files, entries, families, formats, files that failed to profile (with reasons),
        files changed in the lake since the last index (search does not see them yet) and problems that need an
        index. Use it to judge whether search results are complete and current."""
        result = await self._run(self.reads, lambda: self.lake.status())
        return _status_result(result)

    async def ask(
        self,
        question: Annotated[str, Field(description="A question the lake's data can answer, e.g. 'Which county "
                                                   "had the most unhealthy ozone days in 2024?'")],
        guidelines: Annotated[str | None, Field(description="How to give the answer, e.g. 'a number rounded "
                                                            "to 2 decimals'.")] = None,
    ) -> AskResult:
        """Answer a data question with dslake's DS-STAR agent: it retrieves the relevant files, plans, writes
        Python and runs it in a sandbox (the lake is read-only to it), verifies and returns the answer, the files
        it read and a run id. Slow (tens of seconds to minutes) and it calls a language model, which can cost
        money: use `search` and `show` for questions about what data exists."""

        def run() -> Answer:
            answer = self.lake.ask(question, guidelines=guidelines)
            answer.raise_if_unfinished()  # a run stopped by the model's provider: resumable, said as an error
            return answer

        return ask_result(await self._run(self.asks, run))

    def close(self) -> None:
        """Stop the worker threads (a running ask is left to finish)."""
        self.reads.shutdown(wait=False, cancel_futures=True)
        self.asks.shutdown(wait=False, cancel_futures=True)


def ask_result(answer: Answer) -> AskResult:
    """Return what the `ask` tool answers: the run's answer, how it was reached and which files it chose."""
    return AskResult(answer=str(answer.text), verified=bool(answer.verified),
                     files_used=list(answer.files_used), trace_problems=list(answer.trace_problems),
                     run_id=answer.run_id,
                     stop_reason=answer.stop_reason, error=answer.error,
                     assumptions=list(answer.assumptions or []), alternatives=list(answer.alternatives or []),
                     chosen=dict(answer.chosen or {}), selection=[dict(e) for e in answer.selection or []],
                     selected_by=str(answer.selected_by or ""), readings=[dict(r) for r in answer.readings or []],
                     overridden=dict(answer.overridden or {}), cost_usd=float(answer.cost_usd or 0.0))


def _show_result(record: dict[str, Any]) -> ShowResult:
    file = record.get("file") or {}
    entry = record.get("entry") or {}
    members = list(record.get("members") or [])
    return ShowResult(path=record["path"], kind=entry.get("kind"), format=entry.get("format") or file.get("format"),
                      status=file.get("status"), error=file.get("error"), description=entry.get("description"),
                      card=entry.get("card"), member_count=int(entry.get("member_count") or len(members)),
                      members=members[:MAX_MEMBERS])


def _status_result(status: Any) -> StatusResult:
    from dsstar_lake.views.jsonout import iso_time

    changed = sorted({*status.stale, *status.new, *status.removed})
    return StatusResult(
        lake=status.lake, files=status.files, entries=status.entries, families=status.families, bytes=status.bytes,
        formats=status.formats, failed=[f"{p}: {why}" for p, why in status.failed[:MAX_LISTED]],
        failed_count=len(status.failed), changed=changed[:MAX_LISTED], changed_count=len(changed),
        last_index_at=iso_time(status.last_index_at) if status.last_index_at else None, problems=status.problems)


def model_ready(settings: Settings) -> str | None:
    """Return None when the configured model can answer `ask`, else why not (one line)."""
    from dsstar_lake.llm.registry import check_configured

    try:
        check_configured(settings)
    except DslakeError as exc:
        return exc.message
    return None


def check_catalog(lake: Lake) -> None:
    """Raise the catalog's own error (no catalog, a damaged one) before serving, instead of on every call."""
    if lake.chroma_url() and not lake.db_path.exists():
        return  # another machine's catalog: only its settings here, searched dense-only on the shared server
    lake.connection()
    lake.close()  # the tools read on their own thread, with their own connection


def build_server(lake: Lake) -> MCPServer:
    """Return the MCPServer for an opened Lake, with `ask` only when a model is configured."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    # Plain lines on stderr, configured before the SDK's own basicConfig (a rich handler that wraps at 80
    # columns), which then leaves them be.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="dslake mcp: %(levelname)s %(message)s")
    check_catalog(lake)
    tools = _Server(lake)
    no_model = model_ready(lake.settings)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        # Inside the transport: fd 1 already points at stderr, so whatever loading prints misses the protocol.
        tools.reads.submit(tools.warm)
        try:
            yield
        finally:
            tools.close()

    root = str(lake.root or lake.catalog_dir)
    server = MCPServer(name="dslake", version=version("dsstar-lake"), log_level="WARNING", lifespan=lifespan,
                       instructions=INSTRUCTIONS.format(root=root, ask="" if no_model else ASK_NOTE))
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
    server.add_tool(tools.search, name="search", title="Search the lake's catalog", annotations=reads)
    server.add_tool(tools.show, name="show", title="Show a file's description", annotations=reads)
    server.add_tool(tools.status, name="status", title="Catalog status", annotations=reads)
    if no_model is None:
        # Not read-only: the run's record is written under the catalog's runs/ (never into the lake).
        server.add_tool(tools.ask, name="ask", title="Answer a question from the data",
                        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                    idempotent_hint=False, open_world_hint=True))
    else:
        log.warning("ask is not offered: %s", no_model)
    return server


def serve(lake: Lake) -> None:
    """Serve the opened Lake's catalog over stdio until the client closes the connection."""
    build_server(lake).run("stdio")
