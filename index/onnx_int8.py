"""The int8 variant of the ONNX export ([embed] weights = "int8"): its file, written once per machine beside the export.

onnxruntime's dynamic quantisation of the export's MatMuls with constant weights (signed int8, one scale per
output channel; activations quantised at run time; attention scores, GELU and the layer norms left in fp32), except
the feed-forward output of layers 0 and 1, kept in fp32: quantising those moved the vectors most (min cosine to the
export's over 490 cards 0.9915 with them kept, 0.9867 without). It takes ~0.5x the CPU per card (measured
2026-12-08 on 2 cores, 73 against 37 cards per CPU-second). Nothing is downloaded: the variant is computed from
the verified export. Its vectors are not the export's, so the Embedder names it in its model_id and a catalog
embedded with one variant is re-embedded by the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

# Bump when the quantisation recipe changes: the variant's folder and the catalogs' model_id follow it.
INT8_VERSION = 1


def int8_path(onnx_path: Path) -> Path:
    """Return where the int8 variant of the export at onnx_path lives (written or not)."""
    return onnx_path.parent / f"int8-v{INT8_VERSION}" / "model.onnx"


def failure_path(onnx_path: Path) -> Path:
    """Return the record of a variant that could not be made or failed its check."""
    return onnx_path.parent / f"int8-v{INT8_VERSION}.failed.json"


def quantize(source: Path, target: Path) -> None:
    """Write the int8 variant of the ONNX file source into target."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # quantize_dynamic logs a "consider pre-processing" advice at WARNING on the root logger each call.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], nodes_to_exclude=_kept_fp32(source),
                         extra_options={"MatMulConstBOnly": True})
    finally:
        root.setLevel(level)


def _kept_fp32(source: Path) -> list[str]:
    """Return the MatMuls left in fp32: the feed-forward output (intermediate -> hidden) of layers 0 and 1."""
    import onnx

    graph = onnx.load(str(source), load_external_data=False).graph
    return [node.name for node in graph.node
            if node.op_type == "MatMul" and node.name.endswith("/output/dense/MatMul")
            and "attention" not in node.name and any(f"layer.{i}/" in node.name for i in (0, 1))]


def ensure_int8(onnx_path: Path, lock: Callable[[Path], contextlib.AbstractContextManager[None]],
                check: Callable[[Path], str | None]) -> Path:
    """Return the int8 variant of the export at onnx_path, writing it first (under lock(folder/.lock)) if needed.

    check(candidate) returns None when the written file's vectors are close enough to the export's, else the reason
    it is refused; a refusal, or a quantiser error, is recorded in failure_path and raised as RuntimeError.
    """
    target = int8_path(onnx_path)
    failed = failure_path(onnx_path)
    if target.exists():
        return target
    with lock(onnx_path.parent / ".lock"):
        if not target.exists():
            if failed.exists():
                raise RuntimeError(_reason(failed))
            _write_checked(onnx_path, target, failed, check)
    return target


def _write_checked(onnx_path: Path, target: Path, failed: Path,
                   check: Callable[[Path], str | None]) -> None:
    tmp = target.parent.with_name(f"{target.parent.name}.tmp-{os.getpid()}")
    for stale in target.parent.parent.glob(f"{target.parent.name}.tmp-*"):  # abandoned by Ctrl-C
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    try:
        try:
            quantize(onnx_path, tmp / "model.onnx")
            reason = check(tmp / "model.onnx")
        except OSError:
            raise
        except Exception as exc:  # the quantiser or onnxruntime refused the graph
            reason = f"int8 quantisation failed: {type(exc).__name__}: {exc}"
        if reason is not None:
            failed.write_text(json.dumps({"reason": reason}) + "\n")
            raise RuntimeError(f"{reason} (recorded in {failed}; delete it to try again)")
        shutil.rmtree(target.parent, ignore_errors=True)
        os.replace(tmp, target.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _reason(failed: Path) -> str:
    try:
        reason = json.loads(failed.read_text())["reason"]
    except (OSError, ValueError, KeyError):
        reason = "an earlier int8 quantisation failed"
    return f"{reason} (recorded in {failed}; delete it to try again)"
