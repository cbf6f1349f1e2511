"""The loop's state (what a run knows between rounds, saved for resume) and the Answer it returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dsstar_lake.agent.reading_record import Reading, from_records

PHASES = ("start", "verify", "finalize", "done")


@dataclass
class ContextEntry:
    """One catalog entry in the data context: a file or a family, with the description the prompts show."""

    entry_id: str
    kind: str  # file | family
    path: str  # lake-relative file path, or the family's glob
    description: str
    member_count: int = 1
    source: str = "retrieval"  # retrieval | missing-data | given | read (a script read it)
    score: float | None = None
    # How every prompt of the round shows it (agent/view.py): whole (its description), brief, or line (its menu line).
    level: str = "whole"
    line: str = ""  # the one line the selector chose from (agent/menu.py); a line-level entry shows only this
    reason: str = ""  # why the selector chose it (empty: not chosen)
    folded_under: str = ""  # the candidate it was folded under in search (a near-identical or same-layout file)
    series: str = ""  # the head of the series of near-identical files it belongs to (shown once, members as lines)

    @classmethod
    def from_hit(cls, hit: Any, source: str = "retrieval") -> ContextEntry:
        """Build from a retriever Hit."""
        return cls(hit.entry_id, hit.kind, hit.path, hit.description, int(hit.member_count), source,
                   getattr(hit, "score", None))

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return asdict(self)


@dataclass
class AgentState:
    """The DS-STAR state: question, data context, plan, the current script and its result.

    phase says what comes next: start (plan the first step), verify (judge round `round`),
    finalize (write the final script), done. It is saved after each completed round, so a resumed
    run repeats at most the unfinished part of one round.
    """

    question: str
    guidelines: str = ""
    entries: list[ContextEntry] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)
    code: str = ""  # the script of the last round (s_k)
    result: str = ""  # what it printed, as the next prompts see it (r_k)
    result_ok: bool = False
    round: int = -1  # index of the last executed round; -1 before the first
    phase: str = "start"
    verified: bool = False
    stop_reason: str | None = None  # verified | max_rounds | budget | error
    re_retrievals: list[dict[str, Any]] = field(default_factory=list)
    # Who chose the entries described whole (agent/selector.py): selector | relevance | given; "" before choosing.
    selected_by: str = ""
    selection: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"} of the first round's choice
    # Lake files the scripts read (traced in the sandbox), in first-read order; and those of the last round's
    # and the final script, which together are the answer's files_used.
    reads: list[str] = field(default_factory=list)
    round_reads: list[str] = field(default_factory=list)
    final_reads: list[str] = field(default_factory=list)
    # Scripts whose read trace shows it was tampered with or cut ("round_00.py: ..."): files_used is then doubtful.
    trace_problems: list[str] = field(default_factory=list)
    backtracks: int = 0
    # step_scripts[i] is the script (as run, fixes included) of the round whose plan ended at step i+1 ("" where a
    # state saved before these were kept has none): a backtrack to step j gives the coder step j-1's script back.
    step_scripts: list[str] = field(default_factory=list)
    # Steps the router judged wrong, and why: {"round" (the round that showed it), "steps", "why"}, oldest first.
    removed: list[dict[str, Any]] = field(default_factory=list)
    final_code: str = ""
    value: str = ""
    # The readings the answer rests on (agent/readings.py): the last verifier's while the loop runs, then
    # the finalyzer's settled with them. alternatives are {"reading", "value", "how"}.
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[dict[str, str]] = field(default_factory=list)
    stated: list[dict[str, str]] = field(default_factory=list)  # figures the data states: evidence, not answers
    chosen: dict[str, str] = field(default_factory=dict)  # agent/chooser.py: reading, because, value ({} agreed)
    # Every reading the roles named, once each, with who named it and its status (agent/reading_record.py): the
    # lists above are read off it.
    readings: list[Reading] = field(default_factory=list)
    # When the answer is not what the final script printed: {"by" (chooser | verifier), "final_script" (what it
    # printed), "answer", "reason"}; {} when it is (agent/final_check.py).
    overridden: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    # What earlier sessions of this run spent (a resumed run adds its own).
    spent: dict[str, float] = field(default_factory=dict)

    def entry_ids(self) -> list[str]:
        """Return the ids of the entries in context."""
        return [e.entry_id for e in self.entries]

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        data = asdict(self)
        data["entries"] = [e.to_dict() for e in self.entries]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentState:
        """Rebuild a saved state."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["entries"] = [ContextEntry(**e) for e in data.get("entries", [])]
        values["readings"] = from_records(data.get("readings"))
        return cls(**values)


@dataclass
class Answer:
    """What `ask` returns (and answer.json holds): the answer text and how it was reached."""

    text: str  # what the final script printed (answer.json's "value"); `value` is it as a number or list
    run_id: str
    question: str
    # Lake files the scripts read (the sandbox's read trace: what their Python reported, which a script can forge or
    # stop, and the lake's open watch, which sees opens in C),
    # or for runs from before the trace, context entries named in the final script (paths or family globs).
    files_used: list[str]
    context: list[str]  # every entry that was in the data context
    rounds: int
    verified: bool
    re_retrievals: int
    backtracks: int
    input_tokens: int
    output_tokens: int
    llm_calls: int
    cost_usd: float
    seconds: float
    stop_reason: str | None = None
    error: str | None = None
    resumable: bool = False
    plan: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)  # the choices of reading the answer rests on
    alternatives: list[dict[str, str]] = field(default_factory=list)  # other readings: reading, value, how
    trace_problems: list[str] = field(default_factory=list)  # scripts whose read trace cannot be taken at its word
    stated: list[dict[str, str]] = field(default_factory=list)  # figures the data states: where, value, how
    # The reading chosen where readings gave different answers, and why: reading, because, value ({}: they agreed).
    chosen: dict[str, str] = field(default_factory=dict)
    # The entries chosen for the first round, in the order chosen: {"path" (a lake-relative path, or a family's
    # glob), "reason" (one line)}; and who chose them: selector (a model), relevance (the fallback: no model
    # answer, or the call failed), given (--files, eval --oracle), "" (a run from before the selection existed).
    selection: list[dict[str, str]] = field(default_factory=list)
    selected_by: str = ""
    # Every reading the run's roles named: {"kind", "label", "value", "how", "by", "status" (open | rejected |
    # chosen), "reason"} (agent/reading_record.py); the lists above are read off it.
    readings: list[dict[str, Any]] = field(default_factory=list)
    # The answer is not what the final script printed: {"by", "final_script", "answer", "reason"}; {} when it is.
    overridden: dict[str, str] = field(default_factory=dict)

    @property
    def value(self) -> int | float | list[Any] | str:
        """Return the answer as a number when the text is one, a list when it is one, else the text."""
        from dsstar_lake.agent.answer_value import typed_value

        return typed_value(self.text)

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data (the content of answer.json: the text as "value", as records always had it)."""
        data = asdict(self)
        return {"value": data.pop("text"), **data}

    def raise_if_unfinished(self) -> None:
        """Raise the one-line error of a run that stopped before its answer (it can be resumed): BudgetExceeded
        when its budget ran out, else ProviderError."""
        if self.resumable:
            from dsstar_lake.base.errors import BudgetExceeded, ProviderError

            stopped = BudgetExceeded if self.stop_reason == "budget" else ProviderError
            raise stopped(f"run {self.run_id} stopped: {self.error}",
                                hint=f"continue it with `dslake runs resume {self.run_id}`")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """Rebuild an answer from answer.json."""
        known = {f.name for f in fields(cls)}
        return cls(text=str(data.get("value") or ""), **{k: v for k, v in data.items() if k in known - {"text"}})
