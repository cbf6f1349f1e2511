"""Answer sub-questions with the DS-STAR loop, in parallel threads; keep each answer, script and figure."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.progress import Progress

from dsstar_lake.base.errors import DslakeError
from dsstar_lake.report.prompts import template
from dsstar_lake.report.questions import SubQuestion
from dsstar_lake.runs.setup import run_setup
from dsstar_lake.sandbox.figures import read_figure
from dsstar_lake.sandbox.workfolder import regular_files

if TYPE_CHECKING:
    from dsstar_lake.report.budget import SharedBudget
    from dsstar_lake.runs.setup import RunSetup

ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b")
# Per-run budgets are off in sub-question runs: the report's SharedBudget counts for all of them.
UNLIMITED = {"llm.max_llm_calls": 0, "llm.max_cost": 0.0}


@dataclass
class Answering:
    """What every sub-question run of one report shares."""

    setup: RunSetup  # the report's setup: its sub-question runs add their own overrides
    provider: SharedBudget
    overrides: dict[str, Any]  # settings for the sub-question runs (model flags, sandbox limits...)
    figures_dir: Path  # <report run>/figures
    jobs: int = 2
    max_figures: int = 3
    progress: Progress = lambda event, data: None


def slug(text: str, limit: int = 40) -> str:
    """Return a file-name-safe short form of a text."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-") or "chart"


def guidelines(question: SubQuestion) -> str:
    """Return the finalyzer's guidelines for a sub-question: a quotable answer, and the chart it asked for."""
    text = template("answer_guidelines").strip()
    if question.chart:
        chart = template("chart_guideline").strip()
        text += "\n" + chart.format(chart=question.chart, filename=f"{slug(question.chart)}.png")
    return text


def answer_all(ctx: Answering, questions: list[SubQuestion]) -> None:
    """Answer the questions (ctx.jobs at once); each ends answered, unverified, unanswered or skipped."""
    if not questions:
        return
    pool = ThreadPoolExecutor(max_workers=max(1, ctx.jobs), thread_name_prefix="dslake-report")
    futures = [pool.submit(answer_one, ctx, q) for q in questions]
    try:
        for future in futures:
            future.result()
    except BaseException:
        # Interrupted (or a bug): start nothing new; runs under way finish and keep their records.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def answer_one(ctx: Answering, q: SubQuestion) -> None:
    """Answer one sub-question with its own run in a worker thread (the catalog has a connection per thread)."""
    from dsstar_lake.usecases.ask import ask

    if ctx.provider.exhausted():
        _set(ctx, q, "skipped", "the report's LLM budget was spent before this sub-question started")
        return
    started = time.perf_counter()
    _set(ctx, q, "running", "starting")
    try:
        flags = {"agent.guidelines": guidelines(q), **ctx.overrides, **UNLIMITED}
        answer = ask(run_setup(ctx.setup.access, flags, provider=ctx.provider), q.text, progress=_relay(ctx, q))
    except DslakeError as exc:  # a run that could not start or was stopped (lake changed, no catalog...)
        q.seconds = round(time.perf_counter() - started, 2)
        _set(ctx, q, "unanswered", str(exc))
        return
    finally:
        ctx.setup.close()  # this worker thread's connection only
    q.run_id, q.verified, q.answer = answer.run_id, answer.verified, (answer.text or "").strip()
    q.assumptions, q.alternatives = list(answer.assumptions), [dict(a) for a in answer.alternatives]
    q.chosen = dict(answer.chosen)
    q.files_used = list(answer.files_used)
    q.seconds = round(time.perf_counter() - started, 2)
    folder = ctx.setup.catalog_dir / "runs" / answer.run_id
    q.script_name, q.script = _script(folder)
    q.figures = collect_figures(folder / "work", ctx.figures_dir, q.n, ctx.max_figures)
    if not q.answer or answer.resumable:
        why = answer.error or "the run printed no answer"
        error = last_error(folder / (Path(q.script_name).stem + ".out")) if q.script_name else ""
        _set(ctx, q, "unanswered", f"{error} ({why})" if error else why)
    else:
        _set(ctx, q, "answered" if answer.verified else "unverified",
             "" if answer.verified else f"not verified ({answer.stop_reason or 'stopped'})")


def _script(folder: Path) -> tuple[str, str]:
    """Return the name and text of the script that printed the answer, else of the last round's script."""
    solution = folder / "solution.py"
    if solution.is_file():
        return "solution.py", solution.read_text(encoding="utf-8", errors="replace")
    rounds = sorted(folder.glob("round_*.py"))
    if rounds:
        return rounds[-1].name, rounds[-1].read_text(encoding="utf-8", errors="replace")
    return "", ""


def last_error(out_file: Path) -> str:
    """Return the exception line of a failed script's output (NAME.out), or '' when there is none."""
    try:
        text = out_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    errors = [line.strip() for line in text.partition("--- stderr ---")[2].splitlines()
              if ERROR_LINE.match(line.strip())]
    return errors[-1][:300] if errors else ""


def collect_figures(work: Path, figures_dir: Path, n: int, limit: int) -> list[str]:
    """Copy the images a run's scripts saved in its work folder to figures/q<n>-<name>; return their paths.

    The work folder is the script's: an image is read without following links, so a link planted there
    (to a host file, say) is never embedded in the report.
    """
    out: list[str] = []
    for name in regular_files(work):
        if len(out) >= limit:
            break
        data = read_figure(work, name)
        if data is None:
            continue
        figures_dir.mkdir(parents=True, exist_ok=True)
        path = Path(name)
        target = f"q{n}-{slug(path.stem, 60)}{path.suffix.lower()}"
        (figures_dir / target).write_bytes(data)
        out.append(f"figures/{target}")
    return out


def _relay(ctx: Answering, q: SubQuestion) -> Progress:
    """Turn a sub-question run's progress events into a short 'what it is doing' line for the table."""
    now = {"round": 0}

    def relay(event: str, data: dict[str, Any]) -> None:
        if event == "run":
            q.run_id = data.get("run_id")
            _set(ctx, q, "running", "retrieving")
        elif event == "step":
            now["round"] = int(data.get("round", 0))
        elif event == "role":
            _set(ctx, q, "running", f"round {now['round'] + 1} · {data.get('role')}")
        elif event == "exec_start":
            _set(ctx, q, "running", f"round {now['round'] + 1} · running {data.get('name')}")
        elif event == "finalize":
            _set(ctx, q, "running", "finalizing")

    return relay


def _set(ctx: Answering, q: SubQuestion, status: str, detail: str) -> None:
    q.status, q.detail = status, detail
    ctx.progress("question", {"question": q})
