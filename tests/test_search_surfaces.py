"""Search a person can read (issue 32 §1): what each hit holds and the files folded under it, on every surface.

One small lake (the table lake plus two fire tables of one layout, which fold into one slot), indexed once: the
CLI piped and in a pseudo-terminal, `--csv` and `--nl`, the MCP client over stdio, the web page over a real
server, and the notebook's table. The gist and the full-text rules are checked on their own first.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from dslake_index import catalog, fulltext
from dslake_index.gist import cut_words, fit_items, gist, matched_spans

FIRE_COLUMNS = "Year,Alaska,Northwest,Great Basin,Southwest,Total\n"


@pytest.fixture(scope="module")
def fires(tmp_path_factory) -> Path:
    """The table lake and two fire tables whose names differ by a measure word: one slot, both listed."""
    from dsstar_lake.lake import Lake

    root = write_table_lake(tmp_path_factory.mktemp("surfaces") / "lake")
    for cause, scale in (("human", 3), ("lightning", 5)):
        rows = "".join(f"{2000 + y},{y * scale},{y + scale},{y},{y * 2},{y * scale * 4}\n" for y in range(1, 20))
        (root / "fires").mkdir(exist_ok=True)
        (root / "fires" / f"{cause}_caused_acres.csv").write_text(FIRE_COLUMNS + rows)
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


def test_the_gist_says_what_a_file_holds_and_never_cuts_a_word():
    card = ("sales csv\nsales.csv (csv)\ncolumns: date; region; product; units; price\ntable: 48 rows x 5 columns\n"
            "dates: date 2024-01-01 to 2024-11-25\nplaces: region: East, North, South, West\n"
            "values: product: Gadget, Gizmo, Widget\nunits: km2")
    lines = gist(card)
    assert lines == ["48 rows × 5 columns · date 2024-01-01 to 2024-11-25",
                     "columns: date, region, product, units, price",
                     "region: East, North, South, West · product: Gadget, Gizmo, Widget"]
    assert not any("sales csv" in line for line in lines)  # never the path as words
    many = fit_items("columns", [f"column_number_{i}" for i in range(40)], 80)
    assert len(many) <= 80 and many.endswith("more") and "column_number_0, column_number_1" in many
    assert all(part.startswith("column_number_") for part in many[9:].split(" … ")[0].split(", "))
    assert cut_words("a description that goes on and on past the width", 30) == "a description that goes on…"
    assert matched_spans("columns: unit_price, Units", ["units"]) == [(9, 13), (21, 26)]


def test_a_cards_own_labels_do_not_match_as_content(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    labelled = "gemeinden csv\ncolumns: Gemeinde; Fläche_km2\ntable: 6 rows x 2 columns\nunits: km2"
    named = "sales csv\ncolumns: region; units\ntable: 48 rows x 2 columns"
    with catalog.transaction(conn):
        fulltext.replace_rows(conn, [("labelled", labelled), ("named", named)])
    assert [entry_id for entry_id, _ in fulltext.search(conn, "units", 5)] == ["named"]
    assert [entry_id for entry_id, _ in fulltext.search(conn, "gemeinde", 5)] == ["labelled"]
    # a catalog written by the older rule is refilled once, from the stored cards
    conn.execute("INSERT INTO entries (id, kind, folder, path, member_count, description, card, card_hash) "
                 "VALUES ('x', 'file', '', 'x.csv', 1, '', ?, '')", (labelled,))
    assert fulltext.refill_if_outdated(conn) and not fulltext.refill_if_outdated(conn)
    assert fulltext.search(conn, "units", 5) == []


def test_a_hits_score_does_not_depend_on_k(fires):
    from dsstar_lake.lake import Lake

    lake = Lake.open(fires)
    wide = {h.path: h.score for h in lake.search("units sold per region", 6)}
    narrow = lake.search("units sold per region", 2)
    lake.close()
    assert [wide[h.path] for h in narrow] == [h.score for h in narrow]


def test_piped_search_is_a_plain_table_with_what_each_file_holds(fires):
    result = CliRunner().invoke(cli, ["search", "acres burned by year", "--lake", str(fires), "-k", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["#", "entry", "format", "score", "dense", "text"]
    assert not any(ch in result.output for ch in "┃│━\x1b")  # no frame, no colour
    top = lines[1].split()[1]
    assert top in ("fires/human_caused_acres.csv", "fires/lightning_caused_acres.csv")
    other = ({"fires/human_caused_acres.csv", "fires/lightning_caused_acres.csv"} - {top}).pop()
    assert lines[2].strip() == "19 rows × 6 columns · Year 2001 to 2019"
    assert lines[3].strip() == "columns: Year, Alaska, Northwest, Great Basin, Southwest, Total"
    assert f"   + {other}" in lines and "folded under the hit above them" in lines[-1]
    assert "fires human caused acres csv" not in result.output  # never the path again as words


def test_csv_and_nl(fires):
    runner = CliRunner()
    table = runner.invoke(cli, ["search", "units sold per region", "--lake", str(fires), "-k", "2", "--csv"])
    rows = list(csv.DictReader(io.StringIO(table.output)))
    assert rows[0]["path"] == "sales.csv" and rows[0]["rank"] == "1" and len(rows) == 2
    assert rows[0]["summary"].split(" | ")[1] == "columns: region, product, units, price"
    lines = runner.invoke(cli, ["search", "acres burned", "--lake", str(fires), "-k", "1", "--nl"]).output
    hit = json.loads(lines.splitlines()[0])
    assert hit["rank"] == 1 and len(hit["kin"]) == 1 and hit["summary"][0].startswith("19 rows")
    both = runner.invoke(cli, ["search", "x", "--lake", str(fires), "--csv", "--nl"])
    assert both.exit_code == 2 and "give one of --json, --csv and --nl" in both.stderr


def test_search_in_a_terminal_marks_the_matched_words(fires):
    dslake = Path(sys.executable).with_name("dslake")
    main, child = pty.openpty()
    env = os.environ | {"COLUMNS": "140", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([str(dslake), "search", "units sold per region", "--lake", str(fires), "-k", "1"],
                            stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the program ended
            break
        if not chunk:
            break
        seen += chunk
    proc.wait()
    os.close(main)
    text = seen.decode("utf-8", errors="replace")
    assert "┏" in text and "sales.csv" in text
    assert "\x1b[1;33munits\x1b[0m" in text and "\x1b[1;33mregion\x1b[0m" in text  # marked: bold yellow
    assert "\x1b[2mcolumns: \x1b[0m" in text  # the rest of the summary dimmed


def test_an_mcp_client_finds_a_folded_file_by_search(fires, tmp_path):
    from test_mcp_server import session_run

    async def calls(session: Any) -> Any:
        found = await session.call_tool("search", {"query": "acres burned by year", "k": 2})
        hit = found.structured_content["hits"][0]
        shown = await session.call_tool("show", {"path": hit["folded"][0]})
        return hit, shown.structured_content

    hit, shown = session_run(fires, tmp_path / "stderr.txt", calls)
    pair = {"fires/human_caused_acres.csv", "fires/lightning_caused_acres.csv"}
    assert {hit["path"], *hit["folded"]} == pair  # the folded one is named, and `show` opens it
    assert hit["summary"].splitlines()[0] == "19 rows × 6 columns · Year 2001 to 2019"
    assert shown["path"] in pair and shown["path"] != hit["path"] and "Total" in shown["description"]


def test_the_web_page_and_the_notebook_list_the_folded_file_under_its_hit(fires):
    from serve_helpers import Server, fetch

    from dsstar_lake.lake import Lake

    lake = Lake.open(fires)
    hits = lake.search("acres burned by year", 2)
    folded = hits[0].kin[0]
    table = hits._repr_html_()
    assert f"+ {folded}" in table and "19 rows × 6 columns" in table
    assert "<mark>Year</mark>" in table  # the matched column name, marked
    with Server(lake) as server:
        code, page, _ = fetch(server.url("/search?q=acres+burned+by+year&k=2"))
    lake.close()
    assert code == 200 and '<ul class="folded"' in page and f'href="/entries/{folded}">{folded}</a>' in page
    assert "columns: <mark>Year</mark>, Alaska" in page
