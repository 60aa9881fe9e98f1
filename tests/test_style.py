"""Small units, held by a test: no source module over 800 lines and no function over 120, in the
Python packages and the engine's Rust (the developers' guide, "Code style"). Tests and generated
stubs are exempt."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sim", "sweeps", "analysis", "cluster", "bench", "hydra_plugins")
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120
RUST_FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))? )?(?:const )?(?:unsafe )?fn (\w+)")


def python_sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "target" not in p.parts)


def rust_sources() -> list[Path]:
    return sorted((ROOT / "sim" / "src").rglob("*.rs"))


def rust_functions(text: str) -> list[tuple[str, int]]:
    """(name, lines) of every Rust function with a body, outside `#[cfg(test)]` modules. rustfmt
    puts a function's closing brace at its `fn` line's indentation, which is all this needs."""
    lines = text.split("\n")
    test_mod = (
        i for i, line in enumerate(lines) if line.strip() == "#[cfg(test)]" and "mod " in " ".join(lines[i : i + 3])
    )
    cut = next(test_mod, len(lines))
    out = []
    for i, line in enumerate(lines[:cut]):
        m = RUST_FN.match(line)
        if not m:
            continue
        j = i
        while j < cut and not lines[j].rstrip().endswith(("{", ";")):
            j += 1  # a signature over several lines
        if j == cut or lines[j].rstrip().endswith(";"):
            continue  # a declaration without a body
        close = re.compile("^" + re.escape(m.group(1)) + r"\}")
        end = next(k for k in range(j, len(lines)) if close.match(lines[k]))
        out.append((m.group(2), end - i + 1))
    return out


def test_the_rust_scan_finds_bodies_and_skips_declarations():
    text = "impl X {\n    fn a(&self) -> u32;\n    pub fn b(\n        x: u32,\n    ) -> u32 {\n        x\n    }\n}\n"
    assert rust_functions(text) == [("b", 5)]


@pytest.mark.check
def test_no_module_is_over_800_lines():
    long = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in python_sources() + rust_sources()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


@pytest.mark.check
def test_no_function_is_over_120_lines():
    long = []
    for p in python_sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name}: {n}")
    for p in rust_sources():
        long += [
            f"{p.relative_to(ROOT)} {name}: {n}" for name, n in rust_functions(p.read_text()) if n > MAX_FUNCTION_LINES
        ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
