"""`dslake eval kramabench`: answer benchmark tasks with the agent and score them with KramaBench's metrics.

Each task's top-level `query` is asked with `Lake.ask` (over retrieved files, or with `oracle` exactly the
task's resolved `data_sources`); what the final script prints is read by `parse_answer` and scored by
`score_best` for the task's `answer_type`. One JSONL row per task is appended to `out` as soon as the task
finishes, so an interrupted benchmark resumes where it stopped (`resume`). A task that fails scores 0 with
its error recorded, and the benchmark goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from dslake_index.progress import Progress

from dsstar_lake.base.errors import DslakeError, UsageError
from dsstar_lake.eval.answers import parse_answer
from dsstar_lake.eval.filescore import coverage
from dsstar_lake.eval.metrics import METRIC_OF, Score, score_best
from dsstar_lake.eval.resolve import read_missing
from dsstar_lake.eval.results import (
    FUZZY,
    MATCHED,
    WITHHELD,
    BenchmarkReport,
    ResultWriter,
    TaskResult,
    read_results,
)
from dsstar_lake.eval.retrieval import default_missing_list, gold_files
from dsstar_lake.eval.tasks import Task, load_tasks
from dsstar_lake.runs.setup import CACHE_NAME, RunSetup

GUIDELINES_PATH = Path(__file__).resolve().with_name("guidelines.txt")
FROM_SETTINGS: Any = object()  # judge=FROM_SETTINGS: eval.judge_model, else the run's own provider and model


@dataclass
class BenchmarkOptions:
    """How to run the benchmark."""

    oracle: bool = False  # give each run exactly its resolved data_sources instead of retrieving
    jobs: int | None = None  # tasks in parallel; None = eval.jobs
    k: int | None = None  # entries retrieved per question; None = retrieve.k
    max_rounds: int | None = None  # None = agent.max_rounds
    overrides: dict[str, Any] = field(default_factory=dict)  # settings for every run (the model flags)
    missing: list[str] = field(default_factory=list)  # lake-relative files known to be absent
    out: Path | None = None  # JSONL of one row per task
    resume: bool = False  # skip the ids already in `out` and append the rest
    judge: bool = True  # False (--no-judge): no model judges; fuzzy matching decides string_approximate answers


# ---------------------------------------------------------------- tasks and guidelines


def load_benchmark(
    task_files: Iterable[str | Path], ids: Iterable[str] = (), missing: str | Path | None = None
) -> tuple[list[Task], list[str]]:
    """Read the workload files, keep the ids asked for (repeated or comma-separated), read missing files."""
    paths = [Path(p) for p in task_files]
    if not paths:
        raise UsageError("give at least one --tasks file")
    tasks: list[Task] = []
    seen: set[str] = set()
    for path in paths:
        for task in load_tasks(path):
            if task.id in seen:
                raise UsageError(f"task id {task.id!r} appears in more than one tasks file")
            seen.add(task.id)
            tasks.append(task)
    wanted = {i.strip() for raw in ids for i in raw.split(",") if i.strip()}
    if wanted:
        unknown = sorted(wanted - seen)
        if unknown:
            raise UsageError(
                f"no task with id {', '.join(unknown)}", hint="ids are the tasks files' `id` fields"
            )
        tasks = [t for t in tasks if t.id in wanted]
    absent = read_missing(missing) if missing else default_missing_list(paths[0].resolve())
    return tasks, absent


@cache
def _base_guidelines() -> str:
    return GUIDELINES_PATH.read_text(encoding="utf-8").strip()


def benchmark_guidelines(extra: str = "") -> str:
    """Return the guidelines a benchmark run is given: an answer that parses, then the user's own (`extra`).

    The rules of the answer's form (a number's rounding, the options offered, a list's or a composite's format)
    are composed by the agent from the question's words (agent/guidelines.py), as for any question; the task's
    answer_type is not used, so a benchmark measures what a user's question gets.
    """
    parts = [_base_guidelines()]
    if extra.strip():
        parts.append(extra.strip())
    return "\n".join(parts)


# ---------------------------------------------------------------- scoring


class _JudgeFailed(Exception):
    """The judge model could not answer (the score falls back to fuzzy matching)."""


def score_answer(task: Task, value: str, judge: Any, fuzzy_threshold: float) -> tuple[Any, Score, str | None]:
    """Parse and score one answer; return (parsed, score, judge error); a failing judge falls to fuzzy."""
    parsed = parse_answer(value)
    bound = judge.for_question(task.query) if hasattr(judge, "for_question") else judge

    def guarded(predicted: str, truth: str) -> bool:
        try:
            return bool(bound(predicted, truth))
        except DslakeError as exc:  # the judge model failed: not the answer's fault, and not a bug
            raise _JudgeFailed(str(exc)) from exc

    kind = task.answer_type or ""
    try:
        judged = score_best(
            kind, parsed, task.answers, guarded if bound else None, fuzzy_threshold=fuzzy_threshold
        )
        return parsed, judged, None
    except _JudgeFailed as exc:
        fallback = score_best(kind, parsed, task.answers, None, fuzzy_threshold=fuzzy_threshold)
        return parsed, fallback, f"the judge failed, so fuzzy matching decided: {exc}"


# ---------------------------------------------------------------- the run


def run_benchmark(
    setup: RunSetup,
    tasks: list[Task],
    options: BenchmarkOptions | None = None,
    *,
    judge: Any = FROM_SETTINGS,
    progress: Progress | None = None,
) -> BenchmarkReport:
    """Answer and score every task whose sources are in the lake; return the report (and append rows to out).

    setup: the catalog, with options.overrides and the provider given (if any) applied (Lake.benchmark).
    judge: FROM_SETTINGS builds an LLM judge from eval.judge_model, else from the run's provider (the one
    given, or the configured one) and model; None only when no model is configured (fuzzy fallback, flagged).
    A callable judge(predicted, truth) -> bool, or None, is used as given.
    """
    options = options or BenchmarkOptions()
    progress = progress or (lambda event, data: None)
    settings = setup.settings
    _check(setup, options)
    planned, skipped = plan_tasks(setup, tasks, options.missing)
    done = read_results(options.out, options.oracle) if options.resume and options.out else {}
    todo = [(task, gold) for task, gold in planned if task.id not in done]
    jobs = max(1, options.jobs or settings.eval.jobs)
    resumed = len(planned) - len(todo)
    progress(
        "plan",
        {"tasks": len(planned), "todo": len(todo), "resumed": resumed, "skipped": len(skipped), "jobs": jobs},
    )
    own_judge = judge is FROM_SETTINGS
    if own_judge:
        judge = _settings_judge(setup, options.out) if options.judge else None
    results = {t.id: done[t.id] for t, _ in planned if t.id in done}
    writer = ResultWriter(options.out)
    threshold = settings.eval.fuzzy_threshold

    def one(task: Task, gold: list[str]) -> TaskResult:
        # The catalog keeps one manifest connection and retriever per thread, so the workers share it. The row
        # is written here, so a task that finishes while an interrupt waits for it is not lost.
        row = run_task(setup, task, gold, options, judge, threshold)
        writer.write(row)
        return row

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="dslake-eval")
    try:
        futures = [pool.submit(one, task, gold) for task, gold in todo]
        for count, future in enumerate(as_completed(futures), 1):
            row = future.result()
            results[row.id] = row
            progress("task", {"result": row, "done": count, "total": len(todo)})
    finally:
        # On an interrupt the tasks not yet started are dropped; the rows written stay for --resume.
        pool.shutdown(wait=True, cancel_futures=True)
        writer.close()
        if own_judge and judge is not None:
            judge.close()
    info = (
        judge.totals() if hasattr(judge, "totals") else ({"model": "custom"} if judge is not None else None)
    )
    ordered = [results[t.id] for t, _ in planned if t.id in results]
    return BenchmarkReport(
        ordered, skipped, resumed, options.oracle, info, str(options.out) if options.out else None
    )


def _check(setup: RunSetup, options: BenchmarkOptions) -> None:
    """Fail once, before any task runs, on what would fail every task."""
    setup.lake_location("the benchmark")
    setup.check_model()
    if not options.oracle:
        setup.connection()  # retrieval needs the catalog
        # Chroma fails when several threads make the first client for one folder at once; make it here.
        setup.vector_store()
    if options.resume and options.out is None:
        raise UsageError("--resume needs --out, the results file to continue")
    if not options.resume and options.out is not None and options.out.exists() and options.out.stat().st_size:
        raise UsageError(
            f"{options.out} already holds results",
            hint="pass --resume to continue it, or choose another --out",
        )


def plan_tasks(
    setup: RunSetup, tasks: list[Task], missing: list[str]
) -> tuple[list[tuple[Task, list[str]]], list[tuple[str, str]]]:
    """Resolve each task's gold files against the lake; return (task, gold) pairs and (id, reason) skips."""
    lake_files = setup.lake_files()
    planned: list[tuple[Task, list[str]]] = []
    skipped: list[tuple[str, str]] = []
    for task in tasks:
        if task.answer_type not in METRIC_OF:
            skipped.append((task.id, f"no known answer_type ({task.answer_type!r}) to score with"))
            continue
        gold, reason = gold_files(task, lake_files, missing)
        if reason:
            skipped.append((task.id, reason))
        else:
            planned.append((task, gold))
    return planned, skipped


def run_task(
    setup: RunSetup,
    task: Task,
    gold: list[str],
    options: BenchmarkOptions,
    judge: Any,
    fuzzy_threshold: float,
) -> TaskResult:
    """Ask one task's question and score the answer; a failure is a row with score 0 and its error."""
    from dsstar_lake.usecases.ask import ask

    started = time.perf_counter()
    answer, error = None, None
    try:
        guidelines = benchmark_guidelines(setup.settings.agent.guidelines)
        flags = {"retrieve.k": options.k, "agent.guidelines": guidelines, "agent.max_rounds": options.max_rounds,
                 **options.overrides}
        answer = ask(setup.with_overrides(flags), task.query,
                     files=list(gold) if options.oracle else None)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # one task's failure (or a bug it hit) must not stop the benchmark; it scores 0
        error = str(exc) if isinstance(exc, DslakeError) else f"{type(exc).__name__}: {exc}"
    row = TaskResult(
        id=task.id,
        domain=task.domain,
        query=task.query,
        answer="",
        parsed=None,
        truth=task.answer,
        answer_type=task.answer_type or "",
        score=0.0,
        metric=METRIC_OF[task.answer_type or ""],
        method="error",
        run_id=None,
        files_used=[],
        context=[],
        gold=list(gold),
        recall=coverage(gold, []),
        context_recall=coverage(gold, []),
        oracle=options.oracle,
        seconds=round(time.perf_counter() - started, 2),
        error=error,
    )
    row.score_files()
    if answer is None:
        return row
    row.answer, row.run_id, row.error = answer.text or "", answer.run_id, answer.error
    row.files_used, row.context = list(answer.files_used), list(answer.context)
    row.recall, row.context_recall = coverage(gold, row.files_used), coverage(gold, row.context)
    row.verified, row.stop_reason, row.rounds = answer.verified, answer.stop_reason, answer.rounds
    row.assumptions, row.alternatives = list(answer.assumptions), [dict(a) for a in answer.alternatives]
    row.chosen, row.overridden = dict(answer.chosen), dict(answer.overridden)
    row.selection, row.selected_by = [dict(e) for e in answer.selection], answer.selected_by
    row.score_files()
    row.input_tokens, row.output_tokens = answer.input_tokens, answer.output_tokens
    row.tokens, row.cost_usd, row.llm_calls = (
        row.input_tokens + row.output_tokens,
        answer.cost_usd,
        answer.llm_calls,
    )
    if answer.resumable:  # the model failed for good mid-run: no answer was reached
        return row
    if task.answer is None:  # the truth is withheld: nothing to score against, so no judge is asked
        row.method = WITHHELD
        return row
    try:
        row.parsed, result, row.judge_error = score_answer(task, row.answer, judge, fuzzy_threshold)
    except Exception as exc:  # a scoring bug on one odd answer must not lose the benchmark
        row.error = f"scoring failed: {type(exc).__name__}: {exc}"
        return row
    row.score, row.metric, row.method = result.value, result.metric, result.method
    row.judged_by = judged_by(result, judge)
    row.alternative_score = alternative_score(task, row, judge, fuzzy_threshold)
    row.alternative_matched = row.alternative_score is not None and row.alternative_score >= MATCHED
    return row


def alternative_score(task: Task, row: TaskResult, judge: Any, fuzzy_threshold: float) -> float | None:
    """Return the best score of the run's alternative readings, by the answer's scorer; diagnostic only.

    None when the run recorded none, or the answer itself matched (then no judge call is spent on them).
    """
    values = [str(a.get("value", "")) for a in row.alternatives if str(a.get("value", "")).strip()]
    if not values or row.score >= MATCHED:
        return None
    best = 0.0
    for value in values:
        try:
            best = max(best, score_answer(task, value, judge, fuzzy_threshold)[1].value)
        except Exception:  # a diagnostic must never lose the task's row
            continue
    return best


def judged_by(result: Score, judge: Any) -> str | None:
    """Return who decided a string_approximate score: the judge's model, "fuzzy", or None (no judgement)."""
    if result.method == "judge":
        return str(getattr(judge, "model", None) or "custom")
    if result.method == "fuzzy" and result.metric == "fuzzy_paraphrase":
        return FUZZY  # list_approximate's fuzzy item matching is its metric, not a missing judge
    return None


# ---------------------------------------------------------------- plumbing


def _settings_judge(setup: RunSetup, out: Path | None) -> Any:
    """Build the judge (eval.judge_model, else the run's model); its calls are recorded beside the results file."""
    from dsstar_lake.eval.judge import make_judge
    from dsstar_lake.llm import JsonlRecorder

    recorder = JsonlRecorder(out.with_name(out.stem + ".judge.jsonl")) if out is not None else None
    return make_judge(
        setup.settings, provider=setup.provider, recorder=recorder, cache_path=setup.catalog_dir / CACHE_NAME
    )
