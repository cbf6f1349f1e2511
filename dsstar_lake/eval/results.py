"""Benchmark results: one row per task, the results file they are appended to, and the per-domain summary."""

from __future__ import annotations

import ast
import json
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from dsstar_lake.base.errors import UsageError
from dsstar_lake.eval.filescore import file_score, selection_score

_PATH_FIELDS = ("files_used", "context", "gold")  # always JSON lists of strings in a row
FUZZY = "fuzzy"  # judged_by of a string_approximate row that fuzzy matching decided
MATCHED = 0.99  # a score that counts as matching the truth (rae_score: within about 1 %)
WITHHELD = "withheld"  # method of a row whose task gives no answer: run, never scored, never judged


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
    # Who decided a string_approximate row: the judge's model, "fuzzy" (no model configured, or the judge
    # failed), or None (equal strings, another answer type, or a failed run).
    judged_by: str | None = None
    # The readings the answer rests on and the other readings the run recorded ({"reading", "value", "how"}).
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[dict[str, str]] = field(default_factory=list)
    # Diagnostic only, never part of the score: the best score of an alternative, by the answer's own scorer
    # (None: none recorded, or the answer already matched), and whether it matched where the answer did not.
    alternative_score: float | None = None
    alternative_matched: bool = False
    # The reading chosen where the run's readings gave different answers (agent/chooser.py): reading, because,
    # value; {} when they agreed.
    chosen: dict[str, str] = field(default_factory=dict)
    # The entries the run selected for its first round ({"path", "reason"}) and who selected them: selector,
    # relevance, given, or "" (Answer.selected_by).
    selection: list[dict[str, str]] = field(default_factory=list)
    selected_by: str = ""
    # Precision, recall and F1 against the gold files (eval/filescore.py) of the selection, None when the agent
    # chose nothing itself (given files, or a run from before the selection), and of the files the scripts read.
    selection_precision: float | None = None
    selection_recall: float | None = None
    selection_f1: float | None = None
    reads_precision: float | None = None
    reads_recall: float | None = None
    reads_f1: float | None = None
    # When the answer is not what the final script printed (Answer.overridden): by, final_script, answer, reason.
    overridden: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _PATH_FIELDS:
            setattr(self, name, path_list(getattr(self, name)))

    def score_files(self) -> None:
        """Set the selection's and the reads' precision, recall and F1 from the row's gold, selection and reads."""
        chosen = selection_score(self.gold, self.selection, self.selected_by)
        self.selection_precision, self.selection_recall, self.selection_f1 = (
            (chosen.precision, chosen.recall, chosen.f1) if chosen else (None, None, None))
        reads = file_score(self.gold, self.files_used)
        self.reads_precision, self.reads_recall, self.reads_f1 = (
            (reads.precision, reads.recall, reads.f1) if reads else (None, None, None))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSONL row (path fields checked again: a caller may have set them after construction)."""
        self.__post_init__()
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskResult:
        """Rebuild a row read back from the results file (path fields as lists, old rows' fuzzy flag filled in)."""
        known = {f.name for f in fields(cls)}
        row = cls(**{k: v for k, v in data.items() if k in known})
        if "judged_by" not in data and row.metric == "fuzzy_paraphrase":
            row.judged_by = FUZZY  # written before rows carried the flag
        if "reads_f1" not in data:
            row.score_files()  # written before rows carried the file scores: the reads are scored (no selection)
        return row


def path_list(value: Any) -> list[str]:
    """Return a row's file list as a list of strings; raise TypeError for anything that is not one.

    Rows once held a string here; such a string is read as the list it was written from: JSON or a Python
    list literal, else comma- or newline-separated paths.
    """
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            for read in (json.loads, ast.literal_eval):
                try:
                    parsed = read(text)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(parsed, list):
                    return path_list(parsed)
        return [p.strip() for p in text.replace("\n", ",").split(",") if p.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(p, str) for p in value):
        return list(value)
    raise TypeError(f"a file list must be a list of strings, not {type(value).__name__}: {value!r:.80}")


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
            scored = [r for r in rows if r.method != WITHHELD]  # a withheld truth is run, never scored
            per = max(len(scored), 1)
            wrong = sum(r.score < MATCHED for r in scored)
            matched = sum(r.alternative_matched for r in rows)
            table[name] = {
                "n": n,
                "score": round(sum(r.score for r in scored) / per, 4),
                "withheld": n - len(scored),
                "errors": sum(r.method == "error" for r in rows),
                "fuzzy": sum(r.judged_by == FUZZY for r in rows),
                "recall": mean(r.recall for r in rows),
                "context_recall": mean(r.context_recall for r in rows),
                "tokens": round(sum(r.tokens for r in rows) / n),
                "cost_usd": round(sum(r.cost_usd for r in rows) / n, 4),
                "llm_calls": round(sum(r.llm_calls for r in rows) / n, 1),
                "seconds": round(sum(r.seconds for r in rows) / n, 1),
                # Reading, not computing: tasks whose answer missed but a recorded alternative matched, and
                # the score had each task taken its best-scoring reading (the score above is unchanged).
                "with_alternatives": sum(bool(r.alternatives) for r in rows),
                "alternative_matched": matched,
                "score_any_reading": round(sum(max(r.score, r.alternative_score or 0.0) for r in scored) / per, 4),
                # Of the wrong answers, the share whose truth the run had recorded as an alternative reading.
                "wrong": wrong,
                "truth_in_alternatives": round(matched / wrong, 4) if wrong else None,
                "chosen": sum(bool((r.chosen or {}).get("reading")) for r in rows),
                # File choice (issue 45): means over the tasks that have a figure; `selected` counts the tasks
                # whose entries the agent selected itself (not given, not from before the selection existed).
                "selected": sum(r.selection_f1 is not None for r in rows),
                "selection_precision": mean(r.selection_precision for r in rows),
                "selection_recall": mean(r.selection_recall for r in rows),
                "selection_f1": mean(r.selection_f1 for r in rows),
                "reads_precision": mean(r.reads_precision for r in rows),
                "reads_recall": mean(r.reads_recall for r in rows),
                "reads_f1": mean(r.reads_f1 for r in rows),
            }
        return table

    def judging_note(self) -> str:
        """Return one line on who judged string_approximate answers, with the count of fuzzy-matched rows."""
        fuzzy = sum(r.judged_by == FUZZY for r in self.results)
        flagged = f"{fuzzy} row(s) scored by fuzzy matching (judged_by = {FUZZY})"
        if self.judge is None:
            return f"no model judged string_approximate answers (--no-judge, or none is configured): {flagged}"
        if self.judge.get("calls") is None:
            return f"string_approximate judged by a custom judge; {flagged}"
        return (
            f"string_approximate judged by {self.judge['model']}: {self.judge['calls']} call(s) this session, "
            f"${self.judge['cost_usd']:.4f}; {flagged}"
        )

    def readings_note(self) -> str:
        """Return one line on how much of the missed score was the question's reading, not the computing."""
        overall = self.summary().get("overall")
        if not overall:
            return "no task was scored"
        share = overall["truth_in_alternatives"]
        return (
            f"reading, not computing: in {overall['alternative_matched']} task(s) the answer missed but an "
            f"alternative reading the run recorded matched the truth (runs recorded alternatives in "
            f"{overall['with_alternatives']} of {overall['n']}); "
            f"{'-' if share is None else f'{100 * share:.0f}%'} of the {overall['wrong']} wrong answer(s) had the "
            f"truth among their alternatives; a reading was chosen between differing ones in {overall['chosen']} "
            f"run(s); with the best reading of each task the score would be "
            f"{100 * overall['score_any_reading']:.2f}% (the score is unchanged)"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return {
            "oracle": self.oracle,
            "judge": self.judge,
            "judging": self.judging_note(),
            "readings": self.readings_note(),
            "out": self.out,
            "resumed": self.resumed,
            "summary": self.summary(),
            "skipped": [list(s) for s in self.skipped],
            "results": [r.to_dict() for r in self.results],
        }


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
        try:
            rows[data["id"]] = TaskResult.from_dict(data)
        except (TypeError, ValueError):
            continue  # a row that cannot be rebuilt (fields missing or mistyped) is run again, like a torn one
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
