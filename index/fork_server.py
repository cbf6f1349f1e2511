"""Imported first by the profilers' fork server (see index/indexer.py): Ctrl-C while it imports its preloads.

A terminal's Ctrl-C reaches every process of the foreground group. multiprocessing makes the fork server ignore
it once its preloads are imported, but pandas and pyarrow take a second or more, and a Ctrl-C meanwhile printed
a KeyboardInterrupt traceback. This handler ends the server quietly instead: the index that started it is
stopping too. The profilers it forks ignore Ctrl-C (pebble's workers do); the index process decides for them.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

_SERVER = os.getpid()


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    if os.getpid() == _SERVER:  # a process forked from the server before it ignores Ctrl-C is left alone
        os._exit(130)


# Only in the server (started as `python -c "from multiprocessing.forkserver import main; ..."`), never in a
# process that imports this module for another reason.
if sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules:
    signal.signal(signal.SIGINT, _on_ctrl_c)
