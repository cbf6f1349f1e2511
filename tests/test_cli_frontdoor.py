"""The front door: help and examples, output that survives pipes, the --json contract, exit codes, DSLAKE_* names."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.base.settings import Settings

REPO = Path(__file__).resolve().parent.parent


def command_paths(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Return every command's words, groups included ("runs", "runs show", ...)."""
    paths = []
    for name, command in group.commands.items():
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, (*prefix, name)))
    return paths


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    """The small table lake with a long file name, indexed once through the command line."""
    from conftest import write_table_lake

    root = write_table_lake(tmp_path_factory.mktemp("frontdoor") / "lake")
    (root / ("measurements_of_river_temperature_at_every_station_of_the_upper_valley_" + "x" * 40 + ".csv")
     ).write_text("station,temperature_c\nupper,11.5\n")
    result = CliRunner().invoke(cli, ["index", str(root)])
    assert result.exit_code == 0, result.output
    return root


@pytest.mark.parametrize("words", [(), *command_paths()], ids=lambda w: " ".join(w) or "dslake")
def test_every_command_answers_dash_h_with_an_example(words):
    runner = CliRunner()
    short = runner.invoke(cli, [*words, "-h"])
    assert short.exit_code == 0, short.output
    assert short.output == runner.invoke(cli, [*words, "--help"]).output
    examples = short.output.split("Examples:")[-1]
    assert "Examples:" in short.output and re.search(rf"^\s+dslake {' '.join(words)}\b", examples, re.M), short.output


def test_examples_use_real_options():
    """Each example line parses: its command exists and its options are that command's (nothing is run)."""
    from dsstar_lake.terminal.help import EXAMPLES

    for path, lines in EXAMPLES.items():
        for line in lines:
            words = line.split("#")[0].split()
            words = words[words.index("dslake") + 1:]
            command: click.Command = cli
            while isinstance(command, click.Group) and words and words[0] in command.commands:
                command = command.commands[words.pop(0)]
            if path:
                assert f"dslake {path}" in line, line
            options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            for word in words:
                if word.startswith("-"):
                    assert word in options, f"{line}: {word} is not an option of {command.name}"


def test_scripted_provider_is_accepted_but_not_advertised(runner_env):
    runner = CliRunner()
    for words in (["ask"], ["report"], ["models"], ["index"], ["eval", "kramabench"], ["runs", "resume"]):
        shown = runner.invoke(cli, [*words, "--help"]).output
        assert "scripted" not in shown and "--llm [gemini|openai|manual]" in shown, shown
    models = runner.invoke(cli, ["models", "--llm", "scripted", "--json"])
    assert models.exit_code == 0, models.output
    assert json.loads(models.stdout)["provider"] == "scripted"
    wrong = runner.invoke(cli, ["models", "--llm", "nope"])
    assert wrong.exit_code == 2 and "'gemini', 'openai', 'manual'" in wrong.output


@pytest.fixture
def runner_env(monkeypatch):

    monkeypatch.delenv("COLUMNS", raising=False)


def test_piped_output_keeps_every_character(lake, runner_env):
    long_name = next(p.name for p in lake.iterdir() if p.name.startswith("measurements_"))
    runner = CliRunner()  # CliRunner's output is not a terminal: what a pipe gets
    found = runner.invoke(cli, ["search", "river temperature upper valley station", "--lake", str(lake), "-k", "3"])
    assert found.exit_code == 0 and "…" not in found.output
    assert any(line.split()[1:2] == [long_name] for line in found.output.splitlines()), found.output  # plain table
    shown = runner.invoke(cli, ["show", "sales.csv", "--lake", str(lake)])
    description = json.loads(runner.invoke(cli, ["show", "sales.csv", "--lake", str(lake), "--json"]).stdout)[
        "entry"]["description"]
    assert description in shown.output  # verbatim: no frame, no wrapping
    status = runner.invoke(cli, ["status", str(lake)])
    assert status.exit_code == 0 and f"lake:          {lake}\n" in status.output
    config = runner.invoke(cli, ["config"])
    assert "…" not in config.output and "gemini-2.5-flash-lite" in config.output


def test_runs_list_piped_keeps_whole_questions(tmp_path, runner_env):
    from agent_helpers import SUM_WIDGETS, fenced, rules_file
    from conftest import write_table_lake

    root = write_table_lake(tmp_path / "lake")
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "planner", "response": "Sum the units column of data/sales.csv over the widget rows."},
                       {"role": "coder", "response": fenced(SUM_WIDGETS)}, {"role": "verifier", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced(SUM_WIDGETS)})
    question = "How many widget units were sold across every region and every month of the whole year, in total?"
    runner = CliRunner()
    done = runner.invoke(cli, ["ask", question, "--lake", str(root), "--files", "sales.csv", "--llm", "scripted",
                               "--scripted-file", rules, "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["schema"] == "dslake.ask/1" and answer["value"] == "14"
    listed = runner.invoke(cli, ["runs", "--lake", str(root)])
    row = next(line for line in listed.output.splitlines() if line.startswith(answer["run_id"]))
    assert question in row and "…" not in listed.output, listed.output  # piped: one line per run, its cells whole
    assert answer["run_id"] in listed.output
    shown = runner.invoke(cli, ["runs", "show", answer["run_id"], "--lake", str(root)])
    assert shown.exit_code == 0 and "…" not in shown.output, shown.output  # the rounds table's step is whole
    for words in (["runs"], ["runs", "list"], ["runs", "show", answer["run_id"]]):
        data = json.loads(runner.invoke(cli, [*words, "--lake", str(root), "--json"]).stdout)
        assert data["schema"] == "dslake." + (".".join(words[:2]) if len(words) > 1 else "runs.list") + "/1"
    # The lake as a word, before or after the group's own options (`dslake runs --json ./lake`), or after them and
    # before a subcommand.
    for words in (["runs", "--json", str(root)], ["runs", str(root), "--json"], ["runs", "--json", str(root), "list"],
                  ["runs", "--catalog", str(root / ".dslake"), str(root), "--json", "show", answer["run_id"]]):
        done = runner.invoke(cli, words)
        assert done.exit_code == 0 and answer["run_id"] in done.stdout, (words, done.output)
    shown = json.loads(runner.invoke(cli, ["runs", "show", answer["run_id"], "--lake", str(root), "--json"]).stdout)
    assert _is_iso(shown["meta"]["created_at"]) and shown["answer"]["seconds"] == round(shown["answer"]["seconds"], 3)


def _is_iso(text: str) -> bool:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return text.endswith("Z") and moment.tzinfo is not None


def test_every_json_output_names_its_schema(lake, runner_env):
    runner = CliRunner()
    outputs = {
        "index": ["index", str(lake), "--json"],
        "status": ["status", str(lake), "--json"],
        "show": ["show", "sales.csv", "--lake", str(lake), "--json"],
        "search": ["search", "units sold per region", "--lake", str(lake), "--json", "-k", "2"],
        "config": ["config", "--json"],
        "models": ["models", "--json"],
        "runs.list": ["runs", "list", "--lake", str(lake), "--json"],
    }
    data = {}
    for name, args in outputs.items():
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        data[name] = json.loads(result.stdout)
        assert list(data[name])[0] == "schema" and data[name]["schema"] == f"dslake.{name}/1"
    assert isinstance(data["index"]["seconds"], float) and data["index"]["seconds"] == round(data["index"]["seconds"], 3)
    assert _is_iso(data["status"]["last_index_at"])
    assert _is_iso(data["show"]["file"]["mtime"]) and _is_iso(data["show"]["file"]["indexed_at"])
    assert "mtime_ns" not in data["show"]["file"]
    assert all(isinstance(v, int) for v in data["search"]["timing_ms"].values())
    assert {row["key"] for row in data["config"]["settings"]} >= {"retrieve.k"} and data["runs.list"]["runs"] == []
    documented = (REPO / "docs" / "json.md").read_text()
    for path in command_paths():
        command = cli
        for word in path:
            command = command.commands[word]
        if any(p.name == "as_json" for p in command.params) and not isinstance(command, click.Group):
            assert f"`dslake.{'.'.join(path)}/1`" in documented, f"{' '.join(path)} is not in docs/json.md"


def test_json_rules_apply_by_key():
    from dsstar_lake.views.jsonout import envelope

    data = envelope("runs show", {"meta": {"created_at": 0.0, "overrides": {"sandbox.timeout_s": 60}},
                                  "trace": [{"at": 1.5, "duration_s": 0.123456, "total_ms": 12.6}],
                                  "file": {"mtime_ns": 1_000_000_000}, "value": {"x_at": 3}})
    assert data["schema"] == "dslake.runs.show/1"
    assert data["meta"] == {"created_at": "1970-01-01T00:00:00.000Z", "overrides": {"sandbox.timeout_s": 60}}
    assert data["trace"] == [{"at": "1970-01-01T00:00:01.500Z", "duration_s": 0.123, "total_ms": 13}]
    assert data["file"] == {"mtime": "1970-01-01T00:00:01.000Z"} and data["value"] == {"x_at": 3}
    assert envelope("config", [1]) == {"schema": "dslake.config/1", "settings": [1]}


def test_status_exits_8_when_it_reports_a_problem(lake, tmp_path, runner_env):
    copy = tmp_path / "lake"
    shutil.copytree(lake, copy)
    runner = CliRunner()
    clean = runner.invoke(cli, ["status", str(copy)])
    assert clean.exit_code == 0, clean.output
    (copy / "new.csv").write_text("a\n1\n")  # a changed lake is not a problem: `dslake index` is for that
    assert runner.invoke(cli, ["status", str(copy)]).exit_code == 0
    shutil.rmtree(copy / ".dslake" / "chroma")
    broken = runner.invoke(cli, ["status", str(copy)])
    assert broken.exit_code == 8 and "problem:" in broken.output
    as_json = runner.invoke(cli, ["status", str(copy), "--json"])
    assert as_json.exit_code == 8 and json.loads(as_json.stdout)["problems"]


def test_unknown_dslake_variable_is_an_error(monkeypatch, runner_env):
    monkeypatch.setenv("DSLAKE_RETRIEVE_KK", "3")
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "DSLAKE_RETRIEVE_KK" in result.output and "did you mean DSLAKE_RETRIEVE_K?" in result.output
    monkeypatch.delenv("DSLAKE_RETRIEVE_KK")
    monkeypatch.setenv("DSLAKE_LLM_MODELS", "x")
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 2 and "[llm.models]" in result.output


def test_dslake_variables_that_are_not_settings_are_allowed():
    env = {"DSLAKE_TRACE_FD": "9", "DSLAKE_TEST_KILLS": "3", "DSLAKE_RETRIEVE_K": "7", "OTHER": "1"}
    assert Settings.load(config_files=[], environ=env)["retrieve.k"] == 7


def test_every_dslake_variable_the_code_reads_is_a_setting_or_allowed():
    """A DSLAKE_* name used anywhere in the code, tests or docs must not become an unknown-variable error."""
    from dsstar_lake.base.settings import _flatten, check_environment, read_defaults

    names = set()
    for folder in ("dsstar_lake", "index", "tests", "benchmarks", "docs"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".toml") and path.is_file():
                names.update(re.findall(r"\bDSLAKE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(errors="replace")))
    names.update(re.findall(r"\bDSLAKE_[A-Z0-9_]*[A-Z0-9]\b", (REPO / "README.md").read_text()))
    placeholders = {"DSLAKE_SECTION_KEY", "DSLAKE_RETRIEVE_KK", "DSLAKE_LLM_MODELS"}
    defaults = _flatten(read_defaults())
    for name in sorted(names - placeholders):
        check_environment({name: "1"}, defaults)


def test_exit_codes_are_in_the_readme():
    import dsstar_lake.agent.errors
    import dsstar_lake.base.errors as errors

    readme = (REPO / "README.md").read_text()
    table = readme.split("## Exit codes")[1].split("\n## ")[0]
    listed = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}
    kinds = [errors.DslakeError]
    seen = set()
    while kinds:
        kind = kinds.pop()
        seen.add(kind)
        kinds.extend(k for k in kind.__subclasses__() if k not in seen and k.__module__.startswith(("dsstar_lake",
                                                                                                "index")))
        assert kind.exit_code in listed and f"`{kind.__name__}`" in table, f"{kind.__name__} is not in the table"
    assert {0, errors.STATUS_PROBLEMS, errors.INDEX_FAILURES, 130} <= listed
    assert dsstar_lake.agent.errors.LakeModified in seen


def test_report_table_piped_keeps_whole_questions_and_answers():
    import io

    from dsstar_lake.report.pipeline import Report
    from dsstar_lake.report.questions import SubQuestion
    from dsstar_lake.terminal.console import CliConsole
    from dsstar_lake.terminal.report import print_report

    question = "Which region sold the most widget units in the second half of the year, counting returns as sales?"
    answer = "north sold 1,234 widget units between July and December, ahead of south with 1,100 units sold"
    sub = SubQuestion(n=1, text=question, status="answered", answer=answer, verified=True, run_id="r1")
    report = Report(run_id="r", request="What sold?", title="Widgets", folder="/tmp/r", files=[], questions=[sub],
                    context=[], rounds=0)
    piped = io.StringIO()
    print_report(CliConsole(file=piped), report)
    row = piped.getvalue().splitlines()[1]  # piped: plain columns, one line per sub-question, its cells whole
    assert row.startswith(f"1  {question}  answered  {answer}  r1"), piped.getvalue()
    assert "…" not in piped.getvalue()


HEAVY = ("torch", "sentence_transformers", "pandas", "chromadb", "tenacity")


def test_a_search_process_loads_no_heavy_package(lake):
    """A cold `dslake search` ranks from the manifest's vectors with the ONNX model: it never loads torch, pandas or
    Chroma (seconds of a cold start), nor the model call site's retry machinery."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom dslake_cli.cli import cli\n"
            "try:\n    cli.main(sys.argv[1:], standalone_mode=False)\n"
            f"finally:\n    sys.stderr.write('\\nloaded ' + json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, "search", "river temperature", str(lake), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"], done.stdout
    assert done.stderr.splitlines()[-1] == "loaded []", done.stderr


# What only an index with work needs: the profilers' pool and its collector, the cluster client, the rendering
# code, the model providers' registry, an ignore-file parser for a lake without one, progress bars off a terminal.
PIPELINE = ("pebble", "multiprocessing", "concurrent.futures", "pathspec", "rich.progress", "dslake_index.cluster",
            "dslake_index.collect", "dslake_index.profile_task", "dslake_index.entries", "dslake_index.families",
            "dslake_index.layouts", "dslake_index.datasets", "dslake_index.remote", "dsstar_lake.llm.registry")


def test_a_no_change_index_loads_only_what_finds_nothing_changed(lake):
    """A no-change `dslake index` (stat the lake, read the manifest) imports none of the pipeline's modules: its
    whole cost is start-up, so every module it skips is time saved on each run of a cron job or a watcher's peer."""
    import subprocess
    import sys

    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0  # whatever earlier tests left is indexed
    watched = HEAVY + PIPELINE
    code = ("import json, sys\nfrom dslake_cli.cli import cli\n"
            "try:\n    cli.main(sys.argv[1:], standalone_mode=False)\n"
            f"finally:\n    sys.stderr.write('\\nloaded ' + json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, "index", str(lake), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["added"], summary["changed"], summary["removed"], summary["embedded"]) == (0, 0, 0, 0)
    assert done.stderr.splitlines()[-1] == "loaded []", done.stderr
