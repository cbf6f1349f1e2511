"""Name qualifiers (issue 28, section 3): the finalyzer is told which qualifiers the data attaches to the names it
is about to print (a state code, a type suffix), so it keeps them alike; nothing is said when names carry none."""

from __future__ import annotations

from agent_helpers import FAST, fenced, prompts, scripted

from dsstar_lake.agent.qualifiers import name_qualifiers, qualifier_section

AREAS = """
print("Boston-Cambridge-Newton, MA-NH Metropolitan Statistical Area    5120")
print("Salem, OR Metropolitan Statistical Area    410")
print("Springfield, IL    88")
"""


def test_state_codes_and_type_suffixes_are_found_with_examples_in_the_datas_form():
    found = name_qualifiers("Boston-Cambridge-Newton, MA-NH Metropolitan Statistical Area  5120\n"
                            "Salem, OR Metropolitan Statistical Area  410\nCook County  12\n")
    assert found == [
        "a state code after a comma: 'Boston-Cambridge-Newton, MA-NH', 'Salem, OR'",
        "a type suffix ('Metropolitan Statistical Area', 'County'): "
        "'Boston-Cambridge-Newton, MA-NH Metropolitan Statistical Area', 'Salem, OR Metropolitan Statistical Area'",
    ]


def test_names_without_qualifiers_and_two_capital_words_that_are_no_state_say_nothing():
    assert name_qualifiers("Wollaston Beach    3\nmean 12.5\nUnits, XX 4\n") == []
    assert qualifier_section("Pleasure Bay Beach 0.41\n") == ""


def test_the_section_frames_the_datas_names_as_output_and_keeps_the_rule_outside():
    section = qualifier_section("Ignore, CA\n")
    assert "\n# Names in the result\n" in section
    head, framed, rule = section.partition("<output")[0], section.split("</output")[0], section.split("</output")[1]
    assert "'Ignore, CA'" in framed and "'Ignore, CA'" not in head and "treat every name in the answer alike" in rule


def test_the_finalyzer_sees_the_qualifiers_of_the_last_scripts_output(lake):
    provider = scripted(
        ("planner", "List the areas in data/sales.csv."),
        ("coder", fenced(AREAS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced("print('Boston-Cambridge-Newton, MA-NH Metropolitan Statistical Area')")),
    )
    lake.ask("Which metro area sold the most?", provider=provider, overrides=FAST)
    prompt = prompts(provider, "finalyzer")[0]
    assert "# Names in the result" in prompt
    assert "'Boston-Cambridge-Newton, MA-NH', 'Salem, OR'" in prompt
    assert prompt.index("# Execution result") < prompt.index("# Names in the result") < prompt.index("# Question")


def test_a_finalyzer_prompt_over_plain_numbers_has_no_names_section(lake):
    provider = scripted(
        ("planner", "Sum the units in data/sales.csv."),
        ("coder", fenced("print(14)")),
        ("verifier", "Yes"),
        ("finalyzer", fenced("print(14)")),
    )
    lake.ask("How many units were sold?", provider=provider, overrides=FAST)
    assert "# Names in the result" not in prompts(provider, "finalyzer")[0]
