"""The TypeScript package (typescript/) as a Web team's project gets it: its generated types against
the OpenAPI document and package.json's version against VERSION, `tsc --strict` over the package
and its tests, its tests under Node's own runner against this build's binary (every operation
called for real, refusals, streams resumed, paging, reports, export/replay/fork, a host trace, the
Playwright helper driving Debian's Chromium through the real Playwright for JavaScript), then
`npm pack` and the tarball installed with no registry into a scratch project: nothing but the
package installed, the README's example, its fragment and a page's bridge code type-checked there
with --strict (ts/: each misuse an error), each planted mistake of that page failing tsc, and the
example run, printing what the README shows.

Tools: Node >= 20 (support.tools.node_20), Debian's tsc (node-typescript 4.8) and npm, run by
that Node, installed when missing; playwright-core is the one PyPI's playwright wheel ships in the
tests' venv (npm's registry is out of reach here), driving Debian's chromium."""
from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
import playwright
import pytest

from support import ROOT
from support.tools import node_20, require_commands

PACKAGE = os.path.join(ROOT, "typescript")
CONSUMER_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ts")
VERSION = Path(ROOT, "VERSION").read_text().strip()
NODE_TESTS = 52  # typescript/test/*.test.ts (some tests made in loops): a run with fewer lost some
PAGE_TYPE_TESTS = 21  # test/consumer/page-types.test.ts: the page compiles, 20 mistakes fail tsc
SHIPPED = ["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/client.js", "dist/client.d.ts",
           "dist/generated/api.d.ts", "dist/playwright.js", "dist/playwright.d.ts", "dist/virtual-time.js",
           "dist/bridge.d.ts", "dist/bridge-core.mjs", "dist/bridge-core.d.mts", "dist/bridge-globals.d.ts"]


@dataclass
class Tools:
    node: str
    tsc: str
    npm: str
    playwright_core: str
    browser: str
    work: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, cwd: Path | str, timeout: float = 300, **env: str) -> str:
        """Runs `args` with this Node (a .js/.mjs first argument: the tsc or npm script), fails
        the test with the output when it exits non-zero; returns the output."""
        done = subprocess.run([self.node, *args], cwd=cwd, env={**self.env, **env}, capture_output=True, text=True,
                              timeout=timeout)
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{' '.join(args)} (in {cwd}) exited {done.returncode}:\n{output}"
        return output

    def tsc_run(self, *args: str, cwd: Path | str) -> str:
        return self.run(self.tsc, *args, cwd=cwd)


def tally(output: str) -> dict[str, int]:
    """Node's test runner's `# tests N`, `# pass N`, `# fail N`."""
    return {name: int(value) for name, value in re.findall(r"^# (tests|pass|fail) (\d+)$", output, re.M)}


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Tools:
    node = node_20()
    assert node, "no Node >= 20: not on PATH, not /usr/bin/node, not playwright/driver/node in the tests' venv"
    require_commands(tsc="node-typescript", npm="npm", chromium="chromium")
    core = os.path.join(os.path.dirname(playwright.__file__), "driver", "package")
    assert os.path.isfile(os.path.join(core, "index.mjs")) and os.path.isfile(os.path.join(core, "index.d.ts")), \
        f"no playwright-core in {core}"
    # The package's dev dependency, as `npm install` would put it (npm's registry is out of reach).
    subprocess.run([sys.executable, os.path.join(PACKAGE, "tools", "link_playwright_core.py"), core], check=True)
    work = tmp_path_factory.mktemp("typescript")
    # The node that npm's lifecycle scripts (prepack) find is this one; npm's cache and logs stay
    # in the scratch folder (a run leaves nothing in the home folder, two runs share no cache).
    (work / "bin").mkdir()
    (work / "bin" / "node").symlink_to(node)
    env = {**os.environ, "PATH": f"{work / 'bin'}:{os.environ['PATH']}", "npm_config_cache": str(work / "npm-cache"),
           "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}
    return Tools(node, os.path.realpath(str(shutil.which("tsc"))), os.path.realpath(str(shutil.which("npm"))),
                 core, str(shutil.which("chromium-headless-shell") or shutil.which("chromium")), work, env)


@pytest.fixture(scope="module")
def build(tools: Tools) -> Path:
    """The package and its tests compiled to JavaScript, with the bridge core and the page
    driver's scripts beside the build as `npm pack`'s prepack puts them in dist/."""
    out = tools.work / "build"
    tools.tsc_run("-p", os.path.join(PACKAGE, "tsconfig.test.json"), "--outDir", str(out), cwd=PACKAGE)
    tools.run(os.path.join(PACKAGE, "tools", "ship-core.mjs"), str(out / "src"), cwd=PACKAGE)
    return out


@pytest.fixture(scope="module")
def tarball(tools: Tools) -> Path:
    tools.run(tools.npm, "pack", "--offline", "--silent", "--pack-destination", str(tools.work), cwd=PACKAGE)
    packed = tools.work / f"todaysim-{VERSION}.tgz"
    assert packed.is_file(), f"npm pack made no {packed.name}: {os.listdir(tools.work)}"
    return packed


@pytest.fixture(scope="module")
def consumer(tools: Tools, tarball: Path) -> Path:
    """A scratch project with the tarball installed offline (installed.txt: what npm installed),
    then the project's Playwright (a peer the package does not install) linked in, and the code
    it compiles: the README's blocks, ts/'s files, the package's test/consumer/bridge-page.ts."""
    project = tools.work / "consumer"
    project.mkdir()
    (project / "package.json").write_text('{ "name": "consumer", "private": true, "type": "module" }\n')
    tools.run(tools.npm, "install", "--offline", "--no-audit", "--no-fund", "--silent", str(tarball), cwd=project)
    (project / "installed.txt").write_text("\n".join(sorted(os.listdir(project / "node_modules"))))
    (project / "node_modules" / "playwright-core").symlink_to(tools.playwright_core)
    write_readme_blocks(project)
    for name in os.listdir(CONSUMER_FILES):
        shutil.copy(os.path.join(CONSUMER_FILES, name), project / name)
    shutil.copy(os.path.join(PACKAGE, "test", "consumer", "bridge-page.ts"), project)
    return project


def write_readme_blocks(project: Path) -> None:
    """typescript/README.md's first example (the ```ts block of '## A first test') and the ```text
    block after it (expected.txt), its fragment (the ```ts block of '## Streams, paging, traces')
    in a function that has the example's client, and its page code ('## Bridge types')."""
    text = Path(PACKAGE, "README.md").read_text(encoding="utf-8")

    def blocks(section: str, kind: str) -> list[str]:
        body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        return [code for found, code in re.findall(r"^```(\w+)\n(.*?)^```$", body, re.S | re.M) if found == kind]

    (project / "example.ts").write_text(blocks("A first test", "ts")[0])
    (project / "expected.txt").write_text(blocks("A first test", "text")[0])
    (project / "bridge-types.ts").write_text(blocks("Bridge types", "ts")[0])
    (project / "fragment.ts").write_text('import type { Client } from "todaysim";\n\n'
                                         "export async function fragment(todaysim: Client): Promise<unknown> {\n"
                                         + blocks("Streams, paging, traces", "ts")[0] + "  return [rest, verdict];\n}\n")


def test_generated_types_and_version_match_their_sources() -> None:
    done = subprocess.run([sys.executable, os.path.join(PACKAGE, "tools", "generate_types.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert len(re.findall(r"matches its sources", output)) == 3, f"api.ts, bridge.ts and package.json each checked:\n{output}"


def test_the_package_and_its_tests_type_check_strictly(tools: Tools) -> None:
    tools.tsc_run("--noEmit", "--strict", "--skipLibCheck", "-p", os.path.join(PACKAGE, "tsconfig.test.json"), cwd=PACKAGE)


def test_the_node_tests_pass_against_the_binary(tools: Tools, build: Path, binary: str) -> None:
    tests = sorted(str(path) for path in (build / "test").glob("*.test.js"))
    output = tools.run("--test", *tests, cwd=tools.work, timeout=600, TODAYSIM_BIN=binary, TODAYSIM_PYTHON=sys.executable,
                       TODAYSIM_TS_PACKAGE=PACKAGE, TODAYSIM_PLAYWRIGHT_CORE=tools.playwright_core,
                       TODAYSIM_BROWSER=tools.browser)
    counts = tally(output)
    assert counts.get("fail") == 0 and counts.get("pass") == counts.get("tests", -1) >= NODE_TESTS, \
        f"Node's tally {counts}, at least {NODE_TESTS} tests expected:\n{output[-3000:]}"


def test_npm_pack_ships_the_build_readme_and_package_json_only(tarball: Path) -> None:
    with tarfile.open(tarball) as packed:
        listing = sorted(name.removeprefix("package/") for name in packed.getnames())
    missing = [name for name in SHIPPED if name not in listing]
    assert not missing, f"the tarball lacks {missing}: {listing}"
    extra = [name for name in listing
             if not re.fullmatch(r"package\.json|README\.md|dist/.*\.(js|d\.ts)|dist/bridge-core\.(mjs|d\.mts)", name)]
    assert not extra, f"the tarball holds more than the build, README.md and package.json: {extra}"


@pytest.mark.parametrize("shipped, source", [("dist/virtual-time.js", "Web/virtual-time.js"),
                                             ("dist/page-driver.js", "Web/page-driver.js"),
                                             ("dist/settle-probe.js", "Web/settle-probe.js"),
                                             ("dist/bridge-core.mjs", "Web/bridge-core.mjs")])
def test_the_tarball_ships_the_shared_web_file_byte_for_byte(tarball: Path, tools: Tools, shipped: str, source: str) -> None:
    """The page driver's in-page half is one set of files for the Python package and this one;
    the bridge core is the code /bridge.js wraps for pages."""
    with tarfile.open(tarball) as packed:
        member = packed.extractfile(f"package/{shipped}")
        assert member is not None, f"no {shipped} in the tarball"
        (tools.work / os.path.basename(shipped)).write_bytes(member.read())
    assert filecmp.cmp(tools.work / os.path.basename(shipped), os.path.join(ROOT, source), shallow=False), \
        f"the tarball's {shipped} is not {source} byte for byte"


def test_the_offline_install_is_the_package_alone_at_version(consumer: Path) -> None:
    installed = [name for name in (consumer / "installed.txt").read_text().split("\n") if name != ".package-lock.json"]
    assert installed == ["todaysim"], f"installing the package brought more than itself: {installed}"
    version = json.loads((consumer / "node_modules" / "todaysim" / "package.json").read_text())["version"]
    assert version == VERSION, f"the installed package is version {version}, VERSION says {VERSION}"


def test_the_scratch_project_type_checks_strictly(tools: Tools, consumer: Path) -> None:
    """The README's example and fragment, ts/'s misuses (each an error), the Playwright helper
    against playwright-core's types, and a page's bridge code."""
    tools.tsc_run("--noEmit", "--strict", "--skipLibCheck", "-p", "tsconfig.json", cwd=consumer)


def test_nodes_own_resolution_finds_the_same_declarations(tools: Tools, consumer: Path) -> None:
    """A project on Node's own resolution (package.json "exports")."""
    tools.tsc_run("--noEmit", "--strict", "--skipLibCheck", "--module", "node16", "--moduleResolution", "node16",
                  "--target", "ES2022", "--lib", "ES2022,DOM", "playwright.ts", cwd=consumer)


def test_the_installed_helper_reads_the_shared_tracker(tools: Tools, consumer: Path) -> None:
    tools.run("tracker.mjs", os.path.join(ROOT, "Web", "virtual-time.js"), cwd=consumer)


def test_the_page_bridge_code_compiles_and_each_mistake_fails_tsc(tools: Tools, build: Path, consumer: Path) -> None:
    tests = sorted(str(path) for path in (build / "test" / "consumer").glob("*.test.js"))
    output = tools.run("--test", *tests, cwd=tools.work, TODAYSIM_CONSUMER=str(consumer), TODAYSIM_TSC=tools.tsc)
    counts = tally(output)
    assert counts.get("fail") == 0 and counts.get("pass") == counts.get("tests", -1) >= PAGE_TYPE_TESTS, \
        f"Node's tally {counts}, at least {PAGE_TYPE_TESTS} tests expected:\n{output[-3000:]}"


def test_the_readme_example_prints_what_the_readme_shows(tools: Tools, consumer: Path, binary: str) -> None:
    tools.tsc_run("-p", "tsconfig.json", cwd=consumer)
    done = subprocess.run([tools.node, "out/example.js"], cwd=consumer, env={**tools.env, "TODAYSIM_BIN": binary},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the README's example exited {done.returncode}:\n{done.stdout}{done.stderr}"
    expected = (consumer / "expected.txt").read_text()
    assert done.stdout == expected, \
        f"typescript/README.md's example printed other than the README shows:\nREADME:\n{expected}\nprinted:\n{done.stdout}"
