"""Finalyzer: turn the last script into one that prints just the answer, in the requested format (G.6).

After the code block it names the readings the answer rests on (readings.py); it is shown those noted so far.
Its guidelines are composed from the answer's form (guidelines.py); the names the output carries are shown
(qualifiers.py) only for an answer that may print names (not a number, Yes/No or one of offered options).
"""

from __future__ import annotations

from dsstar_lake.agent.answer_form import form_of
from dsstar_lake.agent.chooser import principles
from dsstar_lake.agent.coder import raw_code
from dsstar_lake.agent.guidelines import compose
from dsstar_lake.agent.parse import extract_code
from dsstar_lake.agent.prompts import fill, printed
from dsstar_lake.agent.qualifiers import qualifier_section
from dsstar_lake.agent.readings import Readings, as_text, split_readings
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.base.untrusted import fence, frame

EXPECTED = ("a single markdown Python code block (```python ... ```), then any 'Assumption:' or 'Alternative:' "
            "lines outside it")


def guidelines(state: AgentState) -> str:
    """Return the formatting guidelines: the given ones (else the default), then the rules of the answer's form."""
    return compose(state.question, state.guidelines)


def parse(text: str) -> tuple[str, Readings] | None:
    """Return the script and the readings named outside its code block; None when there is no script."""
    readings, rest = split_readings(text)
    code = extract_code(rest)
    return None if code is None else (code, readings)


def final_script(agent: Agent, state: AgentState, round_no: int, noted: Readings) -> tuple[str, Readings]:
    """Return the final solution script and the readings the finalyzer named (noted: those so far)."""
    shown = as_text(noted)
    prompt = fill("finalyzer", code=fence(state.code), result=printed(state.result),
                    names=qualifier_section(state.result) if form_of(state.question).names_matter else "",
                    question=state.question, guidelines=guidelines(state), packages=agent.packages(),
                    readings=frame(shown, "output") if shown else "(none noted)", principles=principles(),
                    **agent.data(state))
    return agent.ask("finalyzer", prompt, parse, EXPECTED,
                     lambda text: (raw_code(split_readings(text)[1]), split_readings(text)[0]), round_no)
