"""`dslake index LAKE [--catalog DIR] [--json]` that finds nothing changed, answered before click and rich are imported.

A no-change index (a cron job's, a watcher's peer's) is all start-up: click, rich, the facade and the pipeline's
code cost more than stat-ing the lake and reading the manifest. When the `dslake` console script loads cli.py,
cli.py first calls answer_from_console_script(): for the plain form (LAKE and at most --catalog DIR and --json, no
other option) it finds the catalog as the Lake facade would and asks the front door whether the lake, the catalog and
the settings' inputs are as the last plain index left them (index_if_unchanged, which writes what a no-change
index writes). Then it prints exactly the lines `print_index_summary` prints, or the JSON object `--json` prints
(its timings those of this path), and exits 0.
Anything it is not sure of (another option, a changed file, a lock held, a setting or file it cannot read, an
environment that makes rich draw differently, a lake without files, whose note the full CLI adds) hands over to the full CLI, which finds nothing done yet but the scan.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

CONSOLE_SCRIPT = "dslake"
DEFAULT_CATALOG_NAME = ".dslake"  # default.toml's catalog.dirname
# Variables that make rich treat a pipe as a terminal (colour, width): the full CLI draws those.
_RICH_ENVIRONMENT = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES")
# Text rich's markup would not print verbatim: its tags and escapes, and emoji codes such as :thumbs_up:.
_NOT_VERBATIM = re.compile(r"[\[\]\\]|:\S*?:")


def summary_line(s: Any) -> str:
    """Return the one summary line of an index run (an IndexSummary, or a no-change report)."""
    return (f"indexed: {getattr(s, 'added', 0)} added, {getattr(s, 'changed', 0)} changed, "
            f"{getattr(s, 'removed', 0)} removed, {s.unchanged} unchanged, {s.failed} failed · {s.entries} entries "
            f"({s.families} families) · profiled {getattr(s, 'profiled', 0)}, reused {getattr(s, 'reused', 0)}, "
            f"embedded {getattr(s, 'embedded', 0)} · {s.seconds:.1f} s")


def plain_index_arguments(argv: list[str]) -> tuple[str, str | None, bool] | None:
    """Return (LAKE, --catalog DIR or None, --json) of `index LAKE [--catalog DIR] [--json]`, else None (any other
    form)."""
    if argv[:1] != ["index"]:
        return None
    lake = catalog = None
    as_json = False
    words = iter(argv[1:])
    for word in words:
        if word == "--json" and not as_json:
            as_json = True
        elif word == "--catalog" and catalog is None:
            catalog = next(words, None)
            if catalog is None or catalog.startswith("-") or not catalog:
                return None
        elif word.startswith("--catalog=") and catalog is None and len(word) > len("--catalog="):
            catalog = word.partition("=")[2]
        elif word.startswith("-") or lake is not None or not word or "://" in word:
            return None  # an option, a second word (PATHS), an empty one, a lake in object storage
        else:
            lake = word
    return (lake, catalog, as_json) if lake is not None else None


def answer(argv: list[str]) -> bool:
    """Print a no-change index's report and return True when argv is the plain form and nothing changed; return
    False, having written nothing but a scan kept for the full CLI, otherwise."""
    given = plain_index_arguments(argv)
    if given is None or any(name in os.environ for name in _RICH_ENVIRONMENT):
        return False
    from dslake_index.front_door import CATALOG_CONFIG, index_if_unchanged

    from dsstar_lake.base.settings_inputs import settings_inputs, user_config_path

    lake, catalog, as_json = given
    try:
        root = Path(lake).expanduser()
        if not root.is_dir():
            return False  # the full CLI says what is wrong
        root = root.resolve()
        # Lake.open's catalog: the one given, else LAKE/<catalog.dirname>; a dirname other than the default is
        # found in the stamp, and then this guess does not hold.
        catalog_dir = Path(catalog).expanduser().resolve() if catalog else root / DEFAULT_CATALOG_NAME
    except (OSError, RuntimeError, ValueError):
        return False
    if catalog_dir == root:
        return False
    inputs = settings_inputs([str(catalog_dir / CATALOG_CONFIG), user_config_path()])  # Lake.open's order
    terminal = sys.stdout.isatty()
    report = index_if_unchanged(root, catalog_dir, inputs, named=catalog is not None,
                                accept=lambda r: r.unchanged > 0 and (as_json or _verbatim(r, terminal)))
    if report is None:
        return False
    if as_json:
        sys.stdout.write(json_report(report) + "\n")
        sys.stdout.flush()
        return True
    lines = [summary_line(report)]
    lines += _listed(report.failures, "failed", "… and {n} more (dslake status)")
    lines += _listed(report.skipped_files, "skipped", "… and {n} more skipped (--json lists them all)")
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
    return True


def json_report(report: Any) -> str:
    """Return the one JSON object `dslake index --json` prints for a no-change report (docs/json.md's
    dslake.index/1, as views/jsonout.py writes it: that module and click are not loaded here)."""
    import json

    body = report.to_dict()
    body["seconds"] = round(float(body["seconds"]), 3)
    return json.dumps({"schema": "dslake.index/1", **body}, indent=2, ensure_ascii=False)


def _verbatim(report: Any, terminal: bool) -> bool:
    """Tell whether the report's lines print here as rich would print them: on a terminal, rich colours the
    failed and skipped words; anywhere, markup and emoji codes in a name would not print as written."""
    listed = report.failures + report.skipped_files
    if terminal and listed:
        return False
    return not any(_NOT_VERBATIM.search(f"{path}\0{why or ''}") for path, why in listed)


def _listed(rows: list[tuple[str, str]], word: str, more: str) -> list[str]:
    if not rows:
        return []  # visible() loads hashlib: only for a lake with failed or skipped files
    from dsstar_lake.base.untrusted import visible

    lines = [f"  {word} {visible(path)}: {visible(why or '')}" for path, why in rows[:20]]
    if len(rows) > 20:
        lines.append("  " + more.format(n=len(rows) - 20))
    return lines


def answer_from_console_script(module_name: str) -> None:
    """Exit with 0 after answering a no-change `dslake index`, when cli.py (module_name) is being loaded by the
    `dslake` console script; otherwise (tests, `python -m`, any other command) return at once."""
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or ""
    if module_name != "dslake_cli.cli" or os.path.basename(script) != CONSOLE_SCRIPT:
        return
    try:
        answered = answer(sys.argv[1:])  # it flushes what it printed: a closed pipe shows here
    except BrokenPipeError:  # `dslake index LAKE | head -0`: the reader left; quiet, as the full CLI
        from dsstar_lake.terminal.closed_pipe import leave_quietly

        leave_quietly()
    except KeyboardInterrupt:  # as the full CLI ends on Ctrl-C (terminal/common.py), without a traceback
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    if answered:
        sys.exit(0)
