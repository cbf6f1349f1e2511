"""Which entries of a lake `--analyzer auto` would summarise, and what that would cost with the default model.

usage: python benchmarks/wordless.py [--lake PATH] [--catalog DIR] [--model MODEL]
Indexes the lake into the catalog without a model (a scratch folder by default; a catalog that is up to date
costs a second), applies the selection rule of index/wordless.py to every entry, and prints how many are
wordless, per top-level folder, each one with its content words, and the summarizer's cost estimate for MODEL
(default: the packaged llm.models.summarizer) from the price registry. Asks no model. Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from dslake_index.profilers.base import Profile
from dslake_index.wordless import content_words

from dsstar_lake.enrichers.summarizer_pass import estimate, plan_targets
from dsstar_lake.lake import Lake
from dsstar_lake.llm.registry import model_for

HERE = Path(__file__).resolve().parent
DEFAULT_LAKE = HERE.parent.parent / "shared" / "kramabench" / "lake"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", type=Path, default=DEFAULT_LAKE)
    parser.add_argument("--catalog", type=Path, help="catalog folder (default: a scratch folder)")
    parser.add_argument("--model", help="model to price the estimate with")
    args = parser.parse_args()
    catalog = args.catalog or Path(tempfile.mkdtemp(prefix="dslake-wordless-"))
    lake = Lake.open(args.lake, catalog=catalog)
    lake.index()
    conn = lake.connection()
    settings = lake.settings.with_overrides({"llm.models.summarizer": args.model} if args.model else {})
    model = model_for(settings, "summarizer")
    targets = plan_targets(lake.catalog.enrichment_store(), f"llm:{model}")
    entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    print(f"== {args.lake} ({catalog})")
    print(f"wordless entries: {len(targets)} of {entries}")
    print("per folder: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(
        t.path.split("/")[0] for t in targets).items())))
    for t in targets:
        profile = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (t.hash,)).fetchone()[0]
        words = sorted(content_words(Profile.from_dict(json.loads(profile))))
        print(f"  {t.path}  content words: {', '.join(words) or '-'}")
    print(estimate(settings, settings.llm.provider, model, targets)["line"])


if __name__ == "__main__":
    main()
