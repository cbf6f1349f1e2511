"""The selector measured without a run: asked once per task over the menu a run would offer it, its choice scored
against the task's gold files (eval/filescore.py), as `dslake eval retrieval` reports it when a model is configured.

The choice is made as agent/selector.py makes it for a run (the same prompt, one reminder for an unreadable answer,
the relevance order when no answer names a candidate), through the real call site, so the response cache and the
provider flags apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dsstar_lake.agent import selector, view
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.eval.filescore import selection_score

if TYPE_CHECKING:
    from dsstar_lake.llm import LLM


@dataclass
class TaskSelection:
    """What the selector chose for one task, its score against the gold files, and where the gold files stand in
    the first prompt built from the choice."""

    selected_by: str  # selector, or relevance (no answer named a candidate: `why` says why)
    selected: list[str]
    precision: float | None
    recall: float
    f1: float
    why: str = ""
    levels: dict[str, str] = field(default_factory=dict)  # each gold file's level (eval/retrieval.py LEVELS)
    prompt_tokens: int = 0  # the first prompt's data block, estimated

    @property
    def all_whole(self) -> bool:
        """True when every gold file is whole, or a line under a whole near-identical file, in the first prompt."""
        return all(level in ("whole", "kin") for level in self.levels.values())

    @property
    def all_whole_strict(self) -> bool:
        """True when every gold file has its own whole description in the first prompt."""
        return all(level == "whole" for level in self.levels.values())


def selected_view(llm: LLM, question: str, entries: list[ContextEntry], gold: list[str], fallback_k: int,
                  max_chars: int, budget_tokens: int) -> tuple[TaskSelection, list[ContextEntry]]:
    """Ask the selector over these candidates (fresh: their levels are set here); return its scored choice and the
    first round's view built from it (view.choose), or from the relevance order when there is no choice."""
    if llm.answers("selector"):
        chosen, why = selector.choose_with(lambda text: llm.complete("selector", text).text, question, entries)
    else:
        chosen, why = None, selector.NO_SELECTOR
    if chosen:
        shown, by = view.choose(entries, chosen), "selector"
    else:
        shown = selector.relevance_view(entries, fallback_k, max_chars, budget_tokens, question, why)
        by = "relevance"
    selection = selector.selection_of(shown)
    score = selection_score(gold, selection, by)
    precision, recall, f1 = (score.precision, score.recall, score.f1) if score else (None, 0.0, 0.0)
    return TaskSelection(by, [item["path"] for item in selection], precision, recall, f1, why), shown
