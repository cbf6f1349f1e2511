"""The lake a command reads when it is given no LAKE, --lake nor --catalog: the nearest folder, from the current one
upwards, that holds a catalog, as git finds the repository of a subfolder.

A user inside a lake's subfolder (`cd lake/2024/raw; dslake show data.csv`) means that lake; a catalog of their
own inside the subfolder is never what they want, so finding none says so without advising one there.
"""

from __future__ import annotations

from pathlib import Path

from dslake_index.front_door import CATALOG_CONFIG, MANIFEST_NAME

from dsstar_lake.base.errors import CatalogError


def holds_catalog(folder: Path, dirname: str) -> bool:
    """Tell whether folder holds a catalog: its manifest, or the settings of one whose vectors live on a server
    (searched from another machine without a manifest)."""
    catalog = folder / dirname
    return (catalog / MANIFEST_NAME).is_file() or (catalog / CATALOG_CONFIG).is_file()


def nearest_lake(start: Path, dirname: str) -> Path:
    """Return the nearest folder from start upwards that holds a catalog named dirname (catalog.dirname).

    A dirname that is an absolute path names one catalog wherever the command runs: start is the lake then, as
    before. Raises CatalogError when no folder up to the root holds one.
    """
    here = start.absolute()
    if Path(dirname).is_absolute():
        return here
    for folder in (here, *here.parents):
        if holds_catalog(folder, dirname):
            return folder
    raise CatalogError(
        f"no catalog in {here} nor in any folder above it",
        hint="run the command inside an indexed lake (any of its subfolders will do), or give the lake (--lake LAKE) "
             "or its catalog (--catalog DIR); a lake not indexed yet: `dslake index LAKE` with its top folder",
    )


def second_catalog_note(root: Path | None, catalog_dir: Path, dirname: str) -> str | None:
    """Return the note for a first index of a folder inside a lake that has a catalog already (a second catalog
    is then made beside the first, which is seldom meant), or None: root already has its catalog, or lies in no
    indexed lake, or the catalog is elsewhere (--catalog)."""
    if root is None or catalog_dir != root / dirname or (catalog_dir / MANIFEST_NAME).exists():
        return None
    above = next((folder for folder in root.parents if holds_catalog(folder, dirname)), None)
    if above is None:
        return None
    import shlex

    inside = shlex.quote(root.relative_to(above).as_posix())
    return (f"{above} above is a lake with a catalog of its own: this index made a second catalog in {catalog_dir}; "
            f"to keep one, index the folder into the lake's: dslake index {shlex.quote(str(above))} {inside}")
