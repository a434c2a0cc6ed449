"""What an iOS team's package sees of todaysim (issue 44, items 2 and 5): `examples/ios-app`, a
separate SwiftPM package that depends on this clone by path, built and tested in a copy outside
the clone with every Swift snippet of docs/TRACES.md added to it. Its app declares its own
`PullSpinner`, `JSON`, `Input`, `Rule` and `Session`, which its tests use unqualified beside
`TodayHost`, `TodayHostTesting` and `TodayTraceRecorder`: a public engine name in TodayHost
would make them ambiguous and the build fail. The build must compile nothing of the server: no
object or module of its targets (TodayServer, TodayStore, TodayOpenAPI, TodayWeb, the C
libraries' modules) and neither executable (todaysim, todaysim-bench). What SwiftPM cannot be
kept from doing: it runs the build-tool plugins of every target in the package graph, built or
not (since swift-package-manager's pull request 6776, "Invoke build tool plugins based on
allTargets"), so `EmbedFiles` and its one-file tool `embed-file` are compiled and run for
TodayOpenAPI and TodayWeb, whose outputs are then never compiled. Needs `swift`, no binary."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT

EXAMPLE = Path(ROOT, "examples", "ios-app")
GUIDE = Path(ROOT, "docs", "TRACES.md")
# A Swift snippet of the guide is preceded by the target it compiles in.
SNIPPET = re.compile(r"(?:[ \t]*<!-- compiled: (Sources|Tests) -->\n)?([ \t]*)```swift\n(.*?)\n[ \t]*```", re.S)
# (Relative to the example: its two targets.)
TARGETS = {"Sources": os.path.join("Sources", "TodayApp"), "Tests": os.path.join("Tests", "TodayAppTests")}
# The targets only the server needs (their build folders as SwiftPM names them): nothing of them
# may be compiled for a consumer of the three products.
SERVER_ONLY = ["TodayServer", "TodayStore", "TodayOpenAPI", "TodayWeb", "todaysim", "todaysim_bench",
               "CMicroHTTPD", "CSQLite", "CPostgres"]
# What SwiftPM builds and runs for every package graph that holds the plugin (above).
PLUGIN = {"embed_file-tool.build", "Modules-tool"}


def snippets() -> list[tuple[str, str]]:
    """Each Swift snippet of the guide with the target it compiles in; a snippet without its
    marker fails the test (every snippet is compiled)."""
    found = []
    for match in SNIPPET.finditer(GUIDE.read_text(encoding="utf-8")):
        target, indent, code = match.group(1), match.group(2), match.group(3)
        assert target, f"docs/TRACES.md: a ```swift block without `<!-- compiled: Sources|Tests -->` before it:\n{code[:200]}"
        found.append((target, "\n".join(line[len(indent):] if line.startswith(indent) else line for line in code.splitlines()) + "\n"))
    return found


def test_the_guide_has_its_swift_snippets_marked() -> None:
    found = snippets()
    assert [target for target, _ in found].count("Sources") >= 1 and [target for target, _ in found].count("Tests") >= 3, found


@pytest.fixture(scope="module")
def consumer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example copied beside nothing of the clone, its dependency pointed at the clone, the
    guide's snippets added; then built with its tests and tested. (The copy's folder, the clone's
    folder: neither is called `todaysim`, so `.package(name: "todaysim", path:)` is what finds it.)"""
    if shutil.which("swift") is None:
        pytest.fail("no swift on PATH: the consumer package is built with this machine's Swift toolchain")
    work = tmp_path_factory.mktemp("ios-consumer")
    package = work / "TodayApp"
    shutil.copytree(EXAMPLE, package, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    manifest = package / "Package.swift"
    text = manifest.read_text(encoding="utf-8")
    assert '.package(name: "todaysim", path: "../..")' in text
    manifest.write_text(text.replace('path: "../.."', f"path: {str(Path(ROOT).resolve())!r}".replace("'", '"')), encoding="utf-8")
    for index, (target, code) in enumerate(snippets(), 1):
        (package / TARGETS[target] / f"GuideSnippet{index}.swift").write_text(code, encoding="utf-8")
    scratch = work / "build"
    jobs = os.environ.get("TODAYSIM_BUILD_JOBS")
    common = ["--package-path", str(package), "--scratch-path", str(scratch)] + (["-j", jobs] if jobs else [])
    built = subprocess.run(["swift", "build", "--build-tests", *common], capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, f"the consumer package did not build:\n{built.stdout[-6000:]}\n{built.stderr[-3000:]}"
    tested = subprocess.run(["swift", "test", "--skip-build", *common], capture_output=True, text=True, timeout=900)
    output = tested.stdout + tested.stderr
    assert tested.returncode == 0, f"the consumer package's tests failed:\n{output[-6000:]}"
    return scratch, output


def test_the_apps_tests_and_the_guides_pass(consumer: tuple[Path, str]) -> None:
    _, output = consumer
    for name in ("theAppsOwnTypesAreTheOnlyOnesOfTheirNames", "theVerdictReadsByKindAndRuleId",
                 "aSpinnerThatNeverEndsFailsWithItsRule", "theTodayPageHostConforms"):
        assert re.search(rf"✔ Test {name}\(\) passed", output), f"{name} did not pass:\n{output[-4000:]}"
    assert re.search(r"Test Suite 'TodayPageHostTraceTests' passed.*\n.*Executed 1 test, with 0 failures", output), output[-4000:]


def test_nothing_of_the_server_was_built(consumer: tuple[Path, str]) -> None:
    scratch, _ = consumer
    debug = next(scratch.glob("*/debug"))
    compiled = {path.relative_to(debug).parts[0] for path in debug.rglob("*")
                if path.suffix in (".o", ".swiftmodule", ".pcm") and path.relative_to(debug).parts[0] != "ModuleCache"}
    server = sorted(folder for folder in compiled
                    if folder.removesuffix(".build").removesuffix(".swiftmodule") in SERVER_ONLY)
    assert not server, f"a consumer of the three products compiled what only the server needs: {server}"
    modules = {path.stem for path in (debug / "Modules").glob("*.swiftmodule")}
    assert not modules & set(SERVER_ONLY), f"server modules built: {sorted(modules & set(SERVER_ONLY))}"
    for executable in ("todaysim", "todaysim-bench"):
        assert not (debug / executable).exists(), f"the {executable} executable was built for a consumer"
    assert {"TodayHost.build", "TodayHostTesting.build", "TodayTraceRecorder.build"} <= compiled, \
        f"the three products were not compiled: the check would pass on an empty folder ({sorted(compiled)})"
    assert compiled - PLUGIN <= {"TodayHost.build", "TodayHostTesting.build", "TodayTraceRecorder.build", "Modules", "TodayApp.build",
                                 "TodayAppTests.build", "TodayAppPackageTests.build", "TodayAppPackageDiscoveredTests.build"}, \
        f"compiled beyond the products, the app and the plugin's tool: {sorted(compiled - PLUGIN)}"
