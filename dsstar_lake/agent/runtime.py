"""Agent: what the roles share during one run (model, sandbox, run record, limits) and the ask-parse-retry call."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from dsstar_lake.agent import view
from dsstar_lake.agent.events import EventStream
from dsstar_lake.agent.prompts import ask_with_reminder, fill
from dsstar_lake.agent.version_notes import with_notes

if TYPE_CHECKING:
    from dsstar_lake.agent.state import AgentState
    from dsstar_lake.llm.call import LLM
    from dsstar_lake.runs.record import RunRecord
    from dsstar_lake.sandbox.core import Sandbox

T = TypeVar("T")


@dataclass
class Agent:
    """The parts of one run that every role uses."""

    llm: LLM
    sandbox: Sandbox
    record: RunRecord
    retriever: Any | None = None  # None: the context was given (--files), so no re-retrieval
    # The catalog entry describing a lake file (its own or its family's), for files a script read unasked.
    lookup: Callable[[str], Any] | None = None
    max_rounds: int = 20
    max_debug: int = 3
    k_extra: int = 5
    menu_k: int = 25  # candidates retrieved when the router says data is missing (the selector chooses among them)
    fallback_k: int = 10  # candidates kept when no selector answers (retrieve.k: the relevance order decides)
    max_result_chars: int = 8000
    first_step: str = "complete"  # simple | complete: the first step's ambition (agent/planner.py)
    summarize_over_chars: int = 1500
    description_chars: int = 0
    context_tokens: int = 0  # without a selection, budget of the given-data block; 0 = every entry whole
    view_cap_tokens: int = 0  # hard cap on the whole descriptions in a prompt; 0 = none
    # The run's one event stream: the record and the live displays subscribe (agent/events.py).
    events: EventStream = field(default_factory=EventStream)
    over_budget: bool = False  # set to let the finalyzer write the answer after the budget is spent
    # A person to pick between readings that give different answers (ask --clarify on a terminal): given the
    # question and the numbered readings ({"reading", "value", "how"}), the number picked, or None to let the model
    # choose. None: nobody is there (pipes, eval, MCP), and the chooser decides.
    clarify: Callable[[str, list[dict[str, str]]], int | None] | None = None
    spent_before: dict[str, float] = field(default_factory=dict)  # what earlier sessions of a resumed run spent
    started: float = field(default_factory=time.perf_counter)

    def spent(self) -> dict[str, float]:
        """Return what the run has spent so far, earlier sessions included."""
        totals = self.llm.totals
        now = {"llm_calls": totals.calls, "input_tokens": totals.input_tokens,
               "output_tokens": totals.output_tokens, "cost_usd": totals.cost_usd,
               "seconds": time.perf_counter() - self.started}
        return {key: self.spent_before.get(key, 0) + value for key, value in now.items()}

    def checkpoint(self, state: AgentState) -> None:
        """Save the state (with what was spent so far): a resumed run starts from here."""
        state.spent = self.spent()
        self.record.save_state(state.to_dict())

    def data(self, state: AgentState) -> dict[str, str]:
        """Return the {filenames} and {data} prompt variables: the round's view (agent/view.py), the same for every
        role."""
        data = view.data_block(state.entries, self.description_chars, self.view_cap_tokens)
        remote = getattr(self.sandbox, "view", None)  # a lake in object storage: say what data/ holds and lacks
        if remote is not None:
            data += "\n\n" + fill("remote_data", **remote.note_values())
        return {"filenames": view.filenames(state.entries), "data": data}

    def packages(self) -> str:
        """Return the packages line for prompts, with what differs in the versions installed (agent/version_notes.py).

        Two runs lost a debugger round to pandas 3's string dtype; a model writes pandas 2 by habit.
        """
        return with_notes(self.sandbox.packages(), self.sandbox.versions())

    def scripting(self, state: AgentState) -> dict[str, str]:
        """Return what the roles that write scripts are told besides the data: the question, packages, budget."""
        return {"question": state.question, "packages": self.packages(),
                "output_chars": str(self.max_result_chars)}

    def ask(
        self,
        role: str,
        prompt: str,
        parse: Callable[[str], T | None],
        expected: str,
        fallback: Callable[[str], T],
        round_no: int,
    ) -> T:
        """Ask a role; on an unreadable answer ask once more with a terse reminder, then fall back (traced)."""
        self.events.emit("role", role=role, round=round_no)
        value, text = ask_with_reminder(
            lambda text: self.llm.complete(role, text, allow_over_budget=self.over_budget).text, prompt, parse,
            expected, lambda text: self.events.emit("unparseable", role=role, round=round_no, response=text[:2000],
                                                    action="retry"))
        if value is not None:
            return value
        value = fallback(text)
        self.events.emit("unparseable", role=role, round=round_no, response=text[:2000], action="fallback",
                         fallback=value if isinstance(value, str | bool | int) else repr(value))
        return value
