"""Planner: propose the first step (agent.first_step), then each next step given the results so far (G.2)."""

from __future__ import annotations

from dsstar_lake.agent.parse import clean_step
from dsstar_lake.agent.prompts import fill, printed, template
from dsstar_lake.agent.readings import split_readings
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.errors import ConfigError

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


# How ambitious the first step is (agent.first_step): the paper's "very simple initial step", or as complete as the
# descriptions allow (a capable model otherwise spends a round, a verifier and a router call, only loading data).
FIRST_STEPS = ("simple", "complete")


def check_first_step(ambition: str) -> str:
    """Return agent.first_step if it is one of FIRST_STEPS; raise the settings error otherwise."""
    if ambition not in FIRST_STEPS:
        raise ConfigError(f"agent.first_step must be one of {', '.join(FIRST_STEPS)}, not {ambition!r}")
    return ambition


def first_step(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return the first step p_0 from the question and the data context, as ambitious as agent.first_step says."""
    ambition = template(f"first_step_{check_first_step(agent.first_step)}").strip()
    prompt = fill("planner_first", question=state.question, ambition=ambition, **agent.data(state))
    return agent.ask("planner", prompt, parse_step, EXPECTED, lambda text: _fallback(state), round_no)


def removed_text(state: AgentState, shown: int = 3) -> str:
    """Return the steps removed as wrong (the last few removals) and why, for the planner."""
    if not state.removed:
        return "(none)"
    lines = []
    for item in state.removed[-shown:]:
        steps = "; ".join(step.splitlines()[0] for step in item["steps"] if step.strip()) or "(no step)"
        lines.append(f"- after round {item['round'] + 1}: {steps}")
        lines.append(f"  Why: {item['why'] or 'the router judged it wrong and gave no reason'}")
    if state.removed[-1]["round"] == state.round:
        lines.append("The results above came from the script that still implemented the removed steps.")
    return "\n".join(lines)


def next_step(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return the next step given the current plan, the last result and the steps removed as wrong."""
    prompt = fill("planner_next", question=state.question, plan=plan_text(state.plan),
                    result=printed(state.result), removed=removed_text(state), **agent.data(state))
    return agent.ask("planner", prompt, parse_step, EXPECTED, lambda text: _fallback(state), round_no)
