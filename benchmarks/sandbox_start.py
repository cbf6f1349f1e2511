"""Time the sandbox's start: a trivial script, a pandas import, and a one-round `dslake ask` with a scripted model.

usage: python benchmarks/sandbox_start.py [--runs 10] [--asks 5] [--samples data_samples] [--out /tmp/NAME]
(PYTHONPATH=DIR with an older checkout's dsstar_lake/ in DIR times that one instead, for a before/after pair.)
Prints the median and the spread (min-max) of each, per backend that works here. The ask runs on a copy of
data_samples/ (its catalog under --out, never in the repository), through the installed `dslake` command, so
its figure is what a user waits for a one-round question beyond the model's own time. Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dsstar_lake.sandbox import Sandbox
from dsstar_lake.sandbox.bwrap import probe

HERE = Path(__file__).resolve().parent
RULES = [
    {"role": "planner", "response": "Sum the units in data/sales.csv."},
    {"role": "coder", "response": "```python\nimport pandas as pd\n"
                                  "print(pd.read_csv('data/sales.csv')['units'].sum())\n```"},
    {"role": "verifier", "response": "Yes"},
    {"role": "finalyzer", "response": "```python\nimport pandas as pd\n"
                                      "print(pd.read_csv('data/sales.csv')['units'].sum())\n```"},
]


def spread(label: str, times: list[float]) -> None:
    """Print the median and range of a list of durations."""
    print(f"{label:<34} median {statistics.median(times):6.3f} s   min {min(times):6.3f}   max {max(times):6.3f}"
          f"   (n={len(times)})")


def time_scripts(backend: str, lake: Path, work: Path, runs: int) -> None:
    """Time Sandbox.run on a trivial script and on an import of pandas."""
    sb = Sandbox({"backend": backend}, lake, private=[])
    for label, code in (("print(1)", "print(1)"), ("import pandas", "import pandas; print(1)")):
        sb.run(code, work)  # warm the page cache
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = sb.run(code, work)
            times.append(time.perf_counter() - started)
            assert result.ok, result.stderr
        spread(f"{backend}: {label}", times)


def time_asks(backend: str, lake: Path, catalog: Path, rules: Path, asks: int) -> None:
    """Time one-round `dslake ask` commands end to end (process start included)."""
    dslake = str(Path(sys.executable).with_name("dslake"))
    argv = [dslake, "ask", "How many units were sold?", "--lake", str(lake), "--catalog", str(catalog),
            "--files", "sales.csv", "--llm", "scripted", "--scripted-file", str(rules), "--json"]
    env = {"PATH": "/usr/bin:/bin", "DSLAKE_SANDBOX_BACKEND": backend, "HOME": str(catalog.parent)}
    if os.environ.get("PYTHONPATH"):  # another checkout's dsstar_lake, to compare before and after a change
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    times = []
    for _ in range(asks + 1):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stdout + done.stderr
    spread(f"{backend}: dslake ask, one round", times[1:])


def main() -> None:
    """Parse the arguments, set up a copy of the sample lake, and print every timing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--asks", type=int, default=5)
    parser.add_argument("--samples", type=Path, default=HERE.parent / "data_samples")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="dslake-sandbox-start-"))
    lake, catalog = out / "lake", out / "catalog"
    shutil.rmtree(out / "lake", ignore_errors=True)
    shutil.copytree(args.samples, lake)
    rules = out / "rules.jsonl"
    rules.write_text("\n".join(json.dumps(r) for r in RULES) + "\n")
    dslake = str(Path(sys.executable).with_name("dslake"))
    subprocess.run([dslake, "index", str(lake), "--catalog", str(catalog)], check=True, capture_output=True)
    backends = ["subprocess"] + (["bwrap"] if probe(sys.executable, 64) is None else [])
    for backend in backends:
        work = out / f"work-{backend}"
        work.mkdir(exist_ok=True)
        time_scripts(backend, lake, work, args.runs)
        time_asks(backend, lake, catalog, rules, args.asks)


if __name__ == "__main__":
    main()
