"""The manual provider: prompt files answered by another thread, numbering, timeout, cancel, Ctrl-C, terminal."""

from __future__ import annotations

import io
import os
import signal
import threading
import time

import pytest
from llm_harness import llm_settings

from dsstar_lake.base.errors import ModelNotConfigured, ProviderError
from dsstar_lake.llm import LLM
from dsstar_lake.llm.manual import ManualProvider


class Answerer(threading.Thread):
    """Answer every prompt file in a folder with 'answer to <first line>' until stopped."""

    def __init__(self, folder):
        super().__init__(daemon=True)
        self.folder = folder
        self.stop = threading.Event()
        self.answered: list[str] = []

    def run(self):
        while not self.stop.is_set():
            for prompt in sorted(self.folder.glob("*.prompt.md")):
                response = prompt.with_name(prompt.name.replace(".prompt.md", ".response.md"))
                if not response.exists():
                    first = prompt.read_text().splitlines()[0]
                    response.write_text(f"answer to {first}\n")
                    self.answered.append(prompt.name)
            self.stop.wait(0.01)


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "manual"


def make(folder, **kwargs):
    kwargs.setdefault("timeout_s", 30.0)
    return ManualProvider(folder, poll_s=0.01, notify=kwargs.pop("notify", lambda message: None), **kwargs)


def test_prompt_files_are_answered_in_order(folder):
    provider = make(folder)
    answerer = Answerer(folder)
    answerer.start()
    try:
        llm = LLM(llm_settings(provider="manual"), provider=provider)
        first = llm.complete("planner", "plan this")
        second = llm.complete("coder", "code that", system="you write python")
    finally:
        answerer.stop.set()
    assert first.text == "answer to plan this"
    assert second.text == "answer to you write python"
    assert answerer.answered == ["0001-planner.prompt.md", "0002-coder.prompt.md"]
    assert (folder / "0002-coder.prompt.md").read_text() == "you write python\n\ncode that"
    assert first.provider == "manual" and first.output_tokens > 0


def test_each_prompt_names_its_run_and_two_runs_on_one_folder_never_share_a_number(folder):
    import json

    answerer = Answerer(folder)
    answerer.start()
    try:  # two runs, each with its own provider on the same folder, asking at once (as `dslake serve` does)
        calls = [threading.Thread(target=LLM(llm_settings(provider="manual"), provider=make(folder),
                                             run_id=run).complete, args=("planner", f"plan for {run}"))
                 for run in ("run-a", "run-b")]
        for call in calls:
            call.start()
        for call in calls:
            call.join(30)
    finally:
        answerer.stop.set()
    metas = {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("*.meta.json"))}
    assert list(metas) == ["0001-planner.meta.json", "0002-planner.meta.json"]
    assert {m["run_id"] for m in metas.values()} == {"run-a", "run-b"}
    assert {m["role"] for m in metas.values()} == {"planner"}
    for name, meta in metas.items():  # each prompt is the one its run asked
        assert (folder / name.replace(".meta.json", ".prompt.md")).read_text() == f"plan for {meta['run_id']}"


def test_numbering_continues_after_existing_files(folder):
    folder.mkdir()
    (folder / "0007-writer.prompt.md").write_text("old")
    (folder / "0007-writer.response.md").write_text("old answer")
    provider = make(folder)
    answerer = Answerer(folder)
    answerer.start()
    try:
        provider.complete("m", "new prompt", None, None, role="writer")
    finally:
        answerer.stop.set()
    assert (folder / "0008-writer.prompt.md").read_text() == "new prompt"


def test_empty_response_file_is_not_taken(folder):
    provider = make(folder)
    result = {}
    worker = threading.Thread(target=lambda: result.update(c=provider.complete("m", "q", None, None, role="router")))
    worker.start()
    response = folder / "0001-router.response.md"
    while not (folder / "0001-router.prompt.md").exists():
        time.sleep(0.01)
    response.write_text("")
    time.sleep(0.1)  # several polls see the empty file
    assert worker.is_alive()
    response.write_text("Add Step")
    worker.join(10)
    assert result["c"].text == "Add Step"


def test_timeout_ends_with_a_clear_error_and_keeps_the_prompt(folder):
    provider = make(folder, timeout_s=0.1)
    with pytest.raises(ProviderError, match=r"no answer in .*0001-verifier.response.md after 0.1 s"):
        LLM(llm_settings(provider="manual"), provider=provider).complete("verifier", "is it done?")
    assert (folder / "0001-verifier.prompt.md").read_text() == "is it done?"


def test_cancel_ends_the_wait(folder):
    notified = threading.Event()
    provider = make(folder, notify=lambda message: notified.set())
    errors = []

    def ask():
        try:
            provider.complete("m", "q", None, None, role="planner")
        except ProviderError as exc:
            errors.append(str(exc))

    worker = threading.Thread(target=ask)
    worker.start()
    assert notified.wait(10)
    provider.cancel()
    worker.join(10)
    assert not worker.is_alive()
    assert errors and "cancelled while waiting" in errors[0]


def test_ctrl_c_stops_the_wait_as_an_interrupt_and_says_where_the_prompt_stays(folder):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach only the main thread")
    notified = threading.Event()
    messages: list[str] = []
    provider = make(folder, notify=lambda message: (messages.append(message), notified.set()))

    def interrupt():
        notified.wait(10)
        time.sleep(0.2)  # let the main thread get into its wait loop
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):  # not a ProviderError: the person stopped the command
        provider.complete("m", "q", None, None, role="planner")
    assert "interrupted while waiting" in messages[-1] and "0001-planner.prompt.md" in messages[-1]


def test_terminal_mode_reads_up_to_eof_line():
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"line one\nline two\nEOF\nnot part of it\n")
    output = io.StringIO()
    with os.fdopen(read_fd) as source:
        provider = ManualProvider(None, timeout_s=5, poll_s=0.01, input=source, output=output)
        completion = provider.complete("gemini-2.5-pro", "the prompt", None, None, role="coder")
    os.close(write_fd)
    assert completion.text == "line one\nline two"
    assert "the prompt" in output.getvalue() and "EOF" in output.getvalue()


def test_terminal_mode_timeout():
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(read_fd) as source:
            provider = ManualProvider(None, timeout_s=0.1, poll_s=0.01, input=source, output=io.StringIO())
            with pytest.raises(ProviderError, match="no answer on stdin after 0.1 s"):
                provider.complete("m", "q", None, None, role="coder")
    finally:
        os.close(write_fd)


def test_no_folder_and_no_terminal_is_a_configuration_error(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(ModelNotConfigured, match="manual_dir"):
        ManualProvider(None)


def test_a_person_answering_is_named_manual_and_costs_nothing(folder):
    told: list[str] = []
    provider = make(folder, notify=told.append)
    answerer = Answerer(folder)
    answerer.start()
    try:
        llm = LLM(llm_settings(provider="manual"), provider=provider)
        answer = llm.complete("planner", "plan this " * 400)
        named = LLM(llm_settings(provider="manual", model="gemini-2.5-pro"), provider=provider)
        priced_name = named.complete("coder", "code that " * 400)
    finally:
        answerer.stop.set()
    assert answer.model == "manual" and llm.totals.cost_usd == 0.0
    assert "prompt for planner (manual)" in told[0]
    assert priced_name.model == "gemini-2.5-pro" and named.totals.cost_usd == 0.0  # named, still a person
