"""Generate a synthetic lake of N files with the mix real lakes have, plus questions whose answer files are known.

usage: python benchmarks/make_lake.py N DIR [--seed 7] [--big-mb 8]
Writes DIR/ (the lake, which must not exist or be empty) and DIR.questions.jsonl ({"id", "query", "files"} rows
for `dslake eval retrieval`). Deterministic: the same N, seed and --big-mb give byte-identical files.
Mix: ~70% members of daily-CSV families, ~10% one-off CSVs, ~5% multi-sheet xlsx, ~5% json, ~5% markdown notes,
~4% parquet, and one big CSV (--big-mb MB) per 2,000 files.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import zipfile
from datetime import date, timedelta
from pathlib import Path

PLACES = ["north harbor", "east ridge", "lake view", "pine valley", "river bend", "stone bridge", "west field",
          "maple grove", "sunset bay", "oak hill", "cedar falls", "silver creek", "fox hollow", "granite peak",
          "willow marsh", "iron gate", "copper mine", "salt flats", "misty glen", "amber coast"]
THEMES = {
    "air quality": ["pm25_ugm3", "ozone_ppb", "no2_ppb", "aqi"],
    "turbine": ["vibration_mm_s", "rpm", "power_kw", "blade_temp_c"],
    "rainfall": ["precip_mm", "humidity_pct", "pressure_hpa"],
    "traffic": ["vehicles_per_hour", "avg_speed_kmh", "incidents"],
    "retail sales": ["units_sold", "revenue_usd", "returns", "discount_pct"],
    "hospital admissions": ["admissions", "icu_beds", "avg_stay_days"],
    "soil": ["ph", "nitrogen_mgkg", "moisture_pct", "organic_carbon_pct"],
    "river flow": ["discharge_m3s", "stage_m", "turbidity_ntu"],
    "energy use": ["kwh", "peak_kw", "gas_therms"],
    "fishery catch": ["catch_kg", "vessels", "species_count"],
    "bird survey": ["sightings", "species", "observers"],
    "solar output": ["irradiance_wm2", "output_kwh", "panel_temp_c"],
    "water quality": ["enterococci_cfu", "e_coli_cfu", "ph", "dissolved_oxygen_mgl"],
    "crop yield": ["yield_t_ha", "area_ha", "rain_mm"],
    "parking": ["occupied_spaces", "capacity", "revenue_usd"],
}
PRODUCTS = ["widget", "gadget", "sprocket", "gizmo", "doohickey", "flange", "valve", "bracket"]


def slug(text: str) -> str:
    return text.replace(" ", "_")


class LakeMaker:
    def __init__(self, root: Path, seed: int, big_mb: int = 8) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.big_mb = big_mb
        self.questions: list[dict] = []
        self.count = 0
        self._folders: set[Path] = set()

    def write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        if path.parent not in self._folders:  # one mkdir per folder, not per file (100k files)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(path.parent)
        path.write_bytes(data)
        self.count += 1

    def table(self, columns: list[str], rows: int, start: date | None = None) -> bytes:
        # rng.uniform(0, 500) is 0 + 500 * rng.random(): the same floats, without the call overhead.
        rnd = self.rng.random
        width = range(len(columns))
        first = (start or date(2020, 1, 1)).toordinal()
        lines = [",".join(["date", *columns])]
        for i in range(rows):
            values = ",".join(["%.2f" % (500 * rnd()) for _ in width])
            lines.append(f"{date.fromordinal(first + i).isoformat()},{values}")
        lines.append("")
        return "\n".join(lines).encode()

    def family(self, index: int, members: int) -> None:
        place = PLACES[index % len(PLACES)]
        theme = list(THEMES)[(index // len(PLACES)) % len(THEMES)]
        columns = THEMES[theme]
        folder = f"{slug(place)}/{slug(theme)}/daily_{index}"
        start = date(2015, 1, 1) + timedelta(days=self.rng.randrange(2000))
        paths = []
        for m in range(members):
            day = start + timedelta(days=m)
            rel = f"{folder}/{slug(theme)}_{day:%Y%m%d}.csv"
            self.write(rel, self.table(columns, 24, day))
            paths.append(rel)
        if index % 3 == 0:
            self.questions.append({"id": f"family-{index}", "files": paths,
                                   "query": f"What was the average {columns[0].split('_')[0]} of the {theme} readings "
                                            f"at {place.title()} (series {index}) across all days?"})

    def single_csv(self, index: int) -> None:
        place = self.rng.choice(PLACES)
        theme = self.rng.choice(list(THEMES))
        year = 2000 + index % 24
        station = f"st{index:05d}"
        rel = f"{slug(place)}/reports/{slug(theme)}_{station}_{year}.csv"
        columns = [*THEMES[theme], f"station_{station}_flag"]
        self.write(rel, self.table(columns, 40, date(year, 1, 1)))
        if index % 4 == 0:
            self.questions.append({"id": f"csv-{index}", "files": [rel],
                                   "query": f"For station {station} at {place.title()}, what was the maximum "
                                            f"{columns[1].replace('_', ' ')} in {year}?"})

    def workbook(self, index: int) -> None:
        from openpyxl import Workbook

        place = self.rng.choice(PLACES)
        wb = Workbook()
        first = wb.active
        first.title = "summary"
        first.append(["metric", "value"])
        first.append(["site", place])
        sheet_names = []
        for product in self.rng.sample(PRODUCTS, 3):
            ws = wb.create_sheet(f"{product}_q{index % 4 + 1}")
            sheet_names.append(ws.title)
            ws.append(["month", f"{product}_units", f"{product}_price_usd", f"ledger_{index}_code"])
            for month in range(1, 13):
                ws.append([month, self.rng.randrange(1000), round(self.rng.uniform(1, 99), 2), index])
        buffer = io.BytesIO()
        wb.save(buffer)
        # openpyxl stamps the current time into docProps; rewrite it so the file is deterministic.
        rel = f"{slug(place)}/finance/ledger_{index:05d}.xlsx"
        self.write(rel, _fixed_zip_time(buffer.getvalue()))
        if index % 4 == 0:
            product = sheet_names[0].split("_")[0]
            self.questions.append({"id": f"xlsx-{index}", "files": [rel],
                                   "query": f"In ledger {index} for {place.title()}, what was the total {product} "
                                            f"units across the months?"})

    def json_file(self, index: int) -> None:
        place = self.rng.choice(PLACES)
        records = [{"inspection_id": f"insp-{index}-{i}", "inspector": self.rng.choice(["ana", "bo", "cy", "di"]),
                    "score": self.rng.randrange(100), "site": {"name": place, "zone": self.rng.randrange(9)}}
                   for i in range(20)]
        rel = f"{slug(place)}/inspections/inspections_batch_{index:05d}.json"
        self.write(rel, json.dumps({"batch": index, "records": records}, indent=1).encode())
        if index % 4 == 0:
            self.questions.append({"id": f"json-{index}", "files": [rel],
                                   "query": f"Which inspector gave the highest score in inspection batch {index} "
                                            f"at {place.title()}?"})

    def note(self, index: int) -> None:
        place = self.rng.choice(PLACES)
        theme = self.rng.choice(list(THEMES))
        rel = f"{slug(place)}/notes/memo_{index:05d}.md"
        text = (f"# Memo {index}: {theme} at {place.title()}\n\nThe {theme} programme at {place.title()} was reviewed "
                f"by team {index % 17}. Calibration drift of {self.rng.uniform(0, 5):.1f}% was found.\n")
        self.write(rel, text.encode())
        if index % 4 == 0:
            self.questions.append({"id": f"md-{index}", "files": [rel],
                                   "query": f"What calibration drift did memo {index} report for the {theme} "
                                            f"programme at {place.title()}?"})

    def parquet_file(self, index: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        place = self.rng.choice(PLACES)
        n = 50
        table = pa.table({"shipment_id": [f"sh{index}-{i}" for i in range(n)],
                          "weight_kg": [self.rng.uniform(1, 900) for _ in range(n)],
                          "carrier": [self.rng.choice(["acme", "globex", "initech"]) for _ in range(n)],
                          f"route_{index}_leg": list(range(n))})
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        rel = f"{slug(place)}/logistics/shipments_{index:05d}.parquet"
        self.write(rel, buffer.getvalue())
        if index % 4 == 0:
            self.questions.append({"id": f"parquet-{index}", "files": [rel],
                                   "query": f"What is the total shipment weight in kg for route {index} "
                                            f"at {place.title()}, by carrier?"})

    def big_csv(self, index: int, mb: int) -> None:
        rel = f"archive/big_sensor_dump_{index}.csv"
        rows = mb * 1024 * 1024 // 60
        self.write(rel, self.table(["sensor_a", "sensor_b", "sensor_c", "sensor_d"], rows))

    def build(self, n: int) -> None:
        family_size = 30
        budget = {"family": int(n * 0.70), "csv": int(n * 0.10), "xlsx": int(n * 0.05), "json": int(n * 0.05),
                  "md": int(n * 0.05), "parquet": int(n * 0.04)}
        big = max(1, n // 2000)
        budget["csv"] += n - sum(budget.values()) - big
        f = 0
        while budget["family"] > 0:
            members = min(family_size, budget["family"])
            self.family(f, members)
            budget["family"] -= members
            f += 1
        for i in range(budget["csv"]):
            self.single_csv(i)
        for i in range(budget["xlsx"]):
            self.workbook(i)
        for i in range(budget["json"]):
            self.json_file(i)
        for i in range(budget["md"]):
            self.note(i)
        for i in range(budget["parquet"]):
            self.parquet_file(i)
        for i in range(big):
            self.big_csv(i, self.big_mb)


def _fixed_zip_time(data: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                import re

                body = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2024-01-01T00:00:00Z", body)
            fixed = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, body)
    return out.getvalue()


def make_lake(n: int, root: Path, seed: int = 7, big_mb: int = 8) -> tuple[int, Path]:
    """Write the lake and its questions; return (files written, questions path)."""
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise SystemExit(f"{root} is not empty: the lake would mix with what is there")
    maker = LakeMaker(root, seed, big_mb)
    maker.build(n)
    questions = root.parent / f"{root.name}.questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in maker.questions))
    return maker.count, questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=8, help="size of each big CSV (one per 2,000 files)")
    args = parser.parse_args()
    count, questions = make_lake(args.n, args.dir, args.seed, args.big_mb)
    print(f"wrote {count} files to {args.dir} and {sum(1 for _ in open(questions))} questions to {questions}")


if __name__ == "__main__":
    main()
