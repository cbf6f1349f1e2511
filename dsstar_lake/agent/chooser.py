"""Chooser: when the readings give different answers, choose one by the principles, and record why.

The principles are a text a user can read and change (prompts/reading_principles.txt), in an order that settles
their conflicts (the first that tells the readings apart decides); the finalyzer sees them too. Its evidence is
the figures the data states: the scripts' `Stated:` lines and the notes of the files in view (catalog_figures.py).
The chooser is one model call after the final script, made only when an alternative that answers in the answer's
form differs from it (readings.settle keeps no other): readings that agree cost nothing. Its answer is

    Chosen: <number>. <reading> because <principle>
    Answer: <the chosen reading's answer, in the form the guidelines ask>

Choosing the final script's own reading keeps its answer. Choosing an alternative makes its value the answer
(the chooser's printed form when it carries the same value, else the value as computed) and the final script's
answer an alternative. An unreadable choice keeps the final script's answer: no second call is spent on it.
Where a person is at the terminal (ask --clarify), they pick instead, in one keypress, and no call is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dsstar_lake.agent.catalog_figures import CatalogFigure, catalog_figures
from dsstar_lake.agent.prompts import fill, template
from dsstar_lake.agent.readings import Alternative, Readings, reading_key, same_value
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.agent.view import shown
from dsstar_lake.base.errors import BudgetExceeded
from dsstar_lake.base.untrusted import frame, quote

OWN_READING = "the reading the final script took"
OWN_HOW = "the final script's answer"
PICKED = "the user picked it at the terminal"
CHOSEN = re.compile(r"^[\s>*_`#-]*chosen[*_`]*\s*[:\-–—]\s*[*_`]*\s*(?P<rest>.+)$", re.I | re.M)
ANSWER = re.compile(r"^[\s>*_`#-]*answer[*_`]*\s*[:\-–—]\s*[*_`]*\s*(?P<value>.+?)[*_`]*\s*$", re.I | re.M)
NUMBERED = re.compile(r"^(?:reading\s*)?(?:#|no\.?\s*)?(?P<n>\d+)\s*[.):\-–]?\s*(?P<rest>.*)$", re.I)
NUMBERS = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Choice:
    """The reading chosen (1 is the final script's own), why, and the answer it gives."""

    number: int
    reading: str
    because: str
    value: str

    def to_record(self) -> dict[str, str]:
        """Return the record answer.json keeps: {"reading", "because", "value"}."""
        return {"reading": self.reading, "because": self.because, "value": self.value}


def principles() -> str:
    """Return the principles a reading is chosen by (prompts/reading_principles.txt)."""
    return template("reading_principles").strip()


def options(value: str, settled: Readings) -> list[Alternative]:
    """Return the readings to choose from: the final script's answer first, then the alternatives."""
    own = settled.assumptions[0] if settled.assumptions else OWN_READING
    return [Alternative(own, value, OWN_HOW), *settled.alternatives]


def stated_evidence(settled: Readings, noted: list[CatalogFigure]) -> str:
    """Return the chooser's evidence: the scripts' `Stated:` figures, then the catalog's notes on the files in view."""
    parts = []
    if settled.stated:
        parts.append("From the scripts' `Stated:` lines:\n"
                     + frame("\n".join(f"- {a.reading} = {a.value}" for a in settled.stated), "output"))
    if noted:
        parts.append("From the catalog's notes on the files in view (what each file states outside its rows):\n"
                     + frame("\n".join(f"- {quote('data/' + f.path)}: {f.text}" for f in noted), "catalog"))
    return "\n".join(parts) or "(none)"


def _listed(readings: list[Alternative]) -> str:
    return "\n".join(f"{i}. {_with_value(a)}" + (f" ({a.how})" if a.how else "") for i, a in enumerate(readings, 1))


def _with_value(reading: Alternative) -> str:
    """Return 'reading = value', once: an assumption that already ends in its value ('... = 2.6563') keeps it."""
    said = reading.reading.rstrip(" .")
    if reading.value and said.endswith(f"= {reading.value}"):
        return said
    return f"{reading.reading} = {reading.value}"


def parse(text: str, readings: list[Alternative]) -> Choice | None:
    """Return the choice an answer names (by number, else by the reading's words); None when it names none."""
    found = CHOSEN.search(text or "")
    if not found:
        return None
    said = found["rest"].strip().strip("*_`").strip()
    head, *why = re.split(r"\s+because\s+", said, maxsplit=1, flags=re.I)
    because = why[0] if why else ""
    number = None
    numbered = NUMBERED.match(head)
    if numbered and 1 <= int(numbered["n"]) <= len(readings):
        number = int(numbered["n"])
    else:
        number = next((i for i, a in enumerate(readings, 1) if reading_key(a.reading) and reading_key(a.reading) in reading_key(head)),
                      None)
    if number is None:
        return None
    picked = readings[number - 1]
    given = ANSWER.search(text)
    value = given["value"].strip() if given else ""
    return Choice(number, picked.reading, because.strip().rstrip(".") or "(no principle given)",
                  value if value and _carries(value, picked.value) else picked.value)


def _carries(printed: str, computed: str) -> bool:
    """Tell whether a printed answer carries the computed value: the same text, or its numbers rounded or as a %."""
    if same_value(printed, computed) or reading_key(printed).strip("\"'[]") == reading_key(computed).strip("\"'[]"):
        return True
    shown, found = NUMBERS.findall(printed), NUMBERS.findall(computed)
    if not shown or len(shown) != len(found):
        return False
    for a, b in zip(shown, found, strict=True):
        digits = len(a.split(".")[1]) if "." in a else 0
        x, y = float(a.replace(",", "")), float(b.replace(",", ""))
        if round(y, digits) != x and round(y * 100, digits) != x:
            return False
    return True


def choose(agent: Agent, state: AgentState, settled: Readings, guidelines: str) -> Choice | None:
    """Return the reading chosen among the answer's and the alternatives'; None when they agree (no call)."""
    if not settled.alternatives or not state.value.strip():
        return None
    readings = options(state.value, settled)
    if agent.clarify is not None:
        agent.events.emit("clarify", round=state.round, readings=[a.to_dict() for a in readings])
        picked = agent.clarify(state.question, [a.to_dict() for a in readings])
        if picked is not None and 1 <= picked <= len(readings):
            chosen = readings[picked - 1]
            # where the person picked it: the terminal's by default, a web page's or a notebook's pick says its own
            return Choice(picked, chosen.reading, str(getattr(agent.clarify, "because", PICKED)), chosen.value)
    prompt = fill("chooser", question=state.question, principles=principles(),
                    candidates=frame(_listed(readings), "output"),
                    stated=stated_evidence(settled, catalog_figures(shown(state.entries))), guidelines=guidelines)
    agent.events.emit("role", role="chooser", round=state.round)
    try:
        text = agent.llm.complete("chooser", prompt, allow_over_budget=agent.over_budget).text
    except BudgetExceeded as exc:  # the answer is written: a spent budget keeps it rather than finalizing again
        agent.events.emit("budget", round=state.round, error=str(exc), role="chooser")
        return None
    choice = parse(text, readings)
    if choice is None:  # one call at most: an unreadable choice keeps the final script's answer
        agent.events.emit("unparseable", role="chooser", round=state.round, response=text[:2000],
                          action="kept the final script's answer")
    return choice


def apply(state: AgentState, settled: Readings, choice: Choice) -> Readings:
    """Make the chosen reading the answer's; return the readings as they now stand (the old answer an alternative)."""
    if choice.number == 1:
        return settled
    picked = settled.alternatives[choice.number - 2]
    own = options(state.value, settled)[0]
    state.value = choice.value
    others = [a for a in settled.alternatives if a is not picked]
    return Readings([picked.reading], [own, *others], settled.stated)
