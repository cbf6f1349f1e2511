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
    assert answer.text == "14" and answer.files_used == ["sales.csv"]
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
    assert again.text == "14"
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
    assert answer.text == f"{parks} {objects} 3 # Field notes"
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
    assert answer.text == "False unavailable"  # never the new bytes under the old description
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


def users_files(folder: Path, digest_named: bool = True) -> dict[str, bytes]:
    """Make a folder of the user's: files at the top, in subfolders, in a two-hex-digit folder (and one named like
    a blob, which in a folder marked as dslake's cache would be one); return them."""
    files = {"todo.txt": b"buy milk\n", "photos/2024/beach.jpg": b"\xff\xd8 not really a jpeg",
             "ab/notes.txt": b"a folder whose name looks like a blob folder\n"}
    if digest_named:
        files["ab/" + "ab" * 64] = b"a digest-like name the user made"
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return files


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def widget_rules(path: Path) -> str:
    from agent_helpers import rules_file

    return rules_file(path, {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
                      {"role": "coder", "response": fenced(SUM_WIDGETS)}, {"role": "verifier", "response": "Yes"},
                      {"role": "finalyzer", "response": fenced(SUM_WIDGETS)})


def test_a_catalog_config_cannot_aim_the_blob_cache_at_the_users_files(store, tmp_path):
    _, catalog = store
    mine = tmp_path / "mine"
    files = users_files(mine)
    config = catalog / "config.toml"
    before = config.read_text()
    config.write_text(before + f'[remote]\ncache_dir = "{mine}"\ncache_mb = 0\n')
    try:
        result = CliRunner().invoke(cli, ["ask", "How many widget units?", "--catalog", str(catalog), "--files",
                                          "sales.csv", "--llm", "scripted", "--scripted-file",
                                          widget_rules(tmp_path / "rules.jsonl")])
    finally:
        config.write_text(before)
    assert tree(mine) == files, "the blob cache's eviction deleted the user's files"
    assert result.exit_code == 2 and "remote.cache_dir, remote.cache_mb" in result.output, result.output


def test_the_blob_cache_deletes_only_its_own_blobs(store, tmp_path, monkeypatch):
    _, catalog = store
    mine = tmp_path / "mine"
    files = users_files(mine)
    rules = widget_rules(tmp_path / "rules.jsonl")
    ask = ["ask", "How many widget units?", "--catalog", str(catalog), "--files", "sales.csv", "--llm", "scripted",
           "--scripted-file", rules, "--json"]
    # The user's own config aims the cache at a folder of theirs, with no room: refused, nothing touched.
    monkeypatch.setenv("DSLAKE_REMOTE_CACHE_DIR", str(mine))
    monkeypatch.setenv("DSLAKE_REMOTE_CACHE_MB", "0")
    result = CliRunner().invoke(cli, ask)
    assert tree(mine) == files, "the blob cache's eviction deleted the user's files"
    assert result.exit_code == 2 and f"the blob cache folder {mine}" in result.output, result.output
    assert "todo.txt" in result.output and "Traceback" not in result.output

    # A cache dslake made, where the user then put files of their own: its blobs go, theirs stay and are named.
    cache = tmp_path / "cache"
    monkeypatch.setenv("DSLAKE_REMOTE_CACHE_DIR", str(cache))
    result = CliRunner().invoke(cli, ask)
    assert result.exit_code == 0 and json.loads(result.stdout)["value"] == "14", result.output
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert not list(cache.glob("??/*"))  # cache_mb = 0: the blob it fetched was evicted
    files = users_files(cache, digest_named=False)
    (cache / "ab" / "link-to-todo").symlink_to(cache / "todo.txt")
    result = CliRunner().invoke(cli, ask)
    assert result.exit_code == 0, result.output
    kept = tree(cache)
    assert {rel: kept[rel] for rel in files} == files and not [p for p in kept if p.startswith(("tmp/",))]
    assert (cache / "ab" / "link-to-todo").is_symlink()
    run_id = json.loads(result.stdout)["run_id"]
    notes = [n for e in trace(Lake.open(catalog=catalog), run_id, "exec") for n in e.get("notes", [])]
    left = next(n for n in notes if "left alone" in n)
    assert all(name in left for name in ("todo.txt", "photos", "ab/notes.txt", "ab/link-to-todo"))
