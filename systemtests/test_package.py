"""todaysim installed from its Debian package and removed again (issue 35, item 3). The binary is
`--static-bin` (a todaysim with the Swift runtime linked in: Scripts/test gives its static debug
build, Scripts/lib/package.sh), packaged by `Scripts/package --binary`; then the tarball holds
the package's binary, every library it loads comes from Debian packages it may rely on,
`apt-get install -y ./todaysim_<version>_<arch>.deb` installs it, the README's walkthrough runs
against `/usr/bin/todaysim serve`, and `apt-get purge -y todaysim` leaves nothing.

Installing needs root (else sudo). The install refuses when dpkg knows a todaysim package
already or /usr/bin/todaysim exists (it would replace it, then purge it); what it installed is
purged when the module ends however its tests did. The long version
(`test_the_package_in_a_fresh_debian_root`, run by `Scripts/package --check-clean` on the release
build) installs the package in a fresh Debian 12 root instead (support/debian_root.py)."""
from __future__ import annotations

import filecmp
import os
import tarfile
from pathlib import Path
from typing import Iterator

import pytest

from support.checks import Checks
from support.debian_root import fresh_root
from support.packaging import (TOOLCHAIN_LIBRARIES, Packaged, apt_get, dpkg_status, library_origins, output, package,
                               readme_walkthrough, sigterm_as_interrupt)
from support import ROOT

pytest_plugins = ["support.checks"]


@pytest.fixture(scope="module")
def packaged(static_binary: str, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Packaged:
    made = package(static_binary, tmp_path_factory.mktemp("package"), pytestconfig.getoption("--deb"))
    print(next((line for line in made.log.splitlines() if "Depends:" in line), made.log))
    return made


def test_the_files_are_named_by_the_version_and_the_architecture(packaged: Packaged, static_binary: str,
                                                                 checks: Checks) -> None:
    version, arch = packaged.version, packaged.arch
    checks((packaged.deb.name, packaged.tarball.name) == (f"todaysim_{version}_{arch}.deb", f"todaysim-{version}-linux-{arch}.tar.gz"),
           f"the files are named todaysim_{version}_{arch}.deb and todaysim-{version}-linux-{arch}.tar.gz: "
           f"{packaged.deb.name}, {packaged.tarball.name}")
    said = output(static_binary, "--version").split("\n")[0]
    checks(said == f"todaysim {version}" == "todaysim " + Path(ROOT, "VERSION").read_text().strip(),
           f"the version {version} is the binary's ({said}) and the file VERSION's")
    checks(arch == output("dpkg", "--print-architecture"), f"the architecture {arch} is dpkg's")
    checks.assert_all()


def test_the_package_and_the_tarball_hold_one_binary_and_its_documents(packaged: Packaged, tmp_path: Path,
                                                                       checks: Checks) -> None:
    deb, tar, top = tmp_path / "deb", tmp_path / "tar", f"todaysim-{packaged.version}"
    assert output("dpkg-deb", "-x", str(packaged.deb), str(deb)) == ""
    with tarfile.open(packaged.tarball) as archive:
        archive.extractall(tar, filter="tar")
    doc = deb / "usr" / "share" / "doc" / "todaysim"
    checks(os.access(deb / "usr" / "bin" / "todaysim", os.X_OK) and all(
        (doc / name).is_file() for name in ("copyright", "README.md", "changelog.Debian.gz")),
        "the package holds /usr/bin/todaysim and /usr/share/doc/todaysim/{copyright,README.md,changelog.Debian.gz}")
    checks(filecmp.cmp(doc / "copyright", Path(ROOT, "LICENSE"), shallow=False), "the package's copyright is LICENSE")
    listing = sorted(str(path.relative_to(tar)) for path in tar.rglob("*"))
    expected = [top] + [f"{top}/{name}" for name in ("CHANGELOG.md", "LICENSE", "README.md", "todaysim")]
    checks(listing == expected, f"the tarball is {top}/ with todaysim, LICENSE, README.md and CHANGELOG.md: {listing}")
    checks(filecmp.cmp(deb / "usr" / "bin" / "todaysim", tar / top / "todaysim", shallow=False),
           "the tarball's binary is the package's")
    checks.assert_all()


def test_every_library_comes_from_depends_or_the_base_system(packaged: Packaged, static_binary: str,
                                                             checks: Checks) -> None:
    lines, problems = library_origins(static_binary, packaged.depends)
    print("\n".join(lines))
    checks(not problems, f"every one of the {len(lines)} libraries the binary needs comes from Depends or the base "
                         f"system (and their dependencies): {problems}")
    toolchain = [line for line in output("ldd", static_binary).splitlines() if TOOLCHAIN_LIBRARIES.search(line)]
    checks(not toolchain, f"no library of the Swift toolchain: {toolchain}")
    checks.assert_all()


@pytest.fixture(scope="module")
def installed(packaged: Packaged) -> Iterator[dict[str, bool]]:
    """The package installed with apt-get, as a reader does; purged at the end unless a test did,
    however the run ends (a SIGTERM too). Yields {"installed": ...}, which the purging test clears."""
    state = dpkg_status("todaysim")
    if state and not state.startswith("not-installed"):
        pytest.fail(f"dpkg knows a todaysim package already ({state}): this test installs its own and purges it, which "
                    "would replace yours; remove it first (apt-get purge todaysim) and run again", pytrace=False)
    if os.path.lexists("/usr/bin/todaysim"):
        pytest.fail("/usr/bin/todaysim exists and no package owns it: installing would overwrite it and purging would "
                    "delete it; move it away and run again", pytrace=False)
    os.chmod(packaged.deb.parent, 0o755)  # apt fetches a local .deb as the _apt user
    state_of = {"installed": True}
    with sigterm_as_interrupt():
        try:
            done = apt_get("install", "-y", "-q", f"./{packaged.deb.name}", cwd=packaged.deb.parent)
            if done.returncode != 0:
                pytest.fail(f"apt-get install -y ./{packaged.deb.name} exited {done.returncode}:\n"
                            + "\n".join((done.stdout + done.stderr).splitlines()[-20:]), pytrace=False)
            yield state_of
        finally:
            if state_of["installed"]:
                apt_get("purge", "-y", "-qq", "todaysim")


def test_apt_get_installs_the_package(installed: dict[str, bool], packaged: Packaged, checks: Checks) -> None:
    version = packaged.version
    checks(dpkg_status("todaysim") == f"installed {version}", f"dpkg -s todaysim: installed, version {version}")
    said = output("/usr/bin/todaysim", "--version").split("\n")[0]
    checks(said == f"todaysim {version}", f"/usr/bin/todaysim --version says todaysim {version}: {said!r}")
    checks("not found" not in output("ldd", "/usr/bin/todaysim"), "/usr/bin/todaysim finds every library")
    checks.assert_all()


def test_the_readme_walkthrough_against_the_installed_binary(installed: dict[str, bool]) -> None:
    done = readme_walkthrough("/usr/bin/todaysim")
    assert done.returncode == 0, f"the README's walkthrough against /usr/bin/todaysim serve:\n{done.stdout}{done.stderr}"


def test_apt_get_purge_leaves_nothing(installed: dict[str, bool], checks: Checks) -> None:
    files = [path for path in output("dpkg-query", "-L", "todaysim").splitlines() if path and path != "/."]
    done = apt_get("purge", "-y", "-q", "todaysim")
    if checks(done.returncode == 0, f"apt-get purge -y todaysim: {done.stdout[-2000:]}{done.stderr}"):
        installed["installed"] = False
    checks(not dpkg_status("todaysim").startswith("installed"), "dpkg -s todaysim fails afterwards")
    # A directory other packages install into (/usr/bin, /usr/share/doc) stays.
    left = [path for path in files if os.path.lexists(path)
            and not (os.path.isdir(path) and not os.path.islink(path) and output("dpkg-query", "-S", path))]
    checks(bool(files) and not left, f"every one of the {len(files)} paths dpkg -L listed is gone "
                                     f"(shared directories aside): left {left}")
    checks.assert_all()


@pytest.mark.long
def test_the_package_in_a_fresh_debian_root(packaged: Packaged, tmp_path: Path, checks: Checks) -> None:
    """On a Debian 12 that has never seen Swift nor this repository: a fresh bookworm root, the
    .deb installed there with apt-get (its Depends from the mirror), then `todaysim serve` inside
    the chroot and the README's walkthrough from outside. Needs root."""
    assert os.geteuid() == 0, "debootstrap, mount and chroot need root"
    with sigterm_as_interrupt(), fresh_root(tmp_path, checks) as root:
        if root is None:
            checks.assert_all()
            return
        name, version = packaged.deb.name, packaged.version
        (root.path / "tmp" / name).write_bytes(packaged.deb.read_bytes())
        done = root.run("apt-get", "install", "-y", "-q", f"/tmp/{name}")
        checks(done.returncode == 0, f"apt-get install -y ./{name} in the root: {done.stdout[-2000:]}{done.stderr}")
        if done.returncode == 0:
            new = done.stdout.partition("The following NEW packages will be installed:")[2].partition("upgraded")[0]
            print("installed in the root:", " ".join(new.split()[:-1]))
            checks(root.run("dpkg-query", "-W", "-f=${db:Status-Status} ${Version}", "todaysim").stdout == f"installed {version}",
                   f"dpkg -s todaysim in the root: installed, version {version}")
            said = root.run("/usr/bin/todaysim", "--version").stdout.split("\n")[0]
            checks(said == f"todaysim {version}", f"todaysim --version in the root says todaysim {version}: {said!r}")
            ldd = root.run("ldd", "/usr/bin/todaysim").stdout
            checks("libc.so.6" in ldd and "not found" not in ldd and not TOOLCHAIN_LIBRARIES.search(ldd),
                   f"ldd /usr/bin/todaysim in the root: every library found, none of Swift's:\n{ldd}")
            # The server inside the root, curl and jq outside; the scratch database in the root.
            walked = readme_walkthrough(str(root.wrapper()), TMPDIR=str(root.path / "tmp"))
            checks(walked.returncode == 0, "the README's walkthrough against todaysim serve in the root:\n"
                                           f"{walked.stdout[-3000:]}{walked.stderr[-3000:]}")
    checks.assert_all()
