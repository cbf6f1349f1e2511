"""Benchmark results: one row per task, the results file they are appended to, and the per-domain summary."""

from __future__ import annotations

import fnmatch
import json
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from dsstar_lake.errors import UsageError

# A family glob uses only '*'; a literal '[' or '?' in a folder name must not act as a wildcard.
_GLOB_SPECIALS = str.maketrans({"[": "[[]", "?": "[?]"})


@dataclass
class TaskResult:
    """One task's row: the answer, its score, and what the run cost."""

    id: str
    domain: str
    query: str
    answer: str  # what the final script printed
    parsed: Any  # parse_answer(answer)
    truth: Any
    answer_type: str
    score: float
    metric: str  # KramaBench's metric name (fuzzy_paraphrase when no judge decided a string_approximate)
    method: str  # rule | exact | judge | fuzzy | error (the run failed: score 0)
    run_id: str | None
    files_used: list[str]  # what the run's scripts read (lake-relative paths or family globs)
    context: list[str]  # every entry the run had in its data context
    gold: list[str]  # the task's data_sources, resolved to lake files
    recall: float | None  # share of the gold files the scripts read
    context_recall: float | None  # share of the gold files in the data context
    oracle: bool
    verified: bool = False
    stop_reason: str | None = None
    rounds: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0
    seconds: float = 0.0
    error: str | None = None
    judge_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSONL row."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskResult:
        """Rebuild a row read back from the results file."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class BenchmarkReport:
    """Every scored task (rows resumed from the results file included), the tasks skipped, the judge used."""

    results: list[TaskResult]
    skipped: list[tuple[str, str]]
    resumed: int
    oracle: bool
    judge: (
        dict[str, Any] | None
    )  # the judge's model, calls and cost; None: string_approximate is fuzzy-matched
    out: str | None = None

    def summary(self) -> dict[str, dict[str, Any]]:
        """Return {domain or 'overall': n, score (sum of scores / n, as KramaBench), errors, recall, cost}."""
        groups: dict[str, list[TaskResult]] = defaultdict(list)
        for row in self.results:
            groups[row.domain].append(row)
            groups["overall"].append(row)
        table: dict[str, dict[str, Any]] = {}
        for name in sorted(groups, key=lambda g: (g == "overall", g)):
            rows = groups[name]
            n = len(rows)
            table[name] = {
                "n": n,
                "score": round(sum(r.score for r in rows) / n, 4),
                "errors": sum(r.method == "error" for r in rows),
                "recall": mean(r.recall for r in rows),
                "context_recall": mean(r.context_recall for r in rows),
                "tokens": round(sum(r.tokens for r in rows) / n),
                "cost_usd": round(sum(r.cost_usd for r in rows) / n, 4),
                "llm_calls": round(sum(r.llm_calls for r in rows) / n, 1),
                "seconds": round(sum(r.seconds for r in rows) / n, 1),
            }
        return table

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return {
            "oracle": self.oracle,
            "judge": self.judge,
            "out": self.out,
            "resumed": self.resumed,
            "summary": self.summary(),
            "skipped": [list(s) for s in self.skipped],
            "results": [r.to_dict() for r in self.results],
        }


def coverage(gold: list[str], paths: list[str]) -> float | None:
    """Return the share of gold files that paths name (a family glob covers the files it matches)."""
    if not gold:
        return None
    exact = set(paths)
    globs = [p.translate(_GLOB_SPECIALS) for p in paths if "*" in p]
    found = sum(g in exact or any(fnmatch.fnmatchcase(g, pattern) for pattern in globs) for g in gold)
    return round(found / len(gold), 4)


def mean(values: Iterable[float | None]) -> float | None:
    """Return the mean of the values that are not None, or None."""
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 4) if kept else None


def read_results(out: Path, oracle: bool) -> dict[str, TaskResult]:
    """Read the rows already in a results file (a torn line is ignored, so its task is run again)."""
    if not out.exists():
        return {}
    rows: dict[str, TaskResult] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            continue
        if bool(data.get("oracle")) != oracle:
            mode = "with" if data.get("oracle") else "without"
            raise UsageError(
                f"{out} was written {mode} --oracle; resume it the same way, or choose another --out"
            )
        rows[data["id"]] = TaskResult.from_dict(data)
    return rows


class ResultWriter:
    """Append rows to the results file as tasks finish, one JSON line each, flushed at once; thread-safe."""

    def __init__(self, out: Path | None) -> None:
        self._fh = None
        self._lock = threading.Lock()
        if out is None:
            return
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            torn = out.exists() and out.stat().st_size and not out.read_bytes().endswith(b"\n")
            self._fh = open(out, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        except OSError as exc:
            raise UsageError(f"cannot write the results file {out}: {exc.strerror or exc}") from None
        if torn:
            self._fh.write("\n")  # a killed write left half a line: start the next row on a line of its own

    def write(self, row: TaskResult) -> None:
        """Append one row."""
        if self._fh is None:
            return
        with self._lock:
            self._fh.write(json.dumps(row.to_dict(), ensure_ascii=False, default=str) + "\n")
            self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
