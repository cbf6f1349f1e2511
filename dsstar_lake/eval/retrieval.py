"""`dslake eval retrieval`: recall@K, all-found@K and context size of the retriever on tasks with known files,
and the level at which each of a task's files appears in the first planner prompt."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.agent.context import block_tokens, shown_forms
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.eval.resolve import resolve_sources
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
    # Each gold file's level in the first planner prompt: whole, kin (a line under a whole entry), brief, named, absent.
    levels: dict[str, str] = field(default_factory=dict)

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
            table[name] = entry
        return table

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return {"ks": self.ks, "summary": self.summary(), "skipped": self.skipped,
                "tasks": [{**asdict(t), "all_whole": t.all_whole, "all_whole_strict": t.all_whole_strict}
                          for t in self.tasks]}


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


def evaluate_retrieval(setup: RunSetup, tasks: list[Task], ks: list[int], missing: list[str] | None = None) -> RetrievalReport:
    """Run the retriever on every task and measure what its top-K would put in front of the agent."""
    catalog_paths = setup.access.profiled_paths()
    members: dict[str, list[str]] = defaultdict(list)
    for path, entry_id in setup.access.entry_of_paths():
        members[entry_id].append(path)
    by_path = {path: entry_id for entry_id, paths in members.items() for path in paths}
    ks = sorted(set(ks))
    results: list[TaskRetrieval] = []
    skipped: list[tuple[str, str]] = []
    retriever = setup.retriever()
    # Context size as the agent's prompts show it: the same budget and description cap.
    max_chars, budget = setup.settings.agent.description_chars, setup.settings.agent.context_tokens
    prompt_k = setup.settings.retrieve.k  # what `dslake ask` retrieves for its first prompt
    for task in tasks:
        gold, reason = gold_files(task, catalog_paths, missing or [])
        if reason:
            skipped.append((task.id, reason))
            continue
        hits = retriever.search(task.query, k=max(*ks, prompt_k))
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
        levels = prompt_levels(hits[:prompt_k], gold, members, by_path, max_chars, budget, task.query)
        results.append(TaskRetrieval(task.id, task.domain, gold, recall, all_found, tokens, [h.path for h in hits],
                                     levels))
    return RetrievalReport(ks, results, skipped)


def prompt_levels(hits: list[Any], gold: list[str], members: dict[str, list[str]], by_path: dict[str, str],
                  max_chars: int, budget: int, question: str = "") -> dict[str, str]:
    """Return each gold file's level in the first planner prompt built from these hits, as data_block shows it.

    A file is whole when its entry (its own, its family's, one it is a byte-identical copy of, or the data entry it
    is a sidecar of) is shown in full,
    or it is a companion described whole inside such an entry; kin when it is folded as one line under one; else its entry's form (brief, named); absent
    when no shown entry holds it.
    """
    forms = shown_forms([ContextEntry.from_hit(hit) for hit in hits], max_chars, budget, question=question)
    level_of: dict[str, str] = {}
    rank = {level: i for i, level in enumerate(LEVELS)}

    def note(entry_id: str | None, level: str) -> None:
        for path in members.get(entry_id or "", []):
            if path not in level_of or rank[level] < rank[level_of[path]]:
                level_of[path] = level

    for hit, (form, _) in zip(hits, forms, strict=True):
        own = {"full": "whole"}.get(form, form)
        note(hit.entry_id, own)
        for copy in hit.copies:
            note(by_path.get(copy), own)
        for sidecar_id in getattr(hit, "sidecar_ids", ()):
            note(sidecar_id, own)  # shown inside this entry's block
        companions = set(getattr(hit, "companions", ()))
        for kin_path, kin_id in zip(hit.kin, hit.kin_ids, strict=True):
            # A companion is described whole inside this entry's block; a kin has one line under it.
            note(kin_id, own if kin_path in companions or own != "whole" else "kin")
    return {path: level_of.get(path, "absent") for path in gold}


def default_missing_list(tasks_path: Path) -> list[str]:
    """Find KramaBench's missing_blobs.txt next to the tasks folder, if there is one."""
    for candidate in (tasks_path.parent / "missing_blobs.txt", tasks_path.parent.parent / "missing_blobs.txt"):
        if candidate.is_file():
            return [line.strip() for line in candidate.read_text().splitlines() if line.strip()]
    return []
