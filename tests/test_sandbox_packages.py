"""The packages prompts name are the ones that import in the sandbox's interpreter, found once per interpreter."""

from __future__ import annotations

import sys

from sandbox_helpers import BACKENDS, make_lake, sandbox

from dsstar_lake.sandbox.packages import importable, packages_line


def test_listed_packages_import_in_the_sandbox(tmp_path):
    found = importable(sys.executable)
    assert {"pandas", "numpy"} <= set(found) and all(isinstance(v, str) for v in found.values())
    assert "pandas " + found["pandas"] in packages_line(sys.executable)
    sb = sandbox(BACKENDS[-1], make_lake(tmp_path / "lake"))
    code = "import importlib\n" + "".join(f"importlib.import_module({name!r})\n" for name in found
                                           if name not in ("astropy", "statsmodels", "sklearn"))
    result = sb.run(code + "print('imported')", tmp_path / "work")  # the heavy three are skipped for time
    assert result.ok and result.stdout.strip() == "imported", result.stderr


def test_an_interpreter_that_cannot_run_gives_a_cautious_line(tmp_path):
    assert importable(str(tmp_path / "no-python")) == {}
    assert "standard library" in packages_line(str(tmp_path / "no-python"))
