"""Writer: the report from the evidence (first draft, refinement), and one fix when the check fails."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dsstar_lake.agent.readings import as_text, from_record
from dsstar_lake.base.untrusted import frame, visible
from dsstar_lake.report.citations import Check
from dsstar_lake.report.prompts import fill
from dsstar_lake.report.questions import SubQuestion

if TYPE_CHECKING:
    from dsstar_lake.llm.call import LLM

MAX_ANSWER_CHARS = 4000  # of one answer, in the writer's evidence (the appendix keeps it whole)
WHOLE_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[ \t]*(?:markdown|md)?[ \t]*\n(?P<body>.*)\n[ \t]*\1\s*$",
                         re.S | re.I)


def evidence(questions: list[SubQuestion]) -> str:
    """Return the numbered sub-questions with their answers and figures, as the writer sees them."""
    parts = []
    for q in questions:
        # The question (model-written) stays on its line; the answer (what a script printed) sits in a frame.
        lines = [f"[{q.n}] {visible(q.text)}"]
        if q.answered:
            answer = q.answer if len(q.answer) <= MAX_ANSWER_CHARS else q.answer[:MAX_ANSWER_CHARS] + " [...]"
            lines.append("Answer" + ("" if q.verified else " (not verified)") + ":\n" + frame(answer, "output"))
            readings = as_text(from_record(q.assumptions, q.alternatives))
            if readings:
                lines.append("The reading it rests on:\n" + frame(readings, "output"))
            lines += [f"Figure: {f}" for f in q.figures]
        else:
            lines.append(f"Unanswered: {visible(q.detail or 'no answer')} (do not cite)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) or "(no evidence)"


def clean(text: str) -> str:
    """Return the report without a fence wrapped around the whole of it."""
    text = (text or "").strip()
    found = WHOLE_FENCE.match(text)
    return found["body"].strip() if found else text


def first_draft(llm: LLM, request: str, filenames: str, questions: list[SubQuestion]) -> str:
    """Write the first report from the evidence."""
    prompt = fill("writer_first", request=request, filenames=filenames, evidence=evidence(questions))
    return clean(llm.complete("writer", prompt).text)


def refine(llm: LLM, request: str, filenames: str, questions: list[SubQuestion], new: list[SubQuestion],
           report: str) -> str:
    """Rewrite the report with the new sub-questions' evidence."""
    numbers = ", ".join(f"[{q.n}]" for q in new) or "(none)"
    prompt = fill("writer_refine", request=request, filenames=filenames, evidence=evidence(questions),
                    new=numbers, report=report)
    return clean(llm.complete("writer", prompt).text)


def fix(llm: LLM, report: str, found: Check, questions: list[SubQuestion]) -> str:
    """Ask the writer once to correct what the check found; return the corrected report."""
    citable = "\n".join(f"[{q.n}] {visible(q.text)}" for q in questions if q.answered) or "(none)"
    figures = "\n".join(f for q in questions for f in q.figures) or "(none)"
    problems = "\n".join(f"- {line}" for line in found.problems(questions))
    prompt = fill("writer_fix", report=report, problems=problems, citable=citable, figures=figures)
    return clean(llm.complete("writer", prompt).text)
