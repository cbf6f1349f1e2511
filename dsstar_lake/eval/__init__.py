"""KramaBench evaluation: tasks, the answer contract, answer metrics, and the data_sources resolver."""

from dsstar_lake.eval.answers import parse_answer
from dsstar_lake.eval.metrics import ANSWER_TYPES, Judge, Score, score, score_best
from dsstar_lake.eval.resolve import Resolution, SourceMatch, list_domain_files, read_missing, resolve_sources
from dsstar_lake.eval.tasks import Task, load_tasks

__all__ = [
    "ANSWER_TYPES",
    "Judge",
    "Resolution",
    "Score",
    "SourceMatch",
    "Task",
    "list_domain_files",
    "load_tasks",
    "parse_answer",
    "read_missing",
    "resolve_sources",
    "score",
    "score_best",
]
