"""Router: add a step, go back to a wrong step, or say which data is missing (G.5, plus re-retrieval)."""

from __future__ import annotations

import re
from dataclasses import replace

from dsstar_lake.agent.parse import Route, parse_route, reason_of
from dsstar_lake.agent.planner import plan_text
from dsstar_lake.agent.prompts import fill, printed
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState


def step_options(n_steps: int) -> str:
    """Return 'Step 1', 'Step 1, Step 2', ... for the prompt."""
    return ", ".join(f"'Step {i}'" for i in range(1, n_steps + 1)) or "'Step 1'"


def searched(state: AgentState) -> str:
    """Return what re-retrievals looked for and what they added, and the files scripts read themselves."""
    lines = []
    for item in state.re_retrievals:
        added = ", ".join(f"data/{p}" for p in item["added"])
        what = f"added {added}" if added else "found nothing new (do not ask for it again)"
        closest = item.get("closest") or []
        if not added and closest:
            what = (f"found nothing new: the closest entries not yet given ({', '.join(f'data/{p}' for p in closest)})"
                    " carry none of the words asked for, so the lake may not hold this data (do not ask for it again)")
        query = item.get("query", "")
        looked = f" (searched for {query!r})" if query and query != item["missing"] else ""
        lines.append(f"- after round {item['round'] + 1}, missing {item['missing']!r}{looked}: {what}")
    read = [e.path for e in state.entries if e.source == "read"]
    if read:
        lines.append("- files the scripts read themselves, now among the candidates: "
                     + ", ".join(f"data/{p}" for p in read))
    return "\n".join(lines) or "(no search for missing data yet)"


def decide(agent: Agent, state: AgentState, round_no: int) -> Route:
    """Return the route; an unreadable answer counts as Add Step."""
    n = len(state.plan)
    prompt = fill("router", question=state.question, plan=plan_text(state.plan),
                    result=printed(state.result), searched=searched(state),
                    step_options=step_options(n), **agent.data(state))
    expected = f"{step_options(n)}, 'Add Step', or 'Missing data: <description>'"
    return agent.ask("router", prompt, lambda text: _with_reason(parse_route(text, n), text), expected,
                     lambda text: Route("add"), round_no)


def _with_reason(route: Route | None, text: str) -> Route | None:
    """Keep what the router said about a wrong step: the planner is told it after the backtrack."""
    if route is None or route.kind != "step":
        return route
    said = re.sub(r"^\W*step\s*\w+\W*", "", text.strip(), flags=re.I)  # the answer itself, 'Step 2', is known
    return replace(route, reason=reason_of(said))
