"""A pre-optimised copy of the ONNX export, saved once per machine beside it, that opens about 4x faster.

onnxruntime spends most of a session's creation parsing the 90 MB model and optimising its graph: ~0.35 CPU-s of
every cold `dslake search`. Saved after that optimisation, with the weights in a file of their own that
onnxruntime maps instead of copying, the same network opens in ~0.08 CPU-s with graph optimisation off, and the
process holds ~80 MB less. The copy is written by a session over the export (the same onnxruntime, the same
level and options as the session it replaces) and is kept only when its outputs are bit-identical to that
session's on probe inputs of several lengths, so no vector changes; when the check fails, that is recorded and the
export is used as before. Optimisations may depend on the CPU's instruction sets and on onnxruntime's version:
both name the copy, so a cache folder shared by machines keeps one copy per kind of machine.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

WEIGHTS = "weights.bin"  # the optimised model's initializers, referenced by name from its model.onnx
PROBE_LENGTHS = (1, 9, 64, 256)  # token counts of the probe batches: short queries up to the longest cards


@functools.cache  # the same for the process's life: a cold search asks it for the export and the int8 variant
def machine_key() -> str:
    """Return what an optimised graph depends on: onnxruntime's version, the architecture, the CPU's flags."""
    import onnxruntime

    flags = ""
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            flags = next((line for line in fh if line.startswith(("flags", "Features"))), "")
    text = "\0".join((onnxruntime.__version__, platform.machine(), flags.strip()))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def options(optimize: bool) -> Any:
    """Return the session options of every embedding session: one thread, quiet; graph optimisation as asked."""
    import onnxruntime

    opts = onnxruntime.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    if not optimize:  # the saved copy is optimised already
        opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return opts


def settled(onnx_path: Path) -> bool:
    """Tell whether open_session(onnx_path) would open what is on disk, writing nothing: the copy is saved, or its
    failed check is recorded."""
    key = machine_key()
    return (onnx_path.parent / f"optimized-{key}" / "model.onnx").exists() or \
        (onnx_path.parent / f"optimized-{key}.failed.json").exists()


def open_session(onnx_path: Path, lock: Callable[[Path], contextlib.AbstractContextManager[None]]) -> Any:
    """Return an InferenceSession for the export at onnx_path: over its verified optimised copy when there is one
    (made now, once, under lock(folder/.lock), when neither it nor a failed check is recorded), else over the export.

    A cache folder that cannot be written, or a copy onnxruntime refuses, leaves the export in use.
    """
    import onnxruntime

    key = machine_key()
    saved = onnx_path.parent / f"optimized-{key}"
    failed = onnx_path.parent / f"optimized-{key}.failed.json"
    if not (saved / "model.onnx").exists() and not failed.exists():
        with contextlib.suppress(OSError):
            with lock(onnx_path.parent / ".lock"):
                if not (saved / "model.onnx").exists() and not failed.exists():
                    _save_verified(onnx_path, saved, failed)
    if (saved / "model.onnx").exists():
        with contextlib.suppress(Exception):  # e.g. a copy cut short by a full disk: the export still works
            return onnxruntime.InferenceSession(str(saved / "model.onnx"), options(optimize=False),
                                                providers=["CPUExecutionProvider"])
    return onnxruntime.InferenceSession(str(onnx_path), options(optimize=True), providers=["CPUExecutionProvider"])


def _save_verified(onnx_path: Path, saved: Path, failed: Path) -> None:
    """Write the optimised copy into a temporary folder, compare it with the export's session, then rename."""
    import onnxruntime

    tmp = saved.with_name(f"{saved.name}.tmp-{os.getpid()}")
    for stale in saved.parent.glob(f"{saved.name}.tmp-*"):  # a copy abandoned by Ctrl-C (~90 MB each)
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    try:
        writer = options(optimize=True)
        writer.optimized_model_filepath = str(tmp / "model.onnx")
        writer.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
        writer.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        reference = onnxruntime.InferenceSession(str(onnx_path), writer, providers=["CPUExecutionProvider"])
        try:
            candidate = onnxruntime.InferenceSession(str(tmp / "model.onnx"), options(optimize=False),
                                                     providers=["CPUExecutionProvider"])
            same = _same_outputs(reference, candidate)
        except OSError:
            raise
        except Exception as exc:  # onnxruntime cannot read what it wrote: keep the export
            same = False
            reason = f"the optimised copy does not load: {type(exc).__name__}: {exc}"
        else:
            reason = "the optimised copy's outputs differ from the export's"
        if same:
            shutil.rmtree(saved, ignore_errors=True)  # a folder left without its model.onnx
            os.replace(tmp, saved)
        else:
            failed.write_text(json.dumps({"reason": reason}) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _same_outputs(reference: Any, candidate: Any) -> bool:
    """Tell whether both sessions give bit-identical outputs on padded batches of several lengths."""
    import numpy as np

    names = {i.name for i in reference.get_inputs()}
    rng = np.random.default_rng(31)
    for length in PROBE_LENGTHS:
        ids = rng.integers(1000, 30000, size=(3, length), dtype=np.int64)
        mask = np.ones_like(ids)
        mask[1, length // 2 + 1:] = 0  # a padded row, as batches of texts of unequal length have
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feeds = {name: value for name, value in feeds.items() if name in names}
        for want, got in zip(reference.run(None, feeds), candidate.run(None, feeds), strict=True):
            if not np.array_equal(want, got):
                return False
    return True
