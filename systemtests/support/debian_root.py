"""A fresh Debian 12 root for test_package.py's long version: `debootstrap --variant=minbase
bookworm` from the mirror apt uses here (the first bookworm URI of /etc/apt/sources.list*, one-line
and deb822 sources alike, else deb.debian.org; TODAYSIM_MIRROR overrides), /proc mounted, apt's
sources and the resolver copied in. Every process whose root it is and every mount under it are
gone when the `with` ends, then the root. Needs root."""
from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from support.checks import Checks
from support.tools import install_packages

WRAPPER = """#!/usr/bin/env bash
# /usr/bin/todaysim of the chroot {root}; a path under it is given as the chroot sees it.
args=()
for arg in "$@"; do
    case "$arg" in "{root}"/*) arg=${{arg#"{root}"}} ;; esac
    args+=("$arg")
done
exec env -u TMPDIR chroot "{root}" /usr/bin/todaysim "${{args[@]}}"
"""


def mirrors() -> tuple[str, str]:
    """The bookworm and bookworm-security URIs apt uses here."""
    main = security = None
    paths = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")) \
        + sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
    for path in paths:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        entries: list[tuple[str, str]] = []
        if path.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
                if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                    entries += [(uri, suite) for uri in fields.get("URIs", "").split() for suite in fields.get("Suites", "").split()]
        else:
            entries += re.findall(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", text, re.M)
        for uri, suite in entries:
            main = main or (uri if suite == "bookworm" else None)
            security = security or (uri if suite == "bookworm-security" else None)
    return (os.environ.get("TODAYSIM_MIRROR") or main or "http://deb.debian.org/debian",
            security or "http://deb.debian.org/debian-security")


@dataclass
class Root:
    path: Path

    def run(self, *command: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
        """`command` inside the root, with a clean environment."""
        return subprocess.run(["chroot", str(self.path), "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                               "DEBIAN_FRONTEND=noninteractive", "LANG=C.UTF-8", *command],
                              capture_output=True, text=True, timeout=timeout)

    def wrapper(self) -> Path:
        """A program outside the root that runs its /usr/bin/todaysim, turning ROOT/x into /x."""
        path = self.path.parent / "todaysim"
        path.write_text(WRAPPER.format(root=self.path))
        path.chmod(0o755)
        return path


def mounts_under(root: Path) -> list[str]:
    with open("/proc/mounts") as table:
        points = [line.split()[1] for line in table]
    return sorted((point for point in points if point == str(root) or point.startswith(f"{root}/")), reverse=True)


def clean_up(root: Path) -> None:
    for proc in glob.glob("/proc/[0-9]*"):
        with contextlib.suppress(OSError):
            if os.readlink(f"{proc}/root") == str(root):
                os.kill(int(proc.removeprefix("/proc/")), signal.SIGKILL)
    for point in mounts_under(root):
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", point], capture_output=True)
    if mounts_under(root):
        raise AssertionError(f"mounts remain under {root}; left it in place")
    shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def fresh_root(work: Path, checks: Checks) -> Iterator[Optional[Root]]:
    """The fresh root under `work`, or None when debootstrap or apt-get update failed there
    (each a failed check)."""
    if shutil.which("debootstrap") is None:
        install_packages("debootstrap")
    mirror, security = mirrors()
    path = work / "root"
    try:
        began = time.monotonic()
        done = subprocess.run(["nice", "debootstrap", "--variant=minbase", "bookworm", str(path), mirror],
                              capture_output=True, text=True, timeout=1800)
        if not checks(done.returncode == 0, f"debootstrap bookworm from {mirror} ({time.monotonic() - began:.0f} s): "
                                            f"{done.stdout[-2000:]}{done.stderr[-2000:]}"):
            yield None
            return
        swift = [os.path.join(folder, name) for folder, folders, files in os.walk(path) for name in folders + files
                 if name == "swift" or name.startswith("libswiftCore.so")]
        checks(not swift, f"the fresh root has no Swift (no swift, no libswiftCore.so): {swift[:3]}")
        (path / "etc" / "apt" / "sources.list").write_text(
            f"deb {mirror} bookworm main\ndeb {mirror} bookworm-updates main\ndeb {security} bookworm-security main\n")
        shutil.copy("/etc/resolv.conf", path / "etc" / "resolv.conf")
        subprocess.run(["mount", "-t", "proc", "proc", str(path / "proc")], check=True)
        root = Root(path)
        update = root.run("apt-get", "update", "-q")
        if not checks(update.returncode == 0, f"apt-get update in the root: {update.stdout[-2000:]}{update.stderr}"):
            yield None
            return
        yield root
    finally:
        clean_up(path)
