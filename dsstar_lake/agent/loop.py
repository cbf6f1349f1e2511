"""The DS-STAR loop (the paper's Algorithm 1), with re-retrieval when the router says data is missing."""

from __future__ import annotations

from dsstar_lake.agent import (
    chooser,
    coder,
    final_check,
    finalyzer,
    planner,
    reading_record,
    readings,
    router,
    selector,
    verifier,
    view,
)
from dsstar_lake.agent.execute import observation, run_with_debugging
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.errors import BudgetExceeded


def solve(agent: Agent, state: AgentState) -> AgentState:
    """Run the loop from wherever the state stands (a fresh run, or a resumed one) until it is done.

    BudgetExceeded stops refining: the run goes back to its last completed round and finalizes from it.
    Any other error propagates; the state saved at the last completed round is where a resume starts.
    """
    try:
        if state.phase == "start":
            first_round(agent, state)
        while state.phase == "verify":
            refine(agent, state)
    except BudgetExceeded as exc:
        agent.events.emit("budget", round=state.round, error=str(exc))
        saved = agent.record.load_state()
        state = AgentState.from_dict(saved) if saved else state  # back to the last completed round
        state.stop_reason, state.error = "budget", str(exc)
        if state.round < 0:
            state.phase = "done"
            agent.checkpoint(state)
            return state
        state.phase = "finalize"
        agent.checkpoint(state)
        agent.over_budget = True
        finalize(agent, state, max_debug=0)
        return state
    if state.phase == "finalize":
        finalize(agent, state)
    return state


def first_round(agent: Agent, state: AgentState) -> None:
    """Choose the files (unless they were given), plan the first step (agent.first_step), implement and run it."""
    if not state.selected_by and agent.retriever is not None:
        selector.select(agent, state)
        agent.checkpoint(state)
    state.plan = [planner.first_step(agent, state, 0)]
    _step_chosen(agent, state, 0)
    execute_round(agent, state, coder.first_script(agent, state, 0), 0)


def refine(agent: Agent, state: AgentState) -> None:
    """Verify round k; if insufficient, route, plan the next step, rewrite and run the script (round k+1)."""
    k = state.round
    verdict = verifier.verify(agent, state, k)
    ok = verdict.sufficient
    reading_record.note(state.readings, verdict.readings, f"verifier round {k + 1}")
    if ok and state.result_ok:
        # Values the script printed as other readings (or figures the data states) count once the verifier has
        # accepted its round: a rejected script's values are not readings of the question.
        printed = readings.parse_readings(state.result, f"printed by the round {k + 1} script")
        reading_record.note(state.readings, printed, f"script round {k + 1}")
    state.assumptions, state.alternatives = readings.to_record(verdict.readings)
    state.stated = readings.stated_record(verdict.readings)
    agent.events.emit("verdict", round=k, sufficient=ok, assumptions=state.assumptions,
                      alternatives=state.alternatives, stated=state.stated)
    if ok or k + 1 >= agent.max_rounds:
        state.verified = ok
        state.stop_reason = "verified" if ok else "max_rounds"
        state.phase = "finalize"
        agent.checkpoint(state)
        return
    route = router.decide(agent, state, k)
    agent.events.emit("route", round=k, route=route.to_dict())
    if route.kind == "step" and route.step is not None:
        before, why = list(state.plan), _why(route.reason, verdict.reason)
        backtrack(agent, state, route.step, why, k)
        # The removed steps' assumptions were disproved with them.
        said = f"the router judged step {route.step} wrong after round {k + 1}" + (f": {why}" if why else "")
        for removed in before[route.step - 1:]:
            reading_record.reject_step(state.readings, removed, said)
    elif route.kind == "missing" and route.missing:
        widen(agent, state, route.missing, k)
    elif route.kind == "missing":
        agent.events.emit("re_retrieval", round=k, missing="", added=[], skipped="no description of what is missing")
    state.plan.append(planner.next_step(agent, state, k + 1))
    _step_chosen(agent, state, k + 1)
    # Every step was removed: there is no base code, and the new step is written afresh like a first one.
    write = coder.next_script if len(state.plan) > 1 or state.code else coder.first_script
    execute_round(agent, state, write(agent, state, k + 1), k + 1)


def backtrack(agent: Agent, state: AgentState, wrong_step: int, why: str, k: int) -> None:
    """Remove the wrong step and those after it, keeping why; the coder's base is the last kept step's script."""
    before, kept = list(state.plan), wrong_step - 1
    state.plan = state.plan[:kept]  # truncate and resample; never repair the wrong step
    state.removed.append({"round": k, "steps": before[kept:], "why": why})
    base = state.step_scripts[kept - 1] if 0 < kept <= len(state.step_scripts) else ""
    # A state saved before step scripts were kept has none: its last script stays the base, as it was then.
    if base or kept == 0:
        state.code = base
    state.step_scripts = state.step_scripts[:kept]
    state.backtracks += 1
    agent.events.emit("backtrack", round=k, wrong_step=wrong_step, plan_before=before,
                      plan_after=list(state.plan), why=why, base=f"step {kept}" if base else "none")


def _why(route_reason: str, verdict_reason: str) -> str:
    """Say why a step was removed: the router's words, then the verifier's, whichever the run has."""
    parts = [f"router: {route_reason}" if route_reason else "", f"verifier: {verdict_reason}" if verdict_reason else ""]
    return "; ".join(p for p in parts if p)


def widen(agent: Agent, state: AgentState, missing: str, k: int) -> None:
    """Choose again, from a wider menu, the data the router says is missing (agent/selector.py)."""
    if agent.retriever is None:
        agent.events.emit("re_retrieval", round=k, missing=missing, added=[],
                          skipped="the context was given (--files); nothing is retrieved")
        return
    selector.select_missing(agent, state, missing, k)


def take_in_reads(agent: Agent, state: AgentState, k: int) -> None:
    """Add to the context, as menu lines, the catalog entries of lake files the scripts read but were not given.

    A model that finds a file by listing data/ would otherwise not know it is catalogued; a read may be a peek (a
    listing, five lines), so the file joins as its line, and a step that names it brings its whole description. A
    family member brings its family's entry. At most k_extra entries a round, in first-read order.
    """
    if agent.lookup is None:
        return
    paths, ids = {e.path for e in state.entries}, set(state.entry_ids())
    added = []
    for rel in state.reads:
        if rel in paths or len(added) >= agent.k_extra:
            continue
        entry = agent.lookup(rel)
        if entry is None or entry.entry_id in ids:
            continue
        ids.add(entry.entry_id)
        entry.level = "line"
        state.entries.append(entry)
        added.append(entry.path)
    if added:
        agent.events.emit("read_added", round=k, added=added)


def execute_round(agent: Agent, state: AgentState, code: str, k: int) -> None:
    """Run round k's script (debugging it if it fails) and checkpoint the state."""
    code, result = run_with_debugging(agent, state, code, f"round_{k:02d}", k)
    state.code, state.result, state.result_ok = code, observation(result, agent.max_result_chars), result.ok
    steps = len(state.plan)
    state.step_scripts = (state.step_scripts + [""] * steps)[: steps - 1] + [code]
    state.round_reads = list(result.reads)
    take_in_reads(agent, state, k)
    state.round, state.phase = k, "verify"
    agent.checkpoint(state)
    agent.events.emit("round", round=k, ok=result.ok, plan=list(state.plan))


def finalize(agent: Agent, state: AgentState, max_debug: int | None = None) -> None:
    """Have the finalyzer write solution.py, run it, check it changed only the printed form, take its answer."""
    agent.events.emit("finalize", round=state.round)
    record = state.readings
    if not record and (state.assumptions or state.alternatives or state.stated):  # a state saved before the record
        reading_record.note(record, readings.from_record(state.assumptions, state.alternatives, state.stated),
                            f"verifier round {state.round + 1}")
    code, named = finalyzer.final_script(agent, state, state.round, reading_record.noted(record))
    code, result = run_with_debugging(agent, state, code, "solution", state.round, max_debug, last=True)
    agent.record.write_script("solution", code, result)
    state.final_code, state.final_reads = code, list(result.reads)
    reading_record.note(record, named, "finalyzer")
    # Reading lines a script printed are readings, not part of the answer (a scorer reads its last line).
    if result.ok and result.stdout.strip():
        final_printed, shown = readings.split_readings(result.stdout, "printed by the final script")
        reading_record.note(record, final_printed, "final script")
        state.value = shown.strip() or result.stdout.strip()
        final_check.check(agent, state, code, result.stdout)
    else:
        # The last round's output is still the best answer there is; say so.
        shown = readings.split_readings(state.result)[1].strip() if state.result_ok else ""
        state.value = shown or (state.result.strip() if state.result_ok else "")
        failure = f"the final script did not print an answer ({result.describe()})"
        state.error = f"{state.error}; {failure}" if state.error else failure
    settled = reading_record.settle(record, state.value)
    # Readings that give different answers are chosen between by the principles (one call); agreeing ones are not.
    choice = chooser.choose(agent, state, settled, finalyzer.guidelines(state))
    if choice is None:
        reading_record.chosen_as_answer(record, settled)
    else:
        before = state.value
        own = chooser.options(before, settled)[0]
        reading_record.choose(record, settled, choice.number, choice.because, own)
        settled = chooser.apply(state, settled, choice)
        state.chosen = choice.to_record()
        agent.events.emit("chosen", round=state.round, answer_before=before, **state.chosen)
        if not readings.same_value(state.value, before):  # the answer is no longer what the final script printed
            state.overridden = {"by": "chooser", "final_script": before, "answer": state.value,
                                "reason": choice.because}
            agent.events.emit("answer_overridden", round=state.round, **state.overridden)
    state.assumptions, state.alternatives = readings.to_record(settled)
    state.stated = readings.stated_record(settled)
    agent.events.emit("readings", round=state.round, assumptions=state.assumptions,
                      alternatives=state.alternatives, stated=state.stated, chosen=state.chosen,
                      record=reading_record.to_records(record))
    state.phase = "done"
    agent.checkpoint(state)


def _step_chosen(agent: Agent, state: AgentState, k: int) -> None:
    reading_record.note(state.readings, readings.parse_readings(state.plan[-1]), f"planner round {k + 1}")
    agent.events.emit("step", round=k, step=state.plan[-1], plan=list(state.plan))
    # A step that names a file shown only as its line (or brief) makes it whole from here on, for every role.
    named = view.promote(state.entries, view.named_in_step(state.entries, state.plan[-1]))
    if named:
        agent.events.emit("view", round=k, whole=named, why="the step names them")
