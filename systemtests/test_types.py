"""The tree is typed: `mypy --strict` over every file of it (the package's own types included, as
installed in the tests' venv) reports nothing."""
from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_tree_type_checks_strictly() -> None:
    mypy = os.path.join(os.path.dirname(sys.executable), "mypy")
    result = subprocess.run([mypy, "--strict", "--cache-dir=/dev/null", "."], cwd=HERE,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found" in result.stdout
