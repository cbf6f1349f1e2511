"""The package pins no machine's torch build; the README's install puts the CPU build first, and CI installs the same way.

An `==` on torch in the package's metadata would make every machine take one machine's build (the CPU file that
lies on disk here; anywhere else a pinned release pulls whatever build the index serves for it). Which build a
machine gets is the installer's step: the README's first command, which .ci/run mirrors.
"""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import REPO
from packaging.requirements import Requirement

# The packages whose build (CPU, CUDA, ROCm) depends on the machine.
MACHINE_BUILT = {"torch", "torchvision", "torchaudio"}


def build_pins(requirements: list[str]) -> list[str]:
    """Return the requirements that pin a machine-built package to one release or one local build (+cpu)."""
    pinned = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.name.lower() not in MACHINE_BUILT:
            continue
        if any(spec.operator in ("==", "===") or "+" in spec.version for spec in requirement.specifier):
            pinned.append(text)
    return pinned


def test_build_pins_are_recognised():
    assert build_pins(["torch==2.13.0", "torch===2.13.0+cpu", "torch>=2.5,!=2.6.0+cu121", "Torch == 2.1"]) == [
        "torch==2.13.0", "torch===2.13.0+cpu", "torch>=2.5,!=2.6.0+cu121", "Torch == 2.1"]
    assert build_pins(["torch>=2.5", "torch", "numpy==2.0", "torch>=2.5; python_version>'3.11'"]) == []


def test_pyproject_pins_no_torch_build():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    assert any(Requirement(r).name == "torch" for r in requirements), "torch is imported (index/embed.py): declared"
    assert build_pins(requirements) == []


def _first_command() -> str:
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1)
    return next(line for line in block.splitlines() if line.strip() and not line.startswith("#"))


def test_the_readme_installs_the_cpu_build_first_and_says_how_elsewhere():
    command = _first_command()
    assert command.index("pip install -q torch==2.13.0") < command.index("pip install -q -e '.[dev,science]'")
    # apt where it exists, through sudo only when not root.
    assert "command -v apt-get" in command and '[ "$(id -u)" = 0 ] || command -v sudo' in command
    readme = (REPO / "README.md").read_text()
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in readme


def test_ci_installs_as_the_readme_says():
    ci = (REPO / ".ci" / "run").read_text()
    command = _first_command()
    for step in ("python3 -m venv .venv", ".venv/bin/pip install -q torch==2.13.0",
                 ".venv/bin/pip install -q -e '.[dev,science]'", "apt-get install -y -qq bubblewrap chromium",
                 '[ "$(id -u)" = 0 ] || command -v sudo'):
        assert step in command and step in ci, step
    assert ci.index("torch==2.13.0") < ci.index("-e '.[dev,science]'")


@pytest.mark.slow
def test_the_built_wheel_pins_no_torch_build(tmp_path):
    from test_wheel_install import build_and_install

    site = build_and_install(tmp_path)
    (metadata,) = site.glob("dsstar_lake-*.dist-info/METADATA")
    requires = [line.split(":", 1)[1].strip() for line in metadata.read_text().splitlines()
                if line.startswith("Requires-Dist:")]
    assert any(Requirement(r).name == "torch" for r in requires)
    assert build_pins(requires) == []
    (wheel,) = Path(tmp_path / "dist").glob("dsstar_lake-*.whl")
    assert zipfile.ZipFile(wheel).read(f"{metadata.parent.name}/METADATA").decode() == metadata.read_text()
