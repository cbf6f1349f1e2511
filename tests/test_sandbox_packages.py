"""The packages prompts name are the ones that import in the sandbox's interpreter, found once per interpreter."""

from __future__ import annotations

import sys

import pytest
from sandbox_helpers import BACKENDS, make_lake, sandbox

from dsstar_lake.sandbox.packages import importable, packages_line

SCIENCE = ("numpy", "pandas", "scipy", "sklearn", "statsmodels", "astropy", "matplotlib", "skyfield", "sgp4",
           "pyarrow", "openpyxl", "cdflib")
# A figure with text needs matplotlib's fonts; a time zone and a parquet round trip need tzdata and pyarrow.
USE = """
import importlib, io
for name in {names!r}:
    importlib.import_module(name)
import matplotlib.pyplot as plt
from matplotlib import font_manager
fig, ax = plt.subplots()
ax.set_title('units by region')
fig.savefig('chart.png')
font = font_manager.findfont('DejaVu Sans', fallback_to_default=False)
import pandas as pd
frame = pd.DataFrame({{'t': pd.to_datetime(['2024-01-01']).tz_localize('Europe/Paris'), 'x': [1]}})
buf = io.BytesIO()
frame.to_parquet(buf)
print('imported', font.endswith('.ttf'), pd.read_parquet(buf).shape)
"""


def test_listed_packages_import_in_the_sandbox():
    found = importable(sys.executable)
    assert {"pandas", "numpy"} <= set(found) and all(isinstance(v, str) for v in found.values())
    assert "pandas " + found["pandas"] in packages_line(sys.executable)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_science_packages_work_in_the_sandbox(backend, tmp_path):
    """The allow-list of binds leaves every science package importable, with fonts, time zones and parquet."""
    found = importable(sys.executable)
    names = [n for n in SCIENCE if n in found]
    assert {"numpy", "pandas", "matplotlib", "pyarrow"} <= set(names)
    sb = sandbox(backend, make_lake(tmp_path / "lake"), timeout_s=120, cpu_s=120, memory_mb=4096)
    result = sb.run(USE.format(names=names), tmp_path / "work")
    assert result.ok and result.stdout.split() == ["imported", "True", "(1,", "2)"], result.stderr
    assert (tmp_path / "work" / "chart.png").read_bytes().startswith(b"\x89PNG")


def test_an_interpreter_that_cannot_run_gives_a_cautious_line(tmp_path):
    assert importable(str(tmp_path / "no-python")) == {}
    assert "standard library" in packages_line(str(tmp_path / "no-python"))


def test_the_answer_is_kept_for_this_interpreter_until_its_packages_change(tmp_path, monkeypatch):
    from dsstar_lake.sandbox import packages

    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(packages.site, "getsitepackages", lambda: [str(site_packages)])
    probes = []
    real_run = packages.subprocess.run
    monkeypatch.setattr(packages.subprocess, "run", lambda *a, **k: probes.append(a) or real_run(*a, **k))
    answers = []
    for change in (None, None, "new_package-1.0.dist-info"):
        if change:
            (site_packages / change).mkdir()  # what an install, a removal or an upgrade does to the folder
        packages.importable.cache_clear()  # a new dslake process
        answers.append(packages.importable(sys.executable))
    assert len(probes) == 2 and answers[0] == answers[1] == answers[2] and "pandas" in answers[0]
    packages.importable.cache_clear()
