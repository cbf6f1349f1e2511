"""index.embed: lazy loading, the ONNX export checked against sentence-transformers, shapes and caching."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from dslake_index import embed
from dslake_index.embed import Embedder, get_embedder
from dslake_index.sections import EmbedSettings

from dsstar_lake.base.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "sentence_transformers", "onnxruntime", "chromadb", "transformers")
TEXTS = [
    "Which county had the most unhealthy ozone days?",
    "wildfire acres burned by state and year",
    "",
    "radiocarbon ages of archaeological sites " * 80,  # past 256 tokens: truncated the same way
    "SW_OPER_DNSAPOD_2015_03_01.csv satellite density",
    "Zürich température moyenne °C",
    "a",
]


def _run_python(code: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def xdg_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return an XDG cache home whose dslake/models holds a freshly exported and verified ONNX model."""
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture(scope="module")
def onnx_embedder(xdg_cache: Path) -> Embedder:
    """Export the ONNX model into an empty cache (loads sentence-transformers once) and return its embedder."""
    embedder = Embedder(backend="onnx", batch_size=3, cache_dir=xdg_cache / "dslake" / "models").load()
    assert embedder.active_backend == "onnx", embedder.fallback_reason
    return embedder


def test_import_and_construction_load_nothing_heavy(tmp_path: Path) -> None:
    result = _run_python(
        f"""
        import sys
        import dslake_index.embed as e
        from dslake_index.sections import EmbedSettings
        emb = e.get_embedder(EmbedSettings("auto", batch_size=8, threads=1, index_threads=0, cache_dir="", weights="fp32"))
        print(emb.dim, emb.model_id)
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    first, loaded = result.stdout.splitlines()
    dim, model_id = first.split()
    assert dim == "384" and model_id.startswith("all-MiniLM-L6-v2:")
    assert loaded == "[]"
    assert not (tmp_path / "dslake").exists()  # nothing exported before the first encode


def test_onnx_matches_sentence_transformers(onnx_embedder: Embedder) -> None:
    reference = Embedder(backend="sentence-transformers", batch_size=2)
    expected = reference.encode(TEXTS)
    got = onnx_embedder.encode(TEXTS)  # batch_size 3: several length-sorted batches put back in order
    cosines = (expected * got).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines
    assert reference.active_backend == "sentence-transformers"
    assert reference.model_id == onnx_embedder.model_id  # same vector space, no re-embedding on switch


def test_batches_on_several_threads_give_the_same_vectors_in_order(onnx_embedder: Embedder) -> None:
    parallel = Embedder(backend="onnx", batch_size=2, threads=2, cache_dir=onnx_embedder.cache_dir)
    got = parallel.encode(TEXTS)  # four batches of two, run two at a time
    assert np.allclose(got, onnx_embedder.encode(TEXTS), atol=1e-5)
    assert embed._batches([3, 300, 20, 300], batch_size=8, budget=600) == [[1, 3], [2, 0]]


def test_export_is_cached_and_recorded(onnx_embedder: Embedder) -> None:
    folders = list(onnx_embedder.cache_dir.iterdir())
    assert len(folders) == 1
    names = {p.name for p in folders[0].iterdir()}
    assert {"model.onnx", "verified.json"} <= names
    assert not any(".tmp-" in n for n in names) and "failed.json" not in names
    record = json.loads((folders[0] / "verified.json").read_text())
    assert record["min_cosine"] >= embed.MIN_COSINE
    # A second embedder reuses the file instead of exporting again.
    before = (folders[0] / "model.onnx").stat().st_mtime_ns
    again = Embedder(backend="auto", cache_dir=onnx_embedder.cache_dir).load()
    assert again.active_backend == "onnx"
    assert (folders[0] / "model.onnx").stat().st_mtime_ns == before


def test_the_pre_optimised_copy_gives_bit_identical_vectors(onnx_embedder: Embedder) -> None:
    """Searches open a pre-optimised copy of the export (index/onnx_saved.py): not one vector may change."""
    folder = next(onnx_embedder.cache_dir.iterdir())
    saved = [p for p in folder.iterdir() if p.name.startswith("optimized-") and p.is_dir()]
    assert len(saved) == 1, sorted(p.name for p in folder.iterdir())
    assert {p.name for p in saved[0].iterdir()} == {"model.onnx", "weights.bin"}
    over_export = embed._OnnxBackend(embed.model_dir(), folder / "model.onnx", 1, 3)  # the session it replaces
    assert np.array_equal(onnx_embedder.encode(TEXTS), over_export.encode(TEXTS))


def test_a_copy_that_differs_is_recorded_and_the_export_used(onnx_embedder: Embedder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from dslake_index import onnx_saved

    export = next(onnx_embedder.cache_dir.iterdir()) / "model.onnx"
    (tmp_path / "model.onnx").symlink_to(export)
    monkeypatch.setattr(onnx_saved, "_same_outputs", lambda reference, candidate: False)
    session = onnx_saved.open_session(tmp_path / "model.onnx", embed._file_lock)
    assert session.get_inputs()  # a working session, over the export
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".lock", "model.onnx", f"optimized-{onnx_saved.machine_key()}.failed.json"]  # nothing left


def test_cold_query_in_fresh_process_never_imports_torch(onnx_embedder: Embedder, xdg_cache: Path) -> None:
    result = _run_python(
        """
        import sys
        from dslake_index.embed import get_embedder
        from dslake_index.sections import EmbedSettings
        emb = get_embedder(EmbedSettings("auto", batch_size=64, threads=1, index_threads=0, cache_dir="", weights="fp32"))
        v = emb.encode(["one query"])
        print(v.shape, v.dtype, emb.active_backend)
        print(sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
        """,
        xdg_cache,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["(1, 384) float32 onnx", "[]"]
    assert "Loading weights" not in result.stderr


def test_vectors_are_unit_float32(onnx_embedder: Embedder) -> None:
    vectors = onnx_embedder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Related texts are closer than unrelated ones.
    q, near, far = onnx_embedder.encode(["ozone pollution by county", TEXTS[0], TEXTS[4]])
    assert q @ near > q @ far
    assert onnx_embedder.encode([]).shape == (0, 384)


def test_encode_rejects_a_bare_string(onnx_embedder: Embedder) -> None:
    with pytest.raises(TypeError):
        onnx_embedder.encode("one query")  # type: ignore[arg-type]


def test_recorded_failure_falls_back_to_sentence_transformers(tmp_path: Path) -> None:
    folder = tmp_path / f"{embed.model_hash(embed.model_dir())}-v{embed.EXPORT_VERSION}"
    folder.mkdir()
    (folder / "failed.json").write_text(json.dumps({"reason": "exporter exploded"}))
    embedder = Embedder(backend="auto", cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="exporter exploded"):
        vectors = embedder.encode(["one query"])
    assert embedder.active_backend == "sentence-transformers"
    assert "exporter exploded" in (embedder.fallback_reason or "")
    assert vectors.shape == (1, 384)


def test_what_loading_would_cost_is_known_before_loading(tmp_path: Path, onnx_embedder: Embedder) -> None:
    # The index's warm-up asks first: it opens an exported model itself, but leaves an export to a child process.
    empty = Embedder(backend="auto", cache_dir=tmp_path)
    assert empty.needs_export() and not empty.loads_quickly()
    folder = embed.onnx_dir(embed.model_dir(), tmp_path)
    folder.mkdir(parents=True)
    (folder / "failed.json").write_text('{"reason": "x"}')
    assert not empty.needs_export() and not empty.loads_quickly()  # a recorded failure: no export to start
    exported = Embedder(backend="auto", cache_dir=onnx_embedder.cache_dir)
    assert exported.loads_quickly() and not exported.needs_export()
    torch_only = Embedder(backend="sentence-transformers", cache_dir=onnx_embedder.cache_dir)
    assert not torch_only.loads_quickly() and not torch_only.needs_export()


def test_an_abandoned_export_is_cleared_before_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = embed.onnx_dir(embed.model_dir(), tmp_path)
    folder.mkdir(parents=True)
    (folder / "model.onnx.tmp-999999").write_bytes(b"half of an export that Ctrl-C ended")
    monkeypatch.setattr(embed, "_export_and_verify", lambda *args: None)  # the export itself is tested above
    embed.ensure_onnx(embed.model_dir(), tmp_path)
    assert not list(folder.glob("model.onnx.tmp-*"))


def test_unwritable_cache_falls_back(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    embedder = Embedder(backend="onnx", cache_dir=blocker / "models")
    with pytest.warns(RuntimeWarning, match="cannot export"):
        embedder.load()
    assert embedder.active_backend == "sentence-transformers"


def test_model_hash_follows_the_model_files(tmp_path: Path) -> None:
    for name in ("model.safetensors", *embed._MODEL_FILES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"content of {name}")
    first = embed.model_hash(tmp_path)
    assert embed.model_hash(tmp_path) == first
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert embed.model_hash(tmp_path) != first


EMBED = EmbedSettings("auto", batch_size=64, threads=1, index_threads=0, cache_dir="", weights="fp32")


def test_get_embedder_is_cached_per_settings() -> None:
    a = get_embedder(EMBED)
    # index_threads is not the model's own: Catalog.index_embedder copies it into threads.
    assert get_embedder(replace(EMBED, index_threads=4)) is a
    assert get_embedder(replace(EMBED, backend="sentence-transformers")) is not a


@pytest.mark.parametrize("changed", [{"backend": "tensorflow"}, {"batch_size": 0}])
def test_bad_settings_are_config_errors(changed: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        get_embedder(replace(EMBED, **changed))


def test_int8_variant_is_made_once_close_to_the_export_and_named_apart(onnx_embedder: Embedder) -> None:
    """[embed] weights = "int8" embeds with a quantised copy of the export: near its vectors, yet another space."""
    from dslake_index.onnx_int8 import INT8_VERSION

    int8 = Embedder(backend="onnx", weights="int8", batch_size=3, cache_dir=onnx_embedder.cache_dir)
    assert int8.model_id == f"{onnx_embedder.model_id}:int8-v{INT8_VERSION}"  # catalogs re-embed on a switch
    fp32 = onnx_embedder.encode(TEXTS)
    got = int8.encode(TEXTS)
    assert got.shape == (len(TEXTS), embed.DIM) and np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * fp32).sum(axis=1)
    # The empty text ([CLS] [SEP] alone) moves most (0.978 when measured); texts with words stay above 0.99.
    assert cosines.min() >= 0.97 and np.median(cosines) >= 0.99, cosines
    assert not np.allclose(got, fp32, atol=1e-4)  # the quantised network ran, not the export
    variant = next(onnx_embedder.cache_dir.iterdir()) / f"int8-v{INT8_VERSION}" / "model.onnx"
    assert variant.exists() and not list(variant.parent.parent.glob("int8-*.failed.json"))
    written = variant.stat().st_mtime_ns
    again = Embedder(backend="auto", weights="int8", cache_dir=onnx_embedder.cache_dir)
    assert again.load_quick()  # a search opens the file made before, quantising nothing
    # One text per run: a text's vector does not depend on the others embedded with it, nor on their order.
    assert np.array_equal(again.encode(TEXTS[::-1])[::-1], got)
    assert np.array_equal(again.encode(TEXTS[:1]), got[:1])
    assert variant.stat().st_mtime_ns == written


def test_int8_is_used_only_where_it_can_be(onnx_embedder: Embedder, tmp_path: Path) -> None:
    from dslake_index.onnx_int8 import failure_path

    with pytest.raises(ConfigError, match="embed.weights must be one of fp32, int8"):
        Embedder(weights="int4")
    torch = Embedder(backend="sentence-transformers", weights="int8", cache_dir=onnx_embedder.cache_dir)
    assert not torch.int8_in_use() and torch.model_id == onnx_embedder.model_id  # int8 is an ONNX file
    # A variant recorded as failed on this machine: fp32 vectors, under the fp32 name, so nothing mixes.
    export = next(onnx_embedder.cache_dir.iterdir()) / "model.onnx"
    cache = tmp_path / "models"
    (cache / export.parent.name).mkdir(parents=True)
    (cache / export.parent.name / "model.onnx").symlink_to(export)
    failure_path(cache / export.parent.name / "model.onnx").write_text('{"reason": "min cosine 0.5 < 0.95"}\n')
    refused = Embedder(backend="onnx", weights="int8", cache_dir=cache)
    assert not refused.int8_in_use() and refused.model_id == onnx_embedder.model_id
    assert np.allclose(refused.encode(TEXTS), onnx_embedder.encode(TEXTS), atol=1e-5)


def test_an_int8_variant_that_fails_its_check_is_recorded_and_refused(onnx_embedder: Embedder,
                                                                       tmp_path: Path) -> None:
    from dslake_index import onnx_int8

    export = tmp_path / "model.onnx"
    export.symlink_to(next(onnx_embedder.cache_dir.iterdir()) / "model.onnx")
    checked: list[Path] = []

    def too_far(candidate: Path) -> str | None:
        checked.append(candidate)
        return "min cosine 0.5 < 0.95"

    with pytest.raises(RuntimeError, match="min cosine 0.5"):
        onnx_int8.ensure_int8(export, embed._file_lock, too_far)
    assert onnx_int8.failure_path(export).exists() and not onnx_int8.int8_path(export).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "int8-v1.failed.json", "model.onnx"]
    with pytest.raises(RuntimeError, match="recorded in"):  # the record answers: nothing is quantised again
        onnx_int8.ensure_int8(export, embed._file_lock, too_far)
    assert len(checked) == 1


def test_a_catalog_follows_its_weights_and_a_search_embeds_as_its_cards_were(
        onnx_embedder: Embedder, tmp_path: Path) -> None:
    from dsstar_lake.lake import Lake

    lake_dir = tmp_path / "lake"
    (lake_dir / "sales").mkdir(parents=True)
    (lake_dir / "sales" / "widgets.csv").write_text("region,widget_units,price\nnorth,12,3.5\nsouth,7,4.0\n")
    (lake_dir / "weather.csv").write_text("date,station,rain_mm\n2024-01-01,A1,3.2\n2024-01-02,A1,0.0\n")
    cache = {"embed.cache_dir": str(onnx_embedder.cache_dir), "embed.weights": "fp32"}
    fp32 = Lake.open(lake_dir, overrides=cache)
    assert fp32.index().embedded == 2
    int8 = Lake.open(lake_dir, overrides={**cache, "embed.weights": "int8"})
    assert int8.index().embedded == 2  # no card changed: the vectors are re-embedded for the other variant
    assert int8.search("widget units by region", k=1)[0].path == "sales/widgets.csv"
    # A search with the other weights embeds its question as the cards were: with the catalog's variant.
    searcher = Lake.open(lake_dir, overrides=cache)
    assert searcher.search("widget units by region", k=1)[0].path == "sales/widgets.csv"
    used = searcher.retriever()._embedder
    assert used.model_id == int8.index_embedder().model_id and used.int8_in_use()
    assert fp32.index().embedded == 2  # and back: fp32 vectors again
    assert Lake.open(lake_dir, overrides=cache).search("rain at the station", k=1)[0].path == "weather.csv"
    # Vectors of another model altogether are refused: the two spaces do not compare.
    with sqlite3.connect(lake_dir / ".dslake" / "manifest.sqlite") as conn:
        conn.execute("UPDATE meta SET value = 'another-model:0123:mean-l2-256' WHERE key = 'embed_model'")
    with pytest.raises(ConfigError, match="this catalog's vectors were made with another-model"):
        Lake.open(lake_dir, overrides=cache).search("rain at the station", k=1)


def test_the_prewarm_child_makes_the_int8_variant_ahead_of_the_index(onnx_embedder: Embedder, tmp_path: Path) -> None:
    """A first index's prewarm child quantises while the profilers run, so the embedding step only opens the file."""
    from dslake_index.onnx_int8 import int8_path

    export = next(onnx_embedder.cache_dir.iterdir()) / "model.onnx"
    cache = tmp_path / "models"
    (cache / export.parent.name).mkdir(parents=True)
    for name in ("model.onnx", "verified.json"):
        (cache / export.parent.name / name).symlink_to(export.parent / name)
    ahead = Embedder(backend="auto", weights="int8", cache_dir=cache)
    assert ahead.needs_export() and not ahead.loads_quickly()
    embed.export_onnx(str(cache), 1, "int8")
    assert int8_path(cache / export.parent.name / "model.onnx").exists()
    assert not ahead.needs_export() and ahead.loads_quickly()
