"""Run folders: `<catalog>/runs/<id>/` with run.json, trace.jsonl, plan.md, scripts and outputs, answer.json."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import RunNotFound

if TYPE_CHECKING:
    from dsstar_lake.llm.record import CallRecord
    from dsstar_lake.sandbox.result import ExecResult

RUNS_DIR = "runs"
REPORT_JSON = "report.json"  # a report run's summary (dsstar_lake/report/pipeline.py writes it)
STATUSES = ("running", "done", "interrupted", "aborted", "failed")
FIGURES_DIR = "figures"  # a run's images, each named by the script that saved it (a report's: q<n>-NAME)


def new_run_id() -> str:
    """Return a run id that sorts by time: YYYYMMDD-HHMMSS-xxxx."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _slug(text: str) -> str:
    """Return a file-name-safe short form of a name a script chose."""
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")[:60].strip("-") or "figure"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class RunRecord:
    """One run's folder. Everything the run does is appended here as it happens."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.id = folder.name
        self.trace_path = folder / "trace.jsonl"
        self._lock = threading.Lock()
        self._fd: int | None = None

    def _dir(self) -> int:
        """Return a descriptor of the run folder, opened once: every write goes through it.

        Without bubblewrap a script can rename the run folder and leave a link in its place, or plant a link
        at the name of the next file dslake writes; writing relative to this descriptor, to fresh files that
        replace the old name, never follows either.
        """
        if self._fd is None:
            self._fd = os.open(self.folder, DIR_FLAGS)
            weakref.finalize(self, os.close, self._fd)
        return self._fd

    def _write(self, name: str, text: str) -> None:
        """Write a file of the run folder whole: a fresh temporary file, then renamed over the name."""
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, NEW_FILE, 0o644, dir_fd=self._dir())
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, name, src_dir_fd=self._dir(), dst_dir_fd=self._dir())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self._dir())
            raise

    # -- opening ------------------------------------------------------------------------------------

    @classmethod
    def create(cls, catalog_dir: Path, meta: dict[str, Any]) -> RunRecord:
        """Make a new run folder with its run.json."""
        runs = Path(catalog_dir) / RUNS_DIR
        runs.mkdir(parents=True, exist_ok=True)
        while True:
            folder = runs / new_run_id()
            try:
                folder.mkdir()
                break
            except FileExistsError:
                continue
        record = cls(folder)
        record.work.mkdir()
        record.write_meta({"id": record.id, "created_at": time.time(), "status": "running", **meta})
        return record

    @classmethod
    def open(cls, catalog_dir: Path, run_id: str) -> RunRecord:
        """Open an existing run; RunNotFound when there is none with that id (a unique prefix is enough)."""
        runs = Path(catalog_dir) / RUNS_DIR
        hint = "list runs with `dslake runs list`"
        if not run_id or "/" in run_id or run_id.startswith("."):
            raise RunNotFound(f"no run {run_id!r} in {runs}", hint=hint)
        folder = runs / run_id
        if not (folder / "run.json").is_file():
            matches = [p for p in runs.glob(f"{run_id}*") if (p / "run.json").is_file()] if runs.is_dir() else []
            if len(matches) != 1:
                what = f"{len(matches)} runs start with" if matches else "no run"
                raise RunNotFound(f"{what} {run_id!r} in {runs}", hint=hint)
            folder = matches[0]
        return cls(folder)

    @property
    def work(self) -> Path:
        """Return the folder scripts run in (the lake appears there as data/)."""
        return self.folder / "work"

    # -- writing ------------------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """Return run.json."""
        return _read_json(self.folder / "run.json") or {"id": self.id}

    def write_meta(self, meta: dict[str, Any]) -> None:
        """Replace run.json."""
        self._write("run.json", json.dumps(meta, indent=2, ensure_ascii=False, default=str))

    def set_status(self, status: str, error: str | None = None) -> None:
        """Record how the run stands: running, done, interrupted (resumable), aborted or failed."""
        meta = self.meta()
        meta.update(status=status, error=error, updated_at=time.time())
        self.write_meta(meta)

    def event(self, kind: str, **data: Any) -> None:
        """Append one event (an execution, a verdict, a route, a retrieval...) to trace.jsonl."""
        self._append({"type": kind, "at": time.time(), **data})

    def record_call(self, call: CallRecord) -> None:
        """Append one model call (the LLM call site's recorder)."""
        self._append(call.to_dict())

    def _append(self, data: dict[str, Any]) -> None:
        line = (json.dumps(data, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        with self._lock, open(os.open("trace.jsonl", flags, 0o644, dir_fd=self._dir()), "a+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    line = b"\n" + line  # a line torn by a crash stays alone (and is skipped when read)
            fh.write(line)

    # A record stores plain data (the agent's AgentState.to_dict() and Answer.to_dict()): runs/ sits below the
    # agent, which writes and reads its own objects through it.

    def save_state(self, state: dict[str, Any]) -> None:
        """Save the loop's state (what resume starts from) and the plan."""
        self._write("state.json", json.dumps(state, indent=1, ensure_ascii=False))
        self.write_plan(state)

    def load_state(self) -> dict[str, Any] | None:
        """Return the last saved state, or None when the run never finished its first checkpoint."""
        return _read_json(self.folder / "state.json") or None

    def write_plan(self, state: dict[str, Any]) -> None:
        """Write plan.md: the question, the current plan, and how the plan got there."""
        lines = [f"# Plan for: {state['question']}", ""]
        # A step's Assumption lines sit under it, indented into its list item.
        lines += [f"{i}. " + step.replace("\n", "\n   ") for i, step in enumerate(state["plan"], 1)] or [
            "(no steps yet)"]
        lines += ["", f"Rounds run: {state['round'] + 1}; backtracks: {state['backtracks']}; "
                      f"verified: {'yes' if state['verified'] else 'no'}."]
        for item in state["re_retrievals"]:
            lines.append(f"- missing data after round {item['round']}: {item['missing']!r} -> "
                         f"added {', '.join(item['added']) or 'nothing new'}")
        self._write("plan.md", "\n".join(lines) + "\n")

    def write_script(self, name: str, code: str, result: ExecResult | None) -> None:
        """Keep a script and what it printed (NAME.py, NAME.out) at the top of the run folder."""
        self._write(f"{name}.py", code)
        if result is not None:
            out = [result.stdout.rstrip("\n")]
            if result.stderr.strip():
                out += ["", "--- stderr ---", result.stderr.rstrip("\n")]
            out += ["", f"--- {result.describe()} ---"]
            self._write(f"{name}.out", "\n".join(out) + "\n")

    def keep_figures(self, script: str, images: dict[str, bytes]) -> list[str]:
        """Copy the images one script saved to figures/SCRIPT-NAME; return their run-relative paths.

        A copy per script, because a later round may overwrite the work folder's chart.png with another chart.
        """
        if not images:
            return []
        with contextlib.suppress(FileExistsError):
            os.mkdir(FIGURES_DIR, 0o755, dir_fd=self._dir())
        figures_fd = os.open(FIGURES_DIR, DIR_FLAGS, dir_fd=self._dir())
        kept = []
        try:
            for name, data in images.items():
                path = Path(name)
                target = f"{script}-{_slug(path.stem)}{path.suffix.lower()}"
                tmp = f".{target}.{secrets.token_hex(4)}.tmp"
                with open(os.open(tmp, NEW_FILE, 0o644, dir_fd=figures_fd), "wb") as fh:
                    fh.write(data)
                os.replace(tmp, target, src_dir_fd=figures_fd, dst_dir_fd=figures_fd)
                kept.append(f"{FIGURES_DIR}/{target}")
        finally:
            os.close(figures_fd)
        return kept

    def write_answer(self, answer: dict[str, Any]) -> None:
        """Write answer.json."""
        self._write("answer.json", json.dumps(answer, indent=2, ensure_ascii=False))

    # -- reading ------------------------------------------------------------------------------------

    def answer(self) -> dict[str, Any] | None:
        """Return answer.json, or None before the run ended."""
        return _read_json(self.folder / "answer.json")

    def trace(self) -> list[dict[str, Any]]:
        """Return every trace line (a line cut short by a crash is skipped)."""
        if not self.trace_path.exists():
            return []
        out = []
        for line in self.trace_path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out


def list_runs(catalog_dir: Path) -> list[dict[str, Any]]:
    """Return a summary of every run, newest first."""
    runs = Path(catalog_dir) / RUNS_DIR
    if not runs.is_dir():
        return []
    out = []
    for folder in sorted(runs.iterdir(), reverse=True):
        meta = _read_json(folder / "run.json")
        if meta is None:
            continue
        kind = meta.get("kind") or "ask"
        answer = _read_json(folder / "answer.json") or {}
        if kind == "report":  # a report's "answer" is its title; its totals are in report.json
            report = _read_json(folder / REPORT_JSON) or {}
            answer = {"value": report.get("title") or None, **{k: report.get(k) for k in ("rounds", "cost_usd",
                                                                                             "seconds")}}
        out.append({
            "id": folder.name, "kind": kind, "created_at": meta.get("created_at"), "status": meta.get("status"),
            "question": meta.get("question", ""), "answer": answer.get("value"), "verified": answer.get("verified"),
            "rounds": answer.get("rounds"), "cost_usd": answer.get("cost_usd"), "seconds": answer.get("seconds"),
            "error": meta.get("error"),
        })
    return out


def report_part(record: RunRecord) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """Return a report run's sub-questions (each naming its own run) and what it wrote; (None, None) for an ask."""
    if record.meta().get("kind") != "report":
        return None, None
    data = _read_json(record.folder / REPORT_JSON) or {}
    keys = ("n", "text", "round", "status", "verified", "run_id", "answer", "detail", "figures", "files_used")
    questions = [{k: q.get(k) for k in keys} for q in data.get("questions") or [] if isinstance(q, dict)]
    summary = {k: data.get(k) for k in ("title", "files", "rounds", "notes", "problems")}
    return questions, summary


def show_run(record: RunRecord) -> dict[str, Any]:
    """Return one run for display: meta, plan, rounds (scripts, results, verdicts, routes), answer, calls by role."""
    trace = record.trace()
    state = record.load_state()
    rounds: dict[int, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for item in trace:
        kind = item.get("type")
        if kind == "llm_call":
            role = calls.setdefault(item["role"], {"calls": 0, "input_tokens": 0, "output_tokens": 0,
                                                   "cost_usd": 0.0, "errors": 0})
            role["calls"] += 1
            role["input_tokens"] += item.get("input_tokens") or 0
            role["output_tokens"] += item.get("output_tokens") or 0
            role["cost_usd"] += item.get("cost_usd") or 0.0
            role["errors"] += bool(item.get("error"))
        elif kind in ("exec", "verdict", "route", "step", "read_added") and isinstance(item.get("round"), int):
            slot = rounds.setdefault(item["round"], {"round": item["round"], "scripts": []})
            if kind == "exec":
                slot["scripts"].append({k: item.get(k) for k in ("name", "ok", "outcome", "stdout_head", "reads",
                                                                 "figures", "trace_problems")})
            elif kind == "verdict":
                slot["sufficient"] = item.get("sufficient")
            elif kind == "route":
                slot["route"] = item.get("route")
            elif kind == "read_added":
                slot["read_added"] = item.get("added") or []
            else:
                slot["step"] = item.get("step")
    questions, report = report_part(record)
    answer = record.answer()
    return {
        "meta": record.meta(),
        "folder": str(record.folder),
        # A report run has no plan of its own: its sub-questions, each answered by its own run (run_id).
        "questions": questions,
        "report": report,
        "plan": state["plan"] if state else [],
        "context": [e["path"] for e in state["entries"]] if state else [],
        "re_retrievals": state["re_retrievals"] if state else [],
        "rounds": [rounds[k] for k in sorted(rounds)],
        "calls": calls,
        "answer": answer,
        "selection": run_selection(trace, state, answer),
    }


def run_selection(trace: list[dict[str, Any]], *records: dict[str, Any] | None) -> dict[str, Any] | None:
    """Return the entries chosen for a run's first round: {by, entries [{path, reason}], menu [paths]}, or None.

    The trace's first selection event says it with the menu it was chosen from; files given (--files) have no such
    event, and the first of the records (the saved state, the answer) that holds `selected_by` says it then.
    None for a run from before the selection existed, and for a report (its sub-questions' runs select).
    """
    for item in trace:
        if item.get("type") == "selection":
            return {"by": str(item.get("by") or ""), "entries": _path_reasons(item.get("entries")),
                    "menu": [str(p) for p in item.get("menu") or [] if isinstance(p, str)]}
    for data in records:
        if data and data.get("selected_by"):
            return {"by": str(data["selected_by"]), "entries": _path_reasons(data.get("selection")), "menu": []}
    return None


def _path_reasons(entries: Any) -> list[dict[str, str]]:
    """Return a selection's entries as {path, reason} strings (a record is read, not trusted to be well formed)."""
    return [{"path": str(e.get("path") or ""), "reason": str(e.get("reason") or "")}
            for e in entries or [] if isinstance(e, dict) and e.get("path")]
