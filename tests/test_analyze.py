"""The paper's analyzer at index time: real profilers, real sandbox, real SQLite and Chroma; only the model is scripted."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from agent_helpers import FAST, fenced
from conftest import write_table_lake
from dslake_index import catalog

from dsstar_lake.base.errors import ModelNotConfigured
from dsstar_lake.lake import Lake
from dsstar_lake.llm.scripted import ScriptedProvider

HEADING = "Analysis (llm:fake-analyzer; what a model-written script printed about the file):"
FAMILY_FIRST = "sensors/daily/readings_2024-01-01.csv"
# A real script: what the model writes for one file. It reads the file the way the paper's analyzer does.
DESCRIBE = """
path = {path!r}
data = open(path, 'rb').read()
print('described by script:', path)
print('bytes:', len(data), 'lines:', data.count(b'\\n'))
"""


def describer(failing: tuple[str, ...] = ()) -> ScriptedProvider:
    """Answer the analyzer with a working describe script, except for `failing` files (whose fixes fail too)."""

    def respond(role: str, prompt: str, system: str | None) -> str:
        if role == "analyzer":
            path = re.search(r'content of "data/(.+?)"\.\n', prompt)[1]
            if path in failing:
                return fenced(f"raise ValueError('cannot make sense of {path}')")
            return fenced(DESCRIBE.format(path=f"data/{path}"))
        return fenced("raise ValueError('still no sense in it')")

    return ScriptedProvider(responder=respond)


def analysed(provider: ScriptedProvider) -> list[str]:
    """Return the lake files the analyzer was asked about, in the order asked."""
    return [re.search(r'content of "data/(.+?)"\.\n', p)[1] for role, p in provider.calls if role == "analyzer"]


def open_lake(root, **overrides) -> Lake:
    return Lake.open(root, overrides={**FAST, "llm.provider": "scripted", "llm.model": "fake-analyzer", **overrides})


@pytest.fixture
def lake_dir(tmp_path):
    root = write_table_lake(tmp_path / "lake")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)  # no profiler reads it: the generic fallback does
    return root


def description(lake: Lake, path: str) -> str:
    """Return the stored description (the data/ form prompts get; lake.show names the lake's own path)."""
    return lake.catalog.show(path)["entry"]["description"]


def test_llm_analysis_joins_descriptions_and_is_cached_by_content_hash(lake_dir, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(lake_dir, plain)
    before = open_lake(plain)
    before.index()
    provider = describer()
    lake = open_lake(lake_dir)
    summary = lake.index(analyzer="llm", provider=provider)

    # every file entry and one member of the family; nothing else asked the model
    assert sorted(analysed(provider)) == ["blob.bin", "notes.md", "ozone_by_county.csv", "sales.csv", FAMILY_FIRST]
    assert {role for role, _ in provider.calls} == {"analyzer"}
    assert summary.analysis["analyzed"] == 5 and summary.analysis["failed"] == 0
    sales = description(lake, "sales.csv")
    assert sales.startswith(description(before, "sales.csv"))  # the profiler's description stays first, whole
    assert f"{HEADING}\ndescribed by script: data/sales.csv\nbytes: 85 lines: 4" in sales
    family = lake.catalog.show(FAMILY_FIRST)["entry"]
    assert family["kind"] == "family" and f"described by script: data/{FAMILY_FIRST}" in family["description"]
    assert family["description"].index("Description of the first member") < family["description"].index(HEADING)
    # cards (what is embedded and full-text indexed) are unchanged: no analysis text, nothing re-embedded
    for path in ("sales.csv", "blob.bin", FAMILY_FIRST):
        assert lake.show(path)["entry"]["card"] == before.show(path)["entry"]["card"]
    assert lake.status().problems == []

    # the pass left an audit trail: every model call and every file's outcome
    folder = lake_dir / ".dslake" / "runs" / summary.analysis["run_folder"].rsplit("/", 1)[1]
    lines = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    assert sum(line["type"] == "llm_call" for line in lines) == 5
    assert sorted(line["path"] for line in lines if line["type"] == "analysis" and line["ok"]) == sorted(
        analysed(provider))
    assert lake.runs() == []  # not an ask run

    # a second index asks nothing: analyses are cached by content hash
    again = lake.index(analyzer="llm", provider=provider)
    assert len(provider.calls) == 5 and again.analysis["wanted"] == 0 and again.embedded == 0

    # a renamed file keeps its analysis without a call, and so does a copy
    (lake_dir / "sales.csv").rename(lake_dir / "shop.csv")
    shutil.copy(lake_dir / "notes.md", lake_dir / "notes_copy.md")
    lake.index(analyzer="llm", provider=provider)
    assert len(provider.calls) == 5
    assert "described by script: data/sales.csv" in description(lake, "shop.csv")
    assert HEADING in description(lake, "notes_copy.md")

    # the analyses stay in the descriptions when indexing without a model, and survive a rebuild
    lake.index(analyzer="profile")
    lake.index(rebuild=True)
    assert HEADING in description(lake, "shop.csv") and len(provider.calls) == 5


def test_auto_analyzes_only_what_no_profiler_reads_and_one_member_per_family(lake_dir):
    (lake_dir / "broken.json").write_text('{"stations": [1, 2, {"id": ')  # the JSON profiler gives up: plain text
    provider = describer()
    lake = open_lake(lake_dir)
    summary = lake.index(analyzer="auto", provider=provider)
    assert sorted(analysed(provider)) == ["blob.bin", "broken.json", FAMILY_FIRST]
    assert summary.analysis["analyzed"] == 3
    assert HEADING in description(lake, "blob.bin") and HEADING in description(lake, "broken.json")
    assert HEADING not in description(lake, "sales.csv")
    # llm afterwards analyses the rest, and only the rest
    lake.index(analyzer="llm", provider=provider)
    assert sorted(analysed(provider)[3:]) == ["notes.md", "ozone_by_county.csv", "sales.csv"]


def test_a_failed_analysis_keeps_the_profiler_description_and_is_not_retried_by_the_same_model(lake_dir):
    before = open_lake(lake_dir)
    before.index()
    plain = description(before, "notes.md")
    before.close()
    provider = describer(failing=("notes.md",))
    lake = open_lake(lake_dir, **{"agent.max_debug": 1})
    summary = lake.index(analyzer="llm", provider=provider)
    assert summary.analysis["failed"] == 1 and summary.analysis["analyzed"] == 4
    assert summary.analysis["failures"][0][0] == "notes.md" and "still no sense" in summary.analysis["failures"][0][1]
    assert description(lake, "notes.md") == plain
    assert [role for role, p in provider.calls if "notes.md" in p] == ["analyzer", "debugger"]
    calls = len(provider.calls)
    lake.index(analyzer="llm", provider=provider)
    assert len(provider.calls) == calls  # the failure is remembered for this model
    other = open_lake(lake_dir, **{"llm.model": "another-model"})
    retried = other.index(analyzer="llm", provider=describer())
    assert retried.analysis["wanted"] == 1 and retried.analysis["analyzed"] == 1
    assert "Analysis (llm:another-model;" in description(other, "notes.md")


def test_budget_stop_keeps_what_was_done_and_the_next_index_goes_on(lake_dir):
    provider = describer()
    lake = open_lake(lake_dir, **{"llm.max_llm_calls": 2, "index.jobs": 1})
    summary = lake.index(analyzer="llm", provider=provider)
    a = summary.analysis
    assert a["analyzed"] == 2 and a["not_started"] == 3 and a["stopped"].startswith("budget")
    assert analysed(provider) == ["blob.bin", "notes.md"]  # one at a time, in path order
    assert HEADING in description(lake, "notes.md") and HEADING not in description(lake, "sales.csv")
    assert lake.status().problems == []
    lake.index(analyzer="llm", provider=provider)
    lake.index(analyzer="llm", provider=provider)
    assert sorted(analysed(provider)) == ["blob.bin", "notes.md", "ozone_by_county.csv", "sales.csv", FAMILY_FIRST]
    assert HEADING in description(lake, "sales.csv")


def test_no_model_is_the_clear_error_before_anything_is_written(lake_dir, monkeypatch):
    lake = Lake.open(lake_dir, overrides=FAST)
    with pytest.raises(ModelNotConfigured, match="no usable model"):
        lake.index(analyzer="llm")
    assert not (lake_dir / ".dslake").exists()
    assert lake.index().analysis is None  # the default needs no model


def test_fresh_manifest_has_the_analyses_table(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(analyses)")}
    assert columns == {"hash", "text", "source", "created_at"}


def test_auto_on_the_samples_embeds_each_changed_card_once(samples_lake, tmp_path, monkeypatch):
    """Profiles, the analyzer's descriptions and the summarizer's card lines are all rendered before one embedding."""
    from dslake_index.vectors import VectorStore

    root = tmp_path / "samples"
    shutil.copytree(samples_lake, root)  # with its catalog: a rebuild keeps the profiles and embeds every card anew
    fields = "Measures: counts by code\nUnits: none\nPeriod: unknown\nNames: sample codes\nQuestions: what is coded"

    def respond(role: str, prompt: str, system: str | None) -> str:
        if role == "analyzer":
            return fenced(DESCRIBE.format(path="data/" + re.search(r'content of "data/(.+?)"\.\n', prompt)[1]))
        assert role == "summarizer", role
        return fields

    upserted: list[str] = []
    real_upsert = VectorStore.upsert

    def counting_upsert(self, ids, *args, **kwargs):
        upserted.extend(ids)
        return real_upsert(self, ids, *args, **kwargs)

    monkeypatch.setattr(VectorStore, "upsert", counting_upsert)
    lake = open_lake(root)
    summary = lake.index(rebuild=True, analyzer="auto", provider=ScriptedProvider(responder=respond))
    assert summary.profiled == 0  # the cached profiles were kept
    assert summary.analysis["analyzed"] > 0 and summary.summaries["written"] > 0  # both passes changed entries
    entry_ids = {row[0] for row in lake.connection().execute("SELECT id FROM entries")}
    assert summary.embedded == len(entry_ids)  # each card embedded once
    # The store gets each card's vector once: from the index, or from the manifest when its first reader brings
    # a lagging store in step (index/vector_lag.py; a check of the vectors is such a reader).
    assert lake.status(check_vectors=True).problems == []
    assert sorted(upserted) == sorted(entry_ids)
