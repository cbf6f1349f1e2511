"""Debugger: summarise a long error report, then fix the script with the data context (G.7)."""

from __future__ import annotations

from dsstar_lake.agent.coder import EXPECTED, raw_code
from dsstar_lake.agent.parse import extract_code
from dsstar_lake.agent.prompts import fill, printed
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.untrusted import fence


def shorten_error(agent: Agent, bug: str, filename: str, round_no: int) -> str:
    """Return a shorter error report that still says where the error occurred."""
    prompt = fill("debugger_shorten", bug=printed(bug), filename=filename)
    text = agent.ask("debugger", prompt, lambda t: t.strip() or None, "the shortened error report",
                     lambda t: bug, round_no)
    return text


def fix(agent: Agent, state: AgentState, code: str, bug: str, round_no: int) -> str:
    """Return the script revised to fix the error."""
    prompt = fill("debugger_fix", code=fence(code), bug=printed(bug), **agent.data(state),
                    **agent.scripting(state))
    return agent.ask("debugger", prompt, extract_code, EXPECTED, raw_code, round_no)
