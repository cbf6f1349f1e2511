"""Selector: before the first step, one call chooses from the menu the files the question needs, each with a reason.

Retrieval ranks by similarity; a model reading one line per candidate chooses a sufficient, minimal set far better
(on held-out KramaBench questions, F1 0.88 against 0.70 for the files runs read). The chosen files are described
whole in every prompt and the rest stay as their menu lines (agent/view.py). Without an answer (no model rule, a
failed call, an answer naming no candidate) the relevance order decides, as it did before there was a selector,
and the run record says so. When the router finds data missing, the selector chooses again from a wider menu.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dsstar_lake.agent import context, relevance, view
from dsstar_lake.agent.menu import candidates, menu_text
from dsstar_lake.agent.prompts import ask_with_reminder, fill
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState, ContextEntry
from dsstar_lake.base.errors import BudgetExceeded, ProviderError
from dsstar_lake.base.untrusted import frame, quote

EXPECTED = "one line per chosen file, exactly: data/PATH — why the question needs it"
NONE = "none"
NO_SELECTOR = "no model answers the selector role"
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*")
_SEPARATOR = re.compile(r"^[`'\"]?\s*(?:—|–|-{1,2}|:)?\s*")

Choice = list[tuple[str, str]]  # (lake path, reason)


def parse_choice(text: str, entries: Sequence[ContextEntry], allow_none: bool = False) -> Choice | None:
    """Return the (path, reason) pairs an answer names, in its order; None when it names no candidate.

    A line is matched against the candidates' paths (the longest that starts it wins), not split on a dash: lake paths
    hold spaces and dashes. With allow_none, an answer that is just 'none' is an empty choice.
    """
    if allow_none and text.strip().strip(".`*").lower() == NONE:
        return []
    paths = sorted((e.path for e in entries), key=len, reverse=True)
    # A model names the members of a family, or files inside a dataset, one by one: each is its family's choice.
    groups = [(e.path, _member_pattern(e)) for e in entries if e.kind in ("family", "dataset")]
    chosen: Choice = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw.strip()).lstrip("`'\"*")
        rest = line[len("data/"):] if line.startswith("data/") else line
        path, named = next(((p, p) for p in paths if rest.startswith(p) and _ends_a_path(rest, len(p))), (None, ""))
        if path is None:
            path, named = next(((p, m.group()) for p, pattern in groups if (m := pattern.match(rest))), (None, ""))
        if path is None or any(path == p for p, _ in chosen):
            continue
        reason = _SEPARATOR.sub("", rest[len(named):].strip().lstrip("`'\"")).strip()
        chosen.append((path, reason[:300]))
    return chosen if chosen or (allow_none and not text.strip()) else None


def _ends_a_path(text: str, at: int) -> bool:
    """Tell whether a path that starts text ends at `at` (not inside a longer name or a folder's member)."""
    return at >= len(text) or not (text[at].isalnum() or text[at] in "_./=-")


def _member_pattern(entry: ContextEntry) -> re.Pattern[str]:
    """Return what matches the path of one member of a family (its glob) or of a file inside a dataset's folder."""
    if entry.kind == "dataset":
        return re.compile(re.escape(entry.path.rstrip("/")) + r"/[^\s`'\"]+")
    return re.compile("[^/]*?".join(re.escape(part) for part in entry.path.split("*")).replace(r"\?", "[^/]"))


def first_prompt(question: str, entries: Sequence[ContextEntry]) -> str:
    """Return the selector's prompt for the first round: the question and the menu of candidates."""
    return fill("selector", question=question, menu=frame(menu_text(entries), "candidates"))


def choose_with(complete: Callable[[str], str], question: str,
                entries: Sequence[ContextEntry]) -> tuple[Choice | None, str]:
    """Ask a model (complete: prompt -> answer text) for the first round's choice, once more with the reminder when
    the answer is unreadable; return the choice and "", or None and why there is none (what select falls back on).

    Without an Agent: `dslake eval retrieval` measures the selection with it (eval/retrieval.py).
    """
    prompt = first_prompt(question, entries)
    return _outcome(lambda: ask_with_reminder(complete, prompt, _parser(entries, allow_none=False), EXPECTED)[0])


def relevance_view(entries: list[ContextEntry], k: int, max_chars: int, budget_tokens: int, question: str,
                   why: str) -> list[ContextEntry]:
    """Return the view without a selection (view.by_relevance), each entry's reason saying its rank and why."""
    ordered = view.by_relevance(entries, k, max_chars, budget_tokens, question)
    for rank, e in enumerate(ordered, 1):
        e.reason = f"ranked {rank} by relevance ({why})"
    return ordered


def selection_of(entries: Sequence[ContextEntry]) -> list[dict[str, str]]:
    """Return the run record's selection: the described entries' paths and reasons, in the view's order."""
    return [{"path": e.path, "reason": e.reason} for e in view.shown(entries)]


def select(agent: Agent, state: AgentState) -> None:
    """Choose the first round's files from the candidates in state.entries and set the view's levels."""
    prompt = first_prompt(state.question, state.entries)
    chosen, why = _ask(agent, prompt, state.entries, allow_none=False, round_no=0)
    if chosen:
        state.entries = view.choose(state.entries, chosen)
        state.selected_by = "selector"
    else:
        state.entries = relevance_view(state.entries, agent.fallback_k, agent.description_chars,
                                       agent.context_tokens, state.question, why)
        state.selected_by = "relevance"
    state.selection = selection_of(state.entries)
    agent.events.emit("selection", by=state.selected_by, entries=list(state.selection),
                      menu=[e.path for e in state.entries], why=why)


def select_missing(agent: Agent, state: AgentState, missing: str, k: int) -> None:
    """Retrieve a wider menu for what the router says is missing and choose from it (the relevance rule without a
    selector); what is chosen is whole from the next round, the other new candidates join as menu lines."""
    wanted = relevance.content_words(missing)
    # The router's words, and of the question only what no described entry names: the question alone retrieves files
    # that look like the ones already given, not the missing quantity.
    rest = [w for w in relevance.uncovered_words(state.question, view.shown(state.entries)) if w not in wanted]
    query = " ".join([missing, *rest])
    fresh = candidates(agent.retriever.search(query, agent.menu_k, exclude=state.entry_ids()))
    item = {"round": k, "missing": missing, "query": query, "added": [], "closest": []}
    offered = [e for e in state.entries if e.level == "line"] + fresh
    if state.selected_by == "selector" and offered:
        using = "\n".join(f"- {quote(context.shown_path(e))}" for e in view.shown(state.entries)) or "(none)"
        prompt = fill("selector_missing", question=state.question, using=using, missing=missing,
                      menu=frame(menu_text(offered), "candidates"))
        chosen, why = _ask(agent, prompt, offered, allow_none=True, round_no=k)
        if chosen is not None:
            state.entries.extend(fresh)
            picked = dict(chosen)
            for e in state.entries:
                if e.path in picked and e.level != "whole":
                    e.level, e.reason, e.source = "whole", picked[e.path], "missing-data"
            item.update(added=[p for p, _ in chosen], by="selector",
                        reasons=[{"path": p, "reason": r} for p, r in chosen])
            _record(agent, state, item)
            return
        item["why"] = why
    # The relevance rule: a candidate that carries none of the router's words is the domain's look, not the data.
    leaders = [e for e in fresh if not e.folded_under][: agent.k_extra]
    found = [e for e in leaders if not wanted or relevance.names_any(e.path, e.description, wanted)]
    for e in found:
        e.level, e.source = "whole", "missing-data"
    state.entries.extend(found)
    item.update(added=[e.path for e in found], closest=[e.path for e in leaders if e not in found][:3],
                by="relevance")
    _record(agent, state, item)


def _record(agent: Agent, state: AgentState, item: dict) -> None:
    state.re_retrievals.append(item)
    agent.events.emit("re_retrieval", **item)


def _ask(agent: Agent, prompt: str, entries: Sequence[ContextEntry], allow_none: bool,
         round_no: int) -> tuple[Choice | None, str]:
    """Ask the selector; return its choice and "", or None and why there is none (the run goes on without it)."""
    if not agent.llm.answers("selector"):
        return None, NO_SELECTOR
    return _outcome(lambda: agent.ask("selector", prompt, _parser(entries, allow_none), EXPECTED, lambda text: None,
                                      round_no))


def _parser(entries: Sequence[ContextEntry], allow_none: bool) -> Callable[[str], Choice | None]:
    return lambda text: parse_choice(text, entries, allow_none)


def _outcome(ask: Callable[[], Choice | None]) -> tuple[Choice | None, str]:
    """Return what the selector chose and "", or None and why (a failed call, an answer naming no candidate)."""
    try:
        chosen = ask()
    except (ProviderError, BudgetExceeded) as exc:
        return None, f"the selector's call failed: {(str(exc).splitlines() or [''])[0][:200]}"
    if chosen is None:
        return None, "the selector's answer named no candidate"
    return chosen, ""
