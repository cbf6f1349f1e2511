"""Analyzer (G.1): describe one file the paper's way; the model writes a script, the sandbox runs it, the debugger fixes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dsstar_lake.agent.errors import LakeModified
from dsstar_lake.agent.execute import cap, error_report
from dsstar_lake.agent.parse import extract_code
from dsstar_lake.agent.prompts import fill, printed
from dsstar_lake.agent.version_notes import with_notes
from dsstar_lake.base.untrusted import fence, frame, quote

if TYPE_CHECKING:
    from dsstar_lake.llm.call import LLM
    from dsstar_lake.sandbox.core import Sandbox


@dataclass
class Analysis:
    """The outcome of analysing one file: the description (None when no script ever ran) and how it went."""

    path: str
    description: str | None
    script: str
    attempts: int
    errors: list[str] = field(default_factory=list)


def _code(llm: LLM, role: str, prompt: str) -> str:
    text = llm.complete(role, prompt).text
    return extract_code(text) or (text or "").strip() + "\n"


def analyze_file(
    path: str,
    llm: LLM,
    sandbox: Sandbox,
    workdir: Path,
    max_debug: int = 3,
    max_chars: int = 8000,
    summarize_over_chars: int = 1500,
) -> Analysis:
    """Describe lake file `path` (lake-relative) from what a model-written script prints about it."""
    shown = quote(f"data/{path}")  # one literal on one line, whatever the name holds
    code = _code(llm, "analyzer", fill("analyzer", path=shown))
    errors: list[str] = []
    for attempt in range(max_debug + 1):
        result = sandbox.run(code, workdir, name="describe.py", watch=[path])
        if result.ok and result.stdout.strip():
            return Analysis(path, cap(result.stdout.strip(), max_chars), code, attempt + 1, errors)
        bug = error_report(result) if not result.ok else "The script printed nothing; it must print the description."
        errors.append(bug[-500:])
        if result.catalog_modified:  # what it wrote there would reach every prompt: the index stops (caught.py)
            raise LakeModified(f"an analyzer script for {shown} changed dslake's catalog "
                               f"({', '.join(result.catalog_modified[:5])}); the index was stopped",
                               hint="rebuild the catalog: dslake index LAKE --rebuild (it is not read until then); "
                                    "install bubblewrap so that the catalog is hidden from scripts",
                               catalog_paths=result.catalog_modified)
        if attempt == max_debug or result.lake_modified:
            break
        if len(bug) > summarize_over_chars:
            shorten = fill("debugger_shorten", bug=printed(bug), filename="describe.py")
            bug = llm.complete("debugger", shorten).text
        data = frame("(the file to describe)", "data", path=f"data/{path}")
        prompt = fill("debugger_fix", filenames=shown, data=data, code=fence(code), bug=printed(bug),
                        question=f"Describe {shown}: what a coder needs to load it correctly.",
                        packages=with_notes(sandbox.packages(), sandbox.versions()), output_chars=str(max_chars))
        code = _code(llm, "debugger", prompt)
    return Analysis(path, None, code, len(errors), errors)
