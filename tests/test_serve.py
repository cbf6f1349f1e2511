"""`dslake serve` (issue 20): the pages over a copy of data_samples, a scripted run and a report, on 127.0.0.1.

A real uvicorn server, fetched with urllib for status codes, content and event streams, and driven by Debian's
headless Chromium through playwright (one browser for the module; screenshots in the test's temporary folder):
it types, clicks and is the manual model. Only the model's answers are scripted.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from agent_helpers import FAST, fenced, scripted
from click.testing import CliRunner
from conftest import SAMPLES
from dslake_cli.cli import cli
from report_helpers import FIRST, WRITE, provider, questions_json, solve_rules
from serve_helpers import CHROMIUM, Server, chromium_browser, events, fetch, fetch_bytes

PLANTED = "notes/<script>alert(1)</script>"  # a folder and a file name that are markup
EVIL_CELL = "<img src=x onerror=alert(2)>"
SUM_WIDGETS = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
print(sum(int(r['units']) for r in rows if r['product'] == 'Widget'))
"""
# A round's charts: a PNG by matplotlib, an SVG carrying script, and a link that only looks like an image.
CHARTS = """
import os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.figure(figsize=(4, 2.5))
plt.bar(["North", "South"], [60, 14])
plt.title("Widget units by region")
plt.savefig("widgets by region.png")
open("widgets.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(4)</script></svg>')
os.symlink("/etc/passwd", "leak.png")
"""
REGION = "Which region sold the most units in sales.csv?"
BY_REGION = """
import csv
from collections import Counter
units = Counter()
for r in csv.DictReader(open('data/sales.csv')):
    units[r['region']] += int(r['units'])
print(units.most_common(1)[0][0], 'sold the most units')
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Any:
    """A copy of data_samples with a planted file, indexed; one scripted ask and one report; a running server."""
    from dsstar_lake.lake import Lake

    root = tmp_path_factory.mktemp("serve") / "lake"
    shutil.copytree(SAMPLES, root, ignore=shutil.ignore_patterns(".dslake"))
    planted = root / "notes" / "<script>alert(1)<"
    planted.mkdir(parents=True)
    (planted / "script>.csv").write_text(f"name,value\n{EVIL_CELL},1\n")
    lake = Lake.open(root)
    lake.index()
    model = scripted(("planner", "Sum the <b>Widget</b> units in data/sales.csv."),
                     ("coder", fenced(SUM_WIDGETS + CHARTS)),
                     ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))
    answer = lake.ask("How many <script>widget</script> units?", files=["sales.csv"], overrides=FAST,
                      provider=model)
    report = lake.report("Summarize sales by region", rounds=0, format="html", overrides=FAST, provider=provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((REGION, ""))},
        *solve_rules(REGION, "R", BY_REGION + CHARTS, final=BY_REGION),
        {"role": "writer", "match": WRITE, "response": "# Sales\n\nThe North led [1]. <script>alert(3)</script>\n"},
    ]))
    with Server(lake) as server:
        yield {"server": server, "lake": lake, "root": root, "answer": answer, "report": report}
    lake.close()


def test_status_search_and_entry_pages(served):
    server = served["server"]
    status = served["lake"].status()
    code, page, headers = fetch(server.url("/"))
    assert code == 200 and "text/html" in headers["content-type"]
    assert f'<b id="files">{status.files}</b>' in page and f'<b id="families">{status.families}</b>' in page
    assert f'<b id="entries">{status.entries}</b>' in page and "last index" in page
    code, page, _ = fetch(server.url("/search?q=" + quote("units sold by region")))
    assert code == 200 and 'href="/entries/sales.csv"' in page and "score " in page
    code, page, _ = fetch(server.url("/entries/sales.csv"))
    assert code == 200 and 'id="description"' in page and 'id="card"' in page
    # the load line names the real file (absolute: a page is read away from the server's folder), never data/
    assert f"pd.read_csv(&#39;{served['root'] / 'sales.csv'}&#39;)" in page and "&#39;data/" not in page
    # the preview is lake.load's DataFrame: its real first row
    assert "<th>region</th>" in page and "North" in page and "2024-01-01" in page
    family = served["lake"].show("sensors/daily/readings_2024-01-03.csv")
    members = family["members"]
    code, page, _ = fetch(server.url("/entries/" + quote(members[0])))
    assert code == 200 and 'id="members"' in page and all(html.escape(m) in page for m in members[:20])
    code, page, _ = fetch(server.url("/entries/no/such/file.csv"))
    assert code == 404 and "not in the catalog" in page
    assert fetch(server.url("/nowhere"))[0] == 404


def test_a_planted_markup_name_and_cell_are_shown_as_text(served):
    server = served["server"]
    code, page, _ = fetch(server.url("/search?q=" + quote("alert script name value")))
    assert code == 200 and html.escape(PLANTED + ".csv") in page
    assert "<script>alert(1)" not in page
    code, page, headers = fetch(server.url("/entries/" + quote(PLANTED + ".csv")))
    assert code == 200 and html.escape(PLANTED + ".csv") in page and "<script>alert(1)" not in page
    assert html.escape(EVIL_CELL) in page and EVIL_CELL not in page  # the preview's cell, escaped by pandas
    # only the server's own static script may run: no inline script, none from elsewhere
    assert "script-src 'self';" in headers["content-security-policy"] and "unsafe-inline';" not in \
        headers["content-security-policy"].split("script-src")[1]


def test_runs_run_and_report_pages(served):
    server, answer, report = served["server"], served["answer"], served["report"]
    code, page, _ = fetch(server.url("/runs"))
    assert code == 200 and f'href="/runs/{answer.run_id}"' in page and f'href="/reports/{report.run_id}"' in page
    assert "How many &lt;script&gt;widget&lt;/script&gt; units?" in page and "<script>widget" not in page
    code, page, _ = fetch(server.url(f"/runs/{answer.run_id}"))
    assert code == 200 and '<pre id="answer">' + answer.text in page
    assert "Sum the &lt;b&gt;Widget&lt;/b&gt; units" in page  # the plan step, a model's words, as text
    assert "rows = list(csv.DictReader(open(&#39;data/sales.csv&#39;)))" in page  # the code
    assert "sufficient" in page and 'href="/entries/sales.csv"' in page
    code, page, headers = fetch(server.url(f"/reports/{report.run_id}"))
    written = (Path(report.folder) / "report.html").read_text(encoding="utf-8")
    assert code == 200 and page == written  # served as written
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page and "default-src 'none'" in headers["content-security-policy"]
    assert fetch(server.url(f"/reports/{answer.run_id}"))[0] == 404  # an ask has no report
    code, page, _ = fetch(server.url("/runs/nope"))
    assert code == 404 and "no run" in page


def test_a_runs_selection_is_on_its_page_and_in_its_json_twin(served):
    server, lake = served["server"], served["lake"]
    choice = f"data/sales.csv — units by <b>product</b> and region\ndata/{PLANTED}.csv — a name that is markup"
    model = scripted(("selector", choice), ("planner", "Sum the Widget units in data/sales.csv."),
                     ("coder", fenced(SUM_WIDGETS)), ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))
    answer = lake.ask("How many Widget units were sold?", overrides=FAST, provider=model)
    entries = [{"path": "sales.csv", "reason": "units by <b>product</b> and region"},
               {"path": PLANTED + ".csv", "reason": "a name that is markup"}]
    assert answer.selection == entries
    code, page, _ = fetch(server.url(f"/runs/{answer.run_id}"))
    assert code == 200
    assert re.search(r'<p class="muted" id="selected-by">selection \(chosen by the selector model\): 2 of \d+ '
                     r'candidates</p>', page)
    assert '<li><a href="/entries/sales.csv">sales.csv</a>: units by &lt;b&gt;product&lt;/b&gt; and region</li>' in page
    assert html.escape(PLANTED + ".csv") in page and "<script>alert(1)" not in page  # a reason and a path as text
    code, body, _ = fetch(server.url(f"/runs/{answer.run_id}.json"))
    assert code == 200 and json.loads(body)["selection"]["entries"] == entries


def test_a_rounds_figures_are_shown_and_only_figures_its_record_names_are_served(served):
    server, answer, report = served["server"], served["answer"], served["report"]
    view = served["lake"].run(answer.run_id)
    named = [f for r in view["rounds"] for s in r["scripts"] for f in s.get("figures") or []]
    # kept per script in the run record; the planted link is no figure
    assert named == ["figures/round_00-widgets-by-region.png", "figures/round_00-widgets.svg"]
    base = f"/runs/{answer.run_id}/figures/"
    code, page, _ = fetch(server.url(f"/runs/{answer.run_id}"))
    assert f'<img class="figure" src="{base}round_00-widgets-by-region.png"' in page
    code, png, headers = fetch_bytes(server.url(base + "round_00-widgets-by-region.png"))
    assert code == 200 and headers["content-type"] == "image/png" and png.startswith(b"\x89PNG")
    assert png == (Path(view["folder"]) / named[0]).read_bytes()
    code, svg, headers = fetch_bytes(server.url(base + "round_00-widgets.svg"))
    # opened on its own, the SVG's script runs nowhere: a sandboxed document that may load nothing
    assert code == 200 and headers["content-type"] == "image/svg+xml" and b"<script>" in svg
    assert "sandbox" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"
    for name in ["..%2Frun.json", "../run.json", "../../../../../etc/passwd", "%2Fetc%2Fpasswd", "/etc/passwd",
                 "round_00-leak.png", "leak.png", "..%2Fwork%2Fleak.png", "..%2Fround_00.py", ""]:
        code, body, _ = fetch_bytes(server.url(base + name))
        assert code == 404 and b"root:" not in body and b"import csv" not in body, name
    # another run's figure is not this run's
    assert fetch_bytes(server.url(f"/runs/{report.run_id}/figures/round_00-widgets-by-region.png"))[0] == 404
    # a report's sub-question charts (figures/q<n>-NAME in the report's folder) show on its run page
    charts = [f for q in served["lake"].run(report.run_id)["questions"] for f in q["figures"]]
    assert charts and all(f.startswith("figures/q1-") for f in charts)
    code, page, _ = fetch(server.url(f"/runs/{report.run_id}"))
    assert f'src="/runs/{report.run_id}/{charts[0]}"' in page
    assert fetch_bytes(server.url(f"/runs/{report.run_id}/{charts[0]}"))[0] == 200


def test_a_finished_runs_event_stream_sends_its_parts_once_and_ends(served):
    answer = served["answer"]
    got = list(events(served["server"].url(f"/runs/{answer.run_id}/events")))
    assert [e for e, _ in got][-1] == "end" and {e for e, _ in got} == {"part", "end"}
    parts = {d["id"]: d for e, d in got if e == "part"}
    assert {"run-head", "run-summary", "run-calls", "round-0"} <= set(parts)
    assert f'<pre id="answer">{answer.text}' in parts["run-head"]["html"]
    assert parts["round-0"]["into"] == "rounds" and "&lt;b&gt;Widget&lt;/b&gt;" in parts["round-0"]["html"]
    assert fetch(served["server"].url("/runs/nope/events"))[0] == 404


def test_a_running_runs_page_follows_it_by_its_script_or_else_by_reloading(served):
    from dsstar_lake.web.app import Pages

    pages = Pages(served["lake"])
    view = served["lake"].run(served["answer"].run_id)
    view["meta"]["status"] = "running"
    page = pages.page("run.html", **pages.run_context(view)).body.decode()
    assert f'data-events="/runs/{served["answer"].run_id}/events"' in page and '<script src="/static/live.js"' in page
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in page  # without JavaScript
    pages.worker.shutdown()


def test_a_token_guards_a_remote_server_and_host_is_checked_on_loopback(served):
    token = "t0ken-" + "x" * 20
    with Server(served["lake"], token=token) as remote:
        assert fetch(remote.url("/"))[0] == 401
        assert fetch(remote.url("/?token=wrong"))[0] == 401
        code, _, headers = fetch(remote.url(f"/?token={token}"))
        assert code == 200 and "dslake_token=" in headers["set-cookie"] and "HttpOnly" in headers["set-cookie"]
        assert fetch(remote.url("/runs"), {"Cookie": f"dslake_token={token}"})[0] == 200
        assert fetch(remote.url("/runs"), {"Authorization": f"Bearer {token}"})[0] == 200
    # on loopback a page elsewhere cannot reach the server through a name of its own (DNS rebinding)
    assert fetch(served["server"].url("/"), {"Host": "attacker.example:8765"})[0] == 400
    assert fetch(served["server"].url("/"), {"Host": "localhost:8765"})[0] == 200


@pytest.mark.parametrize(("args", "message"), [
    (["--host", "0.0.0.0"], "not a loopback address"),
    (["--host", "192.168.1.5", "--allow-remote"], "needs a token of at least 16"),
    (["--host", "0.0.0.0", "--allow-remote", "--token", "short"], "needs a token of at least 16"),
])
def test_serve_refuses_a_non_loopback_host_without_allow_remote_and_a_token(served, args, message):
    result = CliRunner().invoke(cli, ["serve", "--lake", str(served["root"]), *args])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


@pytest.fixture(scope="module")
def browser() -> Any:
    """One headless Chromium for the module: Debian's, driven by playwright's driver (no browser is downloaded)."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed: the pages are checked with urllib only")
    with chromium_browser() as launched:
        yield launched


def shot(page: Any, folder: Path, name: str) -> None:
    """Save a screenshot of the whole page as folder/NAME.png (look at them: tests check content, not looks)."""
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    assert (folder / f"{name}.png").stat().st_size > 1000


def test_pages_render_in_headless_chromium(served, browser, tmp_path):
    server, answer, report = served["server"], served["answer"], served["report"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    for name, path, shown in [
        ("status", "/", ['id="files"', "Latest runs"]),
        ("search", "/search?q=" + quote("units sold by region"), ["sales.csv", "score"]),
        ("entry", "/entries/sales.csv", ["<th>region</th>", "North"]),
        # the browser parsed the name as text: no element came of it
        ("planted", "/entries/" + quote(PLANTED + ".csv"), ["&lt;script&gt;alert(1)&lt;/script&gt;"]),
        ("run", f"/runs/{answer.run_id}", ["Round 1", "sufficient", answer.text]),
        ("report", f"/reports/{report.run_id}", ["The North led"]),
    ]:
        page.goto(server.url(path))
        dom = page.content()
        assert all(text in dom for text in shown), (name, shown)
        assert "<script>alert" not in dom and '<img src="x"' not in dom
        shot(page, tmp_path, name)
    page.goto(server.url(f"/runs/{answer.run_id}"))  # the round's chart, loaded under the page's CSP
    assert page.eval_on_selector("img.figure", "img => img.complete && img.naturalWidth") > 100
    page.close()
    print(f"screenshots in {tmp_path}")


# Measured in the page: how wide the document is, and each row of the entries table whose cells are blank or cut.
MEASURE_ENTRIES = """() => {
  const rows = [...document.querySelectorAll('#entries tr')].slice(1);
  return {width: document.documentElement.scrollWidth, rows: rows.length,
          blank: rows.filter(r => [...r.cells].some(c => !c.innerText.trim())).map(r => r.cells[0].innerText),
          cut: rows.filter(r => [...r.cells].some(c => c.scrollWidth > c.clientWidth + 1)).map(r => r.cells[0].innerText)};
}"""


def test_the_entries_page_fits_a_1280_pixel_window_with_every_cell_filled(served, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served["server"].url("/entries"))
    measured = page.evaluate(MEASURE_ENTRIES)
    shot(page, tmp_path, "entries")
    page.close()
    assert measured["rows"] == len(served["lake"].entries())
    assert measured["width"] <= 1280 and measured["blank"] == [] and measured["cut"] == [], measured


def post(url: str, fields: dict[str, str], origin: str | None) -> tuple[int, str, str]:
    """POST a form as a browser does (with its Origin): status, body and the URL it ended on after redirects."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    headers = {"Content-Type": "application/x-www-form-urlencoded", **({"Origin": origin} if origin else {})}
    request = urllib.request.Request(url, data=urlencode(fields).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read().decode("utf-8"), response.url
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8"), url


MANUAL_ANSWERS = {"selector": "data/sales.csv — the units sold", "planner": "Sum the Widget units in data/sales.csv.",
                  "coder": fenced(SUM_WIDGETS),
                  "verifier": "Yes", "finalyzer": fenced(SUM_WIDGETS)}
OTHER_RUNS = ("0900-planner", "0899-coder")  # prompts in the folder that are not the run's: never on its page


@pytest.fixture(scope="module")
def manual(served, tmp_path_factory) -> Any:
    """A server over the same lake whose model is a person: prompt files in a folder, answered from the page."""
    import json

    from dsstar_lake.lake import Lake
    from dsstar_lake.llm.flags import LlmFlags

    prompts = tmp_path_factory.mktemp("prompts")
    (prompts / "0900-planner.prompt.md").write_text("another run's prompt")
    (prompts / "0900-planner.meta.json").write_text(json.dumps({"run_id": "20260101-000000-beef"}))
    (prompts / "0899-coder.prompt.md").write_text("a prompt that names no run")
    lake = Lake.open(served["root"], llm=LlmFlags(provider="manual", manual_dir=str(prompts)),
                     overrides={k: v for k, v in FAST.items() if k.startswith("sandbox.")})
    with Server(lake) as server:
        yield {"server": server, "prompts": prompts, "origin": server.url("")}
    lake.close()


def test_ask_from_the_page_with_a_person_as_the_manual_model(manual):
    server, origin = manual["server"], manual["origin"]
    code, page, _ = fetch(server.url("/"))
    assert code == 200 and 'id="ask"' in page
    # a form posted from another site (no Origin of ours) starts nothing
    assert post(server.url("/ask"), {"q": "How many Widget units?"}, "http://evil.example")[0] == 403
    assert post(server.url("/ask"), {"q": "How many Widget units?"}, None)[0] == 403
    code, page, at = post(server.url("/ask"), {"q": "How many Widget units were sold in sales.csv?"}, origin)
    assert code == 200 and "/runs/" in at, at
    run_id = at.rsplit("/", 1)[1]
    answered, gone, parts = [], [], {}
    for event, data in events(server.url(f"/runs/{run_id}/events")):  # the run as the page's script follows it
        if event == "part" and data["id"].startswith("pending-"):
            stem = data["id"].removeprefix("pending-")
            assert data["keep"] and data["into"] == "pending" and "<textarea" in data["html"]
            if not answered:  # the page without script shows the same prompt, and only this run's
                page = fetch(server.url(f"/runs/{run_id}"))[1]
                assert f'id="{data["id"]}"' in page and 'src="/static/live.js"' in page
                assert not any(f"pending-{other}" in page for other in OTHER_RUNS)
            role = stem.split("-", 1)[1]
            assert role in MANUAL_ANSWERS and stem not in OTHER_RUNS, stem
            assert post(server.url(f"/manual/{stem}"), {"answer": MANUAL_ANSWERS[role],
                                                       "back": f"/runs/{run_id}"}, origin)[0] == 200
            answered.append(stem)
        elif event == "part":
            parts[data["id"]] = data["html"]
        elif event == "gone":
            gone.append(data["id"])
    roles = [stem.split("-", 1)[1] for stem in answered]
    assert roles[:3] == ["selector", "planner", "coder"] and "verifier" in roles and roles[-1] == "finalyzer"
    assert gone == [f"pending-{stem}" for stem in answered]  # each answered prompt left the page
    assert "round-0" in parts and '<pre id="answer">541' in parts["run-head"]
    assert 'id="status" class="ok">done' in parts["run-head"]
    code, page, _ = fetch(server.url(f"/runs/{run_id}"))
    assert '<pre id="answer">541' in page and 'http-equiv="refresh"' not in page and "live.js" not in page
    assert post(server.url(f"/manual/{answered[0]}"), {"answer": "again"}, origin)[0] == 400  # already answered
    code, script, headers = fetch(server.url("/static/live.js"))
    assert code == 200 and "javascript" in headers["content-type"] and "EventSource" in script


def test_a_person_searches_opens_an_entry_and_is_the_model_in_chromium(manual, browser, tmp_path):
    server = manual["server"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(server.url("/"))
    shot(page, tmp_path, "1-status")
    page.locator("header input[name=q]").press_sequentially("units sold by region")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("ol.hits li").count() > 0
    shot(page, tmp_path, "2-search")
    with page.expect_navigation():
        page.click('ol.hits a[href="/entries/sales.csv"]')
    assert "North" in page.inner_text("#preview") and "sales.csv" in page.inner_text("h1")
    shot(page, tmp_path, "3-entry")
    with page.expect_navigation():
        page.click("header strong a")
    page.locator("#ask input[name=q]").press_sequentially("How many Widget units were sold in sales.csv?")
    with page.expect_navigation(url="**/runs/*"):
        page.click("#ask button")
    # a second tab opened once at the start and never reloaded: what it shows later came by the event stream
    watcher = context.new_page()
    watcher.goto(page.url)
    watcher.evaluate("window.openedOnce = true")
    assert watcher.locator("section.round").count() == 0
    answered = []
    while True:
        page.wait_for_selector("section.pending textarea, #status.ok, #status.bad")
        if page.locator("#status.ok, #status.bad").count():
            break
        section = page.locator("section.pending").first
        role = (section.get_attribute("id") or "").split("-", 2)[2]
        assert role in MANUAL_ANSWERS and page.locator("section.pending").count() == 1, role
        if not answered:
            shot(page, tmp_path, "4-prompt")
            # what to answer comes first, in the first screen, above the question and data it rests on
            instructions = section.locator("pre.instructions").bounding_box()
            assert instructions is not None and instructions["y"] < 900, instructions
            assert section.locator("pre.instructions").inner_text().startswith("# Your task")
            assert section.locator("pre.prompt").bounding_box()["y"] > instructions["y"]
        section.locator("textarea").fill(MANUAL_ANSWERS[role])
        with page.expect_navigation():
            section.locator("button").click()
        answered.append(role)
    assert answered[:3] == ["selector", "planner", "coder"] and page.inner_text("#answer").startswith("541")
    watcher.wait_for_selector("#status.ok")
    assert watcher.evaluate("window.openedOnce") is True  # the same page: no reload brought the rounds
    assert watcher.locator("section.round").count() >= 1 and watcher.locator("section.pending").count() == 0
    assert watcher.inner_text("#answer").startswith("541")
    shot(watcher, tmp_path, "5-followed-live")
    page.goto(page.url)
    assert page.locator("section.round h2").first.inner_text() == "Round 1" and "541" in page.inner_text("#rounds")
    shot(page, tmp_path, "6-run")
    context.close()
    assert not [p for p in problems if "Content Security Policy" in p or "Refused" in p or "Uncaught" in p], problems
    print(f"screenshots in {tmp_path}")


# ---- browsing (issue 32 §2): every entry, .json twins, the site's 404, the preview arranged, a reading picked ----


def test_entries_page_json_twins_404_and_an_arranged_preview(served):
    import json
    import re

    server, lake = served["server"], served["lake"]
    entries = lake.entries()
    code, page, _ = fetch(server.url("/entries"))
    assert code == 200 and all(f'href="/entries/{quote(e["path"])}"' in page for e in entries)
    assert f"{len(entries)} of {len(entries)} entries" in page
    code, page, _ = fetch(server.url("/entries?sort=rows&desc=1"))
    most = max((e for e in entries if e["rows"] is not None), key=lambda e: e["rows"])
    assert re.search(r'<table id="entries"[^>]*>.*?<a href="/entries/([^"]+)"', page, re.S).group(1) == \
        quote(most["path"])
    code, page, _ = fetch(server.url("/entries?format=xlsx&q=station"))
    assert "stations.xlsx" in page and "layout.xlsx" not in page and "sales.csv" not in page

    def twin(path: str) -> dict[str, Any]:
        code, body, headers = fetch(server.url(path))
        assert code == 200 and headers["content-type"] == "application/json", (path, body[:200])
        return json.loads(body)

    assert twin("/entries.json?format=xlsx")["schema"] == "dslake.entries/1"
    assert {e["path"] for e in twin("/entries.json")["entries"]} == {e["path"] for e in entries}
    status = twin("/.json")
    assert status["schema"] == "dslake.status/1" and status["files"] == lake.status().files
    found = twin("/search.json?q=" + quote("units sold per region"))
    assert found["schema"] == "dslake.search/1" and found["hits"][0]["path"] == "sales.csv"
    assert found["hits"][0]["summary"][1] == "columns: date, region, product, units, price"
    shown = twin("/entries/sales.csv.json")
    assert shown["schema"] == "dslake.show/1" and shown["entry"]["format"] == "csv"
    assert twin("/runs.json")["runs"][0]["id"] and twin(f"/runs/{served['answer'].run_id}.json")["meta"]["id"]

    code, page, _ = fetch(server.url("/search?q=" + quote("units sold per region")))
    assert "<mark>units</mark>" in page and "columns: date, <mark>region</mark>" in page
    code, page, _ = fetch(server.url("/nowhere/at/all"))
    assert code == 404 and "<header>" in page and "no page at /nowhere/at/all" in page  # the site's own page

    def cells(page: str, column: int) -> list[str]:
        body = page.split('<div id="preview">', 1)[1].split("</tbody>", 1)[0]
        return [re.findall(r"<td>(.*?)</td>", row)[column] for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]]

    code, page, _ = fetch(server.url("/entries/sales.csv?sort=units&desc=1"))
    units = [int(u) for u in cells(page, 3)]
    assert code == 200 and units == sorted(units, reverse=True) and "sorted by units (descending)" in page
    code, page, _ = fetch(server.url("/entries/sales.csv?where=region&has=nort"))
    assert set(cells(page, 1)) == {"North"} and "those containing “nort”" in page


def test_serve_without_a_catalog_or_on_a_port_in_use_is_one_line(served, tmp_path):
    import socket

    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "a.csv").write_text("a\n1\n")
    result = CliRunner().invoke(cli, ["serve", "--lake", str(tmp_path / "bare")])
    assert result.exit_code == 3 and result.stderr.startswith("error: no catalog at") and "serving" not in result.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--lake", str(served["root"]), "--port", str(port)])
    assert result.exit_code == 2 and f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "serving" not in result.output and "Traceback" not in result.output


PICK_ROLES = {"planner": "Sum the Widget units in data/sales.csv.",
              "coder": fenced(SUM_WIDGETS + "print('Alternative: North region only = 60')\n"),
              "verifier": "Yes\nAssumption: every region is counted", "finalyzer": fenced(SUM_WIDGETS)}


@pytest.fixture(scope="module")
def picking(served, tmp_path_factory) -> Any:
    """A server over the same lake whose (scripted) model leaves two readings that differ, for a person to pick."""
    import json

    from dsstar_lake.lake import Lake
    from dsstar_lake.llm.flags import LlmFlags

    rules = tmp_path_factory.mktemp("rules") / "rules.jsonl"
    rules.write_text("".join(json.dumps({"role": r, "response": text}) + "\n" for r, text in PICK_ROLES.items()))
    lake = Lake.open(served["root"], llm=LlmFlags(provider="scripted", scripted_file=str(rules)),
                     overrides={k: v for k, v in FAST.items() if k.startswith("sandbox.")})
    with Server(lake) as server:
        yield server
    lake.close()


def test_browsing_entries_json_404_and_picking_a_reading_in_chromium(served, picking, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(120_000)
    page.goto(served["server"].url("/entries"))
    assert page.locator("#entries tr").count() == len(served["lake"].entries()) + 1
    with page.expect_navigation():
        page.click('#entries th a:text("rows")')
    assert "sort=rows" in page.url and "▲" in page.inner_text("#entries th:nth-child(3)")
    page.fill("#filter input[name=q]", "region")
    with page.expect_navigation():
        page.click("#filter button")
    assert "sales.csv" in page.inner_text("#entries") and "iss.tle" not in page.inner_text("#entries")
    shot(page, tmp_path, "entries")
    page.goto(served["server"].url("/entries/sales.csv.json"))
    assert '"schema": "dslake.show/1"' in page.inner_text("body").replace('":"', '": "')
    response = page.goto(served["server"].url("/no/such/page"))
    assert response.status == 404 and "no page at /no/such/page" in page.inner_text("#message")
    assert page.locator("header a[href='/entries']").count() == 1  # the site's own page, with its header
    # ask from the page; the readings differ, so the run waits for the person's pick on the run page
    page.goto(picking.url("/"))
    assert page.is_checked("#ask input[name=clarify]")
    page.fill("#ask input[name=q]", "How many Widget units were sold in sales.csv?")
    with page.expect_navigation(url="**/runs/*"):
        page.click("#ask button")
    page.wait_for_selector("#pick button.reading")
    buttons = page.locator("#pick button.reading").all_inner_texts()
    assert buttons == ["1. every region is counted: 541", "2. North region only: 60"], buttons
    shot(page, tmp_path, "pick")
    with page.expect_navigation():
        page.click("#pick button.reading >> nth=1")
    page.wait_for_selector("#status.ok, #status.bad")
    if page.locator("#pick").count() or not page.locator("#chosen").count():
        page.reload()
    assert page.inner_text("#answer").strip() == "60"
    assert page.inner_text("#chosen") == "chosen reading: North region only because the user picked it on the web page"
    assert "every region is counted: 541" in page.inner_text("#alternatives")
    assert page.locator("section.round h2").first.inner_text() == "Round 1"
    shot(page, tmp_path, "picked")
    page.close()


def test_a_notebook_in_a_real_kernel_shows_hits_status_an_entry_runs_and_a_report(served):
    """Issue 32 §4: what Jupyter shows, from a real kernel run by nbclient (over the lake and runs made above)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    report = served["report"]
    cells = [f"from dsstar_lake import Lake\nlake = Lake.open({str(served['root'])!r})",
             'lake.search("units sold per region", k=2)', "lake.status()", 'lake.show("sales.csv")', "lake.runs()",
             f"lake.run({report.run_id!r})"]
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells])
    nbclient.NotebookClient(book, timeout=300, kernel_name="python3").execute()
    shown = [next((o["data"] for o in cell.outputs if o.get("output_type") == "execute_result"), {})
             for cell in book.cells]
    hits, status, entry, runs, run = (shown[i].get("text/html", "") for i in range(1, 6))
    assert "<mark>units</mark>" in hits and "48 rows × 5 columns" in hits and "sales csv" not in hits
    assert "lake status" in status and "corrupt.xlsx" in status
    assert "lake.load(&#x27;sales.csv&#x27;)" in entry and "<summary>description</summary>" in entry
    assert "columns: date, region, product, units, price" in entry
    assert "ShowView('sales.csv': csv file" in shown[3]["text/plain"]  # not a raw dict with its 128-character hash
    assert report.run_id in runs and served["answer"].run_id in runs
    assert "sub-question" in run and html.escape(REGION) in run and "North sold the most units" in run
