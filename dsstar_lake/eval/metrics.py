"""KramaBench's answer metrics, one function per answer type, each a score in [0, 1].

| answer_type | metric (KramaBench name) | score |
|---|---|---|
| numeric_exact, string_exact | success | 1 when equal: numbers within rounding (below), strings stripped and case-folded |
| numeric_approximate | rae_score | 1 / (1 + abs(p - t) / abs(t)); abs(p - t) in place of the relative error when t == 0 |
| list_exact | f1 | F1 over items, strings normalised, numbers equal within rounding |
| list_approximate | f1_approximate | F1 over items, numbers within 1 %, strings matched as fuzzy paraphrases |
| string_approximate | llm_paraphrase | 1 when a judge says the answer paraphrases the truth; fuzzy_paraphrase without one |

Numbers "equal within rounding" follow KramaBench's `Success`: equal values; two ints must be equal; else a
relative error below 1e-6, an absolute difference below 1e-6, or an absolute difference below 1e-4 of the
larger magnitude (so 8577.53 matches 8577.5298); a zero truth needs abs(p) < 1e-6.

Where this differs from KramaBench's code (benchmark/metrics.py of mitdbg/Kramabench), on purpose:
- list_exact compares numbers with the rounding rule above; KramaBench's F1 uses relative error < 1e-6 only.
- Matching in the F1s is one-to-one (a predicted item counts once); KramaBench lets several equal truth items
  match the same predicted item.
- string_exact with a list truth compares the lists item by item, case-folded; KramaBench uses ``==``.
- rae_score with a zero truth scores 1 / (1 + abs(p)); KramaBench divides by zero and scores 0.
- list_approximate matches strings by fuzzy paraphrase (token overlap and character similarity); KramaBench asks
  an LLM about every pair of items. Its score method is "fuzzy" whenever a truth item is a string.
- string_approximate skips the judge when the normalised strings are equal (method "exact"); without a judge it
  falls back to the fuzzy paraphrase rule, labelled metric "fuzzy_paraphrase", method "fuzzy".
- A value with a percent sign is read as written ("38.42%" is 38.42), as KramaBench's Success does; its
  rae_score and f1 read "38.42%" as 0.3842.
KramaBench's overall score is the mean of these per-task scores weighted by support, which is what the runner
prints.
"""

from __future__ import annotations

import bisect
import difflib
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dsstar_lake.base.errors import UsageError
from dsstar_lake.eval.answers import parse_answer, parse_number

Judge = Callable[[str, str], bool]
"""judge(predicted, truth) -> True when the predicted answer means the same as the truth."""

FUZZY_THRESHOLD = 0.8  # default of [eval] fuzzy_threshold
APPROX_REL_TOL = 0.01  # list_approximate: KramaBench's 1 % relative tolerance

METRIC_OF = {
    "numeric_exact": "success",
    "string_exact": "success",
    "numeric_approximate": "rae_score",
    "list_exact": "f1",
    "list_approximate": "f1_approximate",
    "string_approximate": "llm_paraphrase",
}
ANSWER_TYPES = tuple(METRIC_OF)

_SPACES = re.compile(r"\s+")
_COMMA = re.compile(r"\s*,\s*")
_NEGATIONS = frozenset({"no", "not", "never", "none", "neither", "nor", "cannot", "without", "nt"})


@dataclass(frozen=True)
class Score:
    """One task's score: value in [0, 1], KramaBench's metric name, and how it was decided."""

    value: float
    metric: str
    method: (
        str  # "rule" (deterministic), "exact" (equal strings), "judge" (LLM), "fuzzy" (fuzzy-match fallback)
    )


# ---------------------------------------------------------------- public metrics


def numeric_exact(predicted: Any, truth: Any) -> float:
    """Score 1.0 when the numbers are equal within rounding (string truths compare as strings)."""
    return _success(predicted, truth)


def string_exact(predicted: Any, truth: Any) -> float:
    """Score 1.0 when the stripped, case-folded strings (or numbers within rounding) are equal."""
    return _success(predicted, truth)


def numeric_approximate(predicted: Any, truth: Any) -> float:
    """Score 1 / (1 + relative absolute error); abs(p - t) stands for the relative error when t == 0."""
    t = as_number(truth)
    if t is None:
        return _success(predicted, truth)
    p = as_number(predicted)
    if p is None or not math.isfinite(p) or not math.isfinite(t):
        return 0.0
    error = abs(p - t) if t == 0 else abs(p - t) / abs(t)
    return 1.0 / (1.0 + error)


def list_exact(predicted: Any, truth: Any) -> float:
    """Score the F1 of predicted items against truth items, numbers equal within rounding."""
    return _f1(as_list(predicted), as_list(truth), approximate=False)


def list_approximate(predicted: Any, truth: Any, threshold: float = FUZZY_THRESHOLD) -> float:
    """Score the F1 with numbers within 1 % and strings matched as fuzzy paraphrases."""
    return _f1(as_list(predicted), as_list(truth), approximate=True, threshold=threshold)


def string_approximate(
    predicted: Any, truth: Any, judge: Judge | None = None, threshold: float = FUZZY_THRESHOLD
) -> tuple[float, str]:
    """Score 1.0 for a paraphrase of the truth; return (score, method) with method exact, judge or fuzzy."""
    if predicted is None:
        return 0.0, "judge" if judge else "fuzzy"
    p_text, t_text = as_text(predicted), as_text(truth)
    if normalise_text(p_text) == normalise_text(t_text):
        return 1.0, "exact"
    if judge is not None:
        return (1.0 if judge(p_text, t_text) else 0.0), "judge"
    return (1.0 if fuzzy_match(p_text, t_text, threshold) else 0.0), "fuzzy"


def score(
    answer_type: str,
    predicted: Any,
    truth: Any,
    judge: Judge | None = None,
    *,
    fuzzy_threshold: float = FUZZY_THRESHOLD,
) -> Score:
    """Score a predicted answer against the truth with the metric of the task's answer_type."""
    if answer_type not in METRIC_OF:
        raise UsageError(
            f"unknown answer_type {answer_type!r}", hint="answer_type is one of " + ", ".join(ANSWER_TYPES)
        )
    metric = METRIC_OF[answer_type]
    method = "rule"
    if predicted is None:
        value = 0.0
    elif answer_type == "numeric_exact":
        value = numeric_exact(predicted, truth)
    elif answer_type == "string_exact":
        value = string_exact(predicted, truth)
    elif answer_type == "numeric_approximate":
        value = numeric_approximate(predicted, truth)
    elif answer_type == "list_exact":
        value = list_exact(predicted, truth)
    elif answer_type == "list_approximate":
        value = list_approximate(predicted, truth, fuzzy_threshold)
        if any(isinstance(t, str) and as_number(t) is None for t in as_list(truth)):
            method = "fuzzy"
    else:
        value, method = string_approximate(predicted, truth, judge, fuzzy_threshold)
        if method == "fuzzy":
            metric = "fuzzy_paraphrase"
    if not math.isfinite(value):
        value = 0.0
    return Score(min(1.0, max(0.0, float(value))), metric, method)


def score_best(
    answer_type: str,
    predicted: Any,
    truths: Sequence[Any],
    judge: Judge | None = None,
    *,
    fuzzy_threshold: float = FUZZY_THRESHOLD,
) -> Score:
    """Score against each accepted answer (KramaBench's `accepted_answers`) and keep the best."""
    if not truths:
        raise UsageError("a task needs at least one answer to score against")
    scores = [score(answer_type, predicted, t, judge, fuzzy_threshold=fuzzy_threshold) for t in truths]
    return max(scores, key=lambda s: s.value)


def read_judge_reply(reply: str) -> bool:
    """Read a judge model's reply as yes/no: yes when its first word is yes, y or true.

    KramaBench counts a reply as yes when "yes" or "Yes" occurs anywhere in it; the first word is stricter
    against replies such as "No, yes-or-no questions...".
    """
    words = re.findall(r"[a-z]+", (reply or "").lower())
    return bool(words) and words[0] in ("yes", "true", "y")


# ---------------------------------------------------------------- coercion


def as_number(value: Any) -> int | float | None:
    """Return value as a number (numbers, numeric strings, one-item lists), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        return parse_number(value)
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return as_number(value[0])
    return None


def as_list(value: Any) -> list[Any]:
    """Return value as a list of items: lists as they are, strings read as lists, a scalar as one item."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        parsed = parse_answer(value)
        if isinstance(parsed, list):
            return parsed
        return [] if parsed is None else [parsed]
    return [value]


def as_text(value: Any) -> str:
    """Return value as display text: lists joined with ', ', integral floats without '.0'."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(as_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def normalise_text(text: str) -> str:
    """Strip, case-fold and collapse whitespace (and the spacing around commas); drop a final period."""
    text = unicodedata.normalize("NFKC", text).strip().casefold()
    text = _COMMA.sub(", ", _SPACES.sub(" ", text))
    if len(text) > 1 and text.endswith("."):
        text = text[:-1].rstrip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


# ---------------------------------------------------------------- comparisons


def numbers_equal(p: float, t: float) -> bool:
    """Return True when p equals t within rounding (KramaBench's Success rule)."""
    if isinstance(p, bool) or isinstance(t, bool):
        return False
    if p == t:
        return True
    if isinstance(p, int) and isinstance(t, int):
        return False
    if not (math.isfinite(p) and math.isfinite(t)):
        return False
    diff = abs(p - t)
    if t == 0:
        return abs(p) < 1e-6
    return diff / abs(t) < 1e-6 or diff < 1e-6 or diff < max(abs(p), abs(t)) * 1e-4


def numbers_close(p: float, t: float, rel_tol: float = APPROX_REL_TOL) -> bool:
    """Return True when p is within rel_tol of t (relative to max(abs(t), 1e-12), as KramaBench)."""
    if not (math.isfinite(p) and math.isfinite(t)):
        return False
    return abs(p - t) / max(abs(t), 1e-12) <= rel_tol


def fuzzy_match(predicted: str, truth: str, threshold: float = FUZZY_THRESHOLD) -> bool:
    """Return True when two strings look like paraphrases: token F1 >= threshold, same numbers, same polarity.

    Tokens are case-folded, accent-free words; two tokens of four or more letters match when their character
    similarity (difflib ratio) is at least 0.85, which forgives typos. Every number in the truth must appear in
    the prediction, and a negation on one side only ("no", "not", ...) rules a match out.
    """
    p_tokens, t_tokens = _tokens(predicted), _tokens(truth)
    if not p_tokens or not t_tokens:
        return p_tokens == t_tokens
    if p_tokens == t_tokens:
        return True
    if bool(_NEGATIONS & set(p_tokens)) != bool(_NEGATIONS & set(t_tokens)):
        return False
    p_numbers = [parse_number(tok) for tok in p_tokens if parse_number(tok) is not None]
    for tok in t_tokens:
        t_num = parse_number(tok)
        if t_num is not None and not any(numbers_equal(p, t_num) for p in p_numbers):
            return False
    matched = _match_tokens(p_tokens, t_tokens)
    precision, recall = matched / len(p_tokens), matched / len(t_tokens)
    if precision + recall == 0:
        return False
    # The epsilon keeps exact ratios such as 4/5 on the right side of a 0.8 threshold.
    return 2 * precision * recall / (precision + recall) >= threshold - 1e-9


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.replace("n't", " nt")
    return re.findall(r"\d+(?:\.\d+)?|[^\W\d_]+", text)


def _match_tokens(p_tokens: list[str], t_tokens: list[str]) -> int:
    unused = list(p_tokens)
    matched = 0
    for t in t_tokens:
        for i, p in enumerate(unused):
            if p == t or (
                len(p) >= 4 and len(t) >= 4 and difflib.SequenceMatcher(None, p, t).ratio() >= 0.85
            ):
                matched += 1
                del unused[i]
                break
    return matched


def _success(predicted: Any, truth: Any) -> float:
    if predicted is None:
        return 0.0
    if isinstance(truth, (list, tuple)):
        p_items = as_list(predicted)
        if len(p_items) != len(truth):
            return 0.0
        return float(all(_item_equal(p, t) for p, t in zip(p_items, truth, strict=True)))
    if isinstance(predicted, (list, tuple)) and len(predicted) == 1:
        predicted = predicted[0]  # ["Wyoming"] answers "Wyoming"
    return float(_item_equal(predicted, truth))


def _item_equal(p: Any, t: Any) -> bool:
    t_num = _item_number(t)
    if t_num is not None:
        p_num = _item_number(p)
        if p_num is not None:
            return numbers_equal(p_num, t_num)
        if isinstance(t, (int, float)):
            return False
    return _item_key(p) == _item_key(t)


def _item_number(value: Any) -> int | float | None:
    """Return a list item as a finite number, or None (nested lists are never numbers)."""
    if isinstance(value, (list, tuple, dict)):
        return None
    number = as_number(value)
    return number if number is not None and math.isfinite(number) else None


def _item_key(value: Any) -> str:
    """Return the normalised text a value is compared by; a list or object written inside a string is read."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        parsed = parse_answer(value)
        if isinstance(parsed, (list, dict)):
            value = parsed
    return normalise_text(as_text(value))


class _Pool:
    """The predicted items of a list answer, indexed so that matching long lists stays near-linear."""

    _FUZZY_CANDIDATES = 50  # predicted items (those sharing the most words) checked per fuzzy truth item

    def __init__(self, items: list[Any]) -> None:
        self.size = len(items)
        self.used: set[int] = set()
        numbered = sorted((n, i) for i, item in enumerate(items) if (n := _item_number(item)) is not None)
        # Sorted unused numbers; a taken number is deleted so that runs of equal values cost nothing later.
        self.numbers = [n for n, _ in numbered]
        self.number_index = [i for _, i in numbered]
        self.texts = [_item_key(item) for item in items]
        self.keys: dict[str, list[int]] = {}
        for i in reversed(range(self.size)):
            self.keys.setdefault(self.texts[i], []).append(i)  # reversed: pop() yields the first index
        self._by_token: dict[str, list[int]] | None = None

    def take_number(self, t: float, window: float, close: Callable[[float, float], bool]) -> bool:
        """Take the unused number nearest to t within the window that `close` accepts."""
        nums = self.numbers
        right = bisect.bisect_left(nums, t)
        left = right - 1
        while True:
            d_left = t - nums[left] if left >= 0 else math.inf
            d_right = nums[right] - t if right < len(nums) else math.inf
            if min(d_left, d_right) > window:
                return False
            k = left if d_left <= d_right else right
            if self.number_index[k] not in self.used and close(nums[k], t):
                self.used.add(self.number_index[k])
                del nums[k], self.number_index[k]
                return True
            if k == left:
                left -= 1
            else:
                right += 1

    def take_key(self, key: str) -> bool:
        """Take the first unused item whose normalised text is key."""
        stack = self.keys.get(key)
        while stack:
            i = stack.pop()
            if i not in self.used:
                self.used.add(i)
                return True
        return False

    def take_fuzzy(self, text: str, threshold: float) -> bool:
        """Take the first unused item that fuzzy-matches text, among those sharing the most words with it."""
        if self._by_token is None:
            self._by_token = {}
            for i, key in enumerate(self.texts):
                for token in set(_tokens(key)):
                    self._by_token.setdefault(token, []).append(i)
        shared: Counter[int] = Counter()
        for token in set(_tokens(text)):
            shared.update(i for i in self._by_token.get(token, ()) if i not in self.used)
        if shared:
            ranked = sorted(shared, key=lambda i: (-shared[i], i))[: self._FUZZY_CANDIDATES]
        elif self.size <= self._FUZZY_CANDIDATES:
            ranked = [i for i in range(self.size) if i not in self.used]  # typo-level match of single words
        else:
            ranked = []
        for i in ranked:
            if fuzzy_match(self.texts[i], text, threshold):
                self.used.add(i)
                return True
        return False


def _f1(
    predicted: list[Any], truth: list[Any], approximate: bool, threshold: float = FUZZY_THRESHOLD
) -> float:
    """F1 of a one-to-one greedy matching: each truth item, in order, takes the best unused predicted item."""
    if not truth:
        return float(not predicted)
    if not predicted:
        return 0.0
    pool = _Pool(predicted)
    found = 0
    for t in truth:
        t_num = _item_number(t)
        if t_num is not None:
            if approximate:
                hit = pool.take_number(t_num, APPROX_REL_TOL * max(abs(t_num), 1e-12), numbers_close)
            else:
                # numbers_equal never accepts a difference above this window; the predicate decides inside it.
                hit = pool.take_number(t_num, max(1e-6, abs(t_num) * 2e-4), numbers_equal)
            if hit or isinstance(t, (int, float)):
                found += hit
                continue
        key = _item_key(t)
        hit = pool.take_key(key) or (approximate and pool.take_fuzzy(key, threshold))
        found += hit
    if found == 0:
        return 0.0
    precision, recall = found / len(predicted), found / len(truth)
    return 2 * precision * recall / (precision + recall)
