"""The run's readings as one record the loop keeps: each reading once, who named it, and where it stands.

Each role's answer is read once, when it comes (readings.py reads the lines), and what it named joins the record
(note): a reading named again, by its label or, for an alternative, by its value, merges with the one there
(who named it is added), so a repeat is one reading; a reading the verifier rejected (`Rejected:` lines) or whose
step the router removed stays rejected, with the reason, whoever names it again (a script's printed line
included). At the end, alternatives that give the answer's value merge into the answer's reading, the answer's
own reading and the chooser's pick are chosen, and what is not a reading of the answer's form is set aside
with why (settle). The prompts and answer.json's assumptions / alternatives / stated are read off the record.

    status: open | rejected (reason: the verifier's, the router's, or why it is no reading) | chosen (reason)
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from dsstar_lake.agent.readings import (
    GIVES_THE_ANSWER,
    MAX_ITEMS,
    Alternative,
    Readings,
    distinct,
    dropped,
    parse_readings,
    reading_key,
    same_value,
    unlabel,
)

OPEN, REJECTED, CHOSEN = "open", "rejected", "chosen"
# Who may name the answer's reading, latest first: a later role has seen more (the plan's are the last resort).
FINAL_ROLES = ("finalyzer", "final script")
PRINTED_BY = "printed by"  # the how the loop fills in for a script's line that says none
BY = re.compile(r"^(?P<role>.+?)(?: round (?P<round>\d+))?$")


@dataclass
class Reading:
    """One reading of the question: an assumption, an alternative with its value, or a figure the data states."""

    kind: str  # assumption | alternative | stated
    label: str  # the reading (for a stated figure: where the data states it); never cut
    value: str = ""  # its answer (an assumption's is the answer's own)
    how: str = ""
    by: list[str] = field(default_factory=list)  # who named it: "planner round 1", "verifier round 2", "finalyzer"
    status: str = OPEN
    reason: str = ""  # why it was rejected or chosen

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reading:
        """Rebuild from to_dict()."""
        return cls(str(data.get("kind", "")), str(data.get("label", "")), str(data.get("value") or ""),
                   str(data.get("how") or ""), [str(b) for b in data.get("by") or []],
                   str(data.get("status") or OPEN), str(data.get("reason") or ""))

    def alternative(self) -> Alternative:
        """Return it as readings.py's Alternative (reading, value, how)."""
        return Alternative(self.label, self.value, self.how)


def note(record: list[Reading], found: Readings, by: str) -> None:
    """Add what one role named (or one script printed) to the record; repeats merge, rejections stick."""
    for sentence in found.assumptions:
        _merge(record, Reading("assumption", sentence, by=[by]))
    for alternative in found.alternatives:
        _merge(record, Reading("alternative", alternative.reading, alternative.value, alternative.how, [by]))
    for figure in found.stated:
        _merge(record, Reading("stated", figure.reading, figure.value, figure.how, [by]))
    for wrong in found.rejected:
        reject(record, wrong.reading, wrong.value, f"{by}: {wrong.how}" if wrong.how else by)


def reject(record: list[Reading], label: str, value: str, reason: str) -> None:
    """Mark the readings a label (or an alternative's value) names as rejected; one named nowhere is kept rejected,
    so that naming it later (a script's printed line) does not bring it back."""
    key = _words(label)
    hits = [r for r in record if r.kind != "stated" and key
            and (_names(label, r.label) or (value and r.value and same_value(r.value, value)))]
    for reading in hits:
        reading.status, reading.reason = REJECTED, reason
    if not hits and key:
        record.append(Reading("alternative" if value else "assumption", label, value, by=[], status=REJECTED,
                              reason=reason))


def reject_step(record: list[Reading], step: str, reason: str) -> None:
    """Reject the assumptions a removed step rested on (the planner wrote them under it)."""
    for sentence in parse_readings(step).assumptions:
        reject(record, sentence, "", reason)


def noted(record: list[Reading]) -> Readings:
    """Return the readings still open, as a prompt shows them ("Readings noted so far"); the record is unchanged."""
    return _settle(record, "", mark=False)


def settle(record: list[Reading], answer: str) -> Readings:
    """Return the readings the answer rests on, and mark the record: alternatives that give the answer's value
    merge into it (chosen), those that are no reading of its form are set aside (rejected, with why)."""
    return _settle(record, answer, mark=True)


def choose(record: list[Reading], settled: Readings, number: int, because: str, own: Alternative) -> None:
    """Mark the chooser's pick (1: the answer's own reading, else settled's alternative number-1) chosen; a picked
    alternative leaves the answer's reading an open alternative with the final script's value."""
    if number == 1:
        _mark_answer_reading(record, settled, because)
        return
    picked = settled.alternatives[number - 2]
    for reading in _open(record, "alternative"):
        if _same_label(reading.label, picked.reading) or reading_key(picked.reading).startswith(
                reading_key(reading.label) + " "):
            reading.status, reading.reason = CHOSEN, because
            break
    for reading in _open(record, "assumption"):
        if reading.label in settled.assumptions:
            reading.status = OPEN
    record.append(Reading("alternative", own.reading, own.value, own.how, ["final script"]))


def chosen_as_answer(record: list[Reading], settled: Readings) -> None:
    """Mark the answer's own reading chosen (no choice was needed: its readings agreed)."""
    _mark_answer_reading(record, settled, "the answer's reading")


def to_records(record: list[Reading]) -> list[dict[str, Any]]:
    """Return the record as the state and answer.json keep it."""
    return [r.to_dict() for r in record]


def from_records(items: list[Any] | None) -> list[Reading]:
    """Rebuild a record kept in the state (dicts, or Readings already)."""
    return [r if isinstance(r, Reading) else Reading.from_dict(r) for r in items or [] if isinstance(r, Reading | dict)]


def _merge(record: list[Reading], new: Reading) -> None:
    if not new.label.strip():
        return
    if new.kind != "stated":  # a reading rejected by its label (either kind: a rejection names no kind) stays so
        for reading in record:
            # (a planner's rejected '<reading>; other reading: <alternative>' rejects its reading, not the other)
            if (reading.status == REJECTED and reading.kind != "stated"
                    and _names(reading.label.split(";")[0], new.label)):
                reading.by += [b for b in new.by if b not in reading.by]
                reading.value, reading.how = reading.value or new.value, reading.how or new.how
                return
    for reading in record:
        if reading.kind == "stated" or new.kind == "stated":
            same = (reading.kind == new.kind and _same_label(reading.label, new.label)
                    and same_value(reading.value, new.value))
        elif new.kind == "assumption":
            # an assumption restated in more words is the same one, and the fuller form is kept
            # an assumption restated (in more or fewer words) is the same one: the later role's words are kept
            same = reading.kind == "assumption" and bool(distinct([reading.label, new.label]) != [reading.label,
                                                                                                  new.label])
            if same and reading.status != REJECTED:
                reading.label = new.label
        else:
            same = reading.kind == "alternative" and (
                _same_label(reading.label, new.label)
                or (bool(new.value) and bool(reading.value) and same_value(reading.value, new.value)))
        if same:
            reading.by += [b for b in new.by if b not in reading.by]
            if new.how and (not reading.how or reading.how.startswith(PRINTED_BY)):  # a role's own words win
                reading.how = new.how
            return
    record.append(new)


def _same_label(a: str, b: str) -> bool:
    return bool(_words(a)) and _words(a) == _words(b)


def _words(text: str) -> str:
    """Return a label's words, folded: case, punctuation and a sentence's full stop aside."""
    return " ".join(w.strip(".-") for w in reading_key(text).split() if w.strip(".-"))


def _names(said: str, label: str) -> bool:
    """Tell whether a rejection names a reading: its words, or its reading alone (the planner writes '<reading>;
    other reading: <alternative>'), or those words with more around them (two words at least)."""
    rejected = f" {_words(said)} "
    for words in {_words(label), _words(label.split(";")[0])}:
        if words and (rejected == f" {words} " or (len(words.split()) >= 2 and f" {words} " in rejected)):
            return True
    return False


def _open(record: list[Reading], kind: str) -> list[Reading]:
    return [r for r in record if r.kind == kind and r.status != REJECTED]


def _role(by: str) -> tuple[str, int]:
    found = BY.match(by)
    return (found["role"], int(found["round"] or 0)) if found else (by, 0)


def _answer_assumptions(record: list[Reading]) -> list[Reading]:
    """Return the assumptions the answer rests on: the final roles', else the latest verifier's, else the plan's."""
    standing = _open(record, "assumption")
    for roles in (FINAL_ROLES, ("verifier",)):
        named = [(r, _role(b)[1]) for r in standing for b in r.by if _role(b)[0] in roles]
        if named:
            latest = max(n for _, n in named)
            return [r for r in standing if any(_role(b) == (role, latest) for b in r.by for role in roles)]
    return [r for r in standing if any(_role(b)[0] == "planner" for b in r.by)]


def _settle(record: list[Reading], answer: str, mark: bool) -> Readings:
    assumptions = distinct([r.label for r in _answer_assumptions(record)])[:MAX_ITEMS]
    kept: list[Alternative] = []
    values = [answer] if answer.strip() else []
    for reading in _open(record, "alternative"):
        if reading.status == CHOSEN and not mark:
            continue
        alternative = unlabel(answer, reading.alternative())
        why = dropped(answer, alternative.value, values)
        if why:
            if mark:
                reading.status, reading.reason = (CHOSEN if why == GIVES_THE_ANSWER else REJECTED), why
            continue
        values.append(alternative.value)
        kept.append(alternative)
    stated = [r.alternative() for r in record if r.kind == "stated" and r.status != REJECTED]
    return Readings(assumptions, kept[:MAX_ITEMS], stated[:MAX_ITEMS])


def _mark_answer_reading(record: list[Reading], settled: Readings, because: str) -> None:
    for reading in _open(record, "assumption"):
        if reading.label in settled.assumptions:
            reading.status, reading.reason = CHOSEN, because
