"""One direction of imports (the developers' guide): the project's import-linter contracts hold
(`sim` <- `sweeps` <- `hydra_plugins` <- `analysis` / `cluster`, and no circle between sibling
modules), and the same contracts fail a package with a circle. The engine's Rust files are held
to the same rule by `sim/tests/modules.rs`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = str(Path(sys.executable).parent / "lint-imports")


def lint(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT, "--config", str(config), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.check
def test_the_projects_imports_go_one_way():
    out = lint(ROOT / "pyproject.toml", ROOT)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "no import circles between sibling modules KEPT" in out.stdout


def test_a_circle_between_two_files_breaks_the_contract(tmp_path: Path):
    """sim/fuzz.py and sim/fuzz_cost.py imported each other (issue 56): a package with that
    circle fails the project's own contract."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "fuzz.py").write_text("def main():\n    from pkg.fuzz_cost import fuzz\n")
    (pkg / "fuzz_cost.py").write_text("from pkg.fuzz import main\n\ndef fuzz():\n    pass\n")
    contract = next(
        block for block in (ROOT / "pyproject.toml").read_text().split("\n\n") if "acyclic_siblings" in block
    )
    config = tmp_path / "lint.toml"
    ours = contract.split("ancestors = ")[0]  # the contract as the project states it, on pkg
    config.write_text(f'[tool.importlinter]\nroot_packages = ["pkg"]\n\n{ours}ancestors = ["pkg"]\n')
    out = lint(config, tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no import circles between sibling modules BROKEN" in out.stdout
    assert ".fuzz_cost -> .fuzz" in out.stdout or ".fuzz -> .fuzz_cost" in out.stdout
