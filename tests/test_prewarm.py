"""Prewarm: what an index gets ready while its profilers run (dsstar_lake/usecases/prewarm.py)."""

from __future__ import annotations

from pathlib import Path

from dslake_index.front_door import CHROMA_DIR

from dsstar_lake.lake import Lake
from dsstar_lake.usecases.prewarm import Prewarm


def test_prewarm_opens_the_vector_store_and_loads_the_model(tmp_path: Path) -> None:
    """Chroma's first open of a folder (its database, dozens of fsyncs) happens here, not after profiling."""
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "a.csv").write_text("x,y\n1,2\n")
    lake = Lake.open(tmp_path / "lake")
    embedder = lake.catalog.index_embedder()
    warm = Prewarm(lambda: embedder, lake.catalog.vector_store)
    warm.start()
    assert warm._thread is not None
    warm._thread.join(timeout=120)
    warm.stop()
    assert (lake.catalog_dir / CHROMA_DIR / "chroma.sqlite3").is_file()
    assert embedder.active_backend is not None  # loaded, so the index's first batch does not wait for it
    assert lake.index().embedded == 1  # and the store it opened is the one the index writes


def test_a_stopped_prewarm_opens_nothing(tmp_path: Path) -> None:
    lake = Lake.open(tmp_path, catalog=tmp_path / "catalog")
    warm = Prewarm(lake.catalog.index_embedder, lake.catalog.vector_store)
    warm.stop()  # Ctrl-C before the profilers started: nothing more begins
    warm.start()
    assert warm._thread is not None
    warm._thread.join(timeout=120)
    assert not (tmp_path / "catalog" / CHROMA_DIR).exists()


def test_stop_does_not_wait_forever_for_a_load_that_never_ends() -> None:
    """A load stuck waiting (on an import lock the stopping thread holds, say) must not hang Ctrl-C (issue 46)."""
    import threading

    never = threading.Event()
    entered = threading.Event()

    def stuck_store() -> None:
        entered.set()
        never.wait()

    warm = Prewarm(lambda: None, stuck_store)
    warm.load_wait_s = 0.2
    warm.start()
    assert entered.wait(timeout=120)  # the store's open is under way: stop() has a load to wait for
    warm.stop()  # returns: the thread is left waiting, as a daemon
    assert warm._thread is not None and warm._thread.is_alive()
    never.set()
    warm._thread.join(timeout=120)
