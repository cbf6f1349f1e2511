"""`dslake index --analyzer llm|auto`: a model's summary for entries whose cards carry no words a question uses.

After the profilers (and the paper's analyzer) ran, pick the wordless entries (index/wordless.py: a header-less
numeric table, columns named by codes, a fixed-format orbit file), ask the `summarizer` role for five lines
(what is measured, units, period, the field's names for the codes, questions it answers) written from the
entry's description, and store them by content hash in the manifest's `summaries` table. The index then appends
them to those entries' cards (re-embedding only those) and descriptions, marked as a model's. A failed or empty
summary leaves the entry as it was; a stored one is reused by every later index, without a call.

The cost is estimated before any call and checked against llm.max_cost (`--max-cost`): over it, nothing is
asked. An index runs unattended (jobs, `--watch`), so it never stops to ask for a confirmation.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from dslake_index.enrich import Enrichment
from dslake_index.front_door import EnrichmentStore
from dslake_index.wordless import DESCRIPTION_HEAD, FIELDS, without_summary

from dsstar_lake.base.errors import BudgetExceeded, DslakeError
from dsstar_lake.base.untrusted import frame, quote, visible

if TYPE_CHECKING:
    from collections.abc import Callable

    from dslake_index.progress import Progress

    from dsstar_lake.base.settings import Settings
    from dsstar_lake.llm import LLM
    from dsstar_lake.runs.setup import RunSetup

ROLE = "summarizer"
RUN_PREFIX = "index-summarizer-"
DESCRIPTION_CHARS = 6000  # of the entry's description shown to the model (head and tail)
OUTPUT_TOKENS = 250  # the estimate's guess at one answer: five lines (a capable model wrote 252 on average)
FIELD_CHARS = 300  # longest field kept (a summary is at most five of them)
_FIELD = re.compile(r"^[\s>*_#-]*(" + "|".join(FIELDS) + r")[*_\s]*:[*_\s]*(.*)$", re.I)


def _quiet(event: str, data: dict[str, Any]) -> None:
    pass


@dataclass
class Target:
    """One content hash to summarise, through the entry that shows it."""

    hash: str
    entry_id: str
    path: str
    prompt: str


@dataclass
class SummarizerReport:
    """What one summarizer pass did (and what it expected to cost)."""

    model: str = ""
    wanted: int = 0  # wordless entries without a summary yet
    written: int = 0
    failed: int = 0  # no usable answer: the entry stays as it was
    not_started: int = 0  # left for the next index (budget, provider failure)
    stopped: str | None = None
    estimate: dict[str, Any] = field(default_factory=dict)
    llm_calls: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    run_folder: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return asdict(self)


def source_for(model: str) -> str:
    """Return the `source` a summary by this model is stored with."""
    return f"llm:{model}"


def _failed(source: str) -> str:
    return f"failed:{source}"


def prompt_for(path: str, description: str) -> str:
    """Return the summarizer's prompt for one entry (its path as a literal, its description framed as data)."""
    from dsstar_lake.agent.execute import cap
    from dsstar_lake.agent.prompts import fill

    shown = f"data/{path}"
    text = cap(without_summary(description, DESCRIPTION_HEAD), DESCRIPTION_CHARS)
    return fill(ROLE, path=quote(shown), description=frame(text, "data", path=shown))


def plan_targets(store: EnrichmentStore, source: str) -> list[Target]:
    """Return the wordless entries' contents that have no summary yet (a failure by another model is retried)."""
    done = store.stored_summaries()
    targets: dict[str, Target] = {}
    for entry_id, _, path, content_hash in store.representative_hashes():
        if content_hash is None or content_hash in targets:
            continue  # copies share one summary
        previous = done.get(content_hash)
        if previous is not None and (previous[0] != "" or previous[1] == _failed(source)):
            continue
        if not store.is_wordless(content_hash):
            continue
        description = store.entry_description(entry_id) or ""
        targets[content_hash] = Target(content_hash, entry_id, path, prompt_for(path, description))
    return list(targets.values())


def parse_summary(text: str | None) -> str | None:
    """Return the answer's five fields as canonical `Field: value` lines, or None when it has no `Measures`.

    Bullets and bold around the labels are tolerated; each value is one line, control characters escaped and
    capped, so a model's answer can only ever add these labelled lines to a card.
    """
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        match = _FIELD.match(line)
        if not match:
            continue
        name = next(f for f in FIELDS if f.lower() == match[1].lower())
        value = " ".join(visible(match[2]).split()).strip("*_ ")
        if value and value not in ("...", "…") and name not in found:
            found[name] = value if len(value) <= FIELD_CHARS else value[: FIELD_CHARS - 1] + "…"
    if "Measures" not in found:
        return None
    return "\n".join(f"{name}: {found[name]}" for name in FIELDS if name in found)


def estimate(settings: Settings, provider_name: str, model: str, targets: list[Target]) -> dict[str, Any]:
    """Return the expected tokens and cost of summarising the targets, and the line that says it."""
    from dsstar_lake.llm.base import estimate_tokens
    from dsstar_lake.llm.record import cost_usd, price_for
    from dsstar_lake.llm.registry import UNPRICED

    tokens_in = sum(estimate_tokens(t.prompt) for t in targets)
    tokens_out = OUTPUT_TOKENS * len(targets)
    price = (0.0, 0.0) if provider_name in UNPRICED else price_for(settings.llm.pricing, model)
    usd = cost_usd(price, tokens_in, tokens_out)
    cost = f"≈ ${usd:.4f}" if usd is not None else f"unpriced (no llm.pricing entry for {model})"
    line = (f"summarizer: {len(targets)} entries without words to summarise with {model}: "
            f"~{tokens_in:,} input + ~{tokens_out:,} output tokens, {cost}")
    return {"entries": len(targets), "input_tokens": tokens_in, "output_tokens": tokens_out,
            "usd": None if usd is None else round(usd, 6), "line": line}


def over_budget(settings: Settings, usd: float | None, spent: float) -> str | None:
    """Return why the pass must not start (its estimate is past what llm.max_cost leaves), or None."""
    limit = settings.llm.max_cost
    if limit <= 0 or usd is None or usd <= limit - spent:
        return None
    return (f"budget: the estimate ${usd:.4f} is over llm.max_cost (${max(0.0, limit - spent):.4f} left); nothing "
            "was asked: raise --max-cost, or name a cheaper llm.models.summarizer")


def summarize_entries(store: EnrichmentStore, llm: LLM, targets: list[Target], source: str, jobs: int,
              report: SummarizerReport, progress: Progress = _quiet,
              record: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Ask for each target's summary in a bounded thread pool and store each as it lands (or its failure).

    A budget or provider failure stops the pass; what is stored stays, and the rest waits for the next index.
    """
    stop = threading.Event()
    note = record or (lambda data: None)

    def work(target: Target) -> str | None:
        if stop.is_set():
            raise _NotStarted
        return llm.complete(ROLE, target.prompt).text

    progress("summarize", {"total": len(targets)})
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="summarizer") as pool:
        futures = {pool.submit(work, t): t for t in targets}
        try:
            for future in as_completed(futures):
                target = futures[future]
                try:
                    text = parse_summary(future.result())
                except _NotStarted:
                    continue
                except DslakeError as exc:
                    stop.set()
                    if report.stopped is None:
                        kind = "budget" if isinstance(exc, BudgetExceeded) else "provider"
                        report.stopped = f"{kind}: {exc.message}"
                    note({"type": "summary", "path": target.path, "hash": target.hash, "ok": False,
                          "stopped": str(exc)})
                    continue
                store.store_summary(target.hash, text or "", source if text else _failed(source))
                if text:
                    report.written += 1
                else:
                    report.failed += 1
                    report.failures.append((target.path, "no 'Measures:' line in the answer"))
                note({"type": "summary", "path": target.path, "hash": target.hash, "ok": bool(text),
                      "chars": len(text or "")})
                progress("summarized", {"path": target.path, "ok": bool(text)})
        except BaseException:
            stop.set()  # Ctrl-C: calls in flight finish, no new one starts; stored rows stay
            raise
    report.not_started = report.wanted - report.written - report.failed


class _NotStarted(Exception):
    """A target skipped because the pass was stopping."""


def run_summarizer(setup: RunSetup, progress: Progress = _quiet, spent: float = 0.0) -> SummarizerReport:
    """Plan, estimate and (within llm.max_cost less `spent`) summarise the wordless entries that want it.

    The pass's model calls and outcomes go to `<catalog>/runs/index-summarizer-<id>/trace.jsonl`.
    """
    from dsstar_lake.llm.record import JsonlRecorder
    from dsstar_lake.llm.registry import model_for, provider_name
    from dsstar_lake.runs.record import new_run_id

    store, settings, provider = setup.access.enrichment_store(), setup.settings, setup.provider
    started = time.perf_counter()
    model = model_for(settings, ROLE)
    source = source_for(model)
    targets = plan_targets(store, source)
    report = SummarizerReport(model=model, wanted=len(targets))
    if not targets:
        return report
    name = provider.name if provider is not None else provider_name(settings)
    report.estimate = estimate(settings, name, model, targets)
    progress("summarize_estimate", report.estimate)
    report.stopped = over_budget(settings, report.estimate["usd"], spent)
    if report.stopped:
        report.not_started = len(targets)
        return report
    folder = setup.catalog_dir / "runs" / f"{RUN_PREFIX}{new_run_id()}"
    folder.mkdir(parents=True, exist_ok=True)
    trace = JsonlRecorder(folder / "trace.jsonl")
    trace.write({"type": "start", "targets": len(targets), "estimate": report.estimate})
    limit = settings.llm.max_cost
    budget = settings.with_overrides({"llm.max_cost": max(1e-9, limit - spent)}) if limit > 0 else settings
    jobs = settings.index.jobs or (os.cpu_count() or 1)
    with setup.llm(trace, folder.name, settings=budget) as llm:
        summarize_entries(store, llm, targets, source, jobs, report, progress, trace.write)
        totals = llm.totals
    report.llm_calls = totals.provider_calls
    report.cost_usd = round(totals.cost_usd, 6)
    report.seconds = round(time.perf_counter() - started, 3)
    report.run_folder = str(folder)
    trace.write({"type": "done", **{k: v for k, v in report.to_dict().items() if k != "failures"}})
    return report


class SummarizerPass:
    """The summarizer as an index enricher (index/enrich.py), after the analyzer (whose words its wordless test
    then sees): it stores summaries and marks their folders dirty."""

    def __init__(self, setup: RunSetup, spent_before: Callable[[], float]) -> None:
        self.setup = setup
        self.spent_before = spent_before  # what the passes before it spent of llm.max_cost

    def enrich(self, conn: sqlite3.Connection, progress: Progress) -> Enrichment:
        """Summarise the wordless entries within what the passes before it left of llm.max_cost."""
        report = run_summarizer(self.setup, progress, spent=self.spent_before())
        return Enrichment("summaries", report.to_dict(), wrote=report.written > 0)
