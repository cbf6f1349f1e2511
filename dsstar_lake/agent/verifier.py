"""Verifier: is the plan, as implemented and run, enough to answer the question? (G.4)

Besides Yes or No it names the readings the answer rests on and the other readings' values (readings.py),
and says when a figure the data itself states differs from the computed one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dsstar_lake.agent.parse import parse_verdict, reason_of
from dsstar_lake.agent.planner import plan_text
from dsstar_lake.agent.prompts import fill, printed
from dsstar_lake.agent.readings import Readings, split_readings
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.untrusted import fence

EXPECTED = "'Yes' or 'No' on the first line, then any 'Assumption:', 'Alternative:', 'Stated:' or 'Rejected:' lines"
FINAL_STEP = ("Final step: print the answer in the form the question asks, from what the steps above computed "
              "(the code below is the final script; it may change only how the answer is printed, never what is "
              "computed: the same rows, filters, de-duplication and joins). The verified script printed:")


@dataclass
class Verdict:
    """The verifier's answer: sufficient or not, and the readings it named."""

    sufficient: bool
    readings: Readings = field(default_factory=Readings)
    reason: str = ""  # what it said besides Yes or No and the reading lines, shortened ("" when nothing)


def parse(text: str) -> Verdict | None:
    """Return the verdict and readings; None when the answer says neither Yes nor No clearly."""
    readings, rest = split_readings(text)
    ok = parse_verdict(rest)
    reason = re.sub(r"^\W*(?:yes|no)\b\W*", "", rest.strip(), flags=re.I)
    return None if ok is None else Verdict(ok, readings, reason_of(reason))


def verify(agent: Agent, state: AgentState, round_no: int) -> Verdict:
    """Return the verdict; an unreadable one counts as No (insufficient), with the readings it did name."""
    prompt = fill("verifier", plan=plan_text(state.plan), code=fence(state.code),
                    result=printed(state.result), question=state.question)
    return agent.ask("verifier", prompt, parse, EXPECTED,
                     lambda text: Verdict(False, split_readings(text)[0]), round_no)



def verify_final(agent: Agent, state: AgentState, code: str, output: str, round_no: int) -> Verdict:
    """Return the verdict on the final script, whose answer is not among what the verified round printed.

    The plan gains the final step, with the verified round's output to hold the final script's to.
    """
    plan = plan_text([*state.plan, f"{FINAL_STEP}\n{printed(state.result)}"])
    prompt = fill("verifier", plan=plan, code=fence(code), result=printed(output), question=state.question)
    return agent.ask("verifier", prompt, parse, EXPECTED, lambda text: Verdict(False, split_readings(text)[0]),
                     round_no)
