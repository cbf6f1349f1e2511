"""Near-identical entries share one retrieval slot; a lake's first folder level steers ranking toward one source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index.kin import are_kin, kin_key
from dslake_index.retrieve import with_folder_prior

from dsstar_lake.lake import Lake


def _datasheet(path: Path, beach: str, sites: list[str], rows: int) -> None:
    """A beach datasheet as a city publishes them: a title, a row of site names, then one Tag/count pair per site."""
    header = "Date,1-Day Rain,2-Day Rain," + ",".join(
        "Tag,Enterococcus" if i == 0 else f"Tag.{i},Enterococcus.{i}" for i in range(len(sites)))
    lines = [f"{beach} Beach: Bacterial Water Quality", " / ".join(sites), header]
    for day in range(rows):
        counts = ",".join(f",{(day * 7 + i * 13) % 300 + 2}" for i in range(len(sites)))
        lines.append(f"2024-06-{day % 28 + 1:02d},0.{day % 9},0.{(day + 3) % 9},{counts}")
    path.write_text("\n".join(lines) + "\n")


def write_beach_lake(root: Path) -> Path:
    """Datasheets whose site counts differ (no family: their columns differ), and a rainfall table beside them."""
    beaches = root / "beaches"
    beaches.mkdir(parents=True)
    _datasheet(beaches / "carson_beach_datasheet.csv", "Carson", ["I Street", "Bathhouse"], 40)
    _datasheet(beaches / "wollaston_beach_datasheet.csv", "Wollaston", ["Milton Rd", "Channing St", "Rice Rd"], 50)
    _datasheet(beaches / "tenean_beach_datasheet.csv", "Tenean", ["Tenean"], 30)
    _datasheet(beaches / "constitution_beach_datasheet.csv", "Constitution", ["North", "Middle", "South", "Pier"], 45)
    (beaches / "monthly_rainfall_boston.csv").write_text(
        "Year,Jun,Jul,Aug\n" + "".join(f"{y},{y % 5}.1,{y % 3}.2,{y % 4}.3\n" for y in range(2000, 2024)))
    (root / "finance").mkdir()
    (root / "finance" / "budget.csv").write_text("department,year,amount\nparks,2024,1200\nroads,2024,5400\n")
    return root


def test_datasheets_that_differ_in_sites_share_one_slot_and_still_count_as_found(tmp_path):
    root = write_beach_lake(tmp_path / "lake")
    lake = Lake.open(root)
    lake.index()
    hits = lake.search("bacterial water quality enterococcus counts at the beaches", k=3)
    sheets = [h for h in hits if h.path.endswith("_beach_datasheet.csv")]
    # One datasheet takes a slot; the other three are lines in its description, not slots of their own.
    assert len(sheets) == 1
    leader = sheets[0]
    assert len(leader.kin) == 3 and len(leader.kin_ids) == 3
    for path in leader.kin:
        assert path.endswith("_beach_datasheet.csv") and f"data/{path}" in leader.description
        # Each line carries that file's own load hint, so it can be read without its full description.
        assert f"pd.read_csv('data/{path}'" in leader.description
    assert any(h.path == "beaches/monthly_rainfall_boston.csv" for h in hits)

    tasks = tmp_path / "tasks.jsonl"
    folded = leader.kin[0]
    tasks.write_text(json.dumps({"id": "t1", "query": "bacterial water quality enterococcus counts at the beaches",
                                 "files": [folded]}) + "\n")
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--lake", str(root), "--tasks", str(tasks), "-k", "1",
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    if report["tasks"][0]["ranked"][0] == leader.path:
        assert report["summary"]["overall"]["recall@1"] == 1.0  # folded into the first slot: found at K=1
        if folded not in leader.companions:  # one line in the whole description of the best match
            assert report["tasks"][0]["levels"] == {folded: "kin"}


def test_a_few_chosen_files_of_a_series_are_each_described_and_count_as_whole(tmp_path):
    from agent_helpers import rules_file

    root = write_beach_lake(tmp_path / "lake")
    lake = Lake.open(root)
    lake.index()
    question = "bacterial water quality enterococcus counts at the beaches"
    leader = next(h for h in lake.search(question, k=3) if h.path.endswith("_beach_datasheet.csv"))
    series = [p for p in leader.kin if p not in leader.companions]
    if not series:
        pytest.skip("search described every datasheet as a same-layout companion")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "query": question, "files": [leader.path, series[0]]}) + "\n")
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "selector", "response": "\n".join(
        f"data/{p} — enterococcus counts" for p in (leader.path, series[0]))})
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--lake", str(root), "--tasks", str(tasks), "-k", "1",
                                      "--llm", "scripted", "--scripted-file", rules, "--json"])
    assert result.exit_code == 0, result.output
    chosen = json.loads(result.output)["tasks"][0]["selection"]
    assert chosen["selected_by"] == "selector" and chosen["f1"] == 1.0
    # Two of a series chosen: each is described (a long series would be one description and a line per member).
    assert chosen["levels"] == {leader.path: "whole", series[0]: "whole"}
    assert chosen["all_whole"] and chosen["all_whole_strict"]


def test_collapsing_can_be_turned_off(tmp_path):
    root = write_beach_lake(tmp_path / "lake")
    lake = Lake.open(root, overrides={"retrieve.collapse_kin": False})
    lake.index()
    hits = lake.search("bacterial water quality enterococcus counts at the beaches", k=6)
    assert sum(h.path.endswith("_beach_datasheet.csv") for h in hits) == 4
    assert all(not h.kin for h in hits)


def _key(path: str, columns: str, kind: str = "file", fmt: str = "csv"):
    return kin_key(path, kind, fmt, f"words\n{path}\ncolumns: {columns}\n")


def test_kinship_needs_folder_name_format_and_layout():
    a = _key("env/carson_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus")
    b = _key("env/wollaston_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus; Tag.1; Enterococcus.1")
    assert are_kin(a, b)
    # Another folder, another format, another layout, or names that share too little: not kin.
    assert not are_kin(a, _key("other/wollaston_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus"))
    assert not are_kin(a, _key("env/wollaston_beach_datasheet.json", "Date; Rain; Tag; Enterococcus", fmt="json"))
    assert not are_kin(a, _key("env/wollaston_beach_datasheet.csv", "Station; Latitude; Longitude; Owner"))
    assert not are_kin(_key("legal/2024_CSN_Report_Count.csv", "Year; Reports"),
                       _key("legal/2024_CSN_Data_Contributors.csv", "Year; Reports"))
    # Half the names shared is not one layout: a count table and a cost table that adds three money columns.
    assert not are_kin(_key("wildfire/nifc_wildfires.csv", "Year; Fires; Acres"),
                       _key("wildfire/nifc_suppression_costs.csv", "Year; Fires; Acres; ForestService; DOI; Total"))
    # Per-day folders: the folder names differ only by dates, the file names too; documents without columns.
    day1 = kin_key("pod/SP3_20181001T2359_0201/SP3_20181001T2359_0201.HDR", "file", "xml", "hdr")
    day2 = kin_key("pod/SP3_20181002T2359_0201/SP3_20181002T2359_0201.HDR", "file", "xml", "hdr")
    assert are_kin(day1, day2)
    # A file that a family's pattern matches is kin of that family.
    family = _key("env/*_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus", kind="family")
    assert are_kin(family, a) and are_kin(a, family)


def test_folder_prior_raises_the_folder_of_the_best_matches_and_leaves_one_folder_lakes_alone():
    fused = [("a1", 2.0), ("b1", 1.9), ("a2", 1.5), ("b2", 1.2), ("a3", 1.15)]
    paths = {"a1": "env/x.csv", "a2": "env/y.csv", "a3": "env/z.csv", "b1": "fire/p.csv", "b2": "fire/q.csv"}
    ranked = [entry_id for entry_id, _ in with_folder_prior(fused, paths, k=5, weight=0.5)]
    # Discounted by rank, env holds 69% of the top scores (+0.34), fire 31% (+0.16): a3 overtakes b2, b1 keeps its
    # lead over a2.
    assert ranked == ["a1", "b1", "a2", "a3", "b2"]
    one_folder = {entry_id: "lake/" + path for entry_id, path in paths.items()}
    shifted = with_folder_prior(fused, one_folder, k=5, weight=0.5)
    assert [i for i, _ in shifted] == [i for i, _ in fused]
    assert [s for _, s in shifted] == pytest.approx([s + 0.5 for _, s in fused])
    assert with_folder_prior(fused, paths, k=5, weight=0.0) == fused


def test_folder_prior_follows_the_best_match_into_a_small_folder_past_a_tail_of_big_ones():
    # One strong match in a folder of two files, then near-misses from three big folders: the best match's folder
    # wins, so its sibling passes them, though undiscounted the tail's folders would outweigh it.
    fused = [("arch1", 1.0), ("w1", 0.62), ("w2", 0.61), ("l1", 0.6), ("l2", 0.6), ("s1", 0.59), ("s2", 0.58),
             ("arch2", 0.5)]
    paths = {"arch1": "arch/climate.xlsx", "arch2": "arch/radiocarbon.xlsx", "w1": "fire/a.csv", "w2": "fire/b.csv",
             "l1": "legal/a.csv", "l2": "legal/b.csv", "s1": "space/a.csv", "s2": "space/b.csv"}
    ranked = [entry_id for entry_id, _ in with_folder_prior(fused, paths, k=8, weight=0.5)]
    assert ranked[:2] == ["arch1", "arch2"]


def test_a_family_folded_into_a_slot_says_which_files_are_its_own():
    from dslake_index.kin import kin_line

    description = ("Family of 4 files matching `env/*_beach_datasheet.csv` (one schema, one name pattern).\n"
                   "First: env/city_point_beach_datasheet.csv; last: env/tenean_beach_datasheet.csv. The '*' stands "
                   "for city_point, m_street, malibu, tenean. List them all with `files = ...`: the glob also matches "
                   "4 files that are not members.\nTable: 1,025 rows x 6 columns\n  load: df = pd.read_csv(PATH)\n")
    line = kin_line("env/*_beach_datasheet.csv", description)
    assert "'*' = city_point, m_street, malibu, tenean" in line
    assert "'*' =" not in kin_line("env/a.csv", "Table: 3 rows x 2 columns\n  load: df = pd.read_csv(PATH)\n")


def test_names_that_differ_by_a_measure_word_or_a_word_of_the_question_are_not_kin():
    acres = "Year; Alaska; Northwest; Southwest; Total"
    human, lightning = _key("wildfire/nifc_human_caused_acres.csv", acres), _key("wildfire/nifc_lightning_caused_acres.csv", acres)
    fires = _key("wildfire/nifc_lightning_caused_wildfires.csv", acres)
    names = ["nifc_human_caused_acres.csv", "nifc_lightning_caused_acres.csv", "nifc_lightning_caused_wildfires.csv",
             "nifc_wildfires.csv"]
    # Two files that differ by one word are two measures, not a series of sites: each keeps its own slot.
    assert are_kin(human, lightning) and not are_kin(human, lightning, siblings=names)
    # Names that differ in two slots ('human ... acres' and 'lightning ... wildfires') are not one series.
    assert are_kin(human, fires) and not are_kin(human, fires, siblings=names)
    # A series of sites that differ in one slot folds; unless the question names the word that tells two apart.
    sheets = ["carson_beach_datasheet.csv", "wollaston_beach_datasheet.csv", "tenean_beach_datasheet.csv"]
    carson = _key("env/carson_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus")
    wollaston = _key("env/wollaston_beach_datasheet.csv", "Date; Rain; Tag; Enterococcus")
    assert are_kin(carson, wollaston, siblings=sheets)
    from dslake_index.kin import question_words
    assert not are_kin(carson, wollaston, question_words("Enterococcus at Wollaston beach?"), sheets)
    assert are_kin(carson, wollaston, question_words("Enterococcus at the beaches?"), sheets)


def test_a_folded_datasheet_line_gives_its_sites_and_date_coverage():
    from dslake_index.kin import kin_line

    description = ("Title: Carson Beach: Bacterial Water Quality\nHeadings: I Street / Bathhouse\n"
                   "Table: 1,132 rows x 8 columns\n  load: df = pd.read_csv('data/env/carson.csv', skiprows=2)\n"
                   "  columns:\n    - 'Date': text (dates); 1,132 distinct; range '2001-05-24' .. '2024-08-27'; e.g. 'x'\n")
    line = kin_line("env/carson.csv", description)
    assert "headings 'I Street / Bathhouse'" in line
    assert "'Date' range '2001-05-24' .. '2024-08-27' ·" in line


def test_two_measures_of_one_layout_share_a_slot_and_are_both_described_whole(tmp_path):
    root = write_beach_lake(tmp_path / "lake")
    fires = root / "fires"
    fires.mkdir()
    for cause, scale in (("human", 3), ("lightning", 7)):
        (fires / f"nifc_{cause}_caused_acres.csv").write_text(
            "Year,Alaska,Northwest,Total\n" + "".join(f"{y},{y % 9 * scale},{y % 5 * scale},{y % 13 * scale}\n"
                                                      for y in range(1990, 2024)))
    lake = Lake.open(root)
    lake.index()
    hits = lake.search("acres burned per year by region", k=4)
    acres = [h for h in hits if "caused_acres" in h.path]
    assert len(acres) == 1  # one slot for the pair
    other = acres[0].kin[0]
    assert acres[0].companions == [other]
    # Not a one-line kin: the companion's own description, with its columns, is in the slot's description.
    assert f"File: data/{other}" in acres[0].description and "Near-identical files" not in acres[0].description
