"""ask, report and eval over a lake in S3 (issue 19): scripts read data/ from a per-run view of the blob cache.

A real S3 server (moto's server mode) on 127.0.0.1 holds the small table lake and two data_samples files; the
lake is indexed once per module, and only the model's answers are scripted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_helpers import FAST, SUM_WIDGETS, WORST_COUNTY, fenced, prompts, scripted, trace
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli

from dsstar_lake.lake import Lake

s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
BUCKET = "remote-ask"
URL = f"s3://{BUCKET}/lake"
READ_PARKS = """
import csv, json
parks = json.load(open('data/city/parks.json'))
first = open('data/' + 'notes' + '.md').readline().strip()  # no literal names it: fetched when the open fails
listed = list(csv.DictReader(open('data/_dslake_manifest.csv')))
print(len(parks['parks']), len(listed), sum(r['cached'] == 'yes' for r in listed), first)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The S3 server with the lake uploaded and indexed into a catalog; yields (filesystem, catalog)."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    base = tmp_path_factory.mktemp("remote")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
                           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                           "AWS_EC2_METADATA_DISABLED": "true",
                           "AWS_SHARED_CREDENTIALS_FILE": str(base / "no-credentials"),
                           "AWS_CONFIG_FILE": str(base / "no-config")}.items():
            mp.setenv(key, value)
        fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
        fs.mkdir(BUCKET)
        local = write_table_lake(base / "local")
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            fs.put_file(str(path), f"{BUCKET}/lake/{path.relative_to(local).as_posix()}")
        fs.put_file(str(SAMPLES / "city" / "parks.json"), f"{BUCKET}/lake/city/parks.json")
        fs.put_file(str(SAMPLES / "stations.xlsx"), f"{BUCKET}/lake/stations.xlsx")
        catalog = base / "catalog"
        summary = Lake.open(URL, catalog=catalog).index()
        assert summary.failed == 0, summary.failures
        yield fs, catalog
    server.stop()


def blobs(catalog: Path) -> dict[str, int]:
    """Return the cached blobs (content hash: inode)."""
    return {p.name: p.stat().st_ino for p in (catalog / "blobs").glob("??/*")}


def file_hash(catalog: Path, rel: str) -> str:
    return Lake.open(catalog=catalog).show(rel)["file"]["hash"]


def widgets_model():
    return scripted(("planner", "Sum the widget units in data/sales.csv."), ("coder", fenced(SUM_WIDGETS)),
                    ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))


def test_ask_reads_the_context_from_the_cache_and_a_second_ask_downloads_nothing(store):
    _, catalog = store
    model = widgets_model()
    answer = Lake.open(catalog=catalog).ask("How many widget units were sold in total?", provider=model,
                                            overrides=FAST)
    assert answer.value == "14" and answer.files_used == ["sales.csv"]
    lake = Lake.open(catalog=catalog)
    assert "downloaded" in trace(lake, answer.run_id, "exec")[0]["notes"][0]
    digest = file_hash(catalog, "sales.csv")
    first = blobs(catalog)
    assert digest in first
    # The model was told what data/ holds for a remote lake, and where the list of every file is.
    coder = prompts(model, "coder")[0]
    assert "object storage" in coder and "data/_dslake_manifest.csv" in coder
    assert not list((catalog / "views").iterdir())  # the run's view went with the run

    again = Lake.open(catalog=catalog).ask("How many widget units were sold in total?", provider=widgets_model(),
                                           overrides=FAST)
    assert again.value == "14"
    notes = [n for e in trace(lake, again.run_id, "exec") for n in e.get("notes", [])]
    assert notes and all("(0 downloaded" in n for n in notes)
    assert blobs(catalog)[digest] == first[digest]  # the same blob file: nothing was downloaded again


def test_a_script_reads_a_file_outside_the_context_and_lists_the_manifest(store):
    _, catalog = store
    model = scripted(("planner", "Count the parks."), ("coder", fenced(READ_PARKS)), ("verifier", "Yes"),
                     ("finalyzer", fenced(READ_PARKS)))
    lake = Lake.open(catalog=catalog)
    # Without bubblewrap the view holds copies, and the change check around each script sees no false alarm.
    answer = lake.ask("How many parks are there?", files=["sales.csv"], provider=model,
                      overrides={**FAST, "sandbox.backend": "subprocess"})
    parks = len(json.loads((SAMPLES / "city" / "parks.json").read_text())["parks"])
    objects = 5 + 5  # sales, ozone, notes, stations, parks and five daily files
    # Fetched so far: sales.csv (the context), parks.json (named by the script) and notes.md (opened by it).
    assert answer.value == f"{parks} {objects} 3 # Field notes"
    assert answer.files_used == ["city/parks.json", "notes.md"]  # the manifest is dslake's, not a lake file
    done = trace(lake, answer.run_id, "exec")[0]
    assert done["ok"] and "ran it again" in done["notes"][-1]


def test_the_size_limit_evicts_least_recently_used_blobs_and_a_partial_download_is_never_kept(store, tmp_path):
    from dslake_index.blobcache import BlobCache, Wanted
    from dslake_index.objectstore import filesystem, object_lake

    from dsstar_lake.base.errors import DslakeError

    _, catalog = store
    lake = object_lake(URL, tmp_path)
    fs = filesystem(lake)
    records = {rel: Lake.open(catalog=catalog).show(rel)["file"] for rel in ("sales.csv", "stations.xlsx")}
    wanted = {rel: Wanted(rel, rec["size"], rec["hash"]) for rel, rec in records.items()}
    cache = BlobCache(tmp_path / "cache", limit_bytes=records["stations.xlsx"]["size"])
    old = cache.fetch(lake, fs, wanted["sales.csv"])
    new = cache.fetch(lake, fs, wanted["stations.xlsx"])
    assert old.name == records["sales.csv"]["hash"] and old.stat().st_size == records["sales.csv"]["size"]
    assert cache.evict() == 1 and not old.exists() and new.exists()

    dead = object_lake(URL, tmp_path)
    dead = type(dead)(dead.url, tuple(sorted({**dict(dead.env), "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                                              "AWS_MAX_ATTEMPTS": "1"}.items())), dead.tmp_dir)
    with pytest.raises(DslakeError, match="cannot fetch sales.csv from s3://"):
        cache.fetch(dead, filesystem(dead), wanted["sales.csv"])
    assert not list((tmp_path / "cache" / "tmp").iterdir())
    fs_back = filesystem(lake)  # filesystem() set the dead endpoint in this process: set the live one again
    assert fs_back.exists(BUCKET)


def test_an_object_changed_behind_the_catalogs_back_is_detected_not_used(store, tmp_path):
    fs, catalog = store
    key = f"{BUCKET}/lake/ozone_by_county.csv"
    before = fs.cat_file(key)
    fs.pipe(key, before.replace(b"Kings", b"Bronx"))
    script = ("import csv, os\nrows = csv.DictReader(open('data/_dslake_manifest.csv'))\n"
              "row = [r for r in rows if r['path'] == 'ozone_by_county.csv'][0]\n"
              "print(os.path.exists('data/ozone_by_county.csv'), row['cached'])\n")
    model = scripted(("planner", "Find the worst county."), ("coder", fenced(script)), ("verifier", "Yes"),
                     ("finalyzer", fenced(script)))
    try:
        answer = Lake.open(catalog=catalog).ask("Which county had the most unhealthy days?",
                                                files=["ozone_by_county.csv"], provider=model,
                                                overrides={**FAST, "remote.cache_dir": str(tmp_path / "cache")})
    finally:
        fs.pipe(key, before)
    assert answer.value == "False unavailable"  # never the new bytes under the old description
    assert "changed in the store since the index" in prompts(model, "finalyzer")[0]
    assert not list((tmp_path / "cache").glob("??/*")) and not list((tmp_path / "cache" / "tmp").iterdir())


def test_report_on_the_remote_lake(store):
    from report_helpers import FIRST, WRITE, provider, questions_json, solve_rules

    _, catalog = store
    question = "Which county had the most unhealthy ozone days in 2024?"
    model = provider([
        {"role": "subquestion", "match": FIRST, "response": questions_json((question, ""))},
        *solve_rules(question, "C", WORST_COUNTY),
        {"role": "writer", "match": WRITE, "response": "# Ozone\n\nKings had the most unhealthy days [1].\n"},
    ])
    report = Lake.open(catalog=catalog).report("Summarize the ozone data", rounds=0, overrides=FAST, provider=model)
    assert [q.status for q in report.questions] == ["answered"]
    assert report.questions[0].answer.startswith("Kings") and "Kings had" in report.markdown


def test_eval_on_the_remote_lake(store):
    from dsstar_lake.eval.runner import BenchmarkOptions
    from dsstar_lake.eval.tasks import Task

    _, catalog = store
    task = Task(id="remote-1", query="How many widget units were sold in total?", domain="tiny", answer=14,
                answer_type="numeric_exact", data_sources=["sales.csv"])
    report = Lake.open(catalog=catalog).benchmark([task], BenchmarkOptions(overrides=dict(FAST)),
                                                  provider=widgets_model(), judge=None)
    assert [r.score for r in report.results] == [1.0]


def test_wrong_keys_when_asking_are_one_line_and_no_run(store, monkeypatch, tmp_path):
    from agent_helpers import rules_file

    _, catalog = store
    rules = rules_file(tmp_path / "rules.jsonl", {"response": "Yes"})
    runs = set((catalog / "runs").glob("*"))
    monkeypatch.setattr("moto.settings.INITIAL_NO_AUTH_ACTION_COUNT", 0)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    result = CliRunner().invoke(cli, ["ask", "How many widgets?", "--catalog", str(catalog), "--llm",
                                      "scripted", "--scripted-file", rules])
    assert result.exit_code == 2, result.output
    assert f"access to {URL} refused" in result.output and "Traceback" not in result.output
    assert set((catalog / "runs").glob("*")) == runs


def test_named_paths_finds_literals_globs_folders_and_fstrings():
    from dsstar_lake.runs.lakeview import named_paths

    paths = sorted(["a/x.csv", "a/y.csv", "b/2024-01.csv", "b/2024-02.csv", "top.csv"])
    code = ("import glob, os, pandas as pd\npd.read_csv('data/top.csv')\nglob.glob('data/a/*.csv')\n"
            "for m in (1, 2):\n    pd.read_csv(f'data/b/2024-{m:02d}.csv')\n")
    assert named_paths(code, paths) == ["top.csv", "a/x.csv", "a/y.csv", "b/2024-01.csv", "b/2024-02.csv"]
    assert named_paths("os.path.join('data', 'a', name)", paths) == ["a/x.csv", "a/y.csv"]
    assert named_paths("open('data/top.csv'  # broken (", paths) == ["top.csv"]
