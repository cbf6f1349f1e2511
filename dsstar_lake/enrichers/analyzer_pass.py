"""`dslake index --analyzer llm|auto`: the paper's LLM analyzer on top of the profilers, cached by content hash.

After the profilers have described the lake, pick the contents that want an analysis (`llm`: every file entry and
one representative per family; `auto`: only files no format profiler could read, plus one representative per
family), have the model write a script that describes each (agent/analyzer.py), and store what the script printed
in the manifest's `analyses` table. The index then appends it to those entries' descriptions; the profiler's
description always stays, and a failed analysis leaves it as it was. Cards are not touched, so nothing is
re-embedded.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.enrich import Enricher, Enrichment
from dslake_index.front_door import MANIFEST_NAME, EnrichmentStore
from dslake_index.progress import Progress

from dsstar_lake.agent.errors import LakeModified
from dsstar_lake.base.errors import BudgetExceeded, ConfigError, DslakeError

if TYPE_CHECKING:
    from concurrent.futures import Future

    from dsstar_lake.agent.analyzer import Analysis
    from dsstar_lake.base.settings import Settings
    from dsstar_lake.llm import LLM
    from dsstar_lake.llm.base import Provider
    from dsstar_lake.runs.setup import RunSetup
    from dsstar_lake.sandbox import Sandbox


MODES = ("profile", "llm", "auto")
# Formats that mean "no format profiler read this file": the generic fallback described it (profilers/fallback.py).
FALLBACK_FORMATS = ("binary", "zip", "gzip")
# The note registry.profile_path adds when a format profiler tripped on the content and the fallback took over.
PROFILER_FAILED_NOTE = "the format profiler could not read it"
# Extensions of structured formats: such a file described as plain text is one its format profiler gave up on
# (invalid JSON, say). Plain-text extensions (.txt, .dat, ...) are not in the list.
STRUCTURED_EXT = (".csv", ".tsv", ".tab", ".psv", ".ssv", ".json", ".geojson", ".jsonl", ".ndjson", ".xml", ".kml",
                  ".gpx", ".html", ".htm", ".xhtml", ".xlsx", ".xlsm", ".parquet", ".pq", ".npz", ".npy", ".cdf")
SKIP_FORMATS = ("empty",)  # nothing for a script to describe
MAX_CHARS = 4000  # analysis text kept per file (head and tail): the profiler's description comes first
RUN_PREFIX = "index-analyzer-"


def _quiet(event: str, data: dict[str, Any]) -> None:
    pass


@dataclass
class Target:
    """One content hash to analyse, through one lake file that has it."""

    hash: str
    path: str
    why: str  # file | family | fallback | profiler-failed


@dataclass
class AnalyzerReport:
    """What one analyzer pass did."""

    mode: str
    wanted: int = 0  # contents that needed an analysis
    analyzed: int = 0  # analyses written
    failed: int = 0  # analyses that produced nothing (the profiler description stays)
    not_started: int = 0  # left for the next index because the pass stopped
    stopped: str | None = None  # why it stopped early (budget, provider)
    llm_calls: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    run_folder: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the summary as JSON-ready data."""
        return asdict(self)


def resolve_mode(settings: Settings, analyzer: str | None, provider: Provider | None = None) -> str:
    """Return the analyzer mode (flag, else agent.analyzer); raise ModelNotConfigured if it needs a model and has none."""
    mode = (analyzer or settings.agent.analyzer or "profile").strip().lower()
    if mode not in MODES:
        raise ConfigError(f"the analyzer must be one of {', '.join(MODES)}, not {mode!r}",
                          hint="set agent.analyzer or pass --analyzer profile|llm|auto")
    if mode != "profile" and provider is None:
        from dsstar_lake.llm import check_configured

        check_configured(settings)  # fail before profiling, not after
    return mode


def source_for(model: str) -> str:
    """Return the `source` an analysis by this model is stored with."""
    return f"llm:{model}"


def plan_targets(store: EnrichmentStore, mode: str, source: str) -> list[Target]:
    """Return the contents that want an analysis and have none yet (a failure by another model is retried)."""
    if mode == "profile":
        return []
    candidates: list[Target] = []
    if mode == "llm":
        candidates += [Target(h, path, "file") for h, path in store.file_contents(SKIP_FORMATS)]
    else:
        for content_hash, path, fmt, tripped in store.unread_contents(SKIP_FORMATS, FALLBACK_FORMATS,
                                                                      PROFILER_FAILED_NOTE):
            if fmt in FALLBACK_FORMATS:
                candidates.append(Target(content_hash, path, "fallback"))
            elif tripped or path.lower().endswith(STRUCTURED_EXT):
                candidates.append(Target(content_hash, path, "profiler-failed"))
    candidates += [Target(h, path, "family") for path, h in store.family_representatives(SKIP_FORMATS)]
    done = store.stored_analyses()
    targets: dict[str, Target] = {}
    for target in sorted(candidates, key=lambda t: t.path):
        previous = done.get(target.hash)
        if target.hash is None or target.hash in targets:
            continue  # copies share one analysis
        if previous is None or (previous[0] == "" and previous[1] != _failed(source)):
            targets[target.hash] = target
    return list(targets.values())


def _failed(source: str) -> str:
    return f"failed:{source}"


def analyze_files(
    setup: RunSetup,
    mode: str,
    llm: LLM,
    sandbox: Sandbox,
    jobs: int,
    progress: Progress = _quiet,
    workdir: Path | None = None,
    targets: list[Target] | None = None,
    trace: Callable[[dict[str, Any]], None] | None = None,
) -> AnalyzerReport:
    """Analyse the contents that want it in a bounded thread pool; write each result as it lands.

    A budget or provider failure stops scheduling new files and keeps what is done; the rest waits for the next
    index. Folders whose files got an analysis are marked dirty, so the entry rebuild picks the text up.
    """
    from dsstar_lake.agent.analyzer import analyze_file

    started = time.perf_counter()
    store = setup.access.enrichment_store()
    source = source_for(llm.model_for("analyzer"))
    if targets is None:
        targets = plan_targets(store, mode, source)
    summary = AnalyzerReport(mode=mode, wanted=len(targets))
    if not targets:
        return summary
    workdir = Path(workdir) if workdir is not None else setup.catalog_dir / "runs" / f"{RUN_PREFIX}{_stamp()}"
    max_debug = max(0, setup.settings.agent.max_debug)
    over = setup.settings.agent.summarize_over_chars
    record = trace or (lambda data: None)
    stop = threading.Event()
    progress("analyze", {"total": len(targets)})

    def work(n: int, target: Target) -> Analysis | None:
        if stop.is_set():
            return None
        from dsstar_lake.sandbox.workfolder import clean

        folder = workdir / f"{n:04d}"
        try:
            return analyze_file(target.path, llm, sandbox, folder, max_debug=max_debug, max_chars=MAX_CHARS,
                                summarize_over_chars=over)
        finally:
            clean(folder, lambda path: False)  # the description is in the manifest; nothing else is kept

    from concurrent.futures import (  # an index without the pass skips it
        FIRST_COMPLETED,
        ThreadPoolExecutor,
        wait,
    )

    queue = iter(enumerate(targets))
    running: dict[Future[Analysis | None], Target] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="analyzer") as pool:

        def fill() -> None:
            while len(running) < max(1, jobs) and not stop.is_set():
                item = next(queue, None)
                if item is None:
                    return
                running[pool.submit(work, *item)] = item[1]

        fill()
        try:
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    target = running.pop(future)
                    _settle(store, future, target, source, summary, stop, record, progress)
                fill()
        except LakeModified as exc:
            stop.set()
            if exc.catalog_paths:  # refused from now on, until a rebuild (index/caught.py)
                setup.access.mark_caught(workdir.name, exc.catalog_paths)
            raise
        except BaseException:
            stop.set()  # Ctrl-C: let the files in flight finish, start no new one; written rows stay
            raise
    totals = llm.totals
    summary.not_started = summary.wanted - summary.analyzed - summary.failed
    summary.llm_calls = totals.provider_calls
    summary.cost_usd = round(totals.cost_usd, 6)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _settle(store: EnrichmentStore, future: Future[Analysis | None], target: Target, source: str,
            summary: AnalyzerReport, stop: threading.Event, record: Callable[[dict[str, Any]], None],
            progress: Progress) -> None:
    """Store one finished analysis (or its failure); a budget or provider error stops the pass."""
    try:
        analysis = future.result()
    except LakeModified:  # a script changed the catalog: the whole index stops (analyze_files marks it caught)
        raise
    except DslakeError as exc:  # budget spent or the provider failed for good: this file waits for the next index
        stop.set()
        if summary.stopped is None:
            kind = "budget" if isinstance(exc, BudgetExceeded) else "provider"
            summary.stopped = f"{kind}: {exc.message}"
        record({"type": "analysis", "path": target.path, "hash": target.hash, "ok": False, "stopped": str(exc)})
        return
    if analysis is None:
        return  # not started: the pass was stopping
    ok = analysis.description is not None
    store.store_analysis(target.hash, analysis.description or "", source if ok else _failed(source), ok)
    if ok:
        summary.analyzed += 1
    else:
        summary.failed += 1
        summary.failures.append((target.path, (analysis.errors or ["no description"])[-1][-300:]))
    record({"type": "analysis", "path": target.path, "hash": target.hash, "why": target.why, "ok": ok,
            "attempts": analysis.attempts, "errors": [e[-500:] for e in analysis.errors],
            "chars": len(analysis.description or "")})
    progress("analyzed", {"path": target.path, "ok": ok})


def _stamp() -> str:
    from dsstar_lake.runs.record import new_run_id

    return new_run_id()


def run_analyzer(setup: RunSetup, mode: str, progress: Progress = _quiet) -> AnalyzerReport:
    """Build the model (as ask does), the sandbox and the pass's folder, and analyse what wants it."""
    from dsstar_lake.llm.record import JsonlRecorder
    from dsstar_lake.llm.registry import model_for

    settings = setup.settings
    targets = plan_targets(setup.access.enrichment_store(), mode, source_for(model_for(settings, "analyzer")))
    if not targets:
        return AnalyzerReport(mode=mode)
    if setup.root is None:
        raise ConfigError("the analyzer needs the lake folder")
    folder = setup.catalog_dir / "runs" / f"{RUN_PREFIX}{_stamp()}"
    folder.mkdir(parents=True, exist_ok=True)
    trace = JsonlRecorder(folder / "trace.jsonl")
    # The manifest is written as each file's analysis lands, while other files' scripts run.
    sandbox = setup.sandbox(volatile=(MANIFEST_NAME,))
    if sandbox.warning:
        trace.write({"type": "warning", "text": sandbox.warning})
        progress("warning", {"text": sandbox.warning})
    trace.write({"type": "start", "mode": mode, "targets": len(targets), "backend": sandbox.backend})
    jobs = settings.index.jobs or (os.cpu_count() or 1)
    with setup.llm(trace, folder.name) as llm:
        summary = analyze_files(setup, mode, llm, sandbox, jobs, progress, workdir=folder, targets=targets,
                                  trace=trace.write)
    summary.run_folder = str(folder)
    trace.write({"type": "done", **{k: v for k, v in summary.to_dict().items() if k != "failures"}})
    return summary


class AnalyzerPass:
    """The paper's analyzer as an index enricher (index/enrich.py): it stores analyses and marks their folders dirty."""

    def __init__(self, setup: RunSetup, mode: str) -> None:
        self.setup = setup
        self.mode = mode
        self.spent = 0.0  # what its model calls cost: the summarizer's share of llm.max_cost is what is left

    def enrich(self, conn: sqlite3.Connection, progress: Progress) -> Enrichment:
        """Analyse the contents that want it (the manifest is reached through the run setup, on this thread)."""
        analysis = run_analyzer(self.setup, self.mode, progress=progress)
        self.spent = analysis.cost_usd
        return Enrichment("analysis", analysis.to_dict(), wrote=analysis.analyzed > 0)


def model_passes(setup: RunSetup, mode: str) -> list[Enricher]:
    """Return the index's model enrichers for an analyzer mode (none for `profile`): the analyzer, then the
    summarizer. The index renders what they change and embeds each changed card once, after both."""
    if mode == "profile":
        return []
    from dsstar_lake.enrichers.summarizer_pass import SummarizerPass

    analyzer = AnalyzerPass(setup, mode)
    return [analyzer, SummarizerPass(setup, lambda: analyzer.spent)]
