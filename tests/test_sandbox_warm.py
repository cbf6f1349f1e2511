"""Sandboxes started ahead (Sandbox.warm): each script still gets its own sandbox, and none outlives its run."""

from __future__ import annotations

import time

import pytest
from sandbox_helpers import BWRAP_REASON, make_lake, processes_with, sandbox

pytestmark = pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")

FIRST = """
import gc, os, sys
print(__name__, os.path.basename(sys.argv[0]), 'pandas' in sys.modules, gc.isenabled())
open('from_first.txt', 'w').write('kept')
open('/tmp/first_tmp.txt', 'w').write('private')
print(open('data/sales.csv').read().splitlines()[1])
"""
SECOND = """
import os, pandas as pd
print(open('from_first.txt').read(), os.path.exists('/tmp/first_tmp.txt'))
print(int(pd.read_csv('data/sales.csv')['units'].sum()))
raise ValueError('stop here')
"""


def test_started_ahead_scripts_each_get_their_own_sandbox_and_the_work_folder_as_left(tmp_path):
    lake = make_lake(tmp_path / "lake")
    work = tmp_path / "work"
    box = sandbox("bwrap", lake)
    box.keep_warm = True
    box.warm(work)
    try:
        first = box.run(FIRST, work, name="first.py")
        assert first.ok, first.stderr
        # Run as `python first.py` runs, in an interpreter that imported pandas before the code arrived (with the
        # collector off meanwhile, and on again for the script).
        assert first.stdout.splitlines() == ["__main__ first.py True True", "north,10"]
        assert first.reads == ["sales.csv"] and first.trace_problems == []
        second = box.run(SECOND, work, name="second.py", last=True)
        # The work folder as the first script left it; /tmp and the processes were the first sandbox's alone.
        assert second.stdout.splitlines() == ["kept False", "14"]
        assert second.returncode == 1 and second.reads == ["sales.csv"]
        assert second.traceback.splitlines()[1].startswith('  File "second.py", line 5')  # no frame of dslake's
        assert "ValueError: stop here" in second.stderr
        box.warm(work)  # started, never taken
        end = time.monotonic() + 30
        while not processes_with(str(work)) and time.monotonic() < end:
            time.sleep(0.05)  # it is started by a thread of its own
        assert processes_with(str(work)) != []
    finally:
        box.close()
    assert processes_with(str(work)) == []
