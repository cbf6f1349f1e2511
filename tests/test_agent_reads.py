"""The loop learns from what its scripts do: traced reads join the context and make files_used; prompts carry
the question, the packages and the output budget; a re-retrieval that adds nothing is told to the router."""

from __future__ import annotations

import re

from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, scripted, trace

from dsstar_lake.agent.execute import cap

GLOB_DAILY = """
import glob
import pandas as pd
frames = [pd.read_csv(p) for p in sorted(glob.glob('data/sensors/*/*.csv'))]
print(len(frames), 'days,', sum(len(f) for f in frames), 'readings')
"""
MEAN_TEMP = """
import glob
import pandas as pd
df = pd.concat(pd.read_csv(p) for p in sorted(glob.glob('data/sensors/*/*.csv')))
print(round(df['temperature_c'].mean(), 2))
"""
QUESTION = "What is the mean sensor temperature in January 2024, in degrees Celsius?"


def test_files_a_script_finds_join_the_context_and_are_the_files_used(lake):
    provider = scripted(
        ("planner", "List what the sensors folder holds."),
        ("coder", fenced("import os\nprint(os.listdir('data/sensors'))\nprint(undefined_name)")),  # fails first
        ("debugger", fenced(GLOB_DAILY)),
        ("verifier", "No"),
        ("router", "Add Step"),
        ("planner", "Average the temperature_c column over all daily files."),
        ("coder", fenced(MEAN_TEMP)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(MEAN_TEMP)),
    )
    answer = lake.ask(QUESTION, files=["notes.md"], provider=provider, overrides=FAST)
    days = [f"sensors/daily/readings_2024-01-{d:02d}.csv" for d in range(1, 6)]
    assert answer.files_used == days  # exactly what was read: a glob, no literal name in the code
    added = trace(lake, answer.run_id, "read_added")
    assert added[0]["round"] == 0 and added[0]["added"] == ["sensors/daily/readings_*.csv"]
    # A read may be a peek (here a listing and a glob): the family joins as its menu line, not a whole description,
    # and the planner and the coder of the next round see it the same way.
    family = '<data path="data/sensors/daily/readings_*.csv"'
    line = "- data/sensors/daily/readings_*.csv · "
    assert family not in prompts(provider, "planner")[0] and line not in prompts(provider, "planner")[0]
    for role in ("planner", "coder"):
        assert line in prompts(provider, role)[1] and family not in prompts(provider, role)[1]
    assert "files the scripts read themselves, now among the candidates: data/sensors/daily/readings_*.csv" in \
        prompts(provider, "router")[0]
    execs = trace(lake, answer.run_id, "exec")
    assert execs[0]["reads"] == [] and execs[1]["reads"] == days
    shown = lake.run(answer.run_id)["rounds"][0]  # what `dslake runs show` prints
    assert shown["scripts"][1]["reads"] == days and shown["read_added"] == ["sensors/daily/readings_*.csv"]
    # The roles that write code see the question, the packages that import, and the output budget.
    for role in ("coder", "debugger"):
        text = prompts(provider, role)[0]
        assert "# Question" in text and QUESTION in text
        assert "Packages that import here: pandas" in text and "past 8000 characters" in text


def test_a_re_retrieval_that_adds_nothing_is_told_to_the_router(lake):
    provider = scripted(
        ("planner", "Sum the widget units."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("router", "Missing data: the weather on each sales day"),
        ("planner", "Sum the widget units again."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("router", "Add Step"),
        ("planner", "Print the sum."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = lake.ask("How many widget units were sold?", provider=provider, overrides={**FAST, "retrieve.k": 10})
    assert answer.text == "14"
    item = trace(lake, answer.run_id, "re_retrieval")[0]
    assert item["added"] == []  # every entry of this small lake was already in context
    assert "(no search for missing data yet)" in prompts(provider, "router")[0]
    assert "after round 1, missing 'the weather on each sales day'" in prompts(provider, "router")[1]
    assert "found nothing new" in prompts(provider, "router")[1] and "do not ask for it again" in prompts(provider, "router")[1]


def test_a_cut_output_keeps_whole_lines_more_of_the_tail_and_says_which_lines_were_cut():
    text = "".join(f"row {i:04d}\n" for i in range(1000)).rstrip("\n")  # 8,999 characters, as observation() sees it
    shown = cap(text, 1000)
    match = re.search(r"^\[\.\.\. lines (\d+)-(\d+) of 1000 \(([\d,]+) characters\) cut here: the output was 8,999 "
                      r"characters and only 1,000 are shown\. To see what was cut, print only those rows .*\]$", shown, re.M)
    assert match, shown
    head, tail = shown[: match.start()], shown[match.end() + 1:]
    assert head.startswith("row 0000\n") and head.endswith("\n") and tail.endswith("row 0999")
    assert len(tail) > len(head)  # the results a script prints last are kept first
    first, last = int(match[1]), int(match[2])
    assert head.splitlines()[-1] == f"row {first - 2:04d}" and tail.splitlines()[0] == f"row {last:04d}"
    assert head.count("\n") + (last - first + 1) + tail.count("\n") + 1 == 1000  # whole lines: none lost unsaid
    assert int(match[3].replace(",", "")) == len(text) - len(head) - len(tail)
    assert len(head) + len(tail) <= 1000
    assert cap("short", 1000) == "short"
    # One line longer than the limit (a table printed on one line) is cut inside, head and tail kept.
    one = "x" * 500 + "MIDDLE" + "y" * 3000
    shown = cap(one, 1000)
    assert shown.startswith("x" * 400 + "\n[... the middle (") and shown.endswith("y" * 600) and "MIDDLE" not in shown


def test_a_re_retrieval_adds_only_entries_that_carry_the_missing_datas_words(lake):
    provider = scripted(
        ("planner", "Sum the widget units."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("router", "Missing data: volcanic ash thickness"),
        ("planner", "Sum the widget units again."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("router", "Add Step"),
        ("planner", "Print the sum."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = lake.ask("How many widget units were sold?", provider=provider, overrides={**FAST, "retrieve.k": 1})
    item = trace(lake, answer.run_id, "re_retrieval")[0]
    # The lake holds files not yet given, but none is about volcanic ash: nothing is added, and the router is told
    # which entries came closest and why they were left out.
    assert item["added"] == [] and item["closest"]
    told = prompts(provider, "router")[1]
    assert "carry none of the words asked for" in told and f"data/{item['closest'][0]}" in told
