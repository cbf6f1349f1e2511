"""Ask and resume: set up a run (settings, model, sandbox, context, record), drive the loop, build the Answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from dslake_index.progress import Progress

from dsstar_lake.agent import context
from dsstar_lake.agent.errors import LakeModified
from dsstar_lake.agent.events import EventStream, recorder
from dsstar_lake.agent.menu import candidates
from dsstar_lake.agent.planner import check_first_step
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState, Answer
from dsstar_lake.base.errors import BudgetExceeded, CatalogError, DslakeError, UsageError
from dsstar_lake.runs.record import RunRecord
from dsstar_lake.runs.setup import CACHE_NAME, RunSetup, run_setup

if TYPE_CHECKING:
    from pathlib import Path

    from dsstar_lake.sandbox import Sandbox

__all__ = ["CACHE_NAME", "ask", "build_answer", "files_used", "resume"]
# Model settings a resumed run keeps, however they were given (flags, environment, config files).
RESUME_KEYS = ("llm.provider", "llm.model", "llm.models", "llm.base_url", "llm.manual_dir", "llm.scripted_file",
               "llm.cache", "llm.max_llm_calls", "llm.max_cost")
Pick = Callable[[str, list[dict[str, str]]], "int | None"]  # a person picking a reading: see Agent.clarify


def _quiet(event: str, data: dict[str, Any]) -> None:
    pass


def ask(
    setup: RunSetup,
    question: str,
    files: list[str] | None = None,
    progress: Progress | None = None,
    clarify: Pick | None = None,
) -> Answer:
    """Answer a question over the lake with a new run; files = exactly these context files (no retrieval).

    clarify: a person's pick between readings that give different answers (Agent.clarify), else the model's.
    """
    setup.require_writable("`ask` keeps its run record in it")
    setup.access.check_not_caught()  # --files reads no entry first: refused here, before a run folder exists
    question = (question or "").strip()
    if not question:
        raise UsageError("the question is empty")
    started = time.perf_counter()
    settings = setup.settings
    setup.check_model()
    check_first_step(settings.agent.first_step)  # a wrong setting is one clear error before a run folder exists
    root = _lake_root(setup)
    kept = {**{key: settings[key] for key in RESUME_KEYS}, **setup.overrides}
    progress = progress or _quiet
    entries = context.given_files(setup, list(files)) if files else None
    if entries is None:
        setup.connection()  # a missing catalog is one clear error before a run folder exists
    record = RunRecord.create(setup.catalog_dir, {
        "question": question, "lake": root, "catalog": str(setup.catalog_dir),
        "files": list(files) if files else None, "overrides": kept,
    })
    progress("run", {"run_id": record.id, "folder": str(record.folder)})
    sandbox = _sandbox_meanwhile(setup, record.work, _scripts_ahead(setup))
    try:
        state = _context(setup, record, question, entries, progress, files)
    except BaseException:
        sandbox.add_done_callback(_close_made)  # the script started ahead for this run is not needed
        raise
    return _drive(setup, record, state, progress, not files, started, clarify, sandbox)


def _close_made(made: Future[Sandbox]) -> None:
    if made.exception() is None:
        made.result().close()


def _context(setup: RunSetup, record: RunRecord, question: str, entries: list | None, progress: Progress,
             files: list[str] | None) -> AgentState:
    """Retrieve the run's context (or take the given files'), record it and return the run's first state."""
    settings = setup.settings
    selected_by, selection = "", []
    if entries is None:
        # The menu: more candidates than a prompt describes; the selector chooses among them (agent/selector.py).
        k = max(settings.agent.menu_k, settings.retrieve.k)
        entries = candidates(setup.retriever().search(question, k))
        record.event("retrieval", query=question, k=k, entries=[e.path for e in entries],
                     scores=[e.score for e in entries])
        if not entries:
            record.set_status("failed", "the catalog has no entries")
            raise CatalogError(f"the catalog {setup.catalog_dir} has no entries to answer from",
                               hint="run `dslake index LAKE` first", api_hint="run lake.index() first")
    else:
        record.event("context_given", entries=[e.path for e in entries])
        selected_by, selection = "given", [{"path": e.path, "reason": "given"} for e in entries]
    progress("context", {"entries": [e.path for e in entries], "given": bool(files)})
    state = AgentState(question=question, guidelines=settings.agent.guidelines, entries=entries,
                       selected_by=selected_by, selection=selection)
    record.save_state(state.to_dict())
    return state


def resume(setup: RunSetup, run_id: str, progress: Progress | None = None) -> Answer:
    """Continue an interrupted run from its last completed round; a finished run returns its answer.

    The run keeps the settings it was started with (its record's overrides); setup's own overrides win.
    """
    setup.require_writable("`runs resume` adds to the run's record in it")
    setup.access.check_not_caught()  # before the run's record is touched: it would read the changed catalog
    record = RunRecord.open(setup.catalog_dir, run_id)
    meta = record.meta()
    stored = record.answer()
    if meta.get("status") == "done" and stored:
        return Answer.from_dict(stored)
    if meta.get("status") == "aborted":
        raise UsageError(f"run {record.id} was aborted ({meta.get('error')}) and cannot be resumed",
                         hint="ask the question again")
    saved = record.load_state()
    state = AgentState.from_dict(saved) if saved else None
    if state is None:
        raise UsageError(f"run {record.id} stopped before its data context was saved; it cannot be resumed",
                         hint="ask the question again")
    given = setup.overrides
    setup = run_setup(setup.access, {**(meta.get("overrides") or {}), **given}, provider=setup.provider)
    setup.check_model()
    _lake_root(setup)
    record.set_status("running")
    record.event("resume", phase=state.phase, round=state.round, overrides=given or {})
    progress = progress or _quiet
    progress("run", {"run_id": record.id, "folder": str(record.folder), "resumed": True})
    return _drive(setup, record, state, progress, not meta.get("files"), time.perf_counter())


def _lake_root(setup: RunSetup) -> str:
    return setup.lake_location("answering")


# Model calls before a run's first script: the planner's first step, then the coder's script.
CALLS_BEFORE_A_SCRIPT = 2


def _scripts_ahead(setup: RunSetup) -> int:
    """Return how many scripts' sandboxes to start while the context is retrieved: sandbox.prestart, capped by what
    the run can reach.

    A run whose call budget ends before its first script (llm.max_llm_calls under 2) runs none; any other run that
    reaches its first script runs at least two (the round's and the final one, which runs over budget). A person
    answering (the manual provider) takes minutes per answer: each script's sandbox starts when it goes, as a
    sandbox started ahead would only hold its memory meanwhile.
    """
    settings = setup.settings
    if _person_answers(setup):
        return 0
    calls = settings.llm.max_llm_calls
    if 0 < calls < CALLS_BEFORE_A_SCRIPT:
        return 0
    return min(max(0, settings.sandbox.prestart), 2)


def _person_answers(setup: RunSetup) -> bool:
    from dsstar_lake.llm.registry import UNPRICED  # the providers where a person answers

    name = setup.provider.name if setup.provider is not None else setup.settings.llm.provider
    return name in UNPRICED


def _sandbox_meanwhile(setup: RunSetup, work: Path, ahead: int) -> Future[Sandbox]:
    """Start making the run's sandbox in a thread, while the question is embedded and the context retrieved.

    Making it probes bubblewrap and the cgroups (processes), walks the lake for the names to blank and asks the
    interpreter which packages import (a process): ~1 s of wall time on a loaded 2-core machine when done in
    turn, and none of it depends on the question. Nothing of the sandbox's isolation changes: the same Sandbox,
    made earlier. Its errors (a backend that cannot work here) are raised where it is first needed, as before.
    The first `ahead` scripts' own sandboxes (at most two) are started here too (Sandbox.warm), so their interpreters
    import sandbox.preload while the question is still being embedded; the run then keeps one started ahead of each
    script (keep_warm). None for a run that cannot reach a script (_scripts_ahead).
    """
    made: Future[Sandbox] = Future()

    def make() -> None:
        sandbox = None
        try:
            sandbox = setup.sandbox()
            if sandbox.backend == "bwrap":
                sandbox.masks  # noqa: B018  (cached: walked once, blanked under every script's bubblewrap)
            sandbox.keep_warm = ahead > 0
            if ahead > 0:
                sandbox.warm(work)
            sandbox.packages()  # cached per interpreter: the coder's prompt reads it
            # The second script's sandbox too, now rather than when the first script goes: its pandas import then
            # overlaps the retrieval as well, not only the first script, which (started ahead) takes ~0.1 s. Before
            # the result is set: a run that fails meanwhile closes the sandbox once it is made, spares and all.
            for _ in range(ahead - 1):
                sandbox.warm(work)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            if sandbox is not None:
                sandbox.close()
            made.set_exception(exc)
            return
        made.set_result(sandbox)
        _import_ahead()

    threading.Thread(target=make, name="dslake-sandbox", daemon=True).start()
    return made


def _import_ahead() -> None:
    """Import what the run imports only once the context is in: the loop's modules (its roles, prompts, readings).

    Done in the sandbox's thread while the question is embedded. A failure is left for the run's own import to raise.
    """
    try:
        from dsstar_lake.agent import loop  # noqa: F401
    except Exception:  # noqa: BLE001 - see above
        pass


def _drive(setup: RunSetup, record: RunRecord, state: AgentState, progress: Progress, retrieve: bool,
           started: float, clarify: Pick | None = None, sandbox_made: Future[Sandbox] | None = None) -> Answer:
    """Run the loop and turn how it ended into the run's status, answer.json and the returned Answer."""
    sandbox = sandbox_made.result() if sandbox_made is not None else setup.sandbox()
    # Each script's sandbox is started while the one before runs (close() ends the rest), unless a person answers.
    sandbox.keep_warm = not _person_answers(setup)
    try:
        return _solve(setup, record, state, progress, started, clarify, retrieve, sandbox)
    finally:
        sandbox.close()
        if sandbox.warms:
            record.event("sandboxes_ahead", **sandbox.ahead)


def _solve(setup: RunSetup, record: RunRecord, state: AgentState, progress: Progress, started: float,
           clarify: Pick | None, retrieve: bool, sandbox: Sandbox) -> Answer:
    """Drive the loop with the run's sandbox; see _drive."""
    from dsstar_lake.agent.loop import solve

    limits = setup.settings.agent
    events = EventStream([recorder(record), progress])
    if sandbox.warning:
        events.emit("warning", text=sandbox.warning)
    llm = setup.llm(record.record_call, record.id)
    agent = Agent(
        llm=llm, sandbox=sandbox, record=record, retriever=setup.retriever() if retrieve else None,
        lookup=lambda rel: context.read_entry(setup, rel),
        max_rounds=max(1, limits.max_rounds), max_debug=max(0, limits.max_debug), k_extra=max(0, limits.k_extra),
        max_result_chars=limits.max_result_chars, summarize_over_chars=limits.summarize_over_chars,
        description_chars=limits.description_chars, context_tokens=max(0, limits.context_tokens),
        menu_k=max(1, limits.menu_k), fallback_k=max(1, setup.settings.retrieve.k),
        view_cap_tokens=max(0, limits.view_cap_tokens), first_step=check_first_step(limits.first_step), events=events,
        spent_before=dict(state.spent), started=started, clarify=clarify,
    )
    record.event("start", phase=state.phase, round=state.round, backend=sandbox.backend,
                 limits={k: sandbox.protections[k] for k in ("memory", "processes", "disk")},
                 provider=llm.provider.name, models={r: llm.model_for(r) for r in
                                                     ("selector", "planner", "coder", "verifier", "router", "debugger",
                                                      "finalyzer", "chooser")})
    try:
        with llm:
            state = solve(agent, state)
    except LakeModified as exc:
        if exc.catalog_paths:  # first: whatever else fails now, the catalog stays refused until it is rebuilt
            setup.access.mark_caught(record.id, exc.catalog_paths)
        _stop(agent, record, state, "aborted", str(exc))
        _clean_work(record)
        raise
    except DslakeError as exc:
        # A provider that failed for good, a budget spent before the answer was printed (or a model not configured
        # after all): resumable from the last round.
        answer = _stop(agent, record, _saved(record, state), "interrupted", str(exc),
                       stop_reason="budget" if isinstance(exc, BudgetExceeded) else "interrupted")
        progress("interrupted", {"error": str(exc), "run_id": record.id})
        return answer
    except KeyboardInterrupt:
        _stop(agent, record, _saved(record, state), "interrupted", "interrupted by the user")
        raise
    except BaseException as exc:  # a bug in dslake: record it, then let it surface
        record.event("error", error=f"{type(exc).__name__}: {exc}")
        record.set_status("failed", f"{type(exc).__name__}: {exc}")
        raise
    _clean_work(record)
    answer = build_answer(record, state, agent.spent())
    record.write_answer(answer.to_dict())
    record.event("done", value=answer.text, verified=answer.verified, stop_reason=answer.stop_reason)
    record.set_status("done", answer.error)
    progress("done", {"answer": answer})
    return answer


def _saved(record: RunRecord, state: AgentState) -> AgentState:
    """Return the state of the last completed round (the one saved), else the state in hand."""
    saved = record.load_state()
    return AgentState.from_dict(saved) if saved else state


def _clean_work(record: RunRecord) -> None:
    """Empty a finished run's work folder but for its figures: scripts and outputs are in the run record."""
    from dsstar_lake.sandbox.figures import read_figure
    from dsstar_lake.sandbox.workfolder import clean

    kept = clean(record.work, lambda path: read_figure(path.parent, path.name) is not None)
    record.event("work_cleaned", kept=kept)


def _stop(agent: Agent, record: RunRecord, state: AgentState, status: str, error: str,
          stop_reason: str | None = None) -> Answer:
    """Record a run that ended early: the state keeps what was spent, answer.json says why (`stop_reason`, the
    status unless told: "budget" for a resumable run that spent its budget)."""
    record.event(status, error=error, round=state.round)
    state.spent = agent.spent()
    if status == "interrupted":
        record.save_state(state.to_dict())
    answer = build_answer(record, state, state.spent, error=error, resumable=status == "interrupted")
    answer.stop_reason = stop_reason or status
    record.write_answer(answer.to_dict())
    record.set_status(status, error)
    return answer


def build_answer(record: RunRecord, state: AgentState, spent: dict[str, float], error: str | None = None,
                 resumable: bool = False) -> Answer:
    """Build the Answer (and answer.json) from the final state."""
    return Answer(
        text=state.value,
        run_id=record.id,
        question=state.question,
        files_used=files_used(state),
        context=[e.path for e in state.entries],
        rounds=state.round + 1,
        verified=state.verified,
        re_retrievals=len(state.re_retrievals),
        backtracks=state.backtracks,
        input_tokens=int(spent.get("input_tokens", 0)),
        output_tokens=int(spent.get("output_tokens", 0)),
        llm_calls=int(spent.get("llm_calls", 0)),
        cost_usd=round(float(spent.get("cost_usd", 0.0)), 6),
        seconds=round(float(spent.get("seconds", 0.0)), 2),
        stop_reason=state.stop_reason,
        error=error or state.error,
        resumable=resumable,
        plan=list(state.plan),
        assumptions=list(state.assumptions),
        alternatives=[dict(a) for a in state.alternatives],
        trace_problems=list(state.trace_problems),
        stated=[dict(a) for a in state.stated],
        chosen=dict(state.chosen),
        selection=[dict(item) for item in state.selection],
        selected_by=state.selected_by,
        readings=[r.to_dict() for r in state.readings],
        overridden=dict(state.overridden),
    )


def files_used(state: AgentState) -> list[str]:
    """Return the lake files the answer rests on: what the final and the last round's scripts reported reading.

    The final script often just prints what the last round computed, so both count.
    """
    return list(dict.fromkeys(state.final_reads + state.round_reads))
