"""Shared pieces for the agent tests: a scripted model answering in order, scripts over the small lake, trace readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsstar_lake.llm.scripted import Rule, ScriptedProvider

# Fast settings for tests: the real sandbox with short limits, no retry waits.
FAST = {
    "llm.max_retries": 0, "llm.backoff_initial_s": 0.001, "llm.backoff_max_s": 0.01,
    "sandbox.timeout_s": 30.0, "sandbox.memory_mb": 1024, "agent.max_debug": 2,
}


def fenced(body: str) -> str:
    """Return code the way models usually send it: in a python fence, with a line of prose around."""
    return f"Here is the code:\n```python\n{body.strip()}\n```\nIt prints the result."


def rules_file(path: Path, *rules: dict[str, Any]) -> str:
    """Write scripted-provider rules as JSONL (for --scripted-file) and return the path."""
    path.write_text("\n".join(json.dumps(r) for r in rules) + "\n")
    return str(path)


def scripted(*answers: tuple[str, str], fallback: dict[str, str] | None = None) -> ScriptedProvider:
    """Answer each (role, text) once, in order per role; `fallback` answers a role after its list runs out.

    A text "!fatal" makes that call fail the way a dead provider does.
    """
    rules = []
    for role, text in answers:
        if text == "!fatal":
            rules.append(Rule(response="connection reset by peer", role=role, times=1, error="fatal"))
        else:
            rules.append(Rule(response=text, role=role, times=1))
    rules += [Rule(response=text, role=role) for role, text in (fallback or {}).items()]
    return ScriptedProvider(rules)


def prompts(provider: ScriptedProvider, role: str) -> list[str]:
    """Return the prompts a role was sent, in order."""
    return [prompt for r, prompt in provider.calls if r == role]


def run_dir(lake: Any, run_id: str) -> Path:
    """Return a run's folder."""
    return Path(lake.catalog_dir) / "runs" / run_id


def trace(lake: Any, run_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Return a run's trace lines (of one type when kind is given)."""
    lines = [json.loads(line) for line in (run_dir(lake, run_id) / "trace.jsonl").read_text().splitlines()]
    return [line for line in lines if kind is None or line["type"] == kind]


# Scripts over tests/conftest.py's table lake: sales.csv has widget units 10 (north) + 4 (south), gadget 7 (north).
SUM_WIDGETS = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
print(sum(int(r['units']) for r in rows if r['product'] == 'widget'))
"""
PRINT_SALES = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
for r in rows:
    print(r)
"""
UNITS_BY_REGION = """
import csv
from collections import Counter
units = Counter()
for r in csv.DictReader(open('data/sales.csv')):
    units[r['region']] += int(r['units'])
print(dict(units))
print('top region:', units.most_common(1)[0][0])
"""
TOP_REGION_ONLY = """
import csv
from collections import Counter
units = Counter()
for r in csv.DictReader(open('data/sales.csv')):
    units[r['region']] += int(r['units'])
print(units.most_common(1)[0][0])
"""
WORST_COUNTY = """
import csv
rows = list(csv.DictReader(open('data/ozone_by_county.csv')))
best = max(rows, key=lambda r: int(r['unhealthy_days']))
print(best['county'], best['unhealthy_days'])
"""
