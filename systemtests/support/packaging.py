"""What test_package.py needs (a pytest plugin, loaded by conftest.py): the binary it packages
(`--static-bin`, else TODAYSIM_STATIC_BIN: a todaysim with the Swift runtime linked in, as
`static_build` of Scripts/lib/package.sh makes it), `Scripts/package`'s two files and their
fields, apt-get as root (else through sudo), where each library the binary loads comes from, and
the README's walkthrough against an installed binary (`readme_walkthrough`, the one place that
knows how the walkthrough is run)."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Iterator, Optional

import pytest

from support import ROOT

TOOLCHAIN_LIBRARIES = re.compile(r"lib(swift|Foundation|_Foundation|dispatch|BlocksRuntime)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--static-bin", default=os.environ.get("TODAYSIM_STATIC_BIN"),
                     help="test_package.py: the todaysim it packages, built with the Swift runtime linked in "
                          "(Scripts/lib/package.sh's static_build; default: TODAYSIM_STATIC_BIN)")
    parser.addoption("--deb", default=os.environ.get("TODAYSIM_DEB"),
                     help="test_package.py: the .deb Scripts/package made of --static-bin (its tarball beside it), "
                          "tested as it is instead of packaging the binary again (default: TODAYSIM_DEB)")


@pytest.fixture(scope="session")
def static_binary(pytestconfig: pytest.Config) -> str:
    path = pytestconfig.getoption("--static-bin")
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"no static todaysim to package: pass --static-bin or set TODAYSIM_STATIC_BIN (got {path!r}); "
                    "Scripts/lib/package.sh's static_build makes one", pytrace=False)
    return os.path.abspath(str(path))


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Inside, SIGTERM (Scripts/test stopped: steps_stop gives a step 30 s) raises
    KeyboardInterrupt, so what a fixture installed or mounted is undone on the way out, as at ^C."""
    def interrupt(signum: int, frame: Optional[FrameType]) -> None:
        raise KeyboardInterrupt(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(*command: str, cwd: Optional[Path | str] = None, env: Optional[dict[str, str]] = None,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def output(*command: str) -> str:
    """What `command` prints on standard output, stripped ('' when it fails)."""
    return run(*command).stdout.strip()


def apt_get(*args: str, cwd: Optional[Path | str] = None) -> subprocess.CompletedProcess[str]:
    """apt-get as root, through sudo when not root, waiting for dpkg's lock rather than failing."""
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    return run(*sudo, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-o", "DPkg::Lock::Timeout=600", *args, cwd=cwd)


def dpkg_status(package: str) -> str:
    """`installed 0.1.0`, `not-installed`, or '' when dpkg never heard of it."""
    return output("dpkg-query", "-W", "-f=${db:Status-Status} ${Version}", package)


@dataclass
class Packaged:
    deb: Path
    tarball: Path
    version: str
    arch: str
    depends: str
    log: str  # what Scripts/package printed on standard error


def package(binary: str, out: Path, made: Optional[str] = None) -> Packaged:
    """`Scripts/package --binary BINARY --out OUT`: the .deb and the tarball of that binary; or,
    given `made` (a .deb Scripts/package made of it, `--deb`), that one and the tarball beside it."""
    if made:
        deb, log = Path(made).resolve(), ""
    else:
        done = run(os.path.join(ROOT, "Scripts", "package"), "--binary", binary, "--out", str(out), cwd=ROOT)
        if done.returncode != 0:
            pytest.fail(f"Scripts/package --binary {binary} failed:\n{done.stderr}", pytrace=False)
        [deb], log = sorted(out.glob("todaysim_*_*.deb")), done.stderr
    field = {name: output("dpkg-deb", "-f", str(deb), name) for name in ("Version", "Architecture", "Depends")}
    tarballs = sorted(deb.parent.glob("todaysim-*-linux-*.tar.gz"))
    tarball = next((path for path in tarballs if path.name == f"todaysim-{field['Version']}-linux-{field['Architecture']}.tar.gz"),
                   tarballs[0] if len(tarballs) == 1 else deb.parent / "no tarball")
    return Packaged(deb, tarball, field["Version"], field["Architecture"], field["Depends"], log)


def names(depends: str) -> set[str]:
    """The package names of a Depends field, alternatives included, versions and arch dropped."""
    found = set()
    for part in re.split(r"[,|]", depends):
        name = re.sub(r"\([^)]*\)", "", part).split(":")[0].strip()
        if name:
            found.add(name)
    return found


def through_depends(depends: str) -> dict[str, str]:
    """Every package the Depends bring in (their own Depends and Pre-Depends, installed here),
    mapped to the package of Depends it comes through."""
    via = {name: name for name in names(depends)}
    queue = list(via)
    while queue:
        package = queue.pop(0)
        for dependency in names(output("dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package)):
            if dependency not in via:
                via[dependency] = via[package]
                queue.append(dependency)
    return via


def owner(path: str) -> Optional[str]:
    """The package that installed a library file (dpkg records /lib or /usr/lib, as shipped)."""
    real = os.path.realpath(path)
    for candidate in (path, real, "/usr" + path, "/usr" + real, path.removeprefix("/usr"), real.removeprefix("/usr")):
        found = output("dpkg-query", "-S", candidate).split("\n")[0]
        if found:
            return found.split(": ")[0].split(",")[0].split(":")[0]
    return None


def library_origins(binary: str, depends: str) -> tuple[list[str], list[str]]:
    """Each library `ldd` lists for the binary with the package it comes from and why that one
    may be relied on: in Depends, the base system (Priority required, or Essential), or, for a
    library another one loads, a package the Depends bring in; a library the binary names itself
    (NEEDED) must be in Depends or the base system. Returns (a line per library, the problems)."""
    needed = set(re.findall(r"\(NEEDED\).*\[(.*)\]", output("readelf", "-d", binary)))
    in_depends, via = names(depends), through_depends(depends)
    lines, problems = [], []
    for line in output("ldd", binary).splitlines():
        match = re.match(r"\s*(\S+) => (\S+) \(", line) or re.match(r"\s*(/\S+) ()\(", line)
        if not match:
            if "not found" in line:
                problems.append(f"{line.strip()}")
            continue
        name, path = match.group(1), match.group(2) or match.group(1)
        package = owner(path)
        if package is None:
            problems.append(f"{name} ({path}): no Debian package has it")
            continue
        priority, _, essential = output("dpkg-query", "-W", "-f=${Priority} ${Essential}", package).partition(" ")
        direct = name in needed
        if package in in_depends:
            why = "in Depends"
        elif priority == "required" or essential == "yes":
            why = f"base system (Priority {priority}{', Essential' if essential == 'yes' else ''})"
        elif not direct and package in via:
            why = f"through {via[package]} of Depends"
        else:
            why = "NOT in Depends, the base system" + ("" if direct else " or the Depends' dependencies")
            problems.append(f"{name}: {package} {why}")
        lines.append(f"{name:28} {'NEEDED' if direct else 'loaded':7} {package:22} {why}")
    if not lines:
        problems.append(f"ldd {binary} listed no library")
    return lines, problems


def readme_walkthrough(binary: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The README's walkthrough against `binary serve` (a free port, a scratch SQLite file, every
    example twice): test_docs_examples.py in a run of its own, on the README alone."""
    return run(os.path.join(ROOT, "Scripts", "system-tests"), binary, "test_docs_examples.py", "--docs", "README.md",
               cwd=ROOT, env=env)
