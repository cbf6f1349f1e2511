"""`dslake eval retrieval`: recall@K, all-found@K and context size of the retriever on tasks with known files,
and the level at which each of a task's files appears in the first planner prompt.

The first prompt is measured as a run builds it: the menu of candidates (agent/menu.py) from one search of
max(agent.menu_k, retrieve.k), then the view without a selection (view.by_relevance, what a run falls back on). When
a model is configured, the selector is also asked once per task over the same menu (eval/selection.py): its choice
is scored against the task's files, and the first prompt built from it (view.choose) is measured the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.agent import view
from dsstar_lake.agent.context import CHARS_PER_TOKEN, block_tokens
from dsstar_lake.agent.menu import candidates
from dsstar_lake.agent.selector import relevance_view
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.eval.resolve import resolve_sources
from dsstar_lake.eval.selection import TaskSelection, selected_view
from dsstar_lake.eval.tasks import Task

if TYPE_CHECKING:
    from dsstar_lake.runs.setup import RunSetup


@dataclass
class TaskRetrieval:
    """How retrieval did on one task."""

    id: str
    domain: str
    gold: list[str]
    recall: dict[int, float]
    all_found: dict[int, bool]
    context_tokens: dict[int, int]
    ranked: list[str] = field(default_factory=list)  # entry paths, best first
    # Each gold file's level in the first planner prompt without a selection (the fallback's view): whole, kin (a
    # line under a whole near-identical entry), brief, named (a menu line), absent.
    levels: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 0  # that first prompt's data block, estimated
    selection: TaskSelection | None = None  # the selector's choice, when a model is configured

    @property
    def all_whole(self) -> bool:
        """True when every file the task needs is described whole in the first planner prompt, or is a near-identical
        file (a member of a series of sites or dates) folded as its own line under an entry described whole."""
        return all(level in ("whole", "kin") for level in self.levels.values())

    @property
    def all_whole_strict(self) -> bool:
        """True when every file the task needs has its own whole description in the first planner prompt."""
        return all(level == "whole" for level in self.levels.values())


LEVELS = ("whole", "kin", "brief", "named", "absent")


@dataclass
class RetrievalReport:
    """Per-task results, per-domain and overall means, and the tasks skipped."""

    ks: list[int]
    tasks: list[TaskRetrieval]
    skipped: list[tuple[str, str]]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Return {domain or 'overall': {n, recall@K, all_found@K, tokens@K}}."""
        groups: dict[str, list[TaskRetrieval]] = defaultdict(list)
        for task in self.tasks:
            groups[task.domain].append(task)
            groups["overall"].append(task)
        table: dict[str, dict[str, Any]] = {}
        for name in sorted(groups, key=lambda g: (g == "overall", g)):
            rows = groups[name]
            entry: dict[str, Any] = {"n": len(rows)}
            for k in self.ks:
                entry[f"recall@{k}"] = round(sum(t.recall[k] for t in rows) / len(rows), 4)
                entry[f"all_found@{k}"] = round(sum(t.all_found[k] for t in rows) / len(rows), 4)
                entry[f"tokens@{k}"] = round(sum(t.context_tokens[k] for t in rows) / len(rows))
            entry["all_whole"] = round(sum(t.all_whole for t in rows) / len(rows), 4)
            entry["all_whole_strict"] = round(sum(t.all_whole_strict for t in rows) / len(rows), 4)
            files = [level for t in rows for level in t.levels.values()]
            entry["levels"] = {level: files.count(level) for level in LEVELS}
            entry["prompt_tokens"] = round(sum(t.prompt_tokens for t in rows) / len(rows))
            chosen = [t.selection for t in rows if t.selection is not None]
            if chosen:
                entry["selection"] = _selection_summary(chosen)
            table[name] = entry
        return table

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return {"ks": self.ks, "summary": self.summary(), "skipped": self.skipped,
                "tasks": [_task_dict(t) for t in self.tasks]}

    @property
    def selected(self) -> bool:
        """True when the selector was asked (a model was configured)."""
        return any(t.selection is not None for t in self.tasks)


def _task_dict(task: TaskRetrieval) -> dict[str, Any]:
    data = {**asdict(task), "all_whole": task.all_whole, "all_whole_strict": task.all_whole_strict}
    if task.selection is None:
        del data["selection"]
    else:
        data["selection"].update(all_whole=task.selection.all_whole, all_whole_strict=task.selection.all_whole_strict)
    return data


def _selection_summary(rows: list[TaskSelection]) -> dict[str, Any]:
    """Return the selection's figures over these tasks: who chose, mean precision/recall/F1 (precision over the tasks
    with a choice), and the gold files' levels in the first prompt built from it."""
    precisions = [r.precision for r in rows if r.precision is not None]
    files = [level for r in rows for level in r.levels.values()]
    return {
        "n": len(rows),
        "by_selector": sum(r.selected_by == "selector" for r in rows),
        "precision": round(sum(precisions) / len(precisions), 4) if precisions else None,
        "recall": round(sum(r.recall for r in rows) / len(rows), 4),
        "f1": round(sum(r.f1 for r in rows) / len(rows), 4),
        "all_whole": round(sum(r.all_whole for r in rows) / len(rows), 4),
        "all_whole_strict": round(sum(r.all_whole_strict for r in rows) / len(rows), 4),
        "levels": {level: files.count(level) for level in LEVELS},
        "prompt_tokens": round(sum(r.prompt_tokens for r in rows) / len(rows)),
    }


def gold_files(task: Task, catalog_paths: list[str], missing: list[str]) -> tuple[list[str], str | None]:
    """Return the task's files as catalog paths, or a reason to skip it."""
    if task.files is not None:
        known = set(catalog_paths)
        files = [_within(f, task.domain, known) for f in task.files]
        absent = [f for f in files if f not in known]
        return (files, None) if not absent else ([], f"files not in the catalog: {absent[:3]}")
    root = task.domain if any(p.startswith(task.domain + "/") for p in catalog_paths) else ""
    prefix = root + "/" if root else ""
    domain_files = [p for p in catalog_paths if p.startswith(prefix)]
    domain_missing = [m for m in missing if m.startswith(task.domain + "/")]
    if not root:
        domain_missing = [m[len(task.domain) + 1 :] for m in domain_missing]
    resolution = resolve_sources(task.data_sources, domain_files, root=root, missing=domain_missing)
    if not resolution.complete:
        return [], f"sources absent from the lake: {resolution.absent_sources or task.data_sources}"
    return list(resolution.files), None


def _within(path: str, domain: str, known: set[str]) -> str:
    """Return a task file as a catalog path: tasks name files from the benchmark lake's root ('wildfire/x.csv'),
    and a catalog of one domain's folder knows them without that first folder ('x.csv')."""
    if path in known or not domain or not path.startswith(domain + "/"):
        return path
    inner = path[len(domain) + 1 :]
    return inner if inner in known else path


def evaluate_retrieval(setup: RunSetup, tasks: list[Task], ks: list[int], missing: list[str] | None = None,
                       select: bool = False) -> RetrievalReport:
    """Run the retriever on every task and measure what its top-K would put in front of the agent, and the first
    planner prompt a run builds without a selection; with select, also ask the selector once per task (the model the
    settings configure) and measure its choice and the first prompt built from it."""
    catalog_paths = setup.access.profiled_paths()
    members: dict[str, list[str]] = defaultdict(list)
    for path, entry_id in setup.access.entry_of_paths():
        members[entry_id].append(path)
    by_path = {path: entry_id for entry_id, paths in members.items() for path in paths}
    ks = sorted(set(ks))
    results: list[TaskRetrieval] = []
    skipped: list[tuple[str, str]] = []
    retriever = setup.retriever()
    # The first prompt as a run builds it (usecases/ask.py, agent/selector.py): the same menu, budget and caps.
    limits = setup.settings.agent
    max_chars, budget, cap = limits.description_chars, limits.context_tokens, limits.view_cap_tokens
    fallback_k = max(1, setup.settings.retrieve.k)
    menu_k = max(limits.menu_k, fallback_k)
    search_k = max(*ks, fallback_k)  # recall@K and tok@K: the top K of one search, as before there was a menu
    with setup.llm(None, None) if select else nullcontext() as llm:
        for task in tasks:
            gold, reason = gold_files(task, catalog_paths, missing or [])
            if reason:
                skipped.append((task.id, reason))
                continue
            hits = retriever.search(task.query, k=search_k)
            menu_hits = hits if menu_k == search_k else retriever.search(task.query, k=menu_k)
            gold_set = set(gold)
            recall: dict[int, float] = {}
            all_found: dict[int, bool] = {}
            tokens: dict[int, int] = {}
            for k in ks:
                top = hits[:k]
                # A hit retrieves its members; identical copies and the near-identical entries folded into its slot
                # are named in its description, so they count as retrieved too.
                found = {p for hit in top for e in [hit.entry_id, *hit.kin_ids, *getattr(hit, "sidecar_ids", ()),
                                                    *(by_path.get(c) for c in hit.copies)]
                         for p in members.get(e or "", [])} & gold_set
                recall[k] = len(found) / len(gold_set)
                all_found[k] = found == gold_set
                tokens[k] = block_tokens([ContextEntry.from_hit(hit) for hit in top], max_chars, budget, task.query)
            menu = candidates(menu_hits)
            fallback = relevance_view(menu, fallback_k, max_chars, budget, task.query, "no selection")
            levels = prompt_levels(fallback, menu_hits, gold, members, by_path, max_chars, cap)
            row = TaskRetrieval(task.id, task.domain, gold, recall, all_found, tokens, [h.path for h in hits],
                                levels, prompt_tokens(fallback, max_chars, cap))
            if llm is not None:
                row.selection, chosen = selected_view(llm, task.query, candidates(menu_hits), gold, fallback_k,
                                                      max_chars, budget)
                row.selection.levels = prompt_levels(chosen, menu_hits, gold, members, by_path, max_chars, cap)
                row.selection.prompt_tokens = prompt_tokens(chosen, max_chars, cap)
            results.append(row)
    return RetrievalReport(ks, results, skipped)


def prompt_tokens(entries: Sequence[ContextEntry], max_chars: int, cap_tokens: int) -> int:
    """Return the estimated tokens of a view's data block, as every prompt of the first round shows it."""
    return len(view.data_block(entries, max_chars, cap_tokens)) // CHARS_PER_TOKEN


def prompt_levels(entries: Sequence[ContextEntry], hits: Sequence[Any], gold: list[str], members: dict[str, list[str]],
                  by_path: dict[str, str], max_chars: int = 0, cap_tokens: int = 0) -> dict[str, str]:
    """Return each gold file's level in the first planner prompt of this view (the menu's entries at their levels,
    view.shown_levels: the cap on whole descriptions applies), built from these hits.

    A file takes its entry's level (its own entry's, or its family's): whole, brief, or named when the entry is a
    menu line. A byte-identical copy and a sidecar take the level of the data entry whose description names them.
    kin: a near-identical file that is one line inside a whole entry's description: a later member of a chosen
    series, or a file search folded under a whole candidate as near-identical (not a same-layout companion, which is
    a candidate of its own); folded under a brief or named candidate, it takes that level. Else absent.
    """
    named_as = {"whole": "whole", "kin": "kin", "brief": "brief", "line": "named"}
    rank = {level: i for i, level in enumerate(LEVELS)}
    level_of: dict[str, str] = {}

    def note(entry_id: str | None, level: str) -> None:
        for path in members.get(entry_id or "", []):
            if path not in level_of or rank[level] < rank[level_of[path]]:
                level_of[path] = level

    shown = [(e, named_as[level]) for e, level in view.shown_levels(entries, max_chars, cap_tokens)]
    hit_of = {hit.path: hit for hit in hits}
    for e, level in shown:
        note(e.entry_id, level)
        hit = hit_of.get(e.path)
        if hit is None or e.folded_under:
            continue
        for copy in hit.copies:
            note(by_path.get(copy), level)
        for sidecar_id in getattr(hit, "sidecar_ids", ()):
            note(sidecar_id, level)  # shown inside this entry's block
        companions = set(getattr(hit, "companions", ()))
        for kin_path, kin_id in zip(hit.kin, hit.kin_ids, strict=True):
            if kin_path not in companions:  # one line in this entry's description
                note(kin_id, "kin" if level == "whole" else level)
    return {path: level_of.get(path, "absent") for path in gold}


def default_missing_list(tasks_path: Path) -> list[str]:
    """Find KramaBench's missing_blobs.txt next to the tasks folder, if there is one."""
    for candidate in (tasks_path.parent / "missing_blobs.txt", tasks_path.parent.parent / "missing_blobs.txt"):
        if candidate.is_file():
            return [line.strip() for line in candidate.read_text().splitlines() if line.strip()]
    return []
