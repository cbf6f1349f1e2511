"""Verifier: is the plan, as implemented and run, enough to answer the question? (G.4)"""

from __future__ import annotations

from dsstar_lake.agent.parse import parse_verdict
from dsstar_lake.agent.planner import plan_text
from dsstar_lake.agent.prompts import render
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.untrusted import fence, frame

EXPECTED = "'Yes' or 'No'"


def sufficient(agent: Agent, state: AgentState, round_no: int) -> bool:
    """Return True when the verifier says Yes; an unreadable verdict counts as No (insufficient)."""
    prompt = render("verifier", plan=plan_text(state.plan), code=fence(state.code),
                    result=frame(state.result, "output"), question=state.question)
    return agent.ask("verifier", prompt, parse_verdict, EXPECTED, lambda text: False, round_no)
