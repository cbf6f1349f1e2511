"""What is kept of every model call: the record, running totals, prices, and a JSONL recorder."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dsstar_lake.base.errors import ConfigError


@dataclass
class CallRecord:
    """One model call as the run's trace keeps it (one JSONL line, `"type": "llm_call"`)."""

    seq: int  # order of the call within its LLM (1-based)
    role: str
    provider: str
    model: str
    prompt: str
    system: str | None
    response: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0  # the answering attempt
    elapsed_s: float = 0.0  # the whole call, backoff and retries included
    cost_usd: float | None = None  # None: no price for this model in llm.pricing
    cached: bool = False
    attempts: int = 0  # requests sent to the provider (0 for a cache hit)
    retry_errors: list[str] = field(default_factory=list)
    error: str | None = None
    started_at: float = 0.0  # Unix time
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-ready dict with a leading `type` field."""
        return {"type": "llm_call", **asdict(self)}


@dataclass
class Totals:
    """Running totals of one LLM object's calls."""

    calls: int = 0  # calls answered, cache hits included
    provider_calls: int = 0  # calls sent to the provider (what the call budget counts)
    cached_calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # answered calls whose model has no price (their cost is not in cost_usd)


class JsonlRecorder:
    """Append each call record, and any event, as one JSON line to a file; safe to share between threads.

    The run-less traces (the index's model passes, the benchmark's judge) write through it; a run's own trace is
    its RunRecord's (dsstar_lake/runs/record.py), which appends through the run folder's descriptor.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def __call__(self, record: CallRecord) -> None:
        self._append(record.to_dict())

    def write(self, data: dict[str, Any]) -> None:
        """Append one event (type and fields), stamped with the time."""
        self._append({"time": time.time(), **data})

    def _append(self, data: dict[str, Any]) -> None:
        line = json.dumps(data, ensure_ascii=False, default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")


def price_for(pricing: Mapping[str, Any], model: str) -> tuple[float, float] | None:
    """Return (input, output) USD per million tokens for a model: exact name, else longest listed prefix."""
    name = model.removeprefix("models/")
    key = name if name in pricing else max((k for k in pricing if name.startswith(k)), key=len, default=None)
    if key is None:
        return None
    value = pricing[key]
    try:
        input_price, output_price = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(f"llm.pricing.{key} must be [input, output] USD per million tokens, not {value!r}") from None
    return input_price, output_price


def cost_usd(price: tuple[float, float] | None, input_tokens: int, output_tokens: int) -> float | None:
    """Return the cost of a call in USD, or None without a price."""
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
