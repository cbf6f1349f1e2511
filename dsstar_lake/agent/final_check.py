"""The final script is verified like any other: the finalyzer may change how the answer is printed, not what it is.

The finalyzer rewrites the verified round's script to print just the answer. When the answer it prints is among
what the verified round printed (the same text, or its numbers rounded or as a percentage), only the printed form
changed and nothing more is asked. Otherwise the final script computed something else (a step dropped, a filter
changed): its code and output go to the verifier once, with the verified round's output beside them. Accepted,
the answer stands; rejected, the answer is what the verified round printed, and the run says so (the state's
`overridden`, answer.json, an `answer_overridden` event).
"""

from __future__ import annotations

import re

from dsstar_lake.agent import verifier
from dsstar_lake.agent.readings import reading_key, same_value, split_readings
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.errors import BudgetExceeded

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?%?")
ITEM_SPLIT = re.compile(r"[\n,;|\[\]{}()'\"]+")


def carried(answer: str, printed: str) -> bool:
    """Tell whether an answer is among what a script printed: its text, or each of its numbers (rounded, or as a
    percentage of a printed fraction) and each of its named items."""
    shown, key = reading_key(answer), reading_key(printed)
    if not shown or f" {shown} " in f" {key} ":
        return True
    printed_numbers = [n.rstrip("%") for n in NUMBER.findall(printed)]
    for number in NUMBER.findall(answer):
        value = number.rstrip("%")
        if not any(same_value(value, p) or _as_percent(value, p) for p in printed_numbers):
            return False
    words = [reading_key(NUMBER.sub(" ", item)) for item in ITEM_SPLIT.split(answer)]
    return all(f" {w} " in f" {key} " for w in words if w.strip(" .-"))


def _as_percent(shown: str, printed: str) -> bool:
    """Tell whether a shown number is a printed fraction as a percentage (45.2 from 0.4521)."""
    try:
        return same_value(shown, repr(float(printed.replace(",", "")) * 100)) if "." in printed else False
    except ValueError:
        return False


def check(agent: Agent, state: AgentState, code: str, output: str) -> None:
    """Verify the final script when its answer is not among the verified round's output; say what was done."""
    verified_output = split_readings(state.result)[1].strip()
    if not (state.verified and state.result_ok and verified_output) or carried(state.value, state.result):
        return
    try:
        verdict = verifier.verify_final(agent, state, code, output, state.round)
    except BudgetExceeded as exc:
        note = "the final script's answer is not among what the verified round printed, and was not verified (budget)"
        agent.events.emit("final_check", round=state.round, checked=False, error=str(exc), final=state.value)
        state.error = f"{state.error}; {note}" if state.error else note
        return
    agent.events.emit("final_check", round=state.round, checked=True, sufficient=verdict.sufficient,
                      final=state.value)
    if verdict.sufficient:
        return
    reason = "the verifier did not accept the final script, which computed what the verified script did not"
    state.overridden = {"by": "verifier", "final_script": state.value, "answer": verified_output,
                        "reason": reason}
    state.value = verified_output
    agent.events.emit("answer_overridden", round=state.round, **state.overridden)
