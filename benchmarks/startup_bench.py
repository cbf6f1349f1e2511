"""Start-up benchmark: a cold `dslake search`, a no-change `dslake index` and a one-round scripted `dslake ask`.

usage: python benchmarks/startup_bench.py --lake LAKE --catalog DIR [--runs 7] [--before CHECKOUT] [--skip-ask]
                                         [--one-file PATH [--one-file-only]]

Each figure is a whole process, as a user starts it from the shell: the installed `dslake` command beside this
interpreter, its imports, opening the catalog, the work, the printing. LAKE must be indexed into DIR first
(`dslake index LAKE --catalog DIR`; the KramaBench lake is the issue's yardstick). Prints the median and the
spread (min-max) of the wall and CPU seconds (the process and its children: the sandboxed scripts of an ask).

--before CHECKOUT times that checkout's code as well (its cli.py, dsstar_lake/ and index/, put first on the
module path), one run of each in turn, and prints the ratio new/before per pair: on a shared machine the pair's
ratio means more than either time. The ask answers "how many fatalities in all conflicts" over KramaBench's
archeology/conflict_brecke.csv with the scripted provider (plan, one script, yes, the final script): two
sandboxed scripts that each import pandas, and no model time at all. Never run by CI.

--one-file PATH (a CSV of the lake, lake-relative) times `dslake index` after that one file changed, as a cron
job's or a writer's re-index finds it. Each variant gets a hard-linked copy of the lake and a copy of the catalog
(a link per file, nothing in the lake itself is written), indexed once by that variant; before each run the copy's
file is replaced by its content plus a number of copies of its last row not used before, so it is profiled, its
entry rebuilt and its card embedded every time. --one-file-only times nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ASK_FILE = "archeology/conflict_brecke.csv"
SCRIPT = ("```python\nimport pandas as pd\n"
          f"print(pd.read_csv('data/{ASK_FILE}')['Fatalities'].sum())\n```")
RULES = [
    {"role": "planner", "response": f"Sum the Fatalities column of {ASK_FILE}."},
    {"role": "coder", "response": SCRIPT},
    {"role": "verifier", "response": "Yes"},
    {"role": "finalyzer", "response": SCRIPT},
]


def before_path(checkout: Path, scratch: Path) -> str:
    """Return a module path on which `checkout`'s code shadows the installed (editable) packages."""
    folder = scratch / "before-path"
    folder.mkdir(exist_ok=True)
    for name, target in (("dslake_cli", checkout), ("dsstar_lake", checkout / "dsstar_lake"),
                         ("dslake_index", checkout / "index")):
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(target.resolve(), target_is_directory=True)
    return str(folder)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run one command; return its wall and CPU seconds (children included). A failure stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class OneFileChanged:
    """A variant's hard-linked copy of the lake and copy of the catalog, and the one file changed before each run."""

    def __init__(self, lake: Path, catalog: Path, path: str, scratch: Path, env: dict[str, str], dslake: str) -> None:
        scratch.mkdir()
        self.lake, self.catalog = scratch / "lake", scratch / "catalog"
        subprocess.run(["cp", "-al", str(lake), str(self.lake)], check=True)  # links: the lake is never written
        shutil.copytree(catalog, self.catalog, ignore=shutil.ignore_patterns("index.lock", "runs"))
        self.victim = self.lake / path
        self.original = self.victim.read_bytes()
        self.last = self.original.rstrip(b"\n").rsplit(b"\n", 1)[-1] + b"\n"
        self.runs = 0
        self.argv = [dslake, "index", str(self.lake), "--catalog", str(self.catalog)]
        timed(self.argv, env)  # this variant's code settles the copy (its stamp, a re-render if its code differs)

    def change(self) -> None:
        """Replace the file (a new inode: the original lake's link is left alone) by content never seen before."""
        self.runs += 1
        fresh = self.victim.with_name(self.victim.name + ".new")
        fresh.write_bytes(self.original + self.last * self.runs)
        fresh.replace(self.victim)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    """Parse the arguments, run each command (and its before pair) --runs times, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", type=Path, required=True)
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path, help="another checkout to time against, pair by pair")
    parser.add_argument("--skip-ask", action="store_true")
    parser.add_argument("--one-file", metavar="PATH", help="a CSV of the lake: time an index after it changed")
    parser.add_argument("--one-file-only", action="store_true", help="with --one-file: time nothing else")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dslake-startup-"))
    rules = scratch / "rules.jsonl"
    rules.write_text("".join(json.dumps(rule) + "\n" for rule in RULES))
    dslake = str(Path(sys.executable).with_name("dslake"))
    lake, catalog = str(args.lake), str(args.catalog)
    commands = {
        "cold `dslake search`": [dslake, "search", "solar wind speed", "--catalog", catalog],
        "no-change `dslake index`": [dslake, "index", lake, "--catalog", catalog],
    }
    if args.one_file_only:
        commands = {}
    if not args.skip_ask and not args.one_file_only:
        commands["one-round scripted `dslake ask`"] = [
            dslake, "ask", "How many fatalities in all conflicts?", "--lake", lake, "--catalog", catalog,
            "--llm", "scripted", "--scripted-file", str(rules), "--json"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    variants = {"new": env}
    if args.before:
        variants["before"] = {**env, "PYTHONPATH": before_path(args.before, scratch)}
    print(f"{args.runs} runs each, median (min-max) in seconds; cores {os.cpu_count()}, load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    for label, argv in commands.items():
        argv_of = {name: argv for name in variants}
        if label.startswith("no-change") and args.before:
            # Each variant its own copy of the catalog: a no-change index trusts the stamp the last index left,
            # and an index by the other variant's code makes it hand over to the full CLI every time.
            for name in variants:
                own = scratch / f"catalog-{name}"
                shutil.copytree(catalog, own, ignore=shutil.ignore_patterns("index.lock", "runs"))
                argv_of[name] = [str(own) if word == catalog else word for word in argv]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for name, variant_env in variants.items():
            timed(argv_of[name], variant_env)  # warm-up: the page cache, a checkout's first bytecode, its stamp
        for _ in range(args.runs):
            for name, variant_env in variants.items():
                times[name].append(timed(argv_of[name], variant_env))
        report(label, times, bool(args.before))
    if args.one_file:
        copies = {name: OneFileChanged(args.lake, args.catalog, args.one_file, scratch / f"one-file-{name}",
                                       variant_env, dslake) for name, variant_env in variants.items()}
        times = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, variant_env in variants.items():
                copies[name].change()
                times[name].append(timed(copies[name].argv, variant_env))
        report("one file changed `dslake index`", times, bool(args.before))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def report(label: str, times: dict[str, list[tuple[float, float]]], paired: bool) -> None:
    """Print each variant's wall and CPU seconds, and the new/before ratio per pair."""
    for name, pairs in times.items():
        print(f"{label:<34} {name:<6} wall {spread([w for w, _ in pairs])}   cpu {spread([c for _, c in pairs])}")
    if paired:
        for index, what in ((0, "wall"), (1, "cpu")):
            ratios = [new[index] / old[index] for new, old in zip(times["new"], times["before"], strict=True)]
            print(f"{label:<34} new/before {what} {spread(ratios)}")


if __name__ == "__main__":
    main()
