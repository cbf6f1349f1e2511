"""Whitespace-aligned tables in scientific text (.dat .lst .txt ...), and two record formats: TLE and SP3."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from dslake_index.profilers.base import Limits, Table
from dslake_index.profilers.delimited import WHITESPACE, hint_of
from dslake_index.profilers.repeats import repeated_keys_note
from dslake_index.profilers.stats import describe_columns, line_facts, row_facts, sample_rows

_NUMERIC_TOKEN = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eEdD][-+]?\d+)?$|^\d{1,4}[-/:]\d{1,2}([-/:]\d{1,4})*$")
_TLE1 = re.compile(r"^1 [0-9A-Z]{5}[A-Z ] ")
_TLE2 = re.compile(r"^2 [0-9A-Z]{5} ")
MIN_RUN = 3


@dataclass
class Run:
    """Consecutive lines with the same number of whitespace-separated fields, mostly numeric."""

    start: int  # physical line index of the first data line
    end: int  # one past the last
    n_fields: int
    header: int | None = None  # physical line of a header line just above, if any
    names: list[str] | None = None  # column names found in a comment line above (e.g. '# columns: a b c')


def _numeric_share(tokens: list[str]) -> float:
    return sum(1 for t in tokens if _NUMERIC_TOKEN.match(t)) / max(1, len(tokens))


def find_runs(lines: list[str]) -> list[Run]:
    """Return runs of aligned, mostly numeric lines (longest first), each with a header line if one fits."""
    runs: list[Run] = []
    i, n = 0, len(lines)
    while i < n:
        toks = lines[i].split()
        k = len(toks)
        if k < 2 or lines[i].lstrip().startswith(("#", "%", "/*", "!")):
            i += 1
            continue
        j = i + 1
        while j < n and len(lines[j].split()) == k and not lines[j].lstrip().startswith("#"):
            j += 1
        if j - i >= MIN_RUN:
            sample = [t for ln in lines[i : min(j, i + 50)] for t in ln.split()]
            if _numeric_share(sample) >= 0.5:
                run = Run(i, j, k)
                first = lines[i].split()
                if _numeric_share(first) < 0.5 and _numeric_share(lines[i + 1].split()) >= 0.5:
                    run.header, run.start = i, i + 1  # the run's own first line names the columns
                elif i > 0 and len(lines[i - 1].split()) == k and _numeric_share(lines[i - 1].split()) < 0.5:
                    run.header = i - 1
                if run.header is None:
                    run.names = _comment_names(lines[max(0, i - 10) : i], k)
                runs.append(run)
        i = max(j, i + 1)
    runs.sort(key=lambda r: (-(r.end - r.start), r.start))
    return runs


def _comment_names(above: list[str], k: int) -> list[str] | None:
    """Return k column names from a comment line such as '# columns: year doy hour bx', if one fits exactly."""
    for line in reversed(above):
        s = line.strip()
        if not s.startswith(("#", "%", "!", ";")):
            continue
        toks = s.lstrip("#%!; ").replace(",", " ").split()
        if toks and toks[0].endswith(":"):
            toks = toks[1:]
        if len(toks) == k and _numeric_share(toks) == 0 and len(set(toks)) == k:
            return toks
    return None


def run_table(lines: list[str], run: Run, limits: Limits, to_eof: bool) -> tuple[Table, Any]:
    """Load a run with pandas and describe it; the read hint is read_csv(sep=r'\\s+')."""
    import pandas as pd

    first = run.header if run.header is not None else run.start
    text = "\n".join(lines[first : run.end])
    kw: dict[str, Any] = {"sep": WHITESPACE}
    if first:
        kw["skiprows"] = first
    if run.header is None:
        kw["header"] = None
        if run.names:
            kw["names"] = run.names
    if not to_eof:
        kw["nrows"] = run.end - run.start
    df = pd.read_csv(io.StringIO(text), sep=WHITESPACE, header=0 if run.header is not None else None,
                     names=run.names if run.header is None else None)
    table = Table(n_rows=len(df), n_cols=len(df.columns), header_row=run.header, skip_rows=first,
                  location=f"lines {run.start + 1}-{run.end}")
    describe_columns(table, df, limits)
    body = lines[run.start : run.end]
    if len(body) == len(df):
        table.duplicate_rows, table.row_hashes, table.edge_hashes = line_facts(body)
    else:
        table.duplicate_rows, table.row_hashes = row_facts(df)
    table.sample_rows = sample_rows(df, limits)
    table.read_hint = hint_of(kw)
    return table, df


def is_tle(lines: list[str]) -> bool:
    """Return True when the text is two-line element sets (lines starting '1 NNNNNU' then '2 NNNNN')."""
    body = [ln for ln in lines[:40] if ln.strip()]
    ones = sum(1 for ln in body if _TLE1.match(ln))
    twos = sum(1 for ln in body if _TLE2.match(ln))
    return ones >= 1 and twos >= 1 and ones + twos >= 0.6 * len(body)


def tle_facts(lines: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Describe a TLE file: satellites, element-set count, epoch range and the fixed column layout."""
    sats: dict[str, int] = {}
    epochs: list[str] = []
    keys: list[tuple[str, str]] = []
    records: list[tuple[str, str]] = []
    for i, ln in enumerate(lines):
        if _TLE1.match(ln):
            sat = ln[2:7].strip()
            sats[sat] = sats.get(sat, 0) + 1
            epochs.append(ln[18:32].strip())
            keys.append((sat, epochs[-1]))
            second = lines[i + 1] if i + 1 < len(lines) and _TLE2.match(lines[i + 1]) else ""
            records.append((ln.rstrip(), second.rstrip()))
    structure = {"satellites": dict(sorted(sats.items())[:20]), "element_sets": sum(sats.values()),
                 "first_epoch": epochs[0] if epochs else None, "last_epoch": epochs[-1] if epochs else None,
                 "first_date": _tle_date(epochs[0]) if epochs else None,
                 "last_date": _tle_date(epochs[-1]) if epochs else None}
    notes = [
        "two-line element sets (TLE): each record is line 1 + line 2 (69 fixed columns), optionally after a "
        "name line (line 0)",
        "line 1: cols 3-7 catalog number, 10-17 international designator, 19-32 epoch (YYDDD.DDDDDDDD: 2-digit "
        "year and fractional day of year), 34-43 mean motion 1st derivative, 54-61 B* drag term",
        "line 2: cols 9-16 inclination (deg), 18-25 RAAN (deg), 27-33 eccentricity (implied leading '0.'), "
        "35-42 argument of perigee (deg), 44-51 mean anomaly (deg), 53-63 mean motion (rev/day), 64-68 rev number",
        "parse by fixed columns, e.g. [l[18:32] for l in open(path) if l.startswith('1 ')], "
        "or with sgp4.api.Satrec.twoline2rv(line1, line2)",
    ]
    notes += repeated_keys_note(
        keys, records, "element sets", "epoch",
        "a set issued again for one satellite and epoch; keep one per (satellite, epoch), e.g. the last in the "
        "file, before counting, averaging or fitting over epochs")
    return structure, notes


def _tle_date(epoch: str) -> str | None:
    """Turn a TLE epoch 'YYDDD.DDDD' into an ISO date (years 57-99 are 19xx)."""
    import datetime as dt

    try:
        yy, doy = int(epoch[:2]), float(epoch[2:])
        year = 2000 + yy if yy < 57 else 1900 + yy
        return (dt.date(year, 1, 1) + dt.timedelta(days=int(doy) - 1)).isoformat()
    except (ValueError, OverflowError):
        return None


def tle_time(epoch: str) -> str | None:
    """Turn a TLE epoch 'YYDDD.DDDDDDDD' into an ISO time to the second, else None."""
    import datetime as dt

    try:
        yy, doy = int(epoch[:2]), float(epoch[2:])
        year = 2000 + yy if yy < 57 else 1900 + yy
        when = dt.datetime(year, 1, 1) + dt.timedelta(days=doy - 1)
        return when.replace(microsecond=0).isoformat(sep=" ")
    except (ValueError, OverflowError):
        return None


def sp3_time(epoch: str) -> str | None:
    """Turn an SP3 epoch line's time '2018 10 02 00 00 00.00000000' into an ISO time to the second, else None."""
    import datetime as dt

    parts = epoch.split()
    try:
        y, mo, d, h, mi = (int(p) for p in parts[:5])
        return dt.datetime(y, mo, d, h, mi, int(float(parts[5]))).isoformat(sep=" ")
    except (ValueError, IndexError):
        return None


def last_sp3_epoch(tail: list[str]) -> str | None:
    """Return the last epoch ('* ' line) among a file's last lines, as an SP3 epoch string."""
    return next((ln[3:31].strip() for ln in reversed(tail) if ln.startswith("* ")), None)


def is_sp3(lines: list[str]) -> bool:
    """Return True for the SP3 orbit format ('#a'..'#d' first line, '##' second)."""
    return len(lines) > 2 and bool(re.match(r"^#[a-dA-D]", lines[0])) and lines[1].startswith("##")


def sp3_facts(lines: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Describe an SP3 file: version, start epoch, epoch count, satellites, record layout."""
    first = lines[0]
    sats = []
    for ln in lines[2:40]:
        if ln.startswith("+ ") and not ln.startswith("++"):
            sats += [ln[i : i + 3] for i in range(9, 60, 3) if ln[i : i + 3].strip() not in ("", "0", "00")]
    epochs = [ln[3:31].strip() for ln in lines if ln.startswith("* ")]
    header_end = next((i for i, ln in enumerate(lines) if ln.startswith("* ")), None)
    structure = {"version": first[1:2], "start_epoch": first[3:31].strip(), "epochs_declared": first[32:39].strip(),
                 "coordinate_system": first[46:51].strip(), "satellites": sats[:20],
                 "first_epoch_in_sample": epochs[0] if epochs else None, "header_lines": header_end}
    notes = [
        "SP3 precise orbit file: header lines start with '#', '+', '++', '%c', '%f', '%i', '/*'; then for each "
        "epoch a line '*  YYYY MM DD hh mm ss.ssssssss' followed by one 'P' line per satellite and, in velocity "
        "files ('#dV' / '#cV'), one 'V' line",
        "P line: cols 1 'P', 2-4 satellite id, 5-18 x (km), 19-32 y (km), 33-46 z (km), 47-60 clock "
        "(microseconds, 999999.999999 = unknown); V line: same columns, velocity in dm/s and clock rate",
        "parse line by line: epochs from '*' lines, positions from lines starting with 'P' (float(l[4:18]) ...)",
    ]
    if header_end is not None:
        notes.append(f"the header has {header_end} lines; data records start at line {header_end + 1}")
    return structure, notes
