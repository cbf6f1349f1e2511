"""The paper's analyzer: a model-written script describes a file; failures go to the debugger; the lake stays intact."""

from __future__ import annotations

from agent_helpers import FAST, fenced, scripted
from conftest import write_table_lake

from dsstar_lake.agent.analyzer import analyze_file
from dsstar_lake.base.settings import Settings
from dsstar_lake.llm import LLM
from dsstar_lake.sandbox import Sandbox

DESCRIBE = "import csv\nrows = list(csv.reader(open('data/sales.csv')))\nprint('columns:', rows[0])\nprint(len(rows) - 1, 'rows')"


def test_analyzer_describes_a_file_after_one_fix(tmp_path):
    lake = write_table_lake(tmp_path / "lake")
    settings = Settings.load(overrides=FAST, config_files=[], environ={})
    provider = scripted(
        ("analyzer", fenced(DESCRIBE.replace("data/sales.csv", "sales.csv"))),  # forgets the data/ folder
        ("debugger", fenced(DESCRIBE)),
    )
    sandbox = Sandbox(settings.sandbox, lake)
    with LLM(settings, provider=provider) as llm:
        analysis = analyze_file("sales.csv", llm, sandbox, tmp_path / "work")
    assert analysis.description == "columns: ['region', 'product', 'units', 'price']\n3 rows"
    assert analysis.attempts == 2 and "FileNotFoundError" in analysis.errors[0]
    analyzer_prompt = provider.calls[0][1]
    assert "data/sales.csv" in analyzer_prompt and "single code block" in analyzer_prompt
    assert "No such file or directory" in provider.calls[1][1]  # the debugger saw the error


def test_analyzer_gives_up_without_a_description(tmp_path):
    lake = write_table_lake(tmp_path / "lake")
    settings = Settings.load(overrides=FAST, config_files=[], environ={})
    provider = scripted(("analyzer", fenced("print(")), fallback={"debugger": fenced("raise ValueError('still broken')")})
    with LLM(settings, provider=provider) as llm:
        analysis = analyze_file("notes.md", llm, Sandbox(settings.sandbox, lake), tmp_path / "w",
                                max_debug=1)
    assert analysis.description is None and analysis.attempts == 2
    assert "SyntaxError" in analysis.errors[0] and "still broken" in analysis.errors[1]
