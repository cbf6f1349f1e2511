"""Benchmark tasks: KramaBench workload JSON, or JSONL rows {"id", "query", "files"}."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsstar_lake.base.errors import UsageError


@dataclass
class Task:
    """One question with, where known, its answer and the data it needs."""

    id: str
    query: str
    domain: str
    answer: Any = None
    answer_type: str | None = None
    # KramaBench's loose source names, relative to the domain folder; resolve them with eval.resolve.
    data_sources: list[str] = field(default_factory=list)
    # Lake-relative files given exactly (JSONL tasks); None when the task gives data_sources instead.
    files: list[str] | None = None
    # Alternative golds that score as well as `answer` (KramaBench's optional accepted_answers).
    accepted_answers: list[Any] = field(default_factory=list)
    subtasks: list[Task] = field(default_factory=list)

    @property
    def answers(self) -> list[Any]:
        """Return every accepted answer, `answer` first."""
        return [self.answer, *self.accepted_answers]


def load_tasks(path: str | Path) -> list[Task]:
    """Read tasks from a KramaBench workload (a JSON list) or a JSONL file of {"id", "query", "files"} rows."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no tasks file {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read tasks file {path}: {exc}") from None
    rows = _rows(text, path)
    tasks = [_task(row, path, f"task {i + 1}") for i, row in enumerate(rows)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise UsageError(f"{path}: task id {task.id!r} appears twice")
        seen.add(task.id)
    return tasks


def domain_of(task_id: str, path: Path) -> str:
    """Return a task's domain: the id's prefix before the first '-' ("legal-easy-3"), else the file stem."""
    match = re.match(r"([A-Za-z][A-Za-z0-9_]*)-", task_id)
    return match.group(1) if match else path.stem


def _rows(text: str, path: Path) -> list[dict[str, Any]]:
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{path} is not valid JSON: {exc}") from None
    elif stripped.startswith("{") and path.suffix.lower() == ".json":
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{path} is not valid JSON: {exc}") from None
        rows = doc.get("tasks") if isinstance(doc, dict) else None
        if not isinstance(rows, list):
            raise UsageError(f"{path}: expected a list of tasks or an object with a 'tasks' list")
    else:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise UsageError(f"{path}:{number} is not a JSON object: {exc}") from None
    if not all(isinstance(row, dict) for row in rows):
        raise UsageError(f"{path}: every task must be a JSON object")
    return rows


def _task(row: dict[str, Any], path: Path, where: str, domain: str | None = None) -> Task:
    task_id, query = row.get("id"), row.get("query")
    if not isinstance(task_id, str) or not task_id:
        raise UsageError(f"{path}: {where} has no 'id'")
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"{path}: task {task_id} has no 'query'")
    files = row.get("files")
    if files is not None and not _is_str_list(files):
        raise UsageError(f"{path}: task {task_id}: 'files' must be a list of paths")
    sources = row.get("data_sources", [])
    if isinstance(sources, str):
        sources = [sources]
    if not _is_str_list(sources):
        raise UsageError(f"{path}: task {task_id}: 'data_sources' must be a list of names")
    domain = str(row.get("domain") or domain or domain_of(task_id, path))
    subtasks = [
        _task(sub, path, f"subtask {i + 1} of {task_id}", domain)
        for i, sub in enumerate(row.get("subtasks") or [])
        if isinstance(sub, dict)
    ]
    return Task(
        id=task_id,
        query=query,
        domain=domain,
        answer=row.get("answer"),
        answer_type=row.get("answer_type"),
        data_sources=list(sources),
        files=list(files) if files is not None else None,
        accepted_answers=list(row.get("accepted_answers") or []),
        subtasks=subtasks,
    )


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
