"""A person is the model: prompts go to files (or the terminal) and answers come back the same way.

With a folder, call N of role R writes `DIR/NNNN-R.prompt.md` and waits for `DIR/NNNN-R.response.md`
(non-empty and unchanged over one poll, so a half-saved file is not taken). `DIR/NNNN-R.meta.json`, written
first, says which run asks (run_id), the role and the model, so a page can show each run its own prompts. Without a folder, on a
terminal, the prompt is printed to stderr and the answer is read from stdin up to a line `EOF`.
A timeout or `cancel()` ends the wait with a ProviderError; Ctrl-C stops the command (the run stays resumable);
the prompt file stays for later.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from dsstar_lake.base.errors import ModelNotConfigured, ProviderError
from dsstar_lake.llm.base import CALLING_RUN, Completion, estimate_tokens

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

NUMBERED = re.compile(r"^(\d{4,})-")
_FOLDER_LOCK = threading.Lock()  # numbering across the providers of one process (each run makes its own)
END_LINE = "EOF"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class ManualProvider:
    """Hand each prompt to a person through a folder or the terminal, and wait for the answer."""

    # What the registry (llm/registry.py) and `dslake models` know of this provider, declared here.
    name = "manual"
    key_vars: tuple[str, ...] = ()  # a person needs no key
    needs_key = False
    base_url_var = None
    default_base_url = None
    # Off a terminal the person is reached only through files: that is the fix, not another provider.
    fix_hint = ("give a folder with --manual-dir DIR (llm.manual_dir): each prompt is written there as "
                "NNNN-ROLE.prompt.md, and its answer is read from NNNN-ROLE.response.md beside it")

    @classmethod
    def credentials(cls, settings: Settings) -> tuple[bool, str]:
        """Return (usable, how the person is reached): a folder, or this terminal."""
        if settings.llm.manual_dir:
            return True, f"a person, through files in {settings.llm.manual_dir}"
        if sys.stdin.isatty():
            return True, "a person, on this terminal"
        return False, "none: stdin is not a terminal; give a folder for the prompts with --manual-dir DIR"

    def __init__(
        self,
        directory: str | Path | None = None,
        timeout_s: float = 3600.0,
        poll_s: float = 0.2,
        input: TextIO | None = None,
        output: TextIO | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = Path(directory) if directory else None
        self.timeout_s = timeout_s
        self.poll_s = poll_s
        self._input = input
        self._output = output
        self._notify = notify or _stderr
        self._cancelled = threading.Event()
        self._lock = threading.Lock()  # numbering, and one prompt at a time on a terminal
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._next = self._first_free_number()
        else:
            self._next = 1
            if input is None and not sys.stdin.isatty():
                raise ModelNotConfigured(
                    "manual: stdin is not a terminal; give a folder for prompt and response files "
                    "(llm.manual_dir, e.g. --manual-dir DIR)"
                )

    @classmethod
    def from_settings(cls, settings: Settings) -> ManualProvider:
        """Build from llm.manual_dir and llm.manual_timeout_s."""
        return cls(settings.llm.manual_dir or None, settings.llm.manual_timeout_s)

    def cancel(self) -> None:
        """End the current and every later wait with a ProviderError."""
        self._cancelled.set()

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings, role: str = ""
    ) -> Completion:
        """Show the prompt to the person and return what they answer."""
        text = f"{system}\n\n{prompt}" if system else prompt
        start = time.perf_counter()
        if self.directory is not None:
            answer = self._via_files(role, model, text)
        else:
            with self._lock:
                answer = self._via_terminal(role, model, text)
        return Completion(
            text=answer,
            input_tokens=estimate_tokens(text),
            output_tokens=estimate_tokens(answer),
            latency_s=time.perf_counter() - start,
            model=model,
            provider=self.name,
        )

    def _first_free_number(self) -> int:
        assert self.directory is not None
        numbers = [int(m[1]) for p in self.directory.iterdir() if (m := NUMBERED.match(p.name))]
        return max(numbers, default=0) + 1

    def _claim(self, role: str, model: str) -> str:
        """Take the next free number for a prompt (also against other providers on the folder): its stem.

        Several runs may share one folder (asks started from `dslake serve`): the number is taken by creating
        the meta file exclusively, after a fresh look at the folder, so two runs never write one prompt file.
        """
        assert self.directory is not None
        meta = {"run_id": CALLING_RUN.get(), "role": role, "model": model, "created_at": time.time()}
        with self._lock, _FOLDER_LOCK:
            number = max(self._next, self._first_free_number())
            while True:
                stem = f"{number:04d}-{_slug(role)}"
                try:
                    fd = os.open(self.directory / f"{stem}.meta.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                    break
                except FileExistsError:
                    number += 1
            self._next = number + 1
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(meta, fh)
        return stem

    def _via_files(self, role: str, model: str, text: str) -> str:
        assert self.directory is not None
        stem = self._claim(role, model)
        prompt_path = self.directory / f"{stem}.prompt.md"
        response_path = self.directory / f"{stem}.response.md"
        partial = prompt_path.with_suffix(".md.part")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, prompt_path)  # a watcher never sees half a prompt
        self._notify(f"manual: prompt for {role or 'model'} ({model}) in {prompt_path}; "
                     f"save the answer as {response_path.name}")
        return self._wait_for(response_path, prompt_path)

    def _wait_for(self, response_path: Path, prompt_path: Path) -> str:
        deadline = time.monotonic() + self.timeout_s
        seen: tuple[int, int] | None = None
        try:
            while True:
                if self._cancelled.is_set():
                    raise ProviderError(f"manual: cancelled while waiting for {response_path}; "
                                        f"the prompt stays in {prompt_path}")
                try:
                    st = response_path.stat()
                    current: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
                except FileNotFoundError:
                    current = None
                if current is not None and current[0] > 0 and current == seen:
                    return response_path.read_text(encoding="utf-8").strip()
                seen = current
                if time.monotonic() >= deadline:
                    raise ProviderError(
                        f"manual: no answer in {response_path} after {self.timeout_s:g} s; write it there and "
                        f"run again (the prompt is in {prompt_path}), or raise llm.manual_timeout_s"
                    )
                self._cancelled.wait(self.poll_s)
        except KeyboardInterrupt:
            # Ctrl-C is the person stopping the command (exit 130, the run resumable), not a model that failed.
            self._notify(f"manual: interrupted while waiting for {response_path.name}; the prompt stays in "
                         f"{prompt_path}")
            raise

    def _via_terminal(self, role: str, model: str, text: str) -> str:
        out = self._output or sys.stderr
        number = self._next
        self._next += 1
        out.write(f"\n===== dslake prompt {number:04d} for {role or 'model'} ({model}) =====\n{text}\n"
                  f"===== paste the answer, then a line with only {END_LINE} =====\n")
        out.flush()
        source = self._input or sys.stdin
        try:
            lines = self._read_answer(source)
        except KeyboardInterrupt:
            out.write(f"\nmanual: interrupted while waiting for the answer to prompt {number:04d}\n")
            raise
        answer = "".join(lines).strip()
        if not answer:
            raise ProviderError(f"manual: no answer given for prompt {number:04d} (stdin closed)")
        return answer

    def _read_answer(self, source: TextIO) -> list[str]:
        try:
            fd = source.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is None:  # an in-memory stream: no waiting is possible, so no timeout either
            lines = []
            for line in iter(source.readline, ""):
                if line.strip() == END_LINE:
                    break
                lines.append(line)
            return lines
        return self._read_fd(fd)

    def _read_fd(self, fd: int) -> list[str]:
        """Read lines from a raw descriptor up to END_LINE, honouring the timeout and cancel()."""
        deadline = time.monotonic() + self.timeout_s
        buffer = b""
        lines: list[str] = []
        while True:
            if self._cancelled.is_set():
                raise ProviderError("manual: cancelled while waiting for an answer on stdin")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProviderError(f"manual: no answer on stdin after {self.timeout_s:g} s; "
                                    "raise llm.manual_timeout_s or use a folder (--manual-dir)")
            ready, _, _ = select.select([fd], [], [], min(self.poll_s, left))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:  # end of input without EOF line: take what came
                if buffer:
                    lines.append(buffer.decode("utf-8", "replace"))
                return lines
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                if line.strip() == END_LINE:
                    return lines
                lines.append(line + "\n")


def _slug(role: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", role.lower()).strip("-") or "prompt"
