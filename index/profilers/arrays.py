"""NumPy arrays (.npy, .npz) from their headers plus small stats, and NASA CDF files through cdflib."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import Limits, Profile, ProfileError
from dslake_index.profilers.stats import jsonable
from dslake_index.profilers.textio import word_head

STATS_MAX_BYTES = 16 << 20  # arrays up to this size are loaded for min/max/mean
MAX_ARRAYS = 100


def _array_facts(arr: Any) -> dict[str, Any]:
    import numpy as np

    facts: dict[str, Any] = {}
    flat = arr.ravel()
    facts["head"] = [jsonable(v) for v in flat[:6].tolist()]
    if arr.size and np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating):
        finite = flat[np.isfinite(flat)] if np.issubdtype(arr.dtype, np.floating) else flat
        if finite.size:
            facts["min"] = jsonable(finite.min())
            facts["max"] = jsonable(finite.max())
            facts["mean"] = float(f"{float(finite.mean()):.6g}")
        if finite.size < flat.size:
            facts["non_finite"] = int(flat.size - finite.size)
    return facts


def _header(fh: Any) -> tuple[tuple[int, ...], str, bool]:
    import numpy as np

    fmt = np.lib.format
    version = fmt.read_magic(fh)  # the header only: no array data is read here
    if version == (1, 0):
        shape, _fortran, dtype = fmt.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, _fortran, dtype = fmt.read_array_header_2_0(fh)
    else:
        shape, _fortran, dtype = fmt._read_array_header(fh, version)
    return tuple(shape), str(dtype), bool(dtype.hasobject)


def profile_npz(path: Path, size: int, limits: Limits) -> Profile:
    """Profile an .npz archive: each array's name, shape, dtype and small stats (allow_pickle=False)."""
    import numpy as np

    try:
        zf = zipfile.ZipFile(path)
        members = [n for n in zf.namelist() if n.endswith(".npy")]
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise ProfileError(f"corrupt npz archive: {exc}"[:300]) from exc
    if not members:
        zf.close()
        raise ProfileError("zip archive with no .npy arrays in it")
    arrays = []
    notes: list[str] = []
    with zf:
        for name in members[:MAX_ARRAYS]:
            key = name[:-4]
            try:
                with zf.open(name) as fh:
                    shape, dtype, has_obj = _header(fh)
            except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as exc:
                raise ProfileError(f"corrupt array '{key}' in npz: {exc}"[:300]) from exc
            info: dict[str, Any] = {"name": key, "shape": list(shape), "dtype": dtype}
            if has_obj:
                info["note"] = "object array: needs allow_pickle=True (not loaded; only do that for trusted files)"
            elif zf.getinfo(name).file_size <= STATS_MAX_BYTES:
                try:
                    with zf.open(name) as fh:
                        arr = np.lib.format.read_array(fh, allow_pickle=False)
                    info.update(_array_facts(arr))
                except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as exc:
                    raise ProfileError(f"corrupt array '{key}' in npz: {exc}"[:300]) from exc
            arrays.append(info)
    if len(members) > MAX_ARRAYS:
        notes.append(f"{len(members)} arrays; the first {MAX_ARRAYS} are described")
    prof = Profile(format="npz", size=size, structure={"arrays": arrays}, notes=notes,
                   read_hint="np.load({path}, allow_pickle=False)")
    prof.headings = [a["name"] for a in arrays][:40]
    prof.notes.insert(0, f"NumPy archive of {len(members)} array(s); np.load(path)['name'] gives one array")
    return prof


def profile_npy(path: Path, size: int, limits: Limits) -> Profile:
    """Profile a single .npy array from its header, loading it for stats only when small."""
    import numpy as np

    try:
        with open(path, "rb") as fh:
            shape, dtype, has_obj = _header(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise ProfileError(f"corrupt .npy file: {exc}"[:300]) from exc
    info: dict[str, Any] = {"name": path.stem, "shape": list(shape), "dtype": dtype}
    if not has_obj and size <= STATS_MAX_BYTES:
        try:
            info.update(_array_facts(np.load(path, allow_pickle=False)))
        except (ValueError, OSError, EOFError) as exc:
            raise ProfileError(f"corrupt .npy file: {exc}"[:300]) from exc
    return Profile(format="npy", size=size, structure={"arrays": [info]},
                   read_hint="np.load({path}, allow_pickle=False)")


def profile_cdf(path: Path, size: int, limits: Limits) -> Profile:
    """Profile a NASA CDF file with cdflib: global attributes, variables with type, shape, units, ranges."""
    try:
        import cdflib
    except ImportError:
        from dslake_index.profilers.fallback import binary_profile

        with open(path, "rb") as fh:
            head = fh.read(4096)
        return binary_profile(head, size, "cdf", ["cdflib is not installed: read it with cdflib or spacepy"])
    import numpy as np

    try:
        cdf = cdflib.CDF(str(path))
        info = cdf.cdf_info()
        gattrs = cdf.globalattsget()
    except Exception as exc:  # cdflib raises bare exceptions of many kinds on corrupt files
        raise ProfileError(f"unreadable CDF file: {type(exc).__name__}: {exc}"[:300]) from exc
    variables = []
    for name in (list(info.zVariables) + list(info.rVariables))[:MAX_ARRAYS]:
        vi = cdf.varinq(name)
        atts = cdf.varattsget(name)
        var: dict[str, Any] = {"name": name, "type": vi.Data_Type_Description, "records": int(vi.Last_Rec) + 1,
                               "dims": [int(d) for d in vi.Dim_Sizes]}
        for key in ("DESCRIPTION", "CATDESC", "FIELDNAM", "UNITS", "FILLVAL"):
            if key in atts:
                var[key.lower()] = jsonable(atts[key])
        n_items = var["records"] * int(np.prod(var["dims"] or [1]))
        if n_items * 8 <= STATS_MAX_BYTES:
            try:
                data = np.asarray(cdf.varget(name))
                if "EPOCH" in var["type"] or "TT2000" in var["type"]:
                    times = cdflib.cdfepoch.to_datetime(data.ravel()[[0, -1]]) if data.size else []
                    var["first"], var["last"] = (str(times[0]), str(times[-1])) if len(times) else (None, None)
                else:
                    fill = atts.get("FILLVAL")
                    if fill is not None and np.issubdtype(data.dtype, np.number):
                        data = data[data != fill]
                    var.update({k: v for k, v in _array_facts(data).items() if k != "head"})
            except Exception:  # one unreadable variable leaves the rest of the description intact
                var["note"] = "values could not be read"
        variables.append(var)
    title = gattrs.get("TITLE")
    infolines = gattrs.get("INFO") or gattrs.get("TEXT") or []
    prof = Profile(format="cdf", size=size, title=jsonable(title[0] if isinstance(title, list) else title),
                   structure={"global_attributes": {k: _short(v) for k, v in list(gattrs.items())[:30]},
                              "variables": variables},
                   read_hint=None)
    if variables:  # a hint that runs as written: the first data variable (not an epoch), else the first one
        data_vars = [v for v in variables if "EPOCH" not in v["type"] and "TT2000" not in v["type"]]
        prof.read_hint = f"cdflib.CDF(str({{path}})).varget({(data_vars or variables)[0]['name']!r})"
    prof.headings = [v["name"] for v in variables][:40]
    prof.notes.append(f"NASA CDF v{info.Version} with {len(variables)} variable(s); "
                      "read any of them with cdflib.CDF(path).varget(name); "
                      "epoch variables convert with cdflib.cdfepoch.to_datetime")
    if isinstance(infolines, list) and infolines:
        prof.text_sample = word_head("\n".join(str(x) for x in infolines[:25]), 1500)
    return prof


def _short(v: Any) -> Any:
    if isinstance(v, list):
        return [jsonable(x) for x in v[:5]] + (["…"] if len(v) > 5 else [])
    return jsonable(v)
