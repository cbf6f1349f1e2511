"""Ctrl-C while the profilers run: noted at once, acted on where no lock the pool's threads share is held."""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[threading.Event]:
    """While the pool runs, Ctrl-C sets the event; the loops raise KeyboardInterrupt where it is safe.

    Raised at any bytecode, KeyboardInterrupt could land while this thread holds a lock that the pool's threads
    share (inside schedule() or a future's result()), and stopping the pool then waited for that lock forever.
    """
    pressed = threading.Event()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield pressed  # Ctrl-C is not ours to handle here: it keeps whatever behaviour it has
        return
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.set())
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    raise_if_pressed(pressed)  # pressed after the last look (the last file was in): not lost


def raise_if_pressed(pressed: threading.Event) -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed."""
    if pressed.is_set():
        raise KeyboardInterrupt


def next_finished(finished: queue.SimpleQueue[Any], pressed: threading.Event) -> Any:
    """Return the next finished future, looking at Ctrl-C every 0.1 s while none is."""
    while True:
        raise_if_pressed(pressed)
        try:
            return finished.get(timeout=0.1)
        except queue.Empty:
            continue
