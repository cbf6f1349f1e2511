"""Embedding benchmark: what a catalog's cards cost to embed, and whether a cheaper model keeps search's answers.

usage: python benchmarks/embed_bench.py --catalog DIR [--catalog DIR2] [--runs 3] [--lengths]
                                        [--int8 OUT.onnx | --compare MODEL.onnx] [--tasks FILE ...]

For each catalog (read only) it prints the cards' token counts (untruncated and at the model's 256-token cut),
how the index's batching pads them, then embeds every card as an index does (the index's Embedder: ONNX, one
batch per core) and prints cards per second (wall) and per CPU-second, the median of --runs.
--lengths times the ONNX session alone by sequence length and batch size (CPU ms per text, tokens per CPU-second,
and GFLOP/s at all-MiniLM-L6-v2's ~21 MFLOP per token): the machine's ceiling, whatever the cards are.
--compare MODEL.onnx embeds the same cards and the dev questions (--tasks, KramaBench's JSON) with another ONNX
file of the same network (an int8 quantisation, say) and prints its throughput, the minimum and 1st-percentile
cosine of its vectors to the export's, and for how many questions the dense top 10 over the cards is the same
set, both sides embedded with the same model. --int8 OUT.onnx first writes the int8 variant [embed] weights =
"int8" uses (index/onnx_int8.py) and compares it, one text per run as the Embedder runs it. Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout first

import numpy as np  # noqa: E402
from dslake_index.embed import (  # noqa: E402
    BATCH_TOKENS,
    INT8_BATCH,
    MAX_SEQ_LENGTH,
    Embedder,
    _batches,
    _OnnxBackend,
    default_cache_dir,
    ensure_onnx,
    model_dir,
)

FLOP_PER_TOKEN = 21e6  # 6 layers of 4*384^2 + 2*384*1536 multiply-adds, twice: the dense part at any length
DEV_TASKS = [Path("/work/shared/kramabench/tasks") / f"{d}.json"
             for d in ("archeology", "biomedical", "environment", "wildfire")]


def cards_of(catalog: Path) -> list[str]:
    """Return every entry's card, read from the manifest without writing to it."""
    db = catalog / "manifest.sqlite"
    if not db.is_file():
        raise SystemExit(f"error: no manifest in {catalog} (index a lake into it first)")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT card FROM entries ORDER BY id")]
    finally:
        conn.close()


def questions(files: list[Path]) -> list[str]:
    """Return the queries of KramaBench task files (JSON lists of {id, query, ...})."""
    out: list[str] = []
    for path in files:
        if not path.is_file():
            raise SystemExit(f"error: no task file {path}")
        out += [task["query"] for task in json.loads(path.read_text()) if isinstance(task, dict) and task.get("query")]
    return out


def token_report(texts: list[str], batch_size: int, budget: int) -> str:
    """Return the cards' token counts and the index's padding of them, as one line each."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    n = np.array([len(e.ids) for e in tokenizer.encode_batch(texts)])
    cut = np.minimum(n, MAX_SEQ_LENGTH)
    batches = _batches(cut.tolist(), batch_size, budget)
    padded = sum(len(b) * cut[b[0]] for b in batches)
    return (f"  tokens per card: mean {n.mean():.0f}, median {np.median(n):.0f}, p90 {np.percentile(n, 90):.0f}, "
            f"max {n.max()}; {(n >= MAX_SEQ_LENGTH).sum()} of {len(n)} reach the {MAX_SEQ_LENGTH}-token cut; "
            f"embedded: {cut.sum():,} tokens, mean {cut.mean():.0f}\n"
            f"  batches of <= {budget} padded tokens: {len(batches)}, {len(texts) / len(batches):.1f} cards each, "
            f"padding {padded / cut.sum() - 1:.1%} of the tokens")


def timed(encode: Any, texts: list[str], runs: int) -> tuple[float, float, Any]:
    """Return the median cards/s (wall) and cards per CPU-second of runs encodes, and the last vectors."""
    walls, cpus, vectors = [], [], None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = encode(texts)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return len(texts) / statistics.median(walls), len(texts) / statistics.median(cpus), vectors


def length_table(onnx_path: Path) -> None:
    """Print the ONNX session's CPU cost per text by sequence length and batch size (one thread, as an index)."""
    import onnxruntime
    from dslake_index.onnx_saved import options

    session = onnxruntime.InferenceSession(str(onnx_path), options(optimize=True), providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    rng = np.random.default_rng(31)
    print("session alone, one thread (CPU ms per text | tokens per CPU-s | GFLOP/s):")
    for length in (16, 32, 64, 128, 256):
        cells = []
        for batch in (1, 4, 8):
            ids = rng.integers(1000, 30000, size=(batch, length), dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            feeds = {k: v for k, v in feeds.items() if k in names}
            session.run(None, feeds)
            runs, start = 0, time.process_time()
            while time.process_time() - start < 0.5:
                session.run(None, feeds)
                runs += 1
            per_text = (time.process_time() - start) / runs / batch
            cells.append(f"b={batch}: {per_text * 1000:5.1f} | {length / per_text:5.0f} | "
                         f"{FLOP_PER_TOKEN * length / per_text / 1e9:4.1f}")
        print(f"  L={length:3d}  " + "   ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lengths", action="store_true")
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--int8", type=Path)
    parser.add_argument("--tasks", type=Path, action="append")
    args = parser.parse_args()

    threads = os.cpu_count() or 1
    embedder = Embedder(threads=threads).load()  # as an index loads it: [embed] defaults, one batch per core
    if embedder.active_backend != "onnx":
        raise SystemExit(f"error: the ONNX model is not available here ({embedder.fallback_reason})")
    export = ensure_onnx(model_dir(), default_cache_dir(), threads)
    texts: list[str] = []
    print(f"{threads} cores, load average {os.getloadavg()[0]:.1f} at the start; model {embedder.model_id}")
    for catalog in args.catalog:
        cards = cards_of(catalog)
        texts += cards
        print(f"{catalog}: {len(cards)} cards")
        print(token_report(cards, embedder.batch_size, BATCH_TOKENS))
        wall, cpu, _ = timed(embedder.encode, cards, args.runs)
        print(f"  embedded as an index does: {wall:.1f} cards/s, {cpu:.1f} cards per CPU-s "
              f"({1000 / cpu:.0f} CPU ms per card), median of {args.runs}")
    if args.lengths:
        length_table(export)
    other, batch_size = args.compare, embedder.batch_size
    if args.int8:
        from dslake_index.onnx_int8 import quantize

        quantize(export, args.int8)
        other, batch_size = args.int8, INT8_BATCH
    if other is None:
        return
    asked = questions(args.tasks or DEV_TASKS)
    # The same tokenizer, batching, pooling and threads as the index's backend, over the other file.
    variant = _OnnxBackend(model_dir(), other, threads, batch_size)
    base_vectors, base_questions = embedder.encode(texts), embedder.encode(asked)
    wall, cpu, vectors = timed(variant.encode, texts, args.runs)
    asked_vectors = variant.encode(asked)
    cosine, cosine_q = (base_vectors * vectors).sum(axis=1), (base_questions * asked_vectors).sum(axis=1)
    same = sum(set(np.argsort(-(base_vectors @ b))[:10]) == set(np.argsort(-(vectors @ v))[:10])
               for b, v in zip(base_questions, asked_vectors, strict=True))
    print(f"{other.name}: {wall:.1f} cards/s, {cpu:.1f} cards per CPU-s over all {len(texts)} cards; cosine to the "
          f"export's vectors: cards min {cosine.min():.4f}, 1st percentile {np.percentile(cosine, 1):.4f}; "
          f"questions min {cosine_q.min():.4f}; the same dense top 10 for {same} of {len(asked)} questions")


if __name__ == "__main__":
    main()
