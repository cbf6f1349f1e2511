"""Answers from a script, for tests and demos: a Python callable, or rules read from a JSONL file.

One rule per line: `{"role": "verifier", "match": "...", "response": "...", "times": 2}`.

- `role`: the role it answers; omitted or "*" means any role.
- `match`: a substring of the prompt, or `/regex/` (`/regex/i` ignores case; `.` matches newlines);
  omitted or "" matches every prompt.
- `times`: how many calls the rule answers before it is used up; omitted means unlimited.
- `error`: optional, "retryable" or "fatal": raise that error (message = `response`) instead of answering.
- `input_tokens` / `output_tokens`: optional counts to report; by default about 4 characters per token.

For each call the first rule, in file order, that is not used up and matches both role and prompt
answers. So a whole multi-round run is scripted with counted rules first and a fallback after, e.g.
a verifier rule `"times": 2, "response": "No"` followed by a verifier rule `"response": "Yes"`.
Blank lines and lines starting with `#` are skipped. A prompt no rule matches is a ProviderError
naming the role and showing the prompt's start; with a callable too, it answers what no rule does.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ConfigError, ModelNotConfigured, ProviderError
from dsstar_lake.llm.base import Completion, RetryableError, estimate_tokens, fatal

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

Responder = Callable[[str, str, "str | None"], "str | Completion"]
REGEX = re.compile(r"^/(?P<pattern>.*)/(?P<flags>i?)$", re.S)


@dataclass
class Rule:
    """One scripted answer and when it applies."""

    response: str
    role: str = "*"
    match: str = ""
    times: int | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    used: int = 0
    _regex: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        found = REGEX.match(self.match or "")
        if found:
            flags = re.S | (re.I if found["flags"] else 0)
            self._regex = re.compile(found["pattern"], flags)
        if self.error not in (None, "retryable", "fatal"):
            raise ConfigError(f"scripted rule error must be 'retryable' or 'fatal', not {self.error!r}")

    def applies(self, role: str, prompt: str) -> bool:
        """Tell whether this rule has uses left and matches the role and the prompt."""
        if self.times is not None and self.used >= self.times:
            return False
        if self.role not in ("*", "", role):
            return False
        if self._regex is not None:
            return self._regex.search(prompt) is not None
        return self.match in prompt

    @property
    def left(self) -> int | None:
        """Return the uses left, or None when unlimited."""
        return None if self.times is None else self.times - self.used


def load_rules(path: str | Path) -> list[Rule]:
    """Read rules from a JSONL file."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ModelNotConfigured(f"scripted: cannot read rules file {path}: {exc.strerror}") from exc
    rules = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data: dict[str, Any] = json.loads(line)
            rules.append(_rule(data))
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise ConfigError(f"scripted: bad rule on line {number} of {path}: {exc}") from exc
    return rules


def _rule(data: dict[str, Any]) -> Rule:
    known = {"response", "role", "match", "times", "error", "input_tokens", "output_tokens"}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    if not isinstance(data.get("response"), str):
        raise ValueError("'response' must be a string")
    times = data.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ValueError("'times' must be a whole number of at least 1")
    return Rule(**data)


class ScriptedProvider:
    """Answer from rules (first match wins, counted rules get used up) and then from a callable."""

    # What the registry (llm/registry.py) and `dslake models` know of this provider, declared here.
    name = "scripted"
    key_vars: tuple[str, ...] = ()  # rules in a file, for tests: no key
    needs_key = False
    base_url_var = None
    default_base_url = None
    fix_hint = "give a JSONL file of rules with --scripted-file FILE (llm.scripted_file)"

    @classmethod
    def credentials(cls, settings: Settings) -> tuple[bool, str]:
        """Return (usable, where the rules are)."""
        path = settings.llm.scripted_file
        if path and Path(path).is_file():
            return True, f"rules in {path}"
        return False, f"none: llm.scripted_file {path!r} is not a file" if path else "none: set llm.scripted_file"

    def __init__(self, rules: list[Rule] | None = None, responder: Responder | None = None) -> None:
        if not rules and responder is None:
            raise ModelNotConfigured("scripted: give rules (llm.scripted_file) or a responder")
        self.rules = list(rules or [])
        self.responder = responder
        self.calls: list[tuple[str, str]] = []  # (role, prompt) of every call, for tests to inspect
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> ScriptedProvider:
        """Build from the JSONL file named by llm.scripted_file."""
        path = settings.llm.scripted_file
        if not path:
            raise ModelNotConfigured("scripted: no rules file; set llm.scripted_file to a JSONL file of rules")
        return cls(load_rules(path))

    def answers(self, role: str) -> bool:
        """Tell whether a rule (or the responder) can answer this role: a role no rule names is not asked at all where
        the agent can do without it (the selector: the relevance order decides)."""
        return self.responder is not None or any(r.role in ("*", "", role) for r in self.rules)

    def unused(self) -> list[Rule]:
        """Return the counted rules that still have uses left (a finished script leaves none)."""
        with self._lock:
            return [r for r in self.rules if r.left]

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings | None = None, role: str = ""
    ) -> Completion:
        """Return the answer the script gives for this role and prompt."""
        start = time.perf_counter()
        with self._lock:
            self.calls.append((role, prompt))
            rule = next((r for r in self.rules if r.applies(role, prompt)), None)
            if rule is not None:
                rule.used += 1
        if rule is None:
            if self.responder is None:
                head = " ".join(prompt[:160].split())
                raise ProviderError(f"scripted: no rule answers role {role or '(none)'!r}; prompt starts: {head!r}")
            answer = self.responder(role, prompt, system)
            if isinstance(answer, Completion):
                return answer
            return self._completion(model, prompt, system, str(answer), time.perf_counter() - start)
        if rule.error == "retryable":
            raise RetryableError(self.name, model, rule.response)
        if rule.error == "fatal":
            raise fatal(self.name, model, rule.response, "fix the script")
        return self._completion(model, prompt, system, rule.response, time.perf_counter() - start,
                                rule.input_tokens, rule.output_tokens)

    def _completion(self, model: str, prompt: str, system: str | None, text: str, latency: float,
                    input_tokens: int | None = None, output_tokens: int | None = None) -> Completion:
        return Completion(
            text=text,
            input_tokens=estimate_tokens((system or "") + prompt) if input_tokens is None else input_tokens,
            output_tokens=estimate_tokens(text) if output_tokens is None else output_tokens,
            latency_s=latency,
            model=model,
            provider=self.name,
        )
