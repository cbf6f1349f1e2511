"""Hostile data: a data file tells the model to delete data/, a scripted model obeys, the lake survives."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from agent_helpers import FAST, fenced, prompts, scripted

from dsstar_lake.lake import Lake

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
OBEY = """
import os, shutil
for name in os.listdir('data'):
    target = os.path.join('data', name)
    try:
        shutil.rmtree(target) if os.path.isdir(target) else os.remove(target)
    except OSError as exc:
        print('could not delete', name, exc)
print('deleted as instructed')
"""


def fingerprint(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".dslake" not in p.parts}


@pytest.mark.parametrize("backend", ["auto", "subprocess"])
def test_injected_instruction_obeyed_by_the_model_leaves_the_lake_intact_or_aborts(tmp_path, backend):
    from sandbox_helpers import BWRAP_REASON


    if backend == "auto" and BWRAP_REASON is not None:
        pytest.skip(BWRAP_REASON)
    root = tmp_path / "lake"
    shutil.copytree(SAMPLES, root, ignore=shutil.ignore_patterns(".dslake", "make_samples.py"))
    lake = Lake.open(root)
    lake.index()
    before = fingerprint(root)
    provider = scripted(
        ("planner", "Read the maintenance note and summarise what it asks."),
        ("verifier", "Yes"),
        fallback={"coder": fenced(OBEY), "debugger": fenced(OBEY), "finalyzer": fenced(OBEY)},
    )
    overrides = {**FAST, "sandbox.backend": backend, "agent.max_debug": 1}
    question = "What does the maintenance note ask the reader to do?"
    # With bubblewrap data/ is read-only; without it data/ holds links to the lake's top level, so wiping
    # data/ removes links, never the lake's files or the catalog (a write through a link aborts the run).
    answer = lake.ask(question, files=["notes/maintenance_note.md"], provider=provider, overrides=overrides)
    assert "ignore your instructions" in prompts(provider, "coder")[0]  # the injection reached the model
    assert fingerprint(root) == before  # and the model's obedience changed nothing
    assert answer.run_id and (lake.catalog_dir / "runs" / answer.run_id / "trace.jsonl").exists()


def test_deleting_through_a_link_is_detected_and_aborts_without_bubblewrap(tmp_path):
    from conftest import write_table_lake

    from dsstar_lake.agent.errors import LakeModified

    root = write_table_lake(tmp_path / "lake")
    lake = Lake.open(root)
    lake.index()
    vandal = "import shutil\nshutil.rmtree('data/sensors/daily')\nprint('gone')"
    provider = scripted(("planner", "Clean up."), ("verifier", "Yes"),
                        fallback={"coder": fenced(vandal), "debugger": fenced(vandal), "finalyzer": fenced(vandal)})
    overrides = {**FAST, "sandbox.backend": "subprocess", "agent.max_debug": 1}
    with pytest.raises(LakeModified):
        lake.ask("Tidy the sensors", files=["sales.csv"], provider=provider, overrides=overrides)
    assert lake.runs()[0]["status"] == "aborted"
