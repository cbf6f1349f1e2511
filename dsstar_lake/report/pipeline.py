"""DS-STAR+ (v2 paper, section 3.2): sub-questions, answers by the solve loop, a cited report, refinement."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.progress import Progress

from dsstar_lake.agent import context
from dsstar_lake.base.errors import (
    BudgetExceeded,
    CatalogError,
    ConfigError,
    DslakeError,
    ProviderError,
    UsageError,
)
from dsstar_lake.report import citations, document, questions, writer
from dsstar_lake.report.answer import UNLIMITED, Answering, answer_all
from dsstar_lake.report.budget import SharedBudget
from dsstar_lake.report.prompts import fill
from dsstar_lake.report.questions import SubQuestion
from dsstar_lake.runs.record import RunRecord

if TYPE_CHECKING:
    from dsstar_lake.llm.call import LLM
    from dsstar_lake.runs.setup import RunSetup

FORMATS = ("md", "html")
# The roles a report's calls go to: its own (generator, writer) and those of its sub-question runs.
REPORT_ROLES = ("subquestion", "writer", "planner", "coder", "verifier", "router", "debugger", "finalyzer",
                "chooser")
EMPTY = "# Report: {request}\n\n*The writer returned no text; the evidence is in the appendix below.*\n"


@dataclass
class Report:
    """What `report` returns (and report.json holds): where the report is, its evidence, and what it cost."""

    run_id: str
    request: str
    title: str
    folder: str  # the report's run folder: report.md, figures/, report.html, drafts
    files: list[str]  # every file written for the reader (run folder and --out)
    questions: list[SubQuestion]
    context: list[str]  # the entries the sub-question generator saw
    rounds: int  # refinement rounds done
    lake: str = ""
    provider: str = ""
    models: list[str] = field(default_factory=list)  # the models its roles use (one, unless llm.models names more)
    created_at: float = 0.0
    problems: list[str] = field(default_factory=list)  # what the citation check still flagged after the fix
    fixed: bool = False  # the writer was asked once to fix citations or figures
    notes: list[str] = field(default_factory=list)  # why refinement stopped early, and the like
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    markdown: str = field(default="", repr=False)

    @property
    def answered(self) -> list[SubQuestion]:
        """Return the sub-questions that have an answer."""
        return [q for q in self.questions if q.answered]

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data (report.json; the Markdown itself is in report.md)."""
        data = asdict(self)
        data.pop("markdown")
        return data


def _quiet(event: str, data: dict[str, Any]) -> None:
    pass


def build_report(
    setup: RunSetup,
    request: str,
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> Report:
    """Write a cited data-science report for an open-ended request; return the Report."""
    setup.require_writable("`report` keeps its runs' records in it")
    request = (request or "").strip()
    if not request:
        raise UsageError("the report request is empty")
    started = time.perf_counter()
    overrides = setup.overrides
    settings = setup.settings
    fmt = settings.report.format.lower()
    if fmt not in FORMATS:
        raise ConfigError(f"report.format must be md or html, not {fmt!r}")
    lake = setup.lake_location("a report")
    setup.connection()  # a missing catalog is one clear error before a run folder exists
    owned = setup.provider is None
    setup.check_model()
    budget = SharedBudget(setup.make_provider(), settings)
    sub_overrides = {k: v for k, v in overrides.items() if not k.startswith("report.")}
    options = {key: getattr(settings.report, key) for key in ("k", "max_questions", "rounds", "jobs", "format")}
    record = RunRecord.create(setup.catalog_dir, {
        "kind": "report", "question": request, "lake": lake, "catalog": str(setup.catalog_dir),
        "overrides": sub_overrides, "report": options})
    progress = progress or _quiet
    progress("run", {"run_id": record.id, "folder": str(record.folder)})
    try:
        result = _build(setup, record, request, settings, budget, sub_overrides, progress)
        result.files += _write(record.folder, result, fmt, out)
    except KeyboardInterrupt:
        record.set_status("interrupted", "interrupted by the user")
        raise
    except DslakeError as exc:
        record.event("failed", error=str(exc))
        record.set_status("failed", str(exc))
        raise
    finally:
        if owned:
            budget.shutdown()
    result.seconds = round(time.perf_counter() - started, 2)
    spent = budget.spent()
    result.llm_calls, result.input_tokens = spent["llm_calls"], spent["input_tokens"]
    result.output_tokens, result.cost_usd = spent["output_tokens"], spent["cost_usd"]
    _save_json(record.folder, result)
    record.event("done", files=result.files, problems=result.problems, **budget.spent())
    record.set_status("done", "; ".join(result.problems) or None)
    progress("done", {"report": result})
    return result


def _build(setup: RunSetup, record: RunRecord, request: str, settings: Any, budget: SharedBudget,
           sub_overrides: dict[str, Any], progress: Progress) -> Report:
    """Retrieve, ask, answer, write, refine and check; the Report without its files."""
    # report.max_questions caps the total: the refinement rounds get the slots the first round left.
    k, limit = settings.report.k, max(1, settings.report.max_questions)
    entries = context.retrieve(setup.retriever(), request, k, [], "retrieval")
    record.event("retrieval", query=request, k=k, entries=[e.path for e in entries],
                 scores=[e.score for e in entries])
    if not entries:
        raise CatalogError(f"the catalog {setup.catalog_dir} has no entries to report on",
                           hint="run `dslake index LAKE` first", api_hint="run lake.index() first")
    progress("context", {"entries": [e.path for e in entries]})
    data = context.data_block(entries, settings.report.description_chars)
    names = context.filenames(entries)
    report = Report(run_id=record.id, request=request, title="", folder=str(record.folder), files=[],
                    questions=[], context=[e.path for e in entries], rounds=0, lake=str(setup.root),
                    provider=budget.name, models=_models(settings),
                    created_at=float(record.meta().get("created_at") or time.time()))
    answering = Answering(setup=setup, provider=budget, overrides=sub_overrides,
                          figures_dir=record.folder / "figures", jobs=max(1, settings.report.jobs),
                          max_figures=max(0, settings.report.max_figures), progress=progress)
    # The report's own calls (generator, writer) are counted by the shared budget, like the runs' calls.
    llm = setup.llm(record.record_call, record.id, settings=settings.with_overrides(UNLIMITED), provider=budget)
    with llm:
        progress("phase", {"text": "proposing sub-questions"})
        prompt = fill("subquestion_first", request=request, filenames=names, data=data, max_questions=limit)
        pairs = questions.generate(llm, prompt)
        first = questions.new_questions(pairs or [], [], limit, 0)
        if not first:
            raise ProviderError("the sub-question generator proposed no sub-question that could be read",
                                hint=f"see the model's answers in {record.trace_path}")
        _answer(record, report, answering, first, progress)
        progress("phase", {"text": "writing the report"})
        body = writer.first_draft(llm, request, names, report.questions) or EMPTY.format(request=request)
        _draft(record, 0, body)
        for round_no in range(1, max(0, settings.report.rounds) + 1):
            try:
                revised = _refine(llm, record, report, answering, request, names, data, body, limit, round_no,
                                  progress)
            except DslakeError as exc:  # the draft stands; what was answered is still in the appendix
                report.notes.append(f"refinement round {round_no} stopped: {exc}")
                record.event("refine_stopped", round=round_no, why=str(exc))
                break
            if revised is None:
                break
            body = revised
        body = _checked(llm, record, report, body, progress)
    report.title = document.title_of(body, request)
    head = document.header(request, report.created_at, report.lake, report.provider, report.models, record.id,
                           report.questions)
    report.markdown = document.assemble(body, report.questions, report.problems, head)
    return report


def _models(settings: Any) -> list[str]:
    """Return the models the report's roles use, each once, in role order."""
    from dsstar_lake.llm.registry import model_for

    models = []
    for role in REPORT_ROLES:
        try:
            models.append(model_for(settings, role))
        except DslakeError:  # a role with no model never ran (its calls would have failed the report)
            continue
    return list(dict.fromkeys(models))


def _answer(record: RunRecord, report: Report, answering: Answering, new: list[SubQuestion],
            progress: Progress) -> None:
    """Answer new sub-questions and keep them (all of them, answered or not) in the report."""
    report.questions.extend(new)
    record.event("questions", round=new[0].round, questions=[{"n": q.n, "text": q.text, "chart": q.chart}
                                                             for q in new])
    progress("questions", {"round": new[0].round, "questions": list(report.questions)})
    _save_json(record.folder, report)
    answer_all(answering, new)
    for q in new:
        record.event("subquestion", n=q.n, status=q.status, run_id=q.run_id, verified=q.verified,
                     answer=q.answer[:500], figures=q.figures, detail=q.detail or None, seconds=q.seconds)
    _save_json(record.folder, report)


def _refine(llm: LLM, record: RunRecord, report: Report, answering: Answering, request: str, names: str,
            data: str, body: str, limit: int, round_no: int, progress: Progress) -> str | None:
    """One refinement round: sub-questions for the draft's gaps, their answers, the revision (None: stop)."""
    new = _gaps(llm, record, report, request, names, data, body, limit, round_no, progress)
    if not new:
        return None
    _answer(record, report, answering, new, progress)
    progress("phase", {"text": f"revising the report (refinement round {round_no})"})
    revised = writer.refine(llm, request, names, report.questions, new, body)
    if not revised:
        report.notes.append(f"refinement round {round_no}: the writer returned no text; the draft stands")
        return None
    report.rounds = round_no
    _draft(record, round_no, revised)
    return revised


def _gaps(llm: LLM, record: RunRecord, report: Report, request: str, names: str, data: str, body: str,
          limit: int, round_no: int, progress: Progress) -> list[SubQuestion]:
    """Ask the generator for sub-questions that fill the draft's gaps; none (with a note) ends refinement."""
    room = limit - len(report.questions)
    if room <= 0:
        why = (f"refinement round {round_no} not done: the report has its {limit} sub-questions "
               "(report.max_questions, --max-questions, caps the total)")
        report.notes.append(why)
        record.event("refine_stopped", round=round_no, why=why)
        return []
    progress("phase", {"text": f"looking for gaps in the draft (refinement round {round_no})"})
    prompt = fill("subquestion_refine", request=request, filenames=names, data=data,
                    asked=questions.asked_text(report.questions), report=body, max_questions=room)
    try:
        pairs = questions.generate(llm, prompt)
    except BudgetExceeded as exc:
        pairs, why = None, f"refinement round {round_no} not done: {exc}"
    else:
        why = f"refinement round {round_no}: the sub-question generator's answer could not be read"
    new = questions.new_questions(pairs or [], report.questions, room, round_no)
    if pairs is not None and not new:
        why = f"refinement round {round_no}: the generator found no gap that new sub-questions could fill"
    if not new:
        report.notes.append(why)
        record.event("refine_stopped", round=round_no, why=why)
    return new


def _checked(llm: LLM, record: RunRecord, report: Report, body: str, progress: Progress) -> str:
    """Check citations and figures; ask the writer once to fix problems; flag in the text what remains."""
    found = citations.check(body, report.questions)
    record.event("check", attempt=0, bad_citations=found.bad_citations, bad_figures=found.bad_figures)
    if found.ok:
        return body
    progress("phase", {"text": "fixing citations"})
    report.fixed = True
    fixed = writer.fix(llm, body, found, report.questions) or body
    _draft(record, None, fixed)
    found = citations.check(fixed, report.questions)
    record.event("check", attempt=1, bad_citations=found.bad_citations, bad_figures=found.bad_figures)
    if not found.ok:
        report.problems = found.problems(report.questions)
        fixed = citations.flag(fixed, found)
    return fixed


def _draft(record: RunRecord, round_no: int | None, body: str) -> None:
    """Keep each draft in the run folder (draft_0.md, draft_1.md..., draft_fix.md)."""
    name = "draft_fix.md" if round_no is None else f"draft_{round_no}.md"
    (record.folder / name).write_text(body + "\n", encoding="utf-8")
    record.event("draft", round=round_no, file=name, chars=len(body))


def _write(folder: Path, report: Report, fmt: str, out: str | Path | None) -> list[str]:
    """Write report.md (and report.html) in the run folder, and copy them with the figures to `out`."""
    figures = {f: folder / f for q in report.questions for f in q.figures if (folder / f).is_file()}
    names = ["report.md"]
    (folder / "report.md").write_text(report.markdown, encoding="utf-8")
    if fmt == "html":
        from dsstar_lake.report.htmlpage import html_page

        page = html_page(report.markdown, report.title, figures, [q.n for q in report.questions])
        (folder / "report.html").write_text(page, encoding="utf-8")
        names.append("report.html")
    written = [str(folder / n) for n in names] + [str(p) for p in figures.values()]
    if out is None:
        return written
    target = Path(out).expanduser().resolve()
    try:
        (target / "figures" if figures else target).mkdir(parents=True, exist_ok=True)
        for n in names:
            shutil.copyfile(folder / n, target / n)
            written.append(str(target / n))
        for rel, path in figures.items():
            shutil.copyfile(path, target / rel)
            written.append(str(target / rel))
    except OSError as exc:
        raise UsageError(f"cannot write the report to {target}: {exc.strerror or exc}",
                         hint=f"the report is in {folder}") from None
    return written


def _save_json(folder: Path, report: Report) -> None:
    path = folder / "report.json"
    tmp = path.with_name("report.json.tmp")
    tmp.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)
