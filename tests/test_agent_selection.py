"""Select, then describe: a selector role chooses from one line per candidate the files a question needs; those are
whole in every prompt of a round, the rest stay as their lines; the run record keeps the choice and its reasons."""

from __future__ import annotations

from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, scripted, trace
from conftest import write_table_lake
from dslake_index.retrieve import Hit

from dsstar_lake.agent import view
from dsstar_lake.agent.menu import candidates, menu_text
from dsstar_lake.agent.selector import parse_choice
from dsstar_lake.agent.state import ContextEntry
from dsstar_lake.lake import Lake

QUESTION = "How many widget units were sold in total?"
ONE_ROUND = (("planner", "Sum the units of the widget rows in data/sales.csv."), ("coder", fenced(SUM_WIDGETS)),
             ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))


def ask(lake, provider, question=QUESTION, **kw):
    return lake.ask(question, provider=provider, overrides={**FAST, **kw.pop("overrides", {})}, **kw)


def frames(prompt):
    """Return the paths a prompt describes in <data> frames."""
    return [line.split('path="', 1)[1].split('"', 1)[0] for line in prompt.splitlines()
            if line.startswith('<data path="')]


def test_the_selected_files_are_whole_in_every_prompt_and_the_rest_are_lines(lake):
    provider = scripted(("selector", "data/sales.csv — units sold per product and region"), *ONE_ROUND)
    answer = ask(lake, provider)
    assert answer.text == "14"
    assert answer.selected_by == "selector"
    assert answer.selection == [{"path": "sales.csv", "reason": "units sold per product and region"}]
    # The selector saw every candidate as one line; the roles see the chosen file whole, the others as lines.
    menu = prompts(provider, "selector")[0]
    for path in ("sales.csv", "ozone_by_county.csv", "notes.md", "sensors/daily/readings_*.csv"):
        assert f"- data/{path} · " in menu
    assert "family of 5 files" in menu
    for role in ("planner", "coder", "finalyzer"):
        text = prompts(provider, role)[0]
        assert frames(text) == ["data/sales.csv"], role
        assert "- data/ozone_by_county.csv · " in text and "Other candidates (not described here)" in text
        assert '# Given data: "data/sales.csv"\n' in text
    event = trace(lake, answer.run_id, "selection")[0]
    assert event["by"] == "selector" and len(event["menu"]) == 4 and event["why"] == ""


def test_a_failed_selector_call_leaves_the_choice_to_relevance_and_says_why(lake):
    provider = scripted(("selector", "!fatal"), *ONE_ROUND)
    answer = ask(lake, provider)
    assert answer.text == "14" and answer.selected_by == "relevance" and answer.error is None
    assert answer.selection[0]["reason"].startswith("ranked 1 by relevance (the selector's call failed")


def test_an_answer_that_names_no_candidate_is_asked_once_more_then_relevance_decides(lake):
    provider = scripted(("selector", "I would look at the sales data."), ("selector", "The sales table."), *ONE_ROUND)
    answer = ask(lake, provider)
    assert len(prompts(provider, "selector")) == 2 and answer.selected_by == "relevance"
    assert "named no candidate" in answer.selection[0]["reason"]
    assert 'data/sales.csv' in frames(prompts(provider, "planner")[0])


def test_a_step_that_names_a_candidate_brings_its_description_to_every_role_after_it(lake):
    provider = scripted(("selector", "data/ozone_by_county.csv — counties"), *ONE_ROUND)
    answer = ask(lake, provider)
    assert frames(prompts(provider, "planner")[0]) == ["data/ozone_by_county.csv"]
    # The step named data/sales.csv: from the coder on, it is whole too, the same for the finalyzer.
    assert frames(prompts(provider, "coder")[0]) == ["data/ozone_by_county.csv", "data/sales.csv"]
    assert frames(prompts(provider, "finalyzer")[0]) == frames(prompts(provider, "coder")[0])
    assert trace(lake, answer.run_id, "view")[0]["whole"] == ["sales.csv"]


def test_missing_data_is_chosen_again_by_the_selector_from_the_wider_menu(lake):
    provider = scripted(
        ("selector", "data/notes.md — the field notes"),
        ("planner", "Read data/notes.md."),
        ("coder", fenced("print(open('data/notes.md').read())")),
        ("verifier", "No"),
        ("router", "Missing data: units sold per product"),
        ("selector", "- `data/sales.csv` - units per product"),
        ("planner", "Sum the widget units."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, provider)
    assert answer.text == "14" and answer.re_retrievals == 1
    again = prompts(provider, "selector")[1]
    assert "# What is missing\nunits sold per product" in again and '- "data/notes.md"' in again
    assert frames(prompts(provider, "planner")[1]) == ["data/notes.md", "data/sales.csv"]
    item = trace(lake, answer.run_id, "re_retrieval")[0]
    assert item["by"] == "selector" and item["added"] == ["sales.csv"]
    assert item["reasons"] == [{"path": "sales.csv", "reason": "units per product"}]


def test_given_files_of_one_family_are_one_description_and_a_line_per_member(tmp_path):
    root = write_table_lake(tmp_path / "lake", n_daily=6)
    lake = Lake.open(root)
    try:
        lake.index()
        days = [f"sensors/daily/readings_2024-01-{d:02d}.csv" for d in (1, 2, 3, 4, 5)]
        provider = scripted(*ONE_ROUND)
        answer = ask(lake, provider, files=["sales.csv", *days])
        assert answer.selected_by == "given" and [s["path"] for s in answer.selection] == ["sales.csv", *days]
        planner = prompts(provider, "planner")[0]
        assert frames(planner) == ["data/sales.csv", f"data/{days[0]}"]
        assert "Also chosen, near-identical to the file above" in planner
        assert all(f"- data/{day}" in planner for day in days[1:])
        assert '# Given data: "data/sales.csv", ' + ", ".join(f'"data/{d}"' for d in days) + "\n" in planner
    finally:
        lake.close()


def test_a_choice_is_read_from_lines_whatever_their_dashes_and_quotes():
    entries = [ContextEntry(str(i), "file", path, "") for i, path in
               enumerate(["State MSA Identity Theft data/Alabama.csv", "a-b.csv", "a-b.csv.bak", "2024 - totals.csv"])]
    text = ("1. `data/State MSA Identity Theft data/Alabama.csv` — the state's reports\n"
            "* data/2024 - totals.csv: yearly totals\n"
            "- data/a-b.csv.bak -- the backup\n"
            "data/unknown.csv — not a candidate\n"
            "data/a-b.csv.bak — named twice\n")
    assert parse_choice(text, entries) == [
        ("State MSA Identity Theft data/Alabama.csv", "the state's reports"),
        ("2024 - totals.csv", "yearly totals"), ("a-b.csv.bak", "the backup")]
    assert parse_choice("Nothing here fits.", entries) is None
    assert parse_choice("none", entries) is None and parse_choice("None.", entries, allow_none=True) == []


def test_the_cap_on_whole_descriptions_is_said_where_it_is_reached():
    big = "Table 1: 10 rows\n" + "\n".join(f"  - 'c{i}': int, range 1 to {i}" for i in range(200))
    entries = [ContextEntry("a", "file", "a.csv", big), ContextEntry("b", "file", "b.csv", big)]
    block = view.data_block(entries, cap_tokens=1000)
    first, second = block.split("</data", 1)[0], block.split("</data", 1)[1]
    assert "'c199'" in first and "cap of 1000 tokens" not in first  # the first chosen file is always whole
    assert 'shown="brief"' in second and "cap of 1000 tokens for whole descriptions was reached" in second
    assert "cap of" not in view.data_block(entries, cap_tokens=0)


def test_near_identical_and_same_layout_files_are_candidates_of_their_own():
    hit = Hit(entry_id="e1", kind="file", path="beaches/constitution.csv", format="csv", member_count=1, score=0.9,
              summary=["1880 rows × 10 columns · Date 2001-05-24 to 2024-09-01", "columns: Date, Enterococcus"],
              kin=["beaches/wollaston.csv", "beaches/carson.csv"], kin_ids=["e2", "e3"],
              companions=["beaches/carson.csv"], description="whole, with companions",
              solo_description="Constitution beach", kin_descriptions=["Wollaston beach", "Carson beach"],
              kin_notes=["data/beaches/wollaston.csv · 900 rows", "data/beaches/carson.csv · 700 rows"])
    menu = candidates([hit])
    assert [(e.path, e.description, e.folded_under, e.series) for e in menu] == [
        ("beaches/constitution.csv", "Constitution beach", "", ""),
        ("beaches/wollaston.csv", "Wollaston beach", "beaches/constitution.csv", "beaches/constitution.csv"),
        ("beaches/carson.csv", "Carson beach", "beaches/constitution.csv", "")]
    text = menu_text(menu)
    assert text.splitlines() == [
        "- data/beaches/constitution.csv · 1880 rows × 10 columns · Date 2001-05-24 to 2024-09-01 · columns: Date, "
        "Enterococcus",
        "  - data/beaches/wollaston.csv · 900 rows (near-identical to data/beaches/constitution.csv)",
        "  - data/beaches/carson.csv · 700 rows (same layout as data/beaches/constitution.csv)"]
    # A few chosen together are each described (their sites and columns differ).
    chosen = view.choose(menu, [("beaches/constitution.csv", "x"), ("beaches/wollaston.csv", "y")])
    assert frames(view.data_block(chosen)) == ["data/beaches/constitution.csv", "data/beaches/wollaston.csv"]


def test_a_long_chosen_series_is_one_description_and_a_line_per_member():
    sites = [f"beaches/site_{i}.csv" for i in range(6)]
    hit = Hit(entry_id="e0", kind="file", path=sites[0], format="csv", member_count=1, score=0.9,
              summary=["10 rows"], kin=sites[1:], kin_ids=[f"e{i}" for i in range(1, 6)],
              description="Site 0", solo_description="Site 0",
              kin_descriptions=[f"Site {i}" for i in range(1, 6)],
              kin_notes=[f"data/{path} · {i} rows" for i, path in enumerate(sites[1:], 1)])
    menu = candidates([hit])
    block = view.data_block(view.choose(menu, [(path, "a site") for path in sites[1:]]))
    # Five members chosen without their head: the first is described, the other four are a line each.
    assert frames(block) == ["data/beaches/site_1.csv"] and "Site 2" not in block
    assert "near-identical to the file above" in block
    assert all(f"- data/{path} · " in block for path in sites[2:])
    assert "- data/beaches/site_0.csv · 10 rows" in block  # the head was not chosen: a candidate line
    # With the head chosen too, the members' lines are in its own list: the prompt names them by path.
    block = view.data_block(view.choose(candidates([hit]), [(path, "a site") for path in sites]))
    assert frames(block) == ["data/beaches/site_0.csv"]
    assert all(f"- data/{path}\n" in block + "\n" for path in sites[1:])


def test_a_model_that_names_the_members_of_a_family_chooses_the_family():
    entries = [ContextEntry("f", "family", "sheets/*_beach_datasheet.csv", ""),
               ContextEntry("c", "file", "sheets/constitution_beach_datasheet.csv", ""),
               ContextEntry("d", "dataset", "sales", "")]
    text = ("data/sheets/city_point_beach_datasheet.csv — City Point\n"
            "data/sheets/malibu_beach_datasheet.csv — Malibu\n"
            "data/sheets/constitution_beach_datasheet.csv — Constitution\n"
            "data/sales/year=2024/part-0.parquet — the sales")
    assert parse_choice(text, entries) == [("sheets/*_beach_datasheet.csv", "City Point"),
                                           ("sheets/constitution_beach_datasheet.csv", "Constitution"),
                                           ("sales", "the sales")]
    # A step that names a file of its own does not name the family whose pattern it fits.
    assert view.named_in_step([ContextEntry("f", "family", "sheets/*_beach_datasheet.csv", "", level="line"),
                               ContextEntry("c", "file", "sheets/constitution_beach_datasheet.csv", "")],
                              "Read data/sheets/constitution_beach_datasheet.csv") == []
