"""Principles with an order (issue 41, item 3): the chooser applies the first principle that tells two readings
apart, the order settles the conflicts the principles used to leave to judgement, and the figures the catalog's
notes state about the files in view reach the chooser as evidence, marked as the catalog's."""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import FAST, fenced, prompts, scripted

from dsstar_lake.agent import chooser
from dsstar_lake.agent.catalog_figures import catalog_figures, figures_of
from dsstar_lake.agent.readings import Alternative, Readings
from dsstar_lake.agent.state import ContextEntry

AGES = """Identity Theft Reports by Age
,
Age Range,# of Reports
19 and Under,"21,500"
20 - 29,"180,250"
30 - 39,"260,100"
40 - 49,"220,400"
50 - 59,"150,300"
60 - 69,"90,200"
70 - 79,"40,100"
80 and Over,"12,650"
,
,
"Of the 1,135,291 total identity theft reports in 2024, 86% included consumer age information."
"Source: Consumer Sentinel Network Data Book 2024, Federal Trade Commission"
"""
METRO_HEADER = "Metropolitan Area,Reports\n"
MISSOURI = METRO_HEADER + "\"Kansas City, MO-KS\",9000\n\"St. Louis, MO-IL\",12000\n\"Springfield, MO\",2000\n"
KANSAS = METRO_HEADER + "\"Kansas City, MO-KS\",9000\n\"Wichita, KS\",3000\n\"Topeka, KS\",1000\n"
FOOTNOTE = "Of the 1,135,291 total identity theft reports in 2024, 86% included consumer age information."

READ_AGES = """
import csv
rows = list(csv.reader(open('data/reports_by_age.csv')))[3:11]
counts = {r[0]: int(r[1].replace(',', '')) for r in rows}
"""
SHARE = READ_AGES + "print(round(100 * counts['20 - 29'] / sum(counts.values()), 2))\n"
WITH_AGE = READ_AGES + "print(sum(counts.values()))\n"
KANSAS_METROS = """
import csv
print(sum(int(r['Reports']) for r in csv.DictReader(open('data/msa/Kansas.csv'))))
"""


@pytest.fixture(scope="module")
def footnoted(tmp_path_factory):
    """A lake of the kinds the conflicts come from: a table with a footnote, one metro area in two states' files."""
    from dsstar_lake.lake import Lake

    root = tmp_path_factory.mktemp("footnoted") / "lake"
    (root / "msa").mkdir(parents=True)
    (root / "reports_by_age.csv").write_text(AGES)
    (root / "msa" / "Missouri.csv").write_text(MISSOURI)
    (root / "msa" / "Kansas.csv").write_text(KANSAS)
    handle = Lake.open(root)
    handle.index()
    yield handle
    handle.close()


def principle(n: int) -> str:
    """Return the text of principle n."""
    return next(line for line in chooser.principles().splitlines() if line.startswith(f"{n}. "))


def test_the_principles_are_ordered_and_the_earlier_wins():
    text = chooser.principles()
    assert "stop at the first one that tells the readings apart" in text and "the earlier one wins" in text
    assert "literal words and units" in principle(1) and "not settled here but by principle 3" in principle(1)
    assert "stated answer" in principle(2) and "an input to the computation" in principle(2)
    assert "denominator is what the table itself counts" in principle(3) and "broader group" in principle(3)
    assert "once per entity of that grouping" in principle(4) and "before principle 5" in principle(4)
    assert "rows are not de-duplicated" in principle(5)
    assert "plainest reading" in principle(6)


def ask(lake: Any, question: str, script: str, alternative: str, choice: str, files: list[str]) -> tuple[Any, str]:
    """Ask with a scripted model whose verifier names an alternative; return the answer and the chooser's prompt."""
    provider = scripted(
        ("planner", "Compute it from the file."),
        ("coder", fenced(script)),
        ("verifier", f"Yes\nAssumption: the table's own rows\nAlternative: {alternative}"),
        ("finalyzer", fenced(script)),
        ("chooser", choice),
    )
    answer = lake.ask(question, provider=provider, overrides=FAST, files=files)
    return answer, prompts(provider, "chooser")[0]


def test_a_share_of_a_broader_group_keeps_the_tables_denominator_with_the_footnote_as_evidence(footnoted):
    answer, prompt = ask(
        footnoted, "What share of identity theft reports in 2024 came from people aged 20 - 29, in percent?",
        SHARE, "share of all 1,135,291 reports = 15.88 (180,250 / 1,135,291)",
        "Chosen: 1 because a share's denominator is what the table itself counts\nAnswer: 18.48",
        ["reports_by_age.csv"])
    assert answer.text == "18.48" and answer.chosen["because"] == "a share's denominator is what the table itself counts"
    assert principle(3) in prompt
    evidence = prompt.split("# Figures the data itself states")[1].split("# How the answer is printed")[0]
    assert "From the catalog's notes on the files in view" in evidence and "<catalog tag=" in evidence
    assert f'- "data/reports_by_age.csv": {FOOTNOTE}' in evidence
    assert "Source:" not in evidence and "skiprows" not in evidence  # the file's figures, not the profiler's remarks


def test_a_stated_input_percentage_does_not_win_as_a_stated_answer(footnoted):
    answer, prompt = ask(
        footnoted, "How many identity theft reports in 2024 gave the consumer's age?",
        WITH_AGE, "86% of the 1,135,291 reports = 976350 (the footnote's rounded share times the total)",
        "Chosen: 1 because a stated input percentage decides nothing by being stated\nAnswer: 975500",
        ["reports_by_age.csv"])
    assert answer.text == "975500" and answer.alternatives[0]["value"] == "976350"
    assert "decides nothing by being stated" in prompt.split("# Principles")[1]
    assert "only when it is itself the answer the question asks for" in prompt
    assert FOOTNOTE in prompt


def test_an_area_in_two_states_files_counts_once_in_its_own_state(footnoted):
    answer, prompt = ask(
        footnoted, "How many reports came from metro areas whose own state is Kansas?",
        KANSAS_METROS, "areas whose own state is Kansas, Kansas City counted in Missouri = 4000 (Wichita + Topeka)",
        "Chosen: 2 because an entity is counted once, where the question's grouping puts it\nAnswer: 4000",
        ["msa/Kansas.csv", "msa/Missouri.csv"])
    assert answer.text == "4000" and answer.alternatives[0]["value"] == "13000"
    assert principle(4) in prompt and prompt.index(principle(4)) < prompt.index(principle(5))
    assert "(none)" in prompt.split("# Figures the data itself states")[1]  # no notes with figures, no scripts'


def test_the_figures_of_a_description_are_the_files_own_not_the_profilers():
    description = "\n".join([
        "File: data/t.csv (900 bytes)", "Notes:",
        "  - 2 line(s) before the header (skip them with skiprows=2): Reports by Age",
        "  - the last 3 line(s) are notes or summary rows, not data (nrows=8 stops before them): Rankings use 2023"
        " figures. | Of the 2,600,678 total fraud reports, 45% gave an age. | Source: FTC 2024",
        "  - table 1: label/value lines: Number of Fraud Reports: 2600678 | Median $ Loss: $497",
        "  - text lines between and after the tables (titles, footnotes): line 17: Of the 212,158 reports, 92% "
        "gave a branch. | line 26: Source: FTC",
        "  - table 2: the shares in column 'Percentage' imply a total of 6,470,738 .. 6,472,973 for column "
        "'# of Reports', whose rows sum to 5,762,587",
        "Table: 8 rows x 2 columns", "    - 'Reports': int; range 12 .. 900",
    ])
    entry = ContextEntry("e1", "file", "t.csv", description)
    assert [f.text for f in figures_of(entry)] == [
        "Of the 2,600,678 total fraud reports, 45% gave an age.",
        "Number of Fraud Reports: 2600678", "Median $ Loss: $497",
        "Of the 212,158 reports, 92% gave a branch.",
        "table 2: the shares in column 'Percentage' imply a total of 6,470,738 .. 6,472,973 for column "
        "'# of Reports', whose rows sum to 5,762,587",
    ]
    assert catalog_figures([ContextEntry("e2", "file", "plain.csv", "File: data/plain.csv\nNotes:\n  - 3 columns")]) == []


def test_the_scripts_stated_figures_and_the_catalogs_are_both_shown_each_marked():
    settled = Readings([], [Alternative("north only", "10", "")], [Alternative("the total row", "15", "stated")])
    entry = ContextEntry("e1", "file", "t.csv", "Notes:\n  - table 1: label/value lines: Total: 1,500")
    text = chooser.stated_evidence(settled, catalog_figures([entry]))
    assert text.index("From the scripts' `Stated:` lines") < text.index("- the total row = 15") \
        < text.index("From the catalog's notes") < text.index('- "data/t.csv": Total: 1,500')
    assert chooser.stated_evidence(Readings([], [], []), []) == "(none)"
