"""Finalyzer: turn the last script into one that prints just the answer, in the requested format (G.6)."""

from __future__ import annotations

from dsstar_lake.agent.coder import EXPECTED, raw_code
from dsstar_lake.agent.parse import extract_code
from dsstar_lake.agent.prompts import render, template
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.untrusted import fence, frame


def guidelines(state: AgentState) -> str:
    """Return the formatting guidelines: the user's, else the default (print only the answer)."""
    return state.guidelines.strip() or template("guidelines_default").strip()


def final_script(agent: Agent, state: AgentState, round_no: int) -> str:
    """Return the final solution script."""
    prompt = render("finalyzer", code=fence(state.code), result=frame(state.result, "output"),
                    question=state.question, guidelines=guidelines(state), packages=agent.sandbox.packages(),
                    **agent.data(state))
    return agent.ask("finalyzer", prompt, extract_code, EXPECTED, raw_code, round_no)
