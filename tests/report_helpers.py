"""Shared pieces for the report tests: a scripted model keyed by prompt content, scripts over a small lake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsstar_lake.llm.scripted import Rule, ScriptedProvider

FAST = {
    "llm.max_retries": 0, "llm.backoff_initial_s": 0.001, "llm.backoff_max_s": 0.01,
    "sandbox.timeout_s": 30.0, "sandbox.memory_mb": 1024, "agent.max_debug": 0, "agent.max_rounds": 2,
}

# A PNG written without matplotlib (a 4x3 red image), so the tests need no plotting library.
PNG_WRITER = """
import struct, zlib
def save_png(path, w=4, h=3):
    raw = b''.join(b'\\x00' + bytes([200, 30, 30]) * w for _ in range(h))
    def chunk(kind, data):
        crc = zlib.crc32(kind + data) & 0xffffffff
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', crc)
    head = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)
    with open(path, 'wb') as fh:
        fh.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', head) + chunk(b'IDAT', zlib.compress(raw))
                 + chunk(b'IEND', b''))
"""
UNITS_BY_REGION = """
import csv
from collections import Counter
units = Counter()
for r in csv.DictReader(open('data/sales.csv')):
    units[r['region']] += int(r['units'])
print(dict(units))
"""
UNITS_CHART = PNG_WRITER + UNITS_BY_REGION + """
save_png('bar-chart-of-units-by-region.png')
top, n = units.most_common(1)[0]
print(f'{top} sold the most units: {n}')
"""
WORST_COUNTY = """
import csv
rows = list(csv.DictReader(open('data/ozone_by_county.csv')))
best = max(rows, key=lambda r: int(r['unhealthy_days']))
print(f"{best['county']} had the most unhealthy days in 2024: {best['unhealthy_days']}")
"""
MOON = """
print(open('data/moon_dust.csv').read())
"""
WIDGETS = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
print('widget units sold in total:', sum(int(r['units']) for r in rows if r['product'] == 'widget'))
"""

Q_REGION = "Which region sold the most units in sales.csv?"
Q_COUNTY = "Which county had the most unhealthy ozone days in 2024?"
Q_MOON = "What was the average moon dust density per crater?"
Q_WIDGETS = "How many widget units were sold in total?"


def fenced(body: str) -> str:
    """Return code the way models send it."""
    return f"```python\n{body.strip()}\n```"


def solve_rules(question: str, tag: str, script: str, final: str | None = None) -> list[dict[str, Any]]:
    """Return rules answering one sub-question's loop (planner, coder, verifier, finalyzer) by content."""
    return [
        {"role": "planner", "match": question, "response": f"Plan {tag}: compute it from the data."},
        {"role": "coder", "match": f"Plan {tag}:", "response": fenced(script)},
        {"role": "verifier", "match": question, "response": "Yes"},
        {"role": "finalyzer", "match": question, "response": fenced(final or script)},
    ]


def questions_json(*items: tuple[str, str]) -> str:
    """Return a sub-question generator answer."""
    return json.dumps([{"question": q, "chart": c} for q, c in items])


FIRST = "Before a report is written"  # in subquestion_first.txt
REFINE = "find the gaps in the draft"  # in subquestion_refine.txt
WRITE = "writing a research report"  # writer_first.txt
REVISE = "revising a research report"  # writer_refine.txt
FIX = "checking a research report"  # writer_fix.txt


def provider(rules: list[dict[str, Any]]) -> ScriptedProvider:
    """Build the scripted provider (first matching rule answers; rules without times never run out)."""
    return ScriptedProvider([Rule(**r) for r in rules])


def write_rules(path: Path, rules: list[dict[str, Any]]) -> Path:
    """Write rules as the JSONL file the CLI's --scripted-file reads."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def prompts(p: ScriptedProvider, role: str) -> list[str]:
    """Return the prompts a role was sent."""
    return [prompt for r, prompt in p.calls if r == role]
