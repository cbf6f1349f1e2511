"""What `dslake index` and a search say in the states a new user meets: files that failed (`--strict` for CI), an
empty lake, a first index still running or cut off, and a watcher's failures, listed once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.base.errors import INDEX_FAILURES
from dsstar_lake.lake import Lake
from dsstar_lake.terminal.quick_index import answer
from dsstar_lake.usecases.watch import new_failures

REPO = Path(__file__).resolve().parent.parent
BROKEN = b"PK\x03\x04 this is not a workbook"  # an .xlsx whose zip container is broken: it fails to profile


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


# ---- index --strict ---------------------------------------------------------------------------------------------


def test_strict_exits_with_its_code_when_a_file_failed(table_lake: Path) -> None:
    (table_lake / "budget.xlsx").write_bytes(BROKEN)
    lenient = invoke("index", table_lake)
    assert lenient.exit_code == 0, lenient.output  # as before: failures are listed, the run succeeded
    assert "1 failed" in lenient.stdout.splitlines()[0] and "  failed budget.xlsx: " in lenient.stdout

    strict = invoke("index", table_lake, "--strict")
    assert strict.exit_code == INDEX_FAILURES == 9, strict.output
    assert "1 failed" in strict.stdout and "failed budget.xlsx" in strict.stdout  # still listed, not only counted
    assert strict.stderr == "--strict: 1 file failed to index\n"

    as_json = invoke("index", table_lake, "--strict", "--json")
    assert as_json.exit_code == 9
    summary = json.loads(as_json.stdout)  # the summary is the one object: no error object after it
    assert summary["failed"] == 1 and summary["failures"][0][0] == "budget.xlsx"

    (table_lake / "budget.xlsx").unlink()
    fixed = invoke("index", table_lake, "--strict")
    assert fixed.exit_code == 0 and "0 failed" in fixed.stdout and fixed.stderr == ""


def test_strict_with_watch_is_a_usage_error(table_lake: Path) -> None:
    both = invoke("index", table_lake, "--strict", "--watch")
    assert both.exit_code == 2 and "--strict" in both.output and "--watch" in both.output
    assert not (table_lake / ".dslake").exists()


# ---- an empty lake -----------------------------------------------------------------------------------------------


def test_an_empty_lake_indexes_with_a_word_and_its_search_says_why_it_finds_nothing(tmp_path: Path) -> None:
    lake = tmp_path / "empty"
    lake.mkdir()
    first = invoke("index", lake)
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert "0 entries" in lines[0]
    assert lines[1] == ("note: the lake holds no file to index: the catalog has no entries, and search finds nothing "
                        "until files are added to the lake and indexed")
    # The console script's quick no-change answer would print the summary line alone: it hands over instead.
    assert answer(["index", str(lake)]) is False
    assert "note: the lake holds no file to index" in invoke("index", lake).stdout

    search = invoke("search", "anything at all", "--lake", lake)
    assert search.exit_code == 0, search.output
    assert search.stdout.startswith("the catalog holds no entries: its last index found no file it could describe")
    assert "entry" not in search.stdout.splitlines()[0].split()[:2]  # not the table's header
    assert "last index found no file" in repr(Lake.open(lake).search("anything at all"))


def test_a_lake_of_skipped_files_says_so(tmp_path: Path) -> None:
    lake = tmp_path / "links"
    lake.mkdir()
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    (lake / "link.csv").symlink_to(outside)  # a link that leaves the lake is skipped, not followed
    summary = Lake.open(lake).index()
    assert summary.skipped == 1 and summary.entries == 0
    assert summary.notes == ["the lake holds no file to index (1 skipped, each listed with why): the catalog has no "
                             "entries, and search finds nothing until files are added to the lake and indexed"]


def test_a_lake_whose_files_all_failed_lists_them_and_needs_no_note(tmp_path: Path) -> None:
    lake = tmp_path / "broken"
    lake.mkdir()
    (lake / "budget.xlsx").write_bytes(BROKEN)
    summary = Lake.open(lake).index()
    assert (summary.added, summary.failed, summary.entries, summary.notes) == (1, 1, 0, [])


# ---- a search while the first index runs, and after it was cut off ------------------------------------------------


def test_a_search_during_the_first_index_says_it_is_running(table_lake: Path) -> None:
    seen: list[object] = []

    def search_meanwhile(event: str, data: dict) -> None:
        if event == "plan" and not seen:  # the catalog exists, the writer lock is held, no entry is written yet
            seen.append(invoke("search", "ozone by county", "--lake", table_lake))
            seen.append(Lake.open(table_lake).search("ozone by county"))

    summary = Lake.open(table_lake).index(progress=search_meanwhile)
    assert summary.entries == 4
    cli_search, notebook_search = seen
    assert cli_search.exit_code == 0, cli_search.output
    assert cli_search.stdout == ("no entries yet: an index of this lake is running and has written none so far; "
                                 "search again when it has finished\n")
    assert list(notebook_search) == [] and notebook_search.empty_state == "indexing"
    after = invoke("search", "ozone by county", "--lake", table_lake, "-k", "1")
    assert "ozone_by_county.csv" in after.stdout


def test_a_search_after_a_first_index_was_cut_off_says_so(table_lake: Path) -> None:
    def interrupt(event: str, data: dict) -> None:
        if event == "plan":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Lake.open(table_lake).index(progress=interrupt)
    search = invoke("search", "ozone by county", "--lake", table_lake)
    assert search.exit_code == 0, search.output
    assert search.stdout.startswith("no entries yet: the first index of this lake stopped before it wrote any; "
                                    "index the lake again to finish it")


# ---- --watch lists a failure once ---------------------------------------------------------------------------------


def test_new_failures_lists_new_changed_and_touched_ones_only() -> None:
    known = {"a.xlsx": "corrupt zip", "b.xlsx": "corrupt zip"}
    now = [("a.xlsx", "corrupt zip"), ("b.xlsx", "timeout"), ("c.xlsx", "corrupt zip"), ("d/e.xlsx", "corrupt zip")]
    fresh, after = new_failures(known, now, ["d"])
    assert fresh == [("b.xlsx", "timeout"), ("c.xlsx", "corrupt zip"), ("d/e.xlsx", "corrupt zip")]
    assert after == dict(now)
    assert new_failures(after, now, [])[0] == []  # nothing new: nothing listed
    assert new_failures(after, now, ["a.xlsx"])[0] == [("a.xlsx", "corrupt zip")]  # changed, and still failing
    assert new_failures({}, [("a.xlsx", "corrupt zip")], [])[0] == [("a.xlsx", "corrupt zip")]  # fixed, failing again


def test_watch_does_not_list_an_old_failure_at_every_change(table_lake: Path) -> None:
    (table_lake / "budget.xlsx").write_bytes(BROKEN)
    proc = subprocess.Popen([sys.executable, str(REPO / "cli.py"), "index", str(table_lake), "--watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    passes: list[list[str]] = []  # each pass's lines, from its summary line on
    watching = threading.Event()

    def read_out() -> None:
        for line in proc.stdout:
            if line.startswith("indexed:"):
                passes.append([])
            if passes:
                passes[-1].append(line.rstrip("\n"))

    def read_err() -> None:
        for line in proc.stderr:
            if line.startswith("watching "):
                watching.set()

    for reader in (read_out, read_err):
        threading.Thread(target=reader, daemon=True).start()

    def wait_for(condition, what: str) -> None:
        deadline = time.monotonic() + 120
        while not condition() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert condition(), f"{what}: {passes}"

    try:
        wait_for(watching.is_set, "the watcher did not start")
        assert len(passes) == 1 and any(line.startswith("  failed budget.xlsx: ") for line in passes[0])
        time.sleep(1.0)  # let watchfiles start watching after the line
        (table_lake / "sales.csv").write_text("region,units\nwest,1\n")
        wait_for(lambda: len(passes) >= 2 and "1 changed" in passes[-1][0], "no pass for sales.csv")
        after_sales = list(passes[1:])
        assert all("1 failed" in p[0] for p in after_sales)  # still counted on the summary line
        assert not any("failed budget.xlsx" in line for p in after_sales for line in p)  # not listed again
        (table_lake / "budget.xlsx").write_bytes(BROKEN + b" changed")  # the file itself changed, still broken
        wait_for(lambda: any("failed budget.xlsx" in line for p in passes[len(after_sales) + 1:] for line in p),
                 "the changed file's failure was not listed")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
