"""Coder: implement the first step, then rewrite the whole script from the previous one plus the new step (G.3)."""

from __future__ import annotations

from dsstar_lake.agent import context
from dsstar_lake.agent.parse import extract_code
from dsstar_lake.agent.planner import plan_text
from dsstar_lake.agent.prompts import fill
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.untrusted import fence

EXPECTED = "a single markdown Python code block (```python ... ```)"


def raw_code(text: str) -> str:
    """Fall back to the answer itself as the script; if it is not Python, the debugger gets the error."""
    return (text or "").strip() + "\n"


def first_script(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return s_0, the implementation of the first step."""
    prompt = fill("coder_first", plan=plan_text(state.plan), example=context.example_path(state.entries),
                    **agent.data(state), **agent.scripting(state))
    return agent.ask("coder", prompt, extract_code, EXPECTED, raw_code, round_no)


def next_script(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return s_{k+1}: the base script s_k rewritten to implement the plan up to its new last step."""
    prompt = fill("coder_next", base_code=fence(state.code), previous_plan=plan_text(state.plan[:-1]),
                    step=state.plan[-1], example=context.example_path(state.entries), **agent.data(state),
                    **agent.scripting(state))
    return agent.ask("coder", prompt, extract_code, EXPECTED, raw_code, round_no)
