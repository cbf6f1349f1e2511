"""A reader that leaves early (`dslake search ... | head -1`) ends the command quietly, with exit code 0.

Python ignores SIGPIPE, so a write into a pipe whose reader has gone raises BrokenPipeError: from rich's print,
from click's echo, or from the interpreter's last flush of stdout, which then prints "Exception ignored" and
exits 120. Like `ls | head`, dslake stops at the first such write without a word: what it would still print has
no one to read it. The Python documentation's recipe (library/signal.html, "Note on SIGPIPE"): point stdout at
/dev/null so that nothing flushes into the closed pipe again, then exit.

Standard library only: the no-change `dslake index` answers through this before click and rich are imported.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import NoReturn


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """Run the block; when stdout's reader has gone, end the process quietly with 0.

    stdout is flushed before the block ends, so that a closed pipe shows here and not at the interpreter's exit; an
    exit code the command had already chosen when only that last flush failed is kept. A broken pipe that is not
    stdout's (a child process that died, a server's socket) is raised as ever.
    """
    try:
        yield
    except BrokenPipeError:
        if not _reader_gone(_fd_of(sys.stdout)) and not _reader_gone(_fd_of(sys.stderr)):
            raise
        leave_quietly()
    except SystemExit:
        _flush_or_silence()  # a command's own exit code (8: problems reported) stays what it said
        raise
    else:
        if not _flush_or_silence():
            sys.exit(0)


def leave_quietly() -> NoReturn:
    """End the process with 0 after a write found stdout's reader gone, with nothing more written to it."""
    _silence_closed_output()
    sys.exit(0)


def _flush_or_silence() -> bool:
    """Flush stdout and stderr; return False, with the closed output pointed at /dev/null, when a reader has gone."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BrokenPipeError:
        _silence_closed_output()
        return False
    return True


def _silence_closed_output() -> None:
    """Point stdout, and stderr when it is the same pipe (`2>&1 |`), at /dev/null: their buffered bytes go there."""
    out_fd, err_fd = _fd_of(sys.stdout), _fd_of(sys.stderr)
    if out_fd is None:
        return
    shared = err_fd is not None and _same_file(out_fd, err_fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, out_fd)
        if shared:
            os.dup2(devnull, err_fd)
    finally:
        os.close(devnull)


def _fd_of(stream: object) -> int | None:
    try:
        return stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # a test's captured stream has no descriptor
        return None


def _same_file(a: int, b: int) -> bool:
    try:
        return os.path.sameopenfile(a, b)
    except OSError:
        return False


def _reader_gone(fd: int | None) -> bool:
    """Tell whether fd is a pipe or socket whose reader has gone (poll says so on the writing end)."""
    import select
    import stat

    if fd is None or not hasattr(select, "poll"):
        return False
    try:
        if not stat.S_ISFIFO(mode := os.fstat(fd).st_mode) and not stat.S_ISSOCK(mode):
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except OSError:
        return False
