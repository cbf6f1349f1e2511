"""The given-data block under a token budget: whole, brief, then named; never losing what the model works with."""

from __future__ import annotations

from dsstar_lake.agent.brief import BRIEF_MARK, brief, pointer
from dsstar_lake.agent.context import CHARS_PER_TOKEN, data_block, shown_forms
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.lake import Lake

QUESTION = "average temperature and humidity per station and region, with units sold"


def _entries(samples_lake, k: int = 10) -> list[ContextEntry]:
    return [ContextEntry.from_hit(hit) for hit in Lake.open(samples_lake).search(QUESTION, k=k)]


def test_without_a_budget_every_entry_is_whole(samples_lake):
    entries = _entries(samples_lake)
    assert {form for form, _ in shown_forms(entries)} == {"full"}
    block = data_block(entries)
    assert all(e.description.strip()[:200] in block for e in entries)


def test_a_budget_keeps_the_best_match_whole_and_the_block_within_it(samples_lake):
    entries = _entries(samples_lake)
    budget = 1500
    forms = shown_forms(entries, budget_tokens=budget)
    assert forms[0] == ("full", entries[0].description.strip())
    assert any(form != "full" for form, _ in forms[1:])
    block = data_block(entries, budget_tokens=budget)
    first = len(entries[0].description)
    # Within the budget, except the best match, which is whole whatever its size.
    assert len(block) <= budget * CHARS_PER_TOKEN + max(0, first - budget * CHARS_PER_TOKEN) + 200
    # Every entry is still named, with its path, so the model knows it exists and can read it.
    assert all(f'path="data/{e.path}"' in block for e in entries)


def test_entries_the_user_gave_stay_whole(samples_lake):
    entries = _entries(samples_lake)
    tight = shown_forms(entries, budget_tokens=300)
    squeezed = next(i for i, (form, _) in enumerate(tight) if form != "full")
    target = entries[squeezed]
    entries[squeezed] = ContextEntry(target.entry_id, target.kind, target.path, target.description,
                                     target.member_count, "given")
    assert shown_forms(entries, budget_tokens=300)[squeezed][0] == "full"


def test_a_brief_keeps_load_hints_and_column_types_and_drops_statistics(samples_lake):
    conn = Lake.open(samples_lake).connection()
    described = [row[0] for row in conn.execute("SELECT description FROM entries WHERE description LIKE '%first rows:%'")]
    assert described
    for description in described:
        short = brief(description)
        assert short.endswith(BRIEF_MARK)
        assert len(short) < len(description)
        assert "first rows:" not in short and "\nNotes:" not in short and "distinct;" not in short
        loads = [ln.strip() for ln in description.splitlines() if ln.strip().startswith("load:")]
        assert all(load in short for load in loads)  # how to read each table survives
        assert short.splitlines()[0] == description.splitlines()[0]  # the File: or Family line


def test_a_brief_condenses_detailed_columns_to_name_type_and_unit():
    description = "\n".join([
        "File: data/core.csv (2,000 bytes)", "Format: csv", "Notes:", "  - comma-delimited text, 3 columns",
        "Table: 10 rows x 3 columns", "  load: df = pd.read_csv('data/core.csv')", "  columns:",
        "    - 'Depth': float [m]; 10 distinct; range 0.1 .. 3, mean 1.2; e.g. 0.1",
        "    - 'Count': float (whole numbers; float because of missing values); 2 missing; range 1 .. 9",
        "    - 'Rank': text: numbers, but 1 cell(s) are not, e.g. 'x'; 3 distinct",
        "  first rows:", "    0.1 | 1 | 'a'",
    ])
    short = brief(description)
    assert "  columns: 'Depth' float [m], 'Count' float, 'Rank' text" in short
    assert "comma-delimited" not in short and "0.1 | 1" not in short
    line = pointer("core.csv", description)
    assert line.startswith("data/core.csv · Table: 10 rows x 3 columns · columns 'Depth', 'Count', 'Rank'")


def test_a_wide_table_keeps_every_column_name_in_its_description_and_its_brief():
    from dslake_index.cards import DETAIL_COLUMNS, describe
    from dslake_index.profilers.base import Column, Profile, Table

    columns = [Column(f"measure_{i}", "int", 40, 0, 5, min=0, max=9) for i in range(DETAIL_COLUMNS)]
    columns += [Column("station_verified_in_psa", "int", 40, 0, 2, min=0, max=1),
                Column("dominant_strategy_25_s", "text", 40, 0, 3, unit="s")]
    table = Table(n_rows=40, n_cols=len(columns), columns=columns, read_hint="pd.read_csv({path})")
    description = describe(Profile(format="csv", tables=[table]), "fires.csv")
    # the later columns keep a short line each (range, fill and missing values) when the description has room; one
    # whose line would say no more than its name and type is listed with the rest
    assert "    - 'station_verified_in_psa': int; 0 .. 1\n" in description
    assert "    - and 1 more (statistics left out): 'dominant_strategy_25_s' text" in description
    short = brief(description)
    assert "'station_verified_in_psa' int" in short and "[s]" not in short  # words have no unit


def test_columns_past_the_profiled_ones_are_named_with_their_types_in_csv_and_parquet(tmp_path):
    """A 179-column workbook hid 'Log2_variant_per_Mbp' as one of "119 not described": every header name stays, and
    the columns past the profiled ones keep their short lines."""
    import pandas as pd
    from dslake_index.cards import describe
    from dslake_index.profilers.base import Limits
    from dslake_index.profilers.registry import profile_path

    frame = pd.DataFrame({f"gene_{i}": [i, i + 1] for i in range(70)} | {"Log2_variant_per_Mbp": [0.5, 1.5]})
    frame.to_csv(tmp_path / "wide.csv", index=False)
    frame.to_parquet(tmp_path / "wide.parquet")
    for name in ("wide.csv", "wide.parquet"):
        description = describe(profile_path(tmp_path / name, Limits(max_columns=60)), name)
        assert "    - 'gene_65': int; 65 .. 66\n" in description, description
        assert "    - 'Log2_variant_per_Mbp': float; 0.5 .. 1.5\n" in description, description
        assert "not described" not in description and "statistics left out" not in description
        assert "71 columns; the first 60 are profiled in full, the rest in short" in description


def _table(path: str, title: str, columns: list[str], rows: int = 40) -> str:
    """A description as the indexer writes one: title, table shape, load hint and one line per column with statistics."""
    lines = [f"File: data/{path} (9,999 bytes)", "Format: csv", f"Title: {title}", f"Table: {rows} rows x {len(columns)} columns",
             f"  load: df = pd.read_csv('data/{path}')", "  columns:"]
    lines += [f"    - '{c}': float; {rows} distinct; range 0 .. 99, mean 49.5; e.g. 1.5, 2.5, 3.5" for c in columns]
    return "\n".join(lines)


def test_the_budget_goes_to_the_files_the_question_names_before_higher_ranked_unrelated_ones():
    question = "What is the average potassium in ppm of the Maltese radiocarbon samples?"
    entries = [
        ContextEntry("1", "file", "arch/climate.csv", _table("arch/climate.csv", "Climate", ["Potassium ppm", "Depth"]), score=2.0),
        # Another source that matched on 'average': ranked ahead of the file the question names.
        ContextEntry("2", "file", "fire/weather.csv", _table("fire/weather.csv", "Average fire weather",
                                                              [f"Average wind {i}" for i in range(12)]), score=1.9),
        ContextEntry("3", "file", "space/orbits.csv", _table("space/orbits.csv", "Orbits", [f"x{i}" for i in range(12)]),
                     score=1.8),
        ContextEntry("4", "file", "arch/radiocarbon.csv", _table("arch/radiocarbon.csv", "Radiocarbon dates of Malta",
                                                                 ["Site", "Sample date", "Error"]), score=1.2),
    ]
    budget = (len(entries[0].description) + len(entries[3].description) + 1200) // CHARS_PER_TOKEN
    by_rank = [form for form, _ in shown_forms(entries, budget_tokens=budget)]
    by_relevance = [form for form, _ in shown_forms(entries, budget_tokens=budget, question=question)]
    assert by_rank[3] != "full"  # rank order spends the budget on the other sources first
    assert by_relevance[0] == by_relevance[3] == "full"
    assert by_relevance[1] != "full" and by_relevance[2] != "full"
    # The block keeps the rank order; only who is whole changes.
    block = data_block(entries, budget_tokens=budget, question=question)
    assert block.index("fire/weather.csv") < block.index("arch/radiocarbon.csv")


def test_relevance_order_puts_the_best_matchs_folder_and_named_files_first():
    from dsstar_lake.agent.relevance import allocation_order

    def entry(i: str, path: str, score: float, columns: list[str]) -> ContextEntry:
        return ContextEntry(i, "file", path, _table(path, path, columns), score=score)

    entries = [entry("a", "env/beach.csv", 2.0, ["Enterococcus"]), entry("b", "fire/acres.csv", 1.9, ["Acres"]),
               entry("c", "env/rain.csv", 1.5, ["Rain"]), entry("d", "env/tide.csv", 0.5, ["Tide"]),
               entry("e", "env/ej.csv", 0.4, ["Justice population"])]
    order = allocation_order(entries, [e.description for e in entries], "rain and enterococcus at justice sites")
    # Named by the question (rain, justice) in the same folder first, then near before far, other folders last.
    assert order == [0, 2, 4, 3, 1]
    assert allocation_order(entries, [e.description for e in entries], "") == [0, 1, 2, 3, 4]


def test_a_text_names_a_file_by_its_name_and_a_family_by_a_member(samples_lake):
    from dsstar_lake.agent.context import named_in

    entries = _entries(samples_lake)
    family = next(e for e in entries if e.kind == "family")
    member = family.path.rsplit("/", 1)[-1].replace("*", "2024-01-03")
    plan = f"Read data/sales.csv and every data/{family.path.rsplit('/', 1)[0]}/{member}, then join on the date."
    assert set(named_in(entries, plan)) == {"sales.csv", family.path}
    assert named_in(entries, "Count the rows of the ozone table.") == []
