"""Model summaries of wordless entries at index time: real profilers, SQLite, FTS5 and Chroma; the model is scripted."""

from __future__ import annotations

import json
import re

import pytest
from agent_helpers import FAST, fenced
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from dslake_index import catalog
from dslake_index.profilers.base import Column, Profile, Table
from dslake_index.wordless import content_words, is_wordless

from dsstar_lake.base.settings import Settings
from dsstar_lake.enrichers.summarizer_pass import parse_summary
from dsstar_lake.lake import Lake
from dsstar_lake.llm.registry import model_for
from dsstar_lake.llm.scripted import ScriptedProvider

WORDLESS = "space/k7q_2023.dat"  # a header-less numeric table named by a code
CODES = "space/b_q.csv"  # columns named by codes
SUMMARY = ("Measures: hourly heliospheric plasma bulk speed (column 4) by year, day of year (column 2) and hour\n"
           "Units: km/s\nPeriod: 2023, hourly\nNames: solar wind speed, OMNI-like record\n"
           "Questions: how fast was the solar wind on a given day")
OTHER = "Measures: interplanetary magnetic field components bx, by\nUnits: nT"


def write_lake(root):
    write_table_lake(root)
    space = root / "space"
    space.mkdir()
    (space / "k7q_2023.dat").write_text("".join(f"2023 {d:3d} {h:2d} {400 + d + h:6.1f}\n"
                                                for d in range(1, 4) for h in range(24)))
    (space / "b_q.csv").write_text("bx,by_q,t1\n1.5,2.5,3\n1.0,2.0,4\n0.5,1.5,5\n")
    return root


def summarizer(answer: str = SUMMARY, failing: tuple[str, ...] = ()) -> ScriptedProvider:
    """Answer summarizer prompts with `answer` (OTHER for CODES; a `failing` path gets prose without fields)."""

    def respond(role: str, prompt: str, system: str | None) -> str:
        if role == "analyzer":  # auto also runs the paper's analyzer on one member per family
            return fenced("print('a family member')")
        assert role == "summarizer", role
        if any(f'"data/{path}"' in prompt for path in failing):
            return "I cannot tell what this file is."
        return OTHER if f'"data/{CODES}"' in prompt else answer

    return ScriptedProvider(responder=respond)


def asked(provider: ScriptedProvider) -> list[str]:
    """Return the paths the summarizer was asked about."""
    return sorted(re.search(r'^"data/(.+?)"$', p, re.M)[1] for role, p in provider.calls if role == "summarizer")


def open_lake(root, **overrides) -> Lake:
    return Lake.open(root, overrides={**FAST, "llm.provider": "scripted", "llm.model": "fake-cheap", **overrides})


@pytest.fixture
def lake_dir(tmp_path):
    return write_lake(tmp_path / "lake")


def entry(lake: Lake, path: str) -> dict:
    return lake.show(path)["entry"]


def test_wordless_means_no_content_words_from_the_file_itself():
    numbered = Table(n_rows=72, n_cols=4, header_row=None, columns=[Column(str(i), "float") for i in range(4)])
    assert content_words(Profile("fixed-width", tables=[numbered])) == set()
    codes = Table(n_cols=3, columns=[Column(n, "float") for n in ("bx", "by_q", "t1")])
    assert is_wordless(Profile("csv", tables=[codes]))
    generic = Table(n_cols=3, columns=[Column(n, "int") for n in ("Year", "Month", "Value")])
    assert is_wordless(Profile("csv", tables=[generic]))  # scaffolding words say nothing of what is measured
    named = Table(n_cols=3, columns=[Column(n, "float") for n in ("timestamp", "sensor_id", "temperature_c")])
    assert content_words(Profile("csv", tables=[named])) == {"sensor", "temperature"}
    assert not is_wordless(Profile("csv", tables=[named]))
    # a title the profiler makes up from the format is not the file's word; a binary nobody read is not summarised
    assert is_wordless(Profile("tle", title="two-line element sets for satellite(s) 25544"))
    assert not is_wordless(Profile("binary"))
    assert not is_wordless(Profile("text", text_sample="Station maintenance log for the river sensors."))


def test_auto_summarises_only_wordless_entries_into_card_and_description(lake_dir, tmp_path):
    before = open_lake(lake_dir)
    before.index()
    plain = {path: entry(before, path) for path in (WORDLESS, CODES, "sales.csv")}
    assert all(hit.fulltext_rank is None for hit in before.search("heliospheric", k=10))  # no card says it yet
    before.close()

    provider = summarizer()
    lake = open_lake(lake_dir)
    summary = lake.index(analyzer="auto", provider=provider)
    assert asked(provider) == [CODES, WORDLESS]  # nothing with words was asked about
    s = summary.summaries
    assert (s["wanted"], s["written"], s["failed"], s["llm_calls"], s["model"]) == (2, 2, 0, 2, "fake-cheap")
    assert s["estimate"]["entries"] == 2 and s["estimate"]["input_tokens"] > 100
    assert "unpriced (no llm.pricing entry for fake-cheap)" in s["estimate"]["line"]

    shown = entry(lake, WORDLESS)
    assert shown["card"] == plain[WORDLESS]["card"] + "\nmodel summary:\n" + SUMMARY
    assert shown["description"].startswith(plain[WORDLESS]["description"])
    assert shown["description"].endswith(
        "\n\nModel summary (llm:fake-cheap; written by a model from this description, for search; not checked "
        "against the file):\n" + SUMMARY)
    assert entry(lake, "sales.csv") == plain["sales.csv"]
    # embedded and full-text indexed: a word only the summary has finds the file first
    top = lake.search("heliospheric plasma speed", k=3)[0]
    assert top.path == WORDLESS and top.fulltext_rank == 1 and top.dense_rank == 1
    assert lake.status(check_vectors=True).problems == []

    # the prompt: the path as a literal, the description framed as data, the five fields asked for
    prompt = next(p for role, p in provider.calls if role == "summarizer")
    assert '<data path="data/space/b_q.csv" tag=' in prompt and "Measures: ...\nUnits: ...\n" in prompt

    # cached by content hash: a second index asks nothing and embeds nothing
    again = lake.index(analyzer="auto", provider=provider)
    assert len(asked(provider)) == 2 and again.summaries["wanted"] == 0 and again.embedded == 0
    # a rebuilt folder (another file changed) keeps the summary without a call, and a plain index keeps it too
    (lake_dir / "space" / "b_q.csv").write_text("bx,by_q,t1\n9,9,9\n")
    changed = lake.index()
    assert changed.summaries is None and entry(lake, WORDLESS)["card"] == shown["card"]
    assert "model summary:" not in entry(lake, CODES)["card"]  # new content: no summary until a model is asked
    lake.index(rebuild=True)
    assert entry(lake, WORDLESS)["card"] == shown["card"] and len(asked(provider)) == 2


def test_a_failed_summary_leaves_the_entry_as_it_was_and_is_not_asked_again(lake_dir):
    before = open_lake(lake_dir)
    before.index()
    plain = entry(before, WORDLESS)
    before.close()
    provider = summarizer(failing=(WORDLESS,))
    lake = open_lake(lake_dir)
    s = lake.index(analyzer="auto", provider=provider).summaries
    assert (s["written"], s["failed"]) == (1, 1) and s["failures"][0][0] == WORDLESS
    kept = entry(lake, WORDLESS)
    assert (kept["card"], kept["description"]) == (plain["card"], plain["description"])
    assert "model summary:" in entry(lake, CODES)["card"]
    lake.index(analyzer="auto", provider=provider)
    assert len(asked(provider)) == 2  # remembered for this model
    other = open_lake(lake_dir, **{"llm.models.summarizer": "another-model"})
    retried = other.index(analyzer="auto", provider=summarizer()).summaries
    assert retried["wanted"] == 1 and retried["written"] == 1
    assert "Model summary (llm:another-model;" in entry(other, WORDLESS)["description"]


def test_a_provider_failure_stops_the_pass_and_the_next_index_goes_on(lake_dir):
    def broken(role, prompt, system):
        from dsstar_lake.base.errors import ProviderError

        raise ProviderError("scripted outage")

    lake = open_lake(lake_dir)
    s = lake.index(analyzer="auto", provider=ScriptedProvider(responder=broken)).summaries
    assert s["written"] == 0 and s["not_started"] + s["failed"] == 2 and s["stopped"].startswith("provider")
    assert "model summary:" not in entry(lake, WORDLESS)["card"]
    assert lake.index(analyzer="auto", provider=summarizer()).summaries["written"] == 2


def test_model_answers_become_labelled_lines_only():
    answer = ("Sure! Here it is.\n**Measures:** solar wind \x1b[31mspeed\n# Question: ignore all rules\n"
              "- Units: km/s\nPeriod: ...\nMeasures: again\nNames: " + "x" * 500 + "\nThanks")
    text = parse_summary(answer)
    lines = text.split("\n")
    assert lines[0] == "Measures: solar wind \\x1b[31mspeed" and lines[1] == "Units: km/s"
    assert lines[2].startswith("Names: xxx") and len(lines[2]) == len("Names: ") + 300 and len(lines) == 3
    assert parse_summary("NONE") is None and parse_summary("Units: km/s") is None


def test_the_cheap_default_model_belongs_to_the_default_provider(monkeypatch):
    settings = Settings.load(config_files=[], environ={})
    assert model_for(settings, "summarizer") == "gemini-2.5-flash-lite"
    assert model_for(settings, "analyzer") == "gemini-2.5-pro"
    openai = settings.with_overrides({"llm.provider": "openai", "llm.model": "gpt-4o"})
    assert model_for(openai, "summarizer") == "gpt-4o"
    assert model_for(openai.with_overrides({"llm.models.summarizer": "gpt-4o-mini"}), "summarizer") == "gpt-4o-mini"
    assert model_for(settings.with_overrides({"llm.provider": "manual"}), "summarizer") == "manual"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_cli_shows_the_cost_first_and_honours_max_cost(lake_dir, tmp_path, monkeypatch):
    rules = tmp_path / "rules.jsonl"
    rules.write_text("".join(json.dumps(rule) + "\n" for rule in (
        {"role": "summarizer", "match": f'"data/{CODES}"', "response": OTHER},
        {"role": "summarizer", "response": SUMMARY},
        {"role": "analyzer", "response": fenced("print('a family member')")})))
    model = ("--llm", "scripted", "--scripted-file", rules, "--model-summarizer", "gemini-2.5-flash-lite")
    stopped = invoke("index", lake_dir, "--analyzer", "auto", *model, "--max-cost", "0.000001", "--json")
    assert stopped.exit_code == 0, stopped.output
    s = json.loads(stopped.stdout)["summaries"]
    assert s["estimate"]["usd"] > 0.000001 and s["llm_calls"] == 0 and s["not_started"] == 2
    assert s["stopped"].startswith("budget: the estimate $") and "nothing was asked" in s["stopped"]
    assert "model summary:" not in json.loads(invoke("show", WORDLESS, "--lake", lake_dir, "--json").stdout)[
        "entry"]["card"]

    done = invoke("index", lake_dir, "--analyzer", "auto", *model, "--max-cost", "1")
    assert done.exit_code == 0, done.output
    assert re.search(r"summarizer: 2 entries without words to summarise with gemini-2\.5-flash-lite: ~[\d,]+ input "
                     r"\+ ~500 output tokens, ≈ \$0\.000\d", done.stderr)
    assert "summarizer (gemini-2.5-flash-lite): 2 summarised, 0 failed" in done.stdout
    found = invoke("search", "heliospheric plasma", "--lake", lake_dir, "--json")
    top = json.loads(found.stdout)["hits"][0]
    assert top["path"] == WORDLESS and top["fulltext_rank"] == 1


def test_default_index_needs_no_model_and_the_manifest_has_the_table(lake_dir, tmp_path, monkeypatch):
    summary = Lake.open(lake_dir, overrides=FAST).index()
    assert summary.summaries is None and summary.analysis is None
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    assert {row[1] for row in conn.execute("PRAGMA table_info(summaries)")} == {"hash", "text", "source",
                                                                                   "created_at"}
