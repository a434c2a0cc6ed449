"""The tools some system tests run beside the binary: Node >= 20 (the bridge core's tests, the
TypeScript package), and Debian packages installed when missing the one way `Scripts/` installs
them (`install_packages` of Scripts/lib/deps.sh: apt-get, as root or through sudo)."""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Optional

import playwright
import pytest

from support import ROOT
DEPS = os.path.join(ROOT, "Scripts", "lib", "deps.sh")


def node_20() -> Optional[str]:
    """The first Node >= 20 of: `node` on PATH, /usr/bin/node, the Node that PyPI's playwright
    wheel ships (playwright/driver/node, in the tests' venv) where Debian has only Node 18."""
    candidates = [shutil.which("node"), "/usr/bin/node", os.path.join(os.path.dirname(playwright.__file__), "driver", "node")]
    for candidate in candidates:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run([candidate, "-e", "process.exit(Number(process.versions.node.split('.')[0]) >= 20 ? 0 : 1)"],
                               capture_output=True, timeout=60)
        if probe.returncode == 0:
            return candidate
    return None


def install_packages(*packages: str) -> None:
    """Installs the Debian packages named (none: nothing) with Scripts/lib/deps.sh's
    `install_packages`; a failure fails the test, saying what could not be installed."""
    if not packages:
        return
    done = subprocess.run(["bash", "-c", '. "$0" && install_packages "$@"', DEPS, *packages],
                          capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        pytest.fail(f"could not install {', '.join(packages)}:\n{done.stdout}{done.stderr}", pytrace=False)


def require_commands(**packages: str) -> None:
    """`require_commands(tsc="node-typescript")`: installs the package of each command not on PATH."""
    install_packages(*[package for command, package in packages.items() if shutil.which(command) is None])
