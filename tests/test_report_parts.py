"""Report parts without a model: sub-questions, the citation check, Markdown and HTML, budget, figures."""

from __future__ import annotations

import base64
import os
import re
from html.parser import HTMLParser

import pytest

from dsstar_lake.base.errors import BudgetExceeded
from dsstar_lake.base.settings import Settings
from dsstar_lake.llm.scripted import Rule, ScriptedProvider
from dsstar_lake.report import citations, document
from dsstar_lake.report.answer import collect_figures, guidelines, last_error
from dsstar_lake.report.budget import SharedBudget
from dsstar_lake.report.htmlpage import html_page
from dsstar_lake.report.questions import SubQuestion, new_questions, parse_questions

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40


def answered(n, figures=()):
    return SubQuestion(n, f"question {n}?", status="answered", verified=True, answer=f"answer {n}",
                       figures=list(figures))


def test_sub_questions_are_read_from_json_or_a_numbered_list():
    fenced = ('Here you go:\n```json\n[{"question": "How many rows?", "chart": "bar chart"}, '
              '"Which year?"]\n```')
    assert parse_questions(fenced) == [("How many rows?", "bar chart"), ("Which year?", "")]
    assert parse_questions('{"questions": [{"text": "What is the mean?"}]}') == [("What is the mean?", "")]
    assert parse_questions("1. **How many sensors report?**\n2) Which day was hottest?\nThanks") == [
        ("How many sensors report?", ""), ("Which day was hottest?", "")]
    assert parse_questions("[]") == []
    assert parse_questions("I cannot help with that.") is None


def test_new_questions_are_numbered_after_the_asked_ones_without_repeats():
    asked = [SubQuestion(1, "How many rows?"), SubQuestion(2, "Which year?")]
    pairs = [("how many ROWS", ""), ("What is the mean?", "hist"), ("What is the mean ?", ""), ("Max?", ""),
             ("Min?", "")]
    new = new_questions(pairs, asked, 2, 1)
    assert [(q.n, q.text, q.chart, q.round) for q in new] == [
        (3, "What is the mean?", "hist", 1), (4, "Max?", "", 1)]


def test_check_finds_citations_to_missing_or_unanswered_questions_and_unknown_figures():
    qs = [answered(1, ["figures/q1-a.png"]), answered(2), SubQuestion(3, "failed?", status="unanswered")]
    body = ("Claim [1]. Range [1-3]. Pair [2, 9]. A link [4](http://x) and code `[8]`.\n\n"
            "```\nprint([5])\n```\n![ok](./figures/q1-a.png) ![bad](figures/q2-nope.png)\n")
    found = citations.check(body, qs)
    assert found.bad_citations == [3, 9] and found.bad_figures == ["figures/q2-nope.png"]
    assert not found.ok
    assert found.problems(qs) == ["[3] is cited, but that sub-question has no answer.",
                                  "[9] is cited, but there is no such sub-question.",
                                  "the image figures/q2-nope.png is embedded, but no sub-question "
                                  "produced it."]
    flagged = citations.flag(body, found)
    assert "Range [1-3?]." in flagged and "Pair [2, 9?]." in flagged and "Claim [1]." in flagged
    assert "print([5])" in flagged and "![ok](./figures/q1-a.png)" in flagged
    assert "figure left out: `figures/q2-nope.png`" in flagged
    assert citations.check(flagged, qs).bad_citations == []
    assert citations.check("All good [1, 2].", qs).ok


def test_appendix_keeps_every_question_and_fences_what_the_scripts_printed():
    tricky = SubQuestion(2, "Is <b>[1]</b> *bold*?", status="unanswered", detail="exit 1",
                         answer="partial ```x```", script="print('```')", script_name="solution.py",
                         run_id="20260101-000000-abcd")
    md = document.appendix([answered(1, ["figures/q1-a.png"]), tricky])
    assert "### [2] Is \\<b\\>\\[1\\]\\</b\\> \\*bold\\*?" in md
    assert "**Unanswered:** exit 1." in md and "run `20260101-000000-abcd`" in md
    assert "````text\npartial ```x```\n````" in md and "````python\nprint('```')\n````" in md
    assert "![Figure for [1]](figures/q1-a.png)" in md
    assert citations.check(md.split("### [2]")[1], []).bad_citations == []  # escaped: no citation left
    assert document.title_of("intro\n# **Main** title #\n", "x") == "Main title"
    assert document.title_of("no heading", "Analyze   everything") == "Report: Analyze everything"


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_html_escapes_raw_html_and_embeds_only_produced_figures(tmp_path):
    (tmp_path / "q1-a.png").write_bytes(PNG)
    markdown = ("# Title <script>alert(1)</script>\n\nText <img src=x onerror=alert(1)> "
                "[evil](javascript:alert(1))\n\n![chart](figures/q1-a.png) "
                "![remote](http://example.com/x.png)"
                "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    page = html_page(markdown, 'A "title" <b>', {"figures/q1-a.png": tmp_path / "q1-a.png"})
    parsed = Collect()
    parsed.feed(page)
    assert parsed.tags.count("html") == 1 and "script" not in parsed.tags and "table" in parsed.tags
    srcs = [v for k, v in parsed.attrs if k == "src"]
    assert srcs == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert not any(k == "href" for k, _ in parsed.attrs) and not any(k == "onerror" for k, _ in parsed.attrs)
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text and "[figure left out: http://example.com/x.png]" in text
    assert "<title>A &quot;title&quot; &lt;b&gt;</title>" in page


def test_html_links_each_cited_number_to_its_own_appendix_entry():
    page = html_page("North led [1], see [2, 9], not [9] or `[1]` or [a [1]](http://x); [2-1] and [3; 1].\n\n"
                       "### [1] Q?\n\n### [2] R?\n\n### [3] S?\n", "t", {}, questions=[1, 2, 3])
    assert ('[<a href="#q1">1</a>], see [<a href="#q2">2</a>, 9], not [9] or <code>[1]</code>') in page
    assert '<a href="http://x">a [1]</a>' in page  # no link inside a link
    assert '[<a href="#q2">2</a>-<a href="#q1">1</a>] and [<a href="#q3">3</a>; <a href="#q1">1</a>].' in page
    assert '<h3 id="q1">[1] Q?</h3>' in page and '<h3 id="q2">[2] R?</h3>' in page  # a heading is no link


def test_html_embeds_each_figure_once_and_links_to_it_elsewhere(tmp_path):
    (tmp_path / "q1-a.png").write_bytes(PNG)
    (tmp_path / "q2-b.png").write_bytes(PNG + b"b")
    figures = {"figures/q1-a.png": tmp_path / "q1-a.png", "figures/q2-b.png": tmp_path / "q2-b.png"}
    body = "# T\n\nA [1].\n\n![Units](figures/q1-a.png)\n\nAgain ![Units](./figures/q1-a.png).\n"
    markdown = document.assemble(body, [answered(1, ["figures/q1-a.png"]), answered(2, ["figures/q2-b.png"])], [])
    assert "Figure (shown in the report above): [figures/q1-a.png](figures/q1-a.png)" in markdown
    assert "![Figure for [2]](figures/q2-b.png)" in markdown
    page = html_page(markdown, "t", figures, questions=[1, 2])
    parsed = Collect()
    parsed.feed(page)
    srcs = [v for k, v in parsed.attrs if k == "src"]
    assert len(srcs) == 2 and len(set(srcs)) == 2  # two figures, two images
    assert '<img src="data:image/png;base64,' in page and 'id="fig-1"' in page and 'id="fig-2"' in page
    assert '<a href="#fig-1">Units (figure shown above)</a>' in page
    assert '<a href="#fig-1">figures/q1-a.png</a>' in page  # the appendix's link goes to the figure
    hrefs = {v for k, v in parsed.attrs if k == "href"}
    ids = {v for k, v in parsed.attrs if k == "id"}
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs)
    # Two runs that drew the very same chart: one image, the other place links to it.
    (tmp_path / "q2-b.png").write_bytes(PNG)
    same = html_page(markdown, "t", figures, questions=[1, 2])
    assert same.count("<img ") == 1 and '<a href="#fig-1">Figure for [2] (figure shown above)</a>' in same


def test_header_names_request_date_lake_model_and_files_used_escaped():
    q = answered(1)
    q.files_used = ["sales_<b>2024</b>.csv", "ozone*.csv"]
    head = document.header("Why *so* <slow>?", 1764072000.0, "/lakes/my_lake", "scripted", ["m-1", "m_2"],
                           "20261125-130000-abcd", [q, SubQuestion(2, "x?", status="unanswered")])
    assert "- **Request:** Why \\*so\\* \\<slow\\>?" in head
    assert re.search(r"- \*\*Date:\*\* 2025-11-2\dT\d\d:\d\d:00[+-]\d\d:\d\d", head)
    assert "- **Lake:** /lakes/my_lake" in head and "m-1, m_2 (provider scripted)" in head
    assert "`20261125-130000-abcd` · 2 sub-questions, 1 answered" in head
    md = document.assemble("# Title\n\nBody [1].", [q], [], head)
    assert md.startswith("# Title\n\n- **Request:**") and "Body [1]." in md
    assert "Files used: sales\\_\\<b\\>2024\\</b\\>.csv, ozone\\*.csv" in md
    page = html_page(md, "Title", {}, questions=[1])
    assert "<b>" not in page and "&lt;b&gt;2024&lt;/b&gt;" in page and "&lt;slow&gt;" in page


def test_shared_budget_stops_all_but_the_final_roles():
    inner = ScriptedProvider([Rule(response="ok")])
    settings = Settings.load().with_overrides({"llm.max_llm_calls": 2})
    budget = SharedBudget(inner, settings)
    for role in ("planner", "coder"):
        budget.complete("m", "p", None, settings, role=role)
    assert budget.exhausted()
    with pytest.raises(BudgetExceeded, match="report call budget"):
        budget.complete("m", "p", None, settings, role="planner")
    budget.complete("m", "p", None, settings, role="finalyzer")
    budget.complete("m", "p", None, settings, role="writer")
    assert budget.spent()["llm_calls"] == 4 and len(inner.calls) == 4
    assert not hasattr(budget, "close")  # a sub-question run closing its LLM must not close the shared client
    priced = Settings.load().with_overrides({"llm.max_cost": 0.0005, "llm.model": "gemini-2.5-pro"})
    costly = SharedBudget(ScriptedProvider([Rule(response="x" * 400)]), priced)
    costly.complete("gemini-2.5-pro", "p" * 400, None, priced, role="coder")
    with pytest.raises(BudgetExceeded, match="cost budget"):
        costly.complete("gemini-2.5-pro", "p" * 400, None, priced, role="coder")


def test_only_real_images_in_the_work_folder_become_figures(tmp_path):
    work, figures = tmp_path / "work", tmp_path / "report" / "figures"
    (work / "data").mkdir(parents=True)
    (work / "data" / "inside.png").write_bytes(PNG)
    (work / "b chart.png").write_bytes(PNG)
    (work / "fake.png").write_text("not an image")
    (work / "plot.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    (work / "link.png").symlink_to(work / "b chart.png")
    (work / "table.csv").write_text("a\n1\n")
    assert collect_figures(work, figures, 3, 5) == ["figures/q3-b-chart.png", "figures/q3-plot.svg"]
    assert (figures / "q3-b-chart.png").read_bytes() == PNG
    assert collect_figures(work, tmp_path / "f2", 1, 1) == ["figures/q1-b-chart.png"]
    assert collect_figures(tmp_path / "missing", figures, 1, 3) == []


def test_a_figure_that_is_a_link_to_a_host_file_is_never_embedded(tmp_path):
    host = tmp_path / "host" / "secret.png"
    host.parent.mkdir()
    host.write_bytes(PNG + b"host secret")
    work = tmp_path / "work"
    work.mkdir()
    (work / "chart.png").symlink_to(host)  # what a script would plant
    os.mkfifo(work / "pipe.png")  # would block a reader that opened it
    assert collect_figures(work, tmp_path / "figures", 1, 5) == []
    assert not (tmp_path / "figures").exists()


def test_guidelines_ask_for_a_quotable_answer_and_the_named_chart(tmp_path):
    plain = guidelines(SubQuestion(1, "How many?"))
    assert "short, self-contained answer" in plain and "Also save" not in plain
    chart = guidelines(SubQuestion(2, "Trend?", chart="Line chart of temperature (°C) by day!"))
    assert ("Also save a Line chart of temperature (°C) by day! as the PNG file "
            "line-chart-of-temperature-c-by-day.png") in chart
    out = tmp_path / "solution.out"
    out.write_text("partial\n\n--- stderr ---\nTraceback (most recent call last):\n  File 'x'\n"
                   "KeyError: 'units'\n\n--- exit 1 after 0.1 s ---\n")
    assert last_error(out) == "KeyError: 'units'" and last_error(tmp_path / "none.out") == ""
