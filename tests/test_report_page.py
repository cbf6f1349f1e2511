"""The report a reader gets (issue 18): --max-questions caps the total, runs know reports, the page in a browser."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from report_helpers import (
    FAST,
    FIRST,
    PNG_WRITER,
    Q_COUNTY,
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

Q_SENSORS = "How many daily sensor files are there?"
SENSORS = "import os\nprint(len(os.listdir('data/sensors/daily')), 'daily sensor files')\n"
LOOP_RULES = [*solve_rules(Q_REGION, "R", UNITS_BY_REGION), *solve_rules(Q_COUNTY, "C", WORST_COUNTY),
              *solve_rules(Q_WIDGETS, "W", WIDGETS), *solve_rules(Q_SENSORS, "S", SENSORS)]


@pytest.mark.parametrize(("first", "refined", "expected"), [
    # The first round takes every slot: refinement asks nothing and says why.
    ([Q_REGION, Q_COUNTY, Q_WIDGETS, Q_SENSORS], [], [Q_REGION, Q_COUNTY, Q_WIDGETS]),
    # The first round leaves one slot: refinement fills it, however many it proposes.
    ([Q_REGION, Q_COUNTY], [Q_WIDGETS, Q_SENSORS], [Q_REGION, Q_COUNTY, Q_WIDGETS]),
])
def test_max_questions_caps_the_total_refinement_included(lake, first, refined, expected):
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json(*[(q, "") for q in first])},
        {"role": "subquestion", "match": REFINE, "response": questions_json(*[(q, "") for q in refined])},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": "# Data\n\nNorth led [1].\n"},
        {"role": "writer", "match": REVISE, "response": "# Data\n\nNorth led [1]; 14 widgets [3].\n"},
    ])
    report = lake.report("Summarize the data", max_questions=3, overrides=FAST, provider=model)
    assert [q.text for q in report.questions] == expected and len(report.questions) <= 3
    asked_for_gaps = [p for p in prompts(model, "subquestion") if REFINE in p]
    if refined:
        assert "at most 1." in asked_for_gaps[0] and report.rounds == 1
    else:
        assert asked_for_gaps == [] and report.rounds == 0
        assert "the report has its 3 sub-questions" in report.notes[0]


def test_max_questions_help_says_it_caps_the_total():
    result = CliRunner().invoke(cli, ["report", "--help"], terminal_width=200)
    assert "Most sub-questions in all, refinement rounds included" in " ".join(result.output.split())


def test_runs_marks_reports_and_shows_their_sub_runs(indexed, tmp_path, monkeypatch):
    rules = write_rules(tmp_path / "rules.jsonl", [
        {"role": "subquestion", "match": FIRST, "response": questions_json((Q_WIDGETS, ""), (Q_COUNTY, ""))},
        *LOOP_RULES,
        {"role": "writer", "match": WRITE, "response": "# Widgets\n\n14 widget units were sold [1].\n"},
    ])
    made = CliRunner().invoke(cli, ["report", "What sold?", "--lake", str(indexed), "--rounds", "0", "--llm",
                                    "scripted", "--scripted-file", str(rules), "--json"], catch_exceptions=False)
    report = json.loads(made.stdout)
    sub_runs = [q["run_id"] for q in report["questions"]]
    listed = CliRunner().invoke(cli, ["runs", "--lake", str(indexed)])
    assert listed.exit_code == 0, listed.output
    rows = {line.split()[0]: line.split()[1] for line in listed.output.splitlines()[1:] if line.strip()}
    assert rows[report["run_id"]] == "report" and {rows[run_id] for run_id in sub_runs} == {"ask"}  # the kind column
    kinds = {r["id"]: r["kind"] for r in json.loads(CliRunner().invoke(
        cli, ["runs", "--lake", str(indexed), "--json"]).stdout)["runs"]}
    assert kinds[report["run_id"]] == "report" and {kinds[run_id] for run_id in sub_runs} == {"ask"}
    shown = CliRunner().invoke(cli, ["runs", "show", report["run_id"], "--lake", str(indexed)],
                               terminal_width=250)
    assert shown.exit_code == 0, shown.output
    assert "report: Widgets" in shown.output and "plan" not in shown.output
    assert all(run_id in shown.output for run_id in sub_runs) and "Which county had the most" in shown.output
    assert "dslake runs show RUN" in shown.output
    as_json = json.loads(CliRunner().invoke(cli, ["runs", "show", report["run_id"], "--lake", str(indexed),
                                                  "--json"]).stdout)
    assert [q["run_id"] for q in as_json["questions"]] == sub_runs and as_json["report"]["title"] == "Widgets"


# -- the page in a real browser --------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Added to a copy of the page (the report itself runs no script): what the browser laid out, as attributes.
MEASURE = """<script>
const pres = [...document.querySelectorAll("pre")];
document.body.dataset.pres = pres.length;
document.body.dataset.preOverflow = pres.filter(p => p.scrollWidth > p.clientWidth + 1).length;
document.body.dataset.preWhiteSpace = [...new Set(pres.map(p => getComputedStyle(p).whiteSpace))].join(",");
document.body.dataset.pageOverflow = document.documentElement.scrollWidth > window.innerWidth;
document.body.dataset.brokenImages = [...document.images].filter(i => !i.complete || !i.naturalWidth).length;
</script>
"""
LONG = ",".join(str(7 * i) for i in range(160))  # one unbroken 500-character token
WIDGETS_LONG = WIDGETS + f"print('units per row, as logged: {LONG}')\n# rows seen: {LONG}\n"
COUNTY_CHART = PNG_WRITER.replace("w=4, h=3", "w=320, h=160") + WORST_COUNTY + \
    "save_png('bar-chart-of-unhealthy-days-by-county.png')\n"
REGION_CHART = UNITS_CHART.replace("w=4, h=3", "w=320, h=120")


def browser(*args: str, profile: Path) -> str:
    """Run headless Chromium once (its own profile folder, nothing from the network); return its stdout."""
    done = subprocess.run([CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """Collect ids, link targets and image sources of a rendered DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.images: list[str] = []
        self.body: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        values = {k: v or "" for k, v in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a":
            self.hrefs.append(values.get("href", ""))
        if tag == "img":
            self.images.append(values.get("src", ""))
        if tag == "body":
            self.body = values


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium); "
                                              "CI installs it")
def test_report_page_in_headless_chromium(indexed, tmp_path, monkeypatch):
    body = ("# Sales, widgets and ozone\n\nNorth sold the most units [1], and 14 widget units were sold in all "
            "[3, 1]. Kings had the most unhealthy ozone days [2].\n\n"
            "![Units by region](figures/q1-bar-chart-of-units-by-region.png)\n\n"
            "![Unhealthy days](figures/q2-bar-chart-of-unhealthy-days-by-county.png)\n\n"
            "## Details\n\nAs the first chart shows ![Units by region](figures/q1-bar-chart-of-units-by-region.png),"
            " the north leads [1-2].\n")
    rules = write_rules(tmp_path / "rules.jsonl", [
        {"role": "subquestion", "match": FIRST, "response": questions_json(
            (Q_REGION, "bar chart of units by region"), (Q_COUNTY, "bar chart of unhealthy days by county"),
            (Q_WIDGETS, ""))},
        *solve_rules(Q_REGION, "R", UNITS_BY_REGION, REGION_CHART),
        *solve_rules(Q_COUNTY, "C", WORST_COUNTY, COUNTY_CHART), *solve_rules(Q_WIDGETS, "W", WIDGETS_LONG),
        {"role": "writer", "match": WRITE, "response": body},
    ])
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, [
        "report", "Analyze sales and ozone", "--lake", str(indexed), "--rounds", "0", "--format", "html",
        "--out", str(out), "--llm", "scripted", "--scripted-file", str(rules)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    page = out / "report.html"
    assert LONG in page.read_text()

    shot = tmp_path / "report.png"
    browser(f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri(), profile=tmp_path / "profile-1")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and struct.unpack(">II", data[16:24]) == (1280, 2000)
    assert len(data) > 20_000  # text and two charts, not a blank page

    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dom = Dom()
    dom.feed(browser("--dump-dom", "--window-size=900,1200", measured.as_uri(), profile=tmp_path / "profile-2"))
    # Every link goes to a place on the page: cited numbers to their evidence, figure links to the figure.
    assert dom.hrefs and all(h.startswith("#") and h[1:] in dom.ids for h in dom.hrefs), dom.hrefs
    for target in ("#q1", "#q2", "#q3", "#fig-1"):
        assert target in dom.hrefs
    # Two figures, two images, each loaded; the repeat in the text and the appendix's entries are links.
    assert len(dom.images) == 2 and len(set(dom.images)) == 2
    assert all(src.startswith("data:image/png;base64,") for src in dom.images)
    assert dom.body["data-broken-images"] == "0"
    # Answers and scripts wrap: no block scrolls sideways, nor does the page.
    assert int(dom.body["data-pres"]) >= 6 and dom.body["data-pre-overflow"] == "0"
    assert dom.body["data-pre-white-space"] == "pre-wrap" and dom.body["data-page-overflow"] == "false"
