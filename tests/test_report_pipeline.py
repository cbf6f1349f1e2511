"""dslake report end to end (scripted model, real sandbox and catalog): figures, citations, refinement."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from report_helpers import (
    FAST,
    FIRST,
    FIX,
    MOON,
    Q_COUNTY,
    Q_MOON,
    Q_REGION,
    Q_WIDGETS,
    REFINE,
    REVISE,
    UNITS_BY_REGION,
    UNITS_CHART,
    WIDGETS,
    WORST_COUNTY,
    WRITE,
    prompts,
    provider,
    questions_json,
    solve_rules,
    write_rules,
)

from dsstar_lake.base.errors import ProviderError, UsageError

CHART = "figures/q1-bar-chart-of-units-by-region.png"
LOOP_RULES = [*solve_rules(Q_REGION, "R", UNITS_BY_REGION, UNITS_CHART),
              *solve_rules(Q_COUNTY, "C", WORST_COUNTY), *solve_rules(Q_MOON, "M", MOON),
              *solve_rules(Q_WIDGETS, "W", WIDGETS)]


def saved_files_used(folder):
    return [q["files_used"] for q in json.loads((folder / "report.json").read_text())["questions"]]


class Page(HTMLParser):
    """Collect what a browser would load or run from a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[str] = []
        self.external: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        values = dict(attrs)
        self._in_title = tag == "title"
        if tag == "img":
            self.images.append(values.get("src") or "")
        for key in ("src", "href"):
            if values.get(key) and tag != "img" and not values[key].startswith("#"):
                self.external.append(values[key])

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def handle_endtag(self, tag):
        self._in_title = False


def test_full_report_with_chart_failure_refinement_and_html(lake, tmp_path):
    draft = (f"# Sales and air quality\n\nNorth sold the most units, 17 [1].\n\n"
             f"![Units by region]({CHART})\n\nKings had the most unhealthy ozone days, 12 [2]. "
             "Moon dust is an open question.\n")
    final = (f"# Sales and air quality, revised\n\nNorth sold the most units, 17 [1], and 14 widgets "
             f"were sold in all [4].\n\n![Units by region]({CHART})\n\n"
             "Kings had the most unhealthy days, 12 [2].\n")
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": "```json\n" + questions_json(
            (Q_REGION, "bar chart of units by region"), (Q_COUNTY, ""), (Q_MOON, "")) + "\n```"},
        {"role": "subquestion", "match": REFINE, "response": questions_json((Q_WIDGETS, ""), (Q_COUNTY, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": draft},
        {"role": "writer", "match": REVISE, "response": final},
    ])
    out = tmp_path / "out"
    report = lake.report("Analyze the sales and the air quality data", jobs=3, format="html", out=out,
                         overrides=FAST, provider=model)

    # Every sub-question is kept, answered or not; the refinement round added one (the repeat was dropped).
    assert [(q.n, q.status, q.round) for q in report.questions] == [
        (1, "answered", 0), (2, "answered", 0), (3, "unanswered", 0), (4, "answered", 1)]
    q1, q2, q3, q4 = report.questions
    assert "north sold the most units: 17" in q1.answer and q2.answer.startswith("Kings")
    assert q4.answer == "widget units sold in total: 14" and report.rounds == 1
    assert "FileNotFoundError" in q3.detail and "moon_dust.csv" in q3.script
    # Each answer comes from a real run with its executed script.
    for q in report.questions:
        run = lake.catalog_dir / "runs" / q.run_id
        assert (run / "solution.py").read_text() == q.script and (run / "solution.out").exists()
    # The chart the generator asked for was requested from the finalyzer, drawn by the script, and kept.
    finalyzer = [p for p in prompts(model, "finalyzer") if Q_REGION in p][0]
    assert "bar-chart-of-units-by-region.png" in finalyzer
    assert not any("Also save" in p for p in prompts(model, "finalyzer") if Q_COUNTY in p)
    assert q1.figures == [CHART] and q2.figures == []
    folder = lake.catalog_dir / "runs" / report.run_id
    png = (folder / CHART).read_bytes()
    assert png.startswith(b"\x89PNG") and (out / CHART).read_bytes() == png

    # The writer saw the evidence, the unanswered question marked as such, and the figure path.
    first = prompts(model, "writer")[0]
    assert "[3] " + Q_MOON in first and "Unanswered:" in first and f"Figure: {CHART}" in first
    # Refinement: the generator saw the draft and what was asked; the writer integrated the new answer.
    gaps = [p for p in prompts(model, "subquestion") if REFINE in p][0]
    assert "North sold the most units, 17 [1]" in gaps and f"[2] {Q_COUNTY}" in gaps
    revise = prompts(model, "writer")[1]
    assert "Sub-questions [4] are new" in revise and draft in revise
    assert "widget units sold in total: 14" in revise
    assert (folder / "draft_0.md").read_text().strip() == draft.strip()
    assert (folder / "draft_1.md").read_text().strip() == final.strip()
    assert "[4]" in report.markdown and "[4]" not in draft
    assert report.title == "Sales and air quality, revised"
    assert not report.problems and not report.fixed

    # The appendix lists every sub-question with its answer, script and run; the failed one as unanswered.
    md = (folder / "report.md").read_text()
    assert md == (out / "report.md").read_text() == report.markdown
    appendix = md.split("## Evidence appendix", 1)[1]
    for q in report.questions:
        assert f"### [{q.n}] " in appendix and q.run_id in appendix
    moon = appendix.split("### [3]", 1)[1].split("### [4]", 1)[0]
    assert "*unanswered*" in moon and "**Unanswered:**" in moon and "FileNotFoundError" in moon
    assert "widget units sold in total: 14" in appendix and "```python" in appendix

    # One self-contained HTML file: it parses, embeds the figure as a data URI, loads nothing else.
    assert sorted(p.name for p in out.iterdir()) == ["figures", "report.html", "report.md"]
    page = Page()
    page.feed((out / "report.html").read_text())
    page.close()
    assert page.title == report.title
    assert page.images and all(src.startswith("data:image/png;base64,") for src in page.images)
    assert base64.b64decode(page.images[0].split(",", 1)[1]) == png
    assert "script" not in page.tags and page.external == []
    html_text = (out / "report.html").read_text()
    assert '[<a href="#q1">1</a>], and 14 widgets were sold in all [<a href="#q4">4</a>]' in html_text
    # The chart the writer shows is embedded once; the appendix links to it instead of embedding it again.
    assert len(page.images) == 1 and '<a href="#fig-1">figures/q1-bar-chart-of-units-by-region.png</a>' in html_text
    assert f"Figure (shown in the report above): [{CHART}]({CHART})" in md
    # The header: request, date, lake, model and provider; each answer names the files its script read.
    head = md.split("\n\nNorth sold", 1)[0]
    assert "- **Request:** Analyze the sales and the air quality data" in head
    assert f"- **Lake:** {lake.root}" in head and "(provider scripted)" in head and report.run_id in head
    assert "- **Date:** 20" in head
    q1_entry = appendix.split("### [1]", 1)[1].split("### [2]", 1)[0]
    assert "Files used: sales.csv" in q1_entry and "Files used: ozone" in appendix.split("### [2]", 1)[1]
    assert q1.files_used == ["sales.csv"] and saved_files_used(folder) == [q.files_used for q in report.questions]

    # `runs` marks the report; `runs show` of it lists its sub-questions and the run of each.
    listed = {r["id"]: r for r in lake.runs()}
    assert listed[report.run_id]["kind"] == "report" and listed[q1.run_id]["kind"] == "ask"
    assert listed[report.run_id]["answer"] == report.title
    shown = lake.run(report.run_id)
    assert [(q["n"], q["run_id"]) for q in shown["questions"]] == [(q.n, q.run_id) for q in report.questions]
    assert shown["report"]["title"] == report.title and lake.run(q1.run_id)["questions"] is None

    # The run record: report.json, run.json, and the report's own calls (sub-question runs have theirs).
    saved = json.loads((folder / "report.json").read_text())
    assert [q["run_id"] for q in saved["questions"]] == [q.run_id for q in report.questions]
    meta = json.loads((folder / "run.json").read_text())
    assert meta["kind"] == "report" and meta["status"] == "done"
    roles = [json.loads(line)["role"] for line in (folder / "trace.jsonl").read_text().splitlines()
             if '"llm_call"' in line]
    assert roles == ["subquestion", "writer", "subquestion", "writer"]
    assert report.llm_calls == len(model.calls) and report.cost_usd > 0


def test_citation_of_a_missing_question_is_sent_back_to_the_writer(lake):
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_COUNTY, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE,
         "response": "# Ozone\n\nKings led [1], far ahead of Mars [5].\n\n"
                     "![Made up](figures/q9-invented.png)\n"},
        {"role": "writer", "match": FIX, "response": "# Ozone\n\nKings led with 12 unhealthy days [1].\n"},
    ])
    report = lake.report("Summarize the ozone data", rounds=0, overrides=FAST, provider=model)
    fix = [p for p in prompts(model, "writer") if FIX in p][0]
    assert "[5] is cited, but there is no such sub-question" in fix
    assert "figures/q9-invented.png is embedded, but no sub-question produced it" in fix
    assert f"[1] {Q_COUNTY}" in fix
    assert report.fixed and report.problems == []
    body = report.markdown.split("## Evidence appendix")[0]
    assert "[5]" not in body and "q9-invented" not in body and "Kings led with 12 unhealthy days [1]" in body
    assert (lake.catalog_dir / "runs" / report.run_id / "draft_fix.md").exists()


def test_citations_still_wrong_after_the_fix_are_flagged(lake):
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_COUNTY, ""), (Q_MOON, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE,
         "response": "# Ozone\n\nKings led [1]. Moon dust is dense [2]. See [7].\n"},
        {"role": "writer", "match": FIX, "response": "# Ozone\n\nKings led [1]. See also [1, 7].\n"},
    ])
    report = lake.report("Summarize the ozone data", rounds=0, overrides=FAST, provider=model)
    assert [q.status for q in report.questions] == ["answered", "unanswered"]
    fix = [p for p in prompts(model, "writer") if FIX in p][0]
    assert "[2] is cited, but that sub-question has no answer" in fix
    assert report.problems == ["[7] is cited, but there is no such sub-question."]
    body = report.markdown.split("## Evidence appendix")[0]
    assert body.startswith("# Ozone\n\n- **Request:**") and "\n> **Citation check:**" in body
    assert "See also [1, 7?]." in body and "Kings led [1]." in body
    meta = json.loads((lake.catalog_dir / "runs" / report.run_id / "run.json").read_text())
    assert meta["status"] == "done" and "[7]" in meta["error"]


def test_one_budget_for_the_whole_report(lake):
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_COUNTY, ""), (Q_WIDGETS, ""))},
        {"role": "subquestion", "match": REFINE, "response": questions_json((Q_REGION, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": "# Ozone\n\nKings led [1].\n"},
    ])
    # 1 generator call + 4 calls for the first sub-question spend the budget of 5.
    report = lake.report("Summarize the data", jobs=1, overrides={**FAST, "llm.max_llm_calls": 5},
                         provider=model)
    assert [q.status for q in report.questions] == ["answered", "skipped"]
    assert "budget" in report.questions[1].detail and "budget" in report.notes[0]
    assert report.rounds == 0 and [r for r, _ in model.calls].count("writer") == 1
    assert report.llm_calls == 6  # the writer may go past the budget: the evidence is paid for
    assert "### [2] " + Q_WIDGETS in report.markdown and "unanswered (not started)" in report.markdown


def test_a_failed_refinement_keeps_the_draft(lake):
    draft = "# Ozone\n\nKings led with 12 days [1].\n"
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_COUNTY, ""))},
        {"role": "subquestion", "match": REFINE, "response": questions_json((Q_WIDGETS, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": draft},
        {"role": "writer", "match": REVISE, "response": "the service is gone", "error": "fatal"},
    ])
    report = lake.report("Summarize the ozone data", overrides=FAST, provider=model)
    body = report.markdown.split("\n---\n")[0]
    assert body.startswith("# Ozone\n") and body.endswith("\nKings led with 12 days [1].\n")
    assert [q.status for q in report.questions] == ["answered", "answered"] and report.rounds == 0
    assert "refinement round 1 stopped" in report.notes[0] and "the service is gone" in report.notes[0]
    assert "### [2] " + Q_WIDGETS in report.markdown


def test_bad_requests_fail_before_any_work(lake, tmp_path):
    model = provider([{"role": "subquestion", "response": "I would rather not."}])
    with pytest.raises(UsageError):
        lake.report("   ", provider=model)
    with pytest.raises(UsageError, match="report.format"):
        lake.report("Summarize", format="pdf", provider=model)
    with pytest.raises(ProviderError, match="no sub-question"):
        lake.report("Summarize", overrides=FAST, provider=model)
    assert len(model.calls) == 2  # the generator's answer, then one reminder
    failed = [r for r in lake.runs() if r["status"] == "failed"]
    assert failed and failed[0]["question"] == "Summarize"


def test_cli_report_writes_html_to_out(indexed, tmp_path, monkeypatch):
    rules = write_rules(tmp_path / "rules.jsonl", [
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_WIDGETS, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": "# Widgets\n\n14 widget units were sold [1].\n"},
    ])
    out = tmp_path / "cli-out"
    result = CliRunner().invoke(cli, [
        "report", "What sold?", "--lake", str(indexed), "--rounds", "0", "--max-questions", "2",
        "--jobs", "2", "--format", "html", "--out", str(out), "--llm", "scripted",
        "--scripted-file", str(rules)],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "1 of 1 sub-questions answered" in result.stdout and str(out / "report.html") in result.stdout
    assert "14 widget units were sold [1]." in (out / "report.md").read_text()
    assert (out / "report.html").read_text().count("<html") == 1
    as_json = CliRunner().invoke(cli, [
        "report", "What sold?", "--lake", str(indexed), "--rounds", "0", "--llm", "scripted",
        "--scripted-file", str(rules), "--json"], catch_exceptions=False)
    data = json.loads(as_json.stdout)
    assert data["questions"][0]["answer"] == "widget units sold in total: 14" and data["title"] == "Widgets"
