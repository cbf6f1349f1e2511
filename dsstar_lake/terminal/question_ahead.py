"""A cold `dslake search`'s question, embedded in a child process while the command starts.

Most of a cold search is the question's embedding: importing numpy, onnxruntime and tokenizers, loading the
tokenizer, opening the ONNX session (~0.45 s of ~0.76 s on an idle 2-core machine). None of it needs the catalog,
and importing click, rich and the facade, resolving the settings and opening the catalog (~0.3 s) need none of the
model. A thread cannot run the two side by side: imports hold the GIL, and so does most of the rest (only the
session's creation lets it go). So when the `dslake` console script starts a search, cli.py calls
start_from_console_script() before importing anything else: it forks, and the child embeds the question with the
packaged [embed] defaults exactly as the search would (Embedder.load_quick: the same ONNX session over the same
files), then sends the vector back through a pipe. The search takes it (hand_to, Embedder.expect) only when the
question it parsed and its resolved [embed] settings are the child's; otherwise, or when the child could not embed
without writing or falling back (no export yet, an optimised copy to make, an error), the model loads in-process
as before, warnings and errors included. A child whose vector is not taken is killed at exit.

Only on Linux, from the console script, and before any thread exists: forking a process with threads (a test
runner, a server) could copy a lock some thread holds.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
from typing import Any

CONSOLE_SCRIPT = "dslake"
# The search command's options that take a value, and its flags (cli.py's `search`); any other option: no child.
_VALUED = ("--lake", "--catalog", "--chroma-url", "-k")
_FLAGS = ("-v", "--verbose", "--json", "--csv", "--nl")
WAIT_SECONDS = 30.0  # the child answers in well under a second; past this it is killed and the search embeds


def question_of(argv: list[str]) -> str | None:
    """Return QUESTION of `search QUESTION [LAKE] [options]`, or None for any other command or an unknown option."""
    if argv[:1] != ["search"]:
        return None
    words = iter(argv[1:])
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif word.startswith(tuple(f"{o}=" for o in _VALUED if o.startswith("--"))) or word in _FLAGS:
            continue
        elif word == "--":
            return next(words, None)
        elif word.startswith("-") and word != "-":
            return None  # --help, an option of a later version, a typo: the CLI says what it is
        else:
            return word
    return None


def default_settings() -> Any:
    """Return the packaged [embed] defaults as EmbedSettings (what a search uses unless a config or flag says else)."""
    import tomllib

    from dslake_index.sections import EmbedSettings

    from dsstar_lake.base.settings_inputs import DEFAULTS_FILE

    with open(DEFAULTS_FILE, "rb") as fh:
        return EmbedSettings(**tomllib.load(fh)["embed"])


class QuestionAhead:
    """The child process embedding one question, and the pipe its vector comes back through."""

    def __init__(self, question: str, pid: int, fd: int) -> None:
        self.question = question
        self.pid = pid
        self._fd: int | None = fd
        atexit.register(self.cancel)

    @classmethod
    def start(cls, question: str) -> QuestionAhead | None:
        """Fork a child that embeds question; None when this process cannot (no fork, threads running)."""
        threading = sys.modules.get("threading")
        if not hasattr(os, "fork") or (threading is not None and threading.active_count() > 1):
            return None
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _embed_in_child(question, write_fd)
        os.close(write_fd)
        return cls(question, pid, read_fd)

    def key(self) -> tuple[str, int, int, str, str]:
        """Return the settings_key of the child's embedder (the packaged defaults)."""
        from dslake_index.front_door import embedder_for

        return embedder_for(default_settings()).settings_key()

    def vector(self) -> bytes | None:
        """Wait for the child; return its vector (float32 bytes), or None when it did not embed the question."""
        fd, self._fd = self._fd, None
        if fd is None:
            return None
        import select
        import time

        chunks = []
        deadline = time.monotonic() + WAIT_SECONDS
        try:
            while select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            else:  # a child that hangs: the search embeds the question itself
                self._kill()
                return None
        except BaseException:  # Ctrl-C while waiting: the child goes too
            self._kill()
            raise
        finally:
            os.close(fd)
            self._reap()
        head, _, body = b"".join(chunks).partition(b"\n")
        try:
            meta = json.loads(head)
        except ValueError:
            return None
        if meta.get("question") != self.question or meta.get("key") != list(self.key()):
            return None
        return body  # Embedder.expect checks its length

    def cancel(self) -> None:
        """Kill the child if its vector was not taken (it is this process's own child, by its pid)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        os.close(fd)
        self._kill()
        self._reap()

    def _kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def _reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass


def _embed_in_child(question: str, fd: int) -> None:
    """Embed question with the default [embed] settings, write the answer to fd, and end the process."""
    try:
        # Nothing of the child reaches the terminal: when it cannot embed, the search does it and says what it must.
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        from dslake_index.front_door import embedder_for

        embedder = embedder_for(default_settings())
        head: dict[str, Any] = {"question": question, "key": list(embedder.settings_key())}
        body = b""
        if embedder.load_quick():
            body = embedder.encode([question]).astype("<f4").tobytes()
        else:
            head["key"] = None  # the search loads the model itself (an export or a copy to make first)
        data = json.dumps(head).encode() + b"\n" + body
        while data:
            data = data[os.write(fd, data):]
    except BaseException:  # noqa: BLE001 - any failure: the search embeds in-process and reports it there
        pass
    finally:
        os._exit(0)


_ahead: QuestionAhead | None = None


def start_from_console_script(module_name: str) -> None:
    """Start embedding a search's question in a child, when cli.py (module_name) is loaded by the `dslake` console
    script on Linux for `dslake search QUESTION ...`; otherwise (tests, `python -m`, other commands) do nothing."""
    global _ahead
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or ""
    if module_name != "dslake_cli.cli" or os.path.basename(script) != CONSOLE_SCRIPT or sys.platform != "linux":
        return
    question = question_of(sys.argv[1:])
    if question and question.strip():
        _imported_by_both()
        _ahead = QuestionAhead.start(question)


def _imported_by_both() -> None:
    """Import before the fork what both processes import anyway, so it is done once: numpy (onnxruntime's, and the
    search's dense scan), the embedding module and the model package (the child's model files, the search's
    model id). The child calls no BLAS routine (onnxruntime has its own), so OpenBLAS's threads, which a fork does
    not copy, are never waited on there."""
    import numpy  # noqa: F401
    from dslake_index.front_door import embedder_for

    embedder_for(default_settings()).model_id  # noqa: B018 - the model package, its files' hash


def hand_to(embedder: Any, question: str) -> None:
    """Let embedder take the child's vector for question, when the child embeds that question with its settings."""
    if _ahead is not None and _ahead.question == question:
        embedder.expect(question, _ahead.key(), _ahead.vector)
