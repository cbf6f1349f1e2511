"""`dslake serve` (issue 20): the pages over a copy of data_samples, a scripted run and a report, on 127.0.0.1.

A real uvicorn server, fetched with urllib for status codes and content, and rendered by Debian's headless
Chromium (screenshots in the test's temporary folder). Only the model's answers are scripted.
"""

from __future__ import annotations

import html
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
from serve_helpers import CHROMIUM, Server, chromium, fetch

PLANTED = "notes/<script>alert(1)</script>"  # a folder and a file name that are markup
EVIL_CELL = "<img src=x onerror=alert(2)>"
SUM_WIDGETS = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
print(sum(int(r['units']) for r in rows if r['product'] == 'Widget'))
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
    model = scripted(("planner", "Sum the <b>Widget</b> units in data/sales.csv."), ("coder", fenced(SUM_WIDGETS)),
                     ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))
    answer = lake.ask("How many <script>widget</script> units?", files=["sales.csv"], overrides=FAST,
                      provider=model)
    report = lake.report("Summarize sales by region", rounds=0, format="html", overrides=FAST, provider=provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((REGION, ""))},
        *solve_rules(REGION, "R", BY_REGION),
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
    assert code == 200 and '<pre id="answer">' + answer.value in page
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


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed: the pages are checked with urllib")
def test_pages_render_in_headless_chromium(served, tmp_path):
    server, answer, report = served["server"], served["answer"], served["report"]
    dom = chromium(server.url("/"), tmp_path, "status")
    assert 'id="files"' in dom and "Latest runs" in dom
    dom = chromium(server.url("/search?q=" + quote("units sold by region")), tmp_path, "search")
    assert "sales.csv" in dom and "score" in dom
    dom = chromium(server.url("/entries/sales.csv"), tmp_path, "entry")
    assert "<th>region</th>" in dom and "North" in dom
    dom = chromium(server.url("/entries/" + quote(PLANTED + ".csv")), tmp_path, "planted")
    # the browser parsed the name as text: no element came of it
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<script>alert" not in dom and "<img src=\"x\"" not in dom
    dom = chromium(server.url(f"/runs/{answer.run_id}"), tmp_path, "run")
    assert "Round 0" in dom and "sufficient" in dom and answer.value in dom
    dom = chromium(server.url(f"/reports/{report.run_id}"), tmp_path, "report")
    assert "The North led" in dom and "<script>alert(3)" not in dom
    print(f"screenshots in {tmp_path}")


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


MANUAL_ANSWERS = {"planner": "Sum the Widget units in data/sales.csv.", "coder": fenced(SUM_WIDGETS),
                  "verifier": "Yes", "finalyzer": fenced(SUM_WIDGETS)}


def test_ask_from_the_page_with_a_person_as_the_manual_model(served, tmp_path):
    import time

    from dsstar_lake.lake import Lake
    from dsstar_lake.llm.flags import LlmFlags

    prompts = tmp_path / "prompts"
    lake = Lake.open(served["root"], llm=LlmFlags(provider="manual", manual_dir=str(prompts)),
                     overrides={k: v for k, v in FAST.items() if k.startswith("sandbox.")})
    with Server(lake) as server:
        origin = server.url("")
        code, page, _ = fetch(server.url("/"))
        assert code == 200 and 'id="ask"' in page
        # a form posted from another site (no Origin of ours) starts nothing
        assert post(server.url("/ask"), {"q": "How many Widget units?"}, "http://evil.example")[0] == 403
        assert post(server.url("/ask"), {"q": "How many Widget units?"}, None)[0] == 403
        code, page, at = post(server.url("/ask"), {"q": "How many Widget units were sold in sales.csv?"}, origin)
        assert code == 200 and "/runs/" in at, at
        run_id = at.rsplit("/", 1)[1]
        answered, deadline = [], time.monotonic() + 240
        while time.monotonic() < deadline:
            code, page, _ = fetch(server.url(f"/runs/{run_id}"))
            if 'class="ok">done' in page:
                break
            stems = [s for s in (p.name.removesuffix(".prompt.md") for p in sorted(prompts.glob("*.prompt.md")))
                     if not (prompts / f"{s}.response.md").exists()]
            if stems and f'id="pending-{stems[0]}"' in page:
                if len(answered) == 1 and CHROMIUM:  # the page as the person sees it: the prompt and the box
                    dom = chromium(server.url(f"/runs/{run_id}"), tmp_path, "manual-prompt")
                    assert "<textarea" in dom and "The model is you" in dom
                role = stems[0].split("-", 1)[1]
                assert role in MANUAL_ANSWERS, f"an unexpected prompt: {stems[0]}"
                assert post(server.url(f"/manual/{stems[0]}"), {"answer": MANUAL_ANSWERS[role],
                                                                   "back": f"/runs/{run_id}"}, origin)[0] == 200
                answered.append(role)
            elif not stems:
                assert 'http-equiv="refresh"' in page or "done" in page  # the page follows the run
            time.sleep(0.2)
        else:
            pytest.fail(f"the run did not finish; answered {answered}")
        assert answered[:2] == ["planner", "coder"] and "verifier" in answered
        assert '<pre id="answer">541' in page and 'http-equiv="refresh"' not in page
        assert post(server.url("/manual/0001-planner"), {"answer": "again"}, origin)[0] == 400  # already answered
    lake.close()
