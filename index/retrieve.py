"""Retriever: dense (card embeddings) and full-text (BM25) rankings, fused (normalised scores or ranks), de-duplicated."""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from dslake_index import fulltext
from dslake_index.documented import documented_data, with_documented
from dslake_index.errors import CatalogError, ConfigError
from dslake_index.gist import gist
from dslake_index.kin import KinKey, are_kin, kin_key, kin_line, question_words
from dslake_index.local_vectors import ManifestVectors
from dslake_index.sections import RetrieveSettings
from dslake_index.sidecars import sidecar_pairs, with_sidecar


@dataclass
class Hit:
    """One retrieved entry with its score and the parts the score came from."""

    entry_id: str
    kind: str
    path: str
    format: str | None
    member_count: int
    score: float
    dense: float | None = None
    fulltext: float | None = None
    dense_rank: int | None = None
    fulltext_rank: int | None = None
    card_line: str = ""
    summary: list[str] = field(default_factory=list)  # what it holds, in up to three lines (index/gist.py)
    copies: list[str] = field(default_factory=list)  # other paths with byte-identical content (not listed apart)
    kin: list[str] = field(default_factory=list)  # near-identical entries folded into this hit's slot (paths)
    kin_ids: list[str] = field(default_factory=list)
    companions: list[str] = field(default_factory=list)  # kin described whole in this slot (a subset of kin)
    sidecars: list[str] = field(default_factory=list)  # headers / format documents beside it, shown in its block
    sidecar_ids: list[str] = field(default_factory=list)
    description: str = field(default="", repr=False)
    # The same without the companions' descriptions (its own, sidecars and the near-identical files' lines): what an
    # agent shows when the companions are candidates of their own. And each kin's own description and one line
    # telling it apart (index/kin.py), in kin order. None of these go into to_dict: search output is unchanged.
    solo_description: str = field(default="", repr=False)
    kin_descriptions: list[str] = field(default_factory=list, repr=False)
    kin_notes: list[str] = field(default_factory=list, repr=False)
    kin_kinds: list[str] = field(default_factory=list, repr=False)  # file, family or dataset, in kin order
    kin_member_counts: list[int] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        # The dataclass's own repr lists all fifteen fields; a notebook wants to see which entry and how good.
        what = f"family of {self.member_count}" if self.kind == "family" else self.kind
        return f"Hit({self.path!r}, {self.format or '?'} {what}, score={self.score:.3f})"

    def to_dict(self, with_description: bool = False) -> dict[str, Any]:
        """Return the hit as JSON-ready data."""
        data = asdict(self)
        for internal in ("solo_description", "kin_descriptions", "kin_notes", "kin_kinds", "kin_member_counts"):
            data.pop(internal)
        if not with_description:
            data.pop("description")
        return data


@dataclass
class SearchTiming:
    """Where the time of one search went, in milliseconds."""

    embed_ms: float = 0.0
    dense_ms: float = 0.0
    fulltext_ms: float = 0.0
    complete_ms: float = 0.0
    total_ms: float = 0.0


def _embedder_of_the_vectors(conn: sqlite3.Connection, embedder: Any, model_id: str) -> Any:
    """Return an embedder whose vectors compare with the catalog's: embedder, or its other-weights variant; raise
    when neither made them (another model: the two spaces do not compare, and the nearest cards would be noise)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'embed_model'").fetchone()
    if row is None or row[0] == model_id:
        return embedder
    variant_for = getattr(embedder, "variant_for", None)
    other = variant_for(row[0]) if variant_for is not None else None
    if other is None:
        raise ConfigError(
            f"this catalog's vectors were made with {row[0]}, and this search would embed with {model_id}",
            hint="re-index the lake with this dslake and its [embed] settings (the cards are re-embedded)",
        )
    return other


class Retriever:
    """Answer a question (or a 'missing data' hint) with the top-K catalog entries."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        store_factory: Callable[[], Any],
        embedder_factory: Callable[[], Any],
        settings: RetrieveSettings,
    ) -> None:
        self._conn = conn
        self._store_factory = store_factory
        self._embedder_factory = embedder_factory
        self._store: Any = None
        self._embedder: Any = None
        self.settings = settings
        self.last_timing = SearchTiming()

    def warm_up(self) -> None:
        """Load the embedding model and open the vector store now rather than on the first search."""
        self._dense("warm up", 1)

    def search(self, query: str, k: int | None = None, exclude: Iterable[str] = ()) -> list[Hit]:
        """Return the top-k entries for the query, skipping excluded entry ids."""
        started = time.perf_counter()
        k = k or self.settings.k
        excluded = set(exclude)
        n = max(self.settings.candidates, k + len(excluded))
        timing = SearchTiming()
        dense, vector = self._dense(query, n, timing)
        t0 = time.perf_counter()
        # One read transaction: full-text hits and entry rows come from the same snapshot even while an index writes.
        self._conn.execute("BEGIN")
        try:
            text = fulltext.search(self._conn, query, n)
            timing.fulltext_ms = (time.perf_counter() - t0) * 1000
            if self.settings.complete_scores:
                dense = self._complete(vector, dense, text, timing)
            fused = self._fuse(dense, text)
            hits = self._materialise(fused, dense, text, excluded, k, question_words(query))
        finally:
            self._conn.execute("COMMIT")
        timing.total_ms = (time.perf_counter() - started) * 1000
        self.last_timing = timing
        return hits

    def _complete(self, vector: Any, dense: Ranking, text: Ranking, timing: SearchTiming) -> Ranking:
        """Add the full-text candidates dense did not return to the dense ranking, with their exact scores.

        Otherwise such a card counts as dense's worst, and in a lake where many cards look alike to the
        embedding model (a town's memos and its twenty daily series) the one series that full text singles out by
        its number falls outside the dense top 100 and loses to memos rated middling on both sides. The other
        way round was measured and left out: scoring dense's candidates by BM25 too costs a second MATCH (~30 ms
        at 27k entries) and found no more files.
        """
        t0 = time.perf_counter()
        seen = {entry_id for entry_id, _ in dense}
        missing = [entry_id for entry_id, _ in text if entry_id not in seen]
        if missing:
            try:
                dense = sorted(dense + self._store.similarities(vector, missing), key=_best_first)
            except CatalogError:
                # An embedded store that an index is writing can fail a read by id ("Error finding id") where
                # the nearest-neighbour query did not: answer without completion rather than not at all.
                pass
        timing.complete_ms = (time.perf_counter() - t0) * 1000
        return dense

    def _dense(self, query: str, n: int, timing: SearchTiming | None = None) -> tuple[Ranking, Any]:
        t0 = time.perf_counter()
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        # The store before the question's vector: it needs only the model's id, and a cold CLI search's question is
        # meanwhile embedded in a child process (dsstar_lake/terminal/question_ahead.py).
        if self._store is None or (isinstance(self._store, ManifestVectors) and not self._store.current(self._conn)):
            # The manifest's copies of the vectors when they are complete (index/local_vectors.py): no Chroma.
            # A RemoteRetriever has no manifest (conn None): it always asks the store.
            model_id = getattr(self._embedder, "model_id", None)
            local = ManifestVectors.load(self._conn, model_id) if model_id and self._conn is not None else None
            if local is None and model_id and self._conn is not None:
                # Vectors of the other [embed] weights: the question is embedded with those weights.
                self._embedder = _embedder_of_the_vectors(self._conn, self._embedder, model_id)
                if self._embedder.model_id != model_id:
                    local = ManifestVectors.load(self._conn, self._embedder.model_id)
            self._store = local if local is not None else self._store_factory()
        t1 = time.perf_counter()
        vector = self._embedder.encode([query])[0]
        t2 = time.perf_counter()
        results = self._store.query(vector, n)
        if timing is not None:
            timing.embed_ms = (t2 - t1) * 1000
            timing.dense_ms = (t1 - t0 + time.perf_counter() - t2) * 1000
        return [(entry_id, 1.0 - float(distance)) for entry_id, distance in results], vector

    def _fuse(self, dense: list[tuple[str, float]], text: list[tuple[str, float]]) -> list[tuple[str, float]]:
        weights = (self.settings.dense_weight, self.settings.fulltext_weight)
        method = self.settings.fusion
        if method == "convex":
            return fuse_convex([dense, text], weights)
        if method == "rrf":
            return fuse_rrf([dense, text], weights, self.settings.rrf_k)
        raise ConfigError(f"retrieve.fusion must be convex or rrf, not {method!r}")

    def _materialise(
        self,
        fused: list[tuple[str, float]],
        dense: list[tuple[str, float]],
        text: list[tuple[str, float]],
        excluded: set[str],
        k: int,
        question: frozenset[str] = frozenset(),
    ) -> list[Hit]:
        if not any(entry_id not in excluded for entry_id, _ in fused):
            return []
        # Excluded entries (already in the context) are read too: they still say which folder the question is about.
        ids = [entry_id for entry_id, _ in fused]
        marks = ",".join("?" * len(ids))
        rows = {
            row["id"]: row
            for row in self._conn.execute(f"SELECT {_ROW_COLUMNS}, folder FROM entries WHERE id IN ({marks})", ids)
        }
        # A format document's data entries follow it (index/documented.py), read here when they were no candidates.
        documents, documented_rows = documented_data(self._conn, rows.values(), _ROW_COLUMNS)
        for entry_id, row in documented_rows.items():
            rows.setdefault(entry_id, row)
        dense_at = {entry_id: (rank, score) for rank, (entry_id, score) in enumerate(dense, start=1)}
        text_at = {entry_id: (rank, score) for rank, (entry_id, score) in enumerate(text, start=1)}
        # The prior weighs the configured k best, not the k asked for: a hit's score must not depend on how many
        # hits are wanted (`-k 3` gave sales.csv 2.363, `-k 10` 2.309).
        fused = with_folder_prior(fused, {i: row["path"] for i, row in rows.items()}, self.settings.k,
                                  self.settings.folder_weight)
        fused = with_documented(fused, documents)
        seen_content: set[str] = set()
        hits: list[Hit] = []
        collapse = self.settings.collapse_kin
        leaders: list[tuple[Any, Hit]] = []  # (kin key, hit) of every hit so far
        kin_lines: dict[str, list[str]] = {}
        companions: dict[str, list[str]] = {}
        # The candidates' names per folder: a word two names differ by is a data value (a site) only in a series.
        siblings: dict[str, list[str]] = {}
        for row in rows.values():
            folder, _, name = row["path"].rpartition("/")
            siblings.setdefault(folder, []).append(name)
        # A sidecar ranks with its data entry: the first of the two to come takes the slot for the data entry.
        sidecar_of = sidecar_pairs(rows.values())
        sidecars: dict[str, list[str]] = {}
        for sidecar_id, data_id in sidecar_of.items():
            sidecars.setdefault(data_id, []).append(sidecar_id)
        placed: set[str] = set()
        for entry_id, score in fused:
            entry_id = sidecar_of.get(entry_id, entry_id)
            if entry_id in placed:
                continue
            placed.add(entry_id)
            row = rows.get(entry_id)
            if row is None or entry_id in excluded:
                continue  # a vector whose entry is gone (index in progress) or already in the context
            if len(hits) >= k and not collapse:
                break
            if row["content_hash"]:
                if row["content_hash"] in seen_content:
                    continue  # an exact copy of a file already ranked higher
                seen_content.add(row["content_hash"])
            if collapse:
                key = _kin_key(row["path"], row["kind"], row["format"], row["card"] or "")
                names = siblings.get(row["path"].rpartition("/")[0], [])
                leader, other = next(((hit, o) for o, hit in leaders if are_kin(o, key)), (None, None))
                if leader is not None:
                    # Same kind of file as one ranked higher: it shares that slot, not a slot of its own.
                    leader.kin.append(row["path"])
                    leader.kin_ids.append(entry_id)
                    leader.kin_descriptions.append(row["description"])
                    leader.kin_notes.append(kin_line(row["path"], row["description"]))
                    leader.kin_kinds.append(row["kind"])
                    leader.kin_member_counts.append(int(row["member_count"]))
                    if not are_kin(other, key, question, names) and len(leader.companions) < MAX_COMPANIONS:
                        # A different measure of the same layout (or one the question names): described whole.
                        leader.companions.append(row["path"])
                        companions.setdefault(leader.entry_id, []).append(row["description"])
                    else:  # one of a series of sites or dates: one line that tells it apart
                        kin_lines.setdefault(leader.entry_id, []).append(kin_line(row["path"], row["description"]))
                    continue
                if len(hits) >= k:
                    continue  # the slots are full; later candidates may still be kin of a hit
            d_rank, d_score = dense_at.get(entry_id, (None, None))
            t_rank, t_score = text_at.get(entry_id, (None, None))
            hits.append(Hit(
                entry_id=entry_id, kind=row["kind"], path=row["path"], format=row["format"],
                member_count=row["member_count"], score=round(score, 6),
                dense=None if d_score is None else round(d_score, 4), fulltext=None if t_score is None else round(t_score, 4),
                dense_rank=d_rank, fulltext_rank=t_rank,
                card_line=row["card"].splitlines()[0] if row["card"] else "", summary=list(_gist(row["card"] or "")),
                description=row["description"],
            ))
            if collapse:
                leaders.append((key, hits[-1]))
        for hit in hits:
            for sidecar_id in sidecars.get(hit.entry_id, []):
                hit.sidecars.append(rows[sidecar_id]["path"])
                hit.sidecar_ids.append(sidecar_id)
                hit.description = with_sidecar(hit.description, rows[sidecar_id]["path"], rows[sidecar_id]["description"])
            hit.solo_description = hit.description
            if hit.entry_id in companions:
                hit.description = with_companions(hit.description, companions[hit.entry_id])
            if hit.entry_id in kin_lines:
                hit.description = with_kin_section(hit.description, kin_lines[hit.entry_id])
                hit.solo_description = with_kin_section(hit.solo_description, kin_lines[hit.entry_id])
        self._attach_copies(hits)
        return hits

    def _attach_copies(self, hits: list[Hit]) -> None:
        """Name the identical copies of each file hit, so neither the agent nor an evaluation misses them."""
        by_id = {hit.entry_id: hit for hit in hits if hit.kind == "file"}
        if not by_id:
            return
        marks = ",".join("?" * len(by_id))
        rows = self._conn.execute(
            f"SELECT e.id, c.path FROM entries e JOIN entries c ON c.content_hash = e.content_hash AND c.id != e.id "
            f"WHERE e.id IN ({marks}) ORDER BY c.path",
            list(by_id),
        ).fetchall()
        for entry_id, path in rows:
            hit = by_id[entry_id]
            hit.copies.append(path)
            copy_line = f"Identical copy (same bytes): data/{path}\n"
            hit.description = hit.description.rstrip("\n") + "\n" + copy_line
            hit.solo_description = hit.solo_description.rstrip("\n") + "\n" + copy_line


Ranking = list[tuple[str, float]]  # (entry id, score), best first
_ROW_COLUMNS = "id, kind, path, format, member_count, content_hash, card, description"  # what a hit is made of

# What _materialise derives from an entry's path, kind, format and card (pure functions), kept across searches:
# ~90 candidates each time, about half of a warm search's time outside the model (at most 20k entries kept).
@functools.lru_cache(maxsize=20_000)
def _kin_key(path: str, kind: str, fmt: str | None, card: str) -> KinKey:
    return kin_key(path, kind, fmt, card)


@functools.lru_cache(maxsize=20_000)
def _gist(card: str) -> tuple[str, ...]:
    return tuple(gist(card))

# "Mostly the same columns": kin share more than half their column names (index/kin.py), not all of them; a model
# seat read "same columns" and took a 12-column datasheet's layout for an 8-column one's.
KIN_HEADING = ("Near-identical files (same folder pattern, name pattern and format as this entry, mostly the same "
               "columns: each line gives its own shape; read each like it, with its own path; a step that names one "
               "gets its full description):")


MAX_COMPANIONS = 3  # files of the same layout but another measure described whole in one slot; more become lines
# Neutral on what the differing word means: two beaches' datasheets can land here as well as two measures.
COMPANION_HEADING = ("Same layout, another file (its name differs from this entry's by one word; described whole, "
                     "read it with its own path):")


def with_companions(description: str, descriptions: list[str]) -> str:
    """Append the companions' own descriptions to a hit's description, each under a heading."""
    return "\n".join([description.rstrip("\n"), *(f"{COMPANION_HEADING}\n{d.rstrip()}" for d in descriptions)])


KIN_LINES = 8  # near-identical files described by a line each; the rest are counted and named by path


def with_kin_section(description: str, lines: list[str]) -> str:
    """Append the near-identical files to a hit's description: a line each for the first few, then their paths."""
    shown = [f"- {line}" for line in lines[:KIN_LINES]]
    rest = [line.split(" · ", 1)[0] for line in lines[KIN_LINES:]]
    if rest:
        shown.append(f"- and {len(rest)} more, read the same way: " + ", ".join(rest))
    return "\n".join([description.rstrip("\n"), KIN_HEADING, *shown])


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


def top_folder(path: str) -> str:
    """Return the first folder of a lake-relative path ('' for a file at the lake's root)."""
    head, sep, _ = path.partition("/")
    return head if sep else ""


def with_folder_prior(fused: Ranking, paths: dict[str, str], k: int, weight: float) -> Ranking:
    """Raise entries that sit in the same top-level folder as the question's best matches.

    A lake's first level usually separates its sources (a survey, an agency's data book, a mission), and the files
    a question needs almost always come from one of them: a beach question needs that folder's rainfall table
    even when a wildfire table shares more words with it. Each folder's share of the top k fused scores, each
    score discounted by its rank (score / rank, as in discounted cumulative gain), is added, times weight, to the
    score of every entry in it. The discount is why it works on a small source: a question about a folder of four
    files has its best match there and a tail of near-misses from many big folders, and undiscounted the tail
    outweighs the match (KramaBench, whole lake: all-found@10 0.92 undiscounted, 0.98 discounted). A lake kept in
    one folder is ranked as before.
    """
    if weight <= 0 or not fused:
        return fused
    best = [(entry_id, score) for entry_id, score in fused if entry_id in paths][:k]
    top = [(entry_id, max(score, 0.0) / rank) for rank, (entry_id, score) in enumerate(best, start=1)]
    total = sum(score for _, score in top)
    if total <= 0:
        return fused
    share: dict[str, float] = {}
    for entry_id, score in top:
        folder = top_folder(paths[entry_id])
        share[folder] = share.get(folder, 0.0) + score / total
    boosted = [(entry_id, score + weight * share.get(top_folder(paths.get(entry_id, "")), 0.0))
               for entry_id, score in fused]
    return sorted(boosted, key=_best_first)


def fuse_convex(rankings: list[Ranking], weights: tuple[float, ...]) -> Ranking:
    """Weighted sum of scores min-max normalised within each ranking (an entry absent from one gets 0 there).

    Unlike reciprocal rank fusion this keeps how far ahead a match is: a card that only the full-text side finds,
    but finds far better than anything else, is not outranked by cards both sides rate as middling.
    """
    scores: dict[str, float] = {}
    for weight, ranking in zip(weights, rankings, strict=True):
        if not ranking:
            continue
        top, low = ranking[0][1], ranking[-1][1]
        span = top - low
        for entry_id, value in ranking:
            share = (value - low) / span if span > 0 else 1.0
            scores[entry_id] = scores.get(entry_id, 0.0) + weight * share
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fuse_rrf(rankings: list[Ranking], weights: tuple[float, ...], rrf_k: float) -> Ranking:
    """Reciprocal rank fusion: each ranking adds weight / (rrf_k + rank)."""
    scores: dict[str, float] = {}
    for weight, ranking in zip(weights, rankings, strict=True):
        for rank, (entry_id, _) in enumerate(ranking, start=1):
            scores[entry_id] = scores.get(entry_id, 0.0) + weight / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
