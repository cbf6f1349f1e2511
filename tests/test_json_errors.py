"""Every command's --json answers a failure with one JSON object on stdout: the error, its hint, the exit code.

The commands are found by walking the click tree, so a new command with --json is covered without a new test.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from agent_helpers import fenced, rules_file
from click.testing import CliRunner, Result
from conftest import write_table_lake
from dslake_cli.cli import cli

from dsstar_lake.base.errors import LakeNotFound, ProviderError, UsageError

ERROR_KEYS = {"schema", "error", "hint", "exit_code"}


def json_commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Return (words, command) of every command that takes --json, groups included (`dslake runs --json`)."""
    found = []
    for name, command in sorted(group.commands.items()):
        words = (*path, name)
        if any(param.name == "as_json" for param in command.params):
            found.append((words, command))
        if isinstance(command, click.Group):
            found += json_commands(command, words)
    return found


COMMANDS = json_commands()


def required_values(command: click.Command, a_file: Path) -> list[str]:
    """Return words that satisfy a command's required arguments and options (a file where one must exist)."""
    words: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        value = str(a_file) if isinstance(param.type, click.Path) else "x"
        words += [param.opts[0], value] if isinstance(param, click.Option) else [value]
    return words


def the_one_object(result: Result) -> dict:
    """Return the one JSON object result printed on stdout (json.loads fails on anything around or after it)."""
    return json.loads(result.stdout)


def assert_error_object(result: Result, exit_code: int) -> dict:
    assert result.exit_code == exit_code, result.output
    error = the_one_object(result)
    assert set(error) == ERROR_KEYS and error["schema"] == "dslake.error/1"
    assert error["exit_code"] == exit_code and error["error"]
    assert "Traceback" not in result.output
    return error


def test_the_walk_finds_every_json_command():
    names = {" ".join(words) for words, _ in COMMANDS}
    assert {"index", "status", "show", "search", "ask", "report", "runs", "runs show", "eval kramabench",
            "doctor", "keys list", "config", "models"} <= names


@pytest.mark.parametrize("words,command", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_a_usage_error_under_json_is_one_error_object(words, command, tmp_path):
    a_file = tmp_path / "tasks.json"
    a_file.write_text("[]")
    result = CliRunner().invoke(cli, [*words, *required_values(command, a_file), "--json", "--no-such-option"])
    error = assert_error_object(result, UsageError.exit_code)
    assert "--no-such-option" in error["error"]
    assert "Usage:" in result.stderr  # the human text stays where it was


@pytest.mark.parametrize("words,command", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_a_dslake_error_under_json_is_one_error_object(words, command, tmp_path):
    a_file = tmp_path / "tasks.json"
    a_file.write_text("[]")
    if any(param.name == "lake_path" for param in command.params):
        failing = ["--lake", str(tmp_path / "no-such-lake")]
        expected = f"lake not found: {tmp_path / 'no-such-lake'}"
    else:  # `keys list`: a keys file other users can read is refused
        from dsstar_lake.llm.keys import keys_path

        keys = keys_path()  # beside the test's own user config (conftest.py)
        keys.parent.mkdir(parents=True, exist_ok=True)
        keys.write_text('{"gemini": "k"}')
        keys.chmod(0o644)
        failing, expected = [], f"the keys file {keys} can be read by other users"
    result = CliRunner().invoke(cli, [*words, *required_values(command, a_file), *failing, "--json"])
    error = assert_error_object(result, LakeNotFound.exit_code)
    assert error["error"] == expected
    assert f"error: {expected}" in result.stderr


def test_without_json_a_failure_prints_nothing_on_stdout(tmp_path):
    result = CliRunner().invoke(cli, ["status", "--lake", str(tmp_path / "gone")])
    assert result.exit_code == 2 and result.stdout == ""


def test_a_run_that_stops_resumable_prints_its_answer_alone(tmp_path):
    lake = write_table_lake(tmp_path / "lake")
    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0
    broken = rules_file(tmp_path / "broken.jsonl",
                        {"role": "planner", "response": "Sum the units of data/sales.csv."},
                        {"role": "coder", "response": fenced("print(14)")},
                        {"role": "verifier", "response": "server went away", "error": "fatal"})
    result = CliRunner().invoke(cli, ["ask", "How many units?", "--lake", str(lake), "--files", "sales.csv",
                                      "--llm", "scripted", "--scripted-file", broken, "--json"])
    assert result.exit_code == ProviderError.exit_code, result.output
    answer = the_one_object(result)  # the answer says it stopped; no error object follows it
    assert answer["schema"] == "dslake.ask/1" and answer["resumable"] is True
