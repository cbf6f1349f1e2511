"""Loading benchmark tasks: KramaBench workload JSON and JSONL rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsstar_lake.base.errors import UsageError
from dsstar_lake.eval.tasks import Task, domain_of, load_tasks

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def test_kramabench_workload_fields_and_subtasks() -> None:
    tasks = load_tasks(FIXTURES / "workload.json")
    assert [t.id for t in tasks] == ["toy-easy-1", "toy-hard-2"]
    first, second = tasks
    assert first.query == "How many rows does the sales table have?"
    assert first.answer == 42 and first.answer_type == "numeric_exact"
    assert first.data_sources == ["sales.csv"]
    assert first.files is None
    assert first.domain == "toy"
    assert [s.id for s in first.subtasks] == ["toy-easy-1-1"]
    assert first.subtasks[0].domain == "toy" and first.subtasks[0].data_sources == ["./"]
    assert second.answers == [["North", "East"], ["North", "East", "West"]]
    assert second.data_sources == ["regions/", "sales.csv"]


def test_jsonl_rows_with_files_skip_blank_lines() -> None:
    tasks = load_tasks(FIXTURES / "tasks.jsonl")
    assert [t.id for t in tasks] == ["q1", "q2"]
    assert tasks[0].files == ["shop/sales.csv"]
    assert tasks[0].answer == 1234.5 and tasks[0].answer_type == "numeric_approximate"
    assert tasks[0].domain == "tasks"  # no id prefix: the file stem
    assert tasks[1].domain == "retail"  # an explicit domain wins
    assert tasks[1].answer is None and tasks[1].data_sources == []


def test_domain_from_id_prefix_else_stem() -> None:
    assert domain_of("legal-easy-3", Path("x/legal.json")) == "legal"
    assert domain_of("astronomy-hard-1", Path("astronomy_alternative.json")) == "astronomy"
    assert domain_of("q17", Path("dev.jsonl")) == "dev"


def test_object_with_tasks_list(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"tasks": [{"id": "a-1", "query": "q", "data_sources": "one.csv"}]}')
    (task,) = load_tasks(path)
    assert isinstance(task, Task) and task.data_sources == ["one.csv"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"id": "a"}]', "no 'query'"),
        ('[{"query": "q"}]', "no 'id'"),
        ('[{"id": "a", "query": "q"}, {"id": "a", "query": "r"}]', "appears twice"),
        ('[{"id": "a", "query": "q",', "not valid JSON"),
        ('{"id": "a", "query": "q"}\nnot json\n', ":2 is not a JSON object"),
        ('[{"id": "a", "query": "q", "files": "x.csv"}]', "'files' must be a list"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_task_files_raise_usage_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl" if content.startswith("{") else tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_tasks(path)


def test_missing_tasks_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no tasks file"):
        load_tasks(tmp_path / "nope.json")


def test_empty_file_has_no_tasks(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    assert load_tasks(path) == []
