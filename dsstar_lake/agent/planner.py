"""Planner: propose the first simple step, then each next step given the results so far (G.2)."""

from __future__ import annotations

from dsstar_lake.agent.parse import clean_step
from dsstar_lake.agent.prompts import fill
from dsstar_lake.agent.readings import split_readings
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.untrusted import frame

EXPECTED = "one step, in one or two plain sentences, then any 'Assumption: ...' lines"


def plan_text(plan: list[str]) -> str:
    """Return a plan as a numbered list (the paper's '1. {Step 1} ... k. {Step k}')."""
    if not plan:
        return "(no steps yet: the earlier steps were judged wrong and removed)"
    return "\n".join(f"{i}. " + step.replace("\n", "\n   ") for i, step in enumerate(plan, 1))


def parse_step(text: str) -> str | None:
    """Return the step, cleaned, with the planner's Assumption lines under it (they travel with the step)."""
    readings, rest = split_readings(text)
    step = clean_step(rest)
    if step is None:
        return None
    return "\n".join([step, *(f"Assumption: {a}" for a in readings.assumptions)])


def _fallback(state: AgentState) -> str:
    # A neutral step the coder can always implement; its output gives the next round something to go on.
    if not state.plan:
        return "Load the given data files that look relevant to the question and print their first rows and columns."
    return "Print the intermediate results needed to answer the question."


def first_step(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return the first step p_0 from the question and the data context."""
    prompt = fill("planner_first", question=state.question, **agent.data(state))
    return agent.ask("planner", prompt, parse_step, EXPECTED, lambda text: _fallback(state), round_no)


def next_step(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return the next step given the current plan and the last result."""
    prompt = fill("planner_next", question=state.question, plan=plan_text(state.plan),
                    result=frame(state.result, "output"), **agent.data(state))
    return agent.ask("planner", prompt, parse_step, EXPECTED, lambda text: _fallback(state), round_no)
