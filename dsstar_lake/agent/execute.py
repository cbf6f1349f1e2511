"""Run a script in the sandbox, keep it in the run record, and send failures to the debugger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsstar_lake.agent import debugger
from dsstar_lake.agent.errors import LakeModified
from dsstar_lake.agent.runtime import Agent
from dsstar_lake.agent.state import AgentState
from dsstar_lake.sandbox.figures import image_files, saved_figures

if TYPE_CHECKING:
    from dsstar_lake.sandbox.result import ExecResult


# What a cut output keeps of the limit from its head; the rest goes to its tail, where scripts print their results
# (the head mostly says how the data was loaded).
HEAD_SHARE = 0.4


def cap(text: str, limit: int) -> str:
    """Keep the head and (more of) the tail of a long text in whole lines, saying which lines were cut and how to see
    them; a line longer than its share is cut inside (a whole table printed on one line)."""
    if limit <= 0 or len(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    head_n = _fitting(lines, int(limit * HEAD_SHARE))
    tail_n = _fitting(lines[head_n:][::-1], limit - sum(len(line) for line in lines[:head_n]))
    if head_n and tail_n:
        head, tail = "".join(lines[:head_n]), "".join(lines[len(lines) - tail_n:])
        first, last = head_n + 1, len(lines) - tail_n
        which = f"lines {first}-{last} of {len(lines)}" if last > first else f"line {first} of {len(lines)}"
    else:  # a line longer than its share: cut inside it
        head_chars = int(limit * HEAD_SHARE)
        head, tail = text[:head_chars], text[len(text) - (limit - head_chars):]
        which = "the middle"
    cut = len(text) - len(head) - len(tail)
    note = (f"[... {which} ({cut:,} characters) cut here: the output was {len(text):,} characters and only "
            f"{limit:,} are shown. To see what was cut, print only those rows (a filter, a slice) or a summary "
            "of them ...]")
    return f"{head}{'' if head.endswith(chr(10)) else chr(10)}{note}\n{tail}"


def _fitting(lines: list[str], budget: int) -> int:
    """Return how many of the lines, from the first, fit in the budget of characters."""
    used = taken = 0
    for line in lines:
        if used + len(line) > budget:
            break
        used, taken = used + len(line), taken + 1
    return taken


def observation(result: ExecResult, limit: int) -> str:
    """Return what the next prompts see of an execution: its output, and the error when it failed."""
    out = result.stdout.strip("\n")
    if result.ok:
        return cap(out, limit) if out.strip() else "(the script ran without error but printed nothing)"
    bug = error_report(result)
    return cap((out + "\n" if out.strip() else "") + f"[the script failed: {result.describe()}]\n{bug}", limit)


def error_report(result: ExecResult) -> str:
    """Return the error to debug: the traceback, else the end of stderr, else how the script ended."""
    if result.traceback:
        return result.traceback
    if result.stderr.strip():
        return result.stderr.strip()[-4000:]
    return f"The script stopped with no Python traceback: {result.describe()}."


def run_once(agent: Agent, state: AgentState, code: str, name: str, round_no: int, last: bool = False) -> ExecResult:
    """Run one script, record it and its output, and abort the run if it changed the lake.

    last: no script is expected after this one (the final script), so none is started ahead for it.
    """
    agent.events.emit("exec_start", round=round_no, name=name)
    # The context files are checked for changes even where the bounded walk of the lake does not reach them.
    watch = [e.path for e in state.entries if e.kind == "file"]
    before = image_files(agent.record.work)
    result = agent.sandbox.run(code, agent.record.work, name=f"{name}.py", watch=watch,
                               context=[e.path for e in state.entries], last=last)
    state.reads = list(dict.fromkeys(state.reads + result.reads))
    state.trace_problems += [f"{name}.py: {problem}" for problem in result.trace_problems]
    agent.record.write_script(name, code, result)
    figures = agent.record.keep_figures(name, saved_figures(agent.record.work, before))
    agent.events.emit(
        "exec", round=round_no, name=name, ok=result.ok, returncode=result.returncode, outcome=result.describe(),
        killed_by=result.killed_by, duration_s=result.duration_s, stdout_bytes=result.stdout_bytes,
        stderr_bytes=result.stderr_bytes, stdout_head=result.stdout[:500], lake_modified=result.lake_modified,
        catalog_modified=result.catalog_modified, reads=result.reads,
        traceback=(result.traceback or "")[-2000:] or None, figures=figures,
        **({"notes": result.notes} if result.notes else {}),
        **({"trace_problems": result.trace_problems} if result.trace_problems else {}),
    )
    if result.lake_modified or result.catalog_modified:
        what = "the lake" if result.lake_modified else "dslake's catalog"
        shown = ", ".join((result.lake_modified or result.catalog_modified)[:5])
        # Anything the script wrote in the catalog would reach later prompts: the run marks the catalog caught, and
        # it is read again only once rebuilt from the lake (index/caught.py).
        check = ("rebuild the catalog: dslake index LAKE --rebuild (it is not read until then)"
                 if result.catalog_modified else "check those files")
        raise LakeModified(
            f"a script of run {agent.record.id} changed {what} ({shown}); the run was stopped",
            hint=f"{check}; the script is {agent.record.folder / (name + '.py')}; install bubblewrap "
                 "so that the lake is mounted read-only and the catalog hidden",
            catalog_paths=result.catalog_modified,
        )
    return result


def run_with_debugging(agent: Agent, state: AgentState, code: str, name: str, round_no: int,
                       max_debug: int | None = None, last: bool = False) -> tuple[str, ExecResult]:
    """Run a script; while it fails, let the debugger fix it (up to agent.max_debug times).

    last: the final script; a fix of it gets its sandbox started while the debugger is asked.
    """
    result = run_once(agent, state, code, name, round_no, last)
    attempts = agent.max_debug if max_debug is None else max_debug
    for attempt in range(1, attempts + 1):
        if result.ok:
            break
        if last:
            agent.sandbox.warm(agent.record.work)
        bug = error_report(result)
        if len(bug) > agent.summarize_over_chars:
            bug = debugger.shorten_error(agent, bug, f"{name}.py", round_no)
        code = debugger.fix(agent, state, code, bug, round_no)
        result = run_once(agent, state, code, f"{name}_fix{attempt}", round_no, last)
    return code, result
