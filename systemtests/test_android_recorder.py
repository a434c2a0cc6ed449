"""The Android host-trace recorder (android/recorder, issue 35 item 2) built and tested here with
Debian's Kotlin compiler (kotlin 1.3.31: kotlinc) and JUnit 4 on the machine's JDK — not with
Gradle, which cannot be fetched here, and not on an Android device. The recorder's source
(src/main/kotlin) compiles on its own, against the Kotlin standard library and the JDK only (an
Android class or org.json would not compile); the tests (src/test/kotlin) against it and JUnit,
then the Java tests (src/test/java: a Java host's calls) with javac --release 8 against both.
Each JUnit class runs on its own and must pass every `@Test` of its file: among them the
checklist's calls played through the recorder and judged by this build's `todaysim verify-host`
(TODAYSIM_BIN): the golden table conforms, each planted host bug is found by its rule (H11, H10).
The Kotlin and Java snippets of the docs compile too, against the recorder and stubs of the
Android members they call (android_stubs/). kotlin, junit4 and a JDK are installed with apt-get
when missing."""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from support import ROOT
from support.tools import install_packages

RECORDER = os.path.join(ROOT, "android", "recorder")
TESTS = os.path.join(RECORDER, "src", "test", "kotlin")
JAVA_TESTS = os.path.join(RECORDER, "src", "test", "java")
ANDROID_STUBS = os.path.join(ROOT, "systemtests", "android_stubs")
DOCS = [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))),
        os.path.join(RECORDER, "README.md")]
NOT_COMPILED = "<!-- not compiled:"


def junit_classes() -> dict[str, int]:
    """Each JUnit class of src/test/kotlin and src/test/java (`class NameTest` in its own file,
    `public class` in Java, named with the file's package) and the number of `@Test`s its file
    holds."""
    found = {}
    for path in sorted([*Path(TESTS).rglob("*Test.kt"), *Path(JAVA_TESTS).rglob("*Test.java")]):
        text = path.read_text(encoding="utf-8")
        package = re.search(r"^package ([\w.]+)", text, re.M)
        if package and re.search(rf"^(public )?class {path.stem}\b", text, re.M):
            found[f"{package.group(1)}.{path.stem}"] = len(re.findall(r"@Test\b", text))
    return found


JUNIT_CLASSES = junit_classes()


@dataclass
class Snippet:
    doc: str  # relative to the repository
    line: int  # of the fence
    text: str

    @property
    def package(self) -> str:
        return "snippets." + re.sub(r"\W", "_", f"{self.doc}_line{self.line}").lower()

    def write(self, folder: Path, extension: str) -> Path:
        """The snippet as a source file in a package of its own (snippets may declare the same
        names), the package line in the fence's place: the compiler's line N is the doc's line
        fence + N - 1. A Java file is named after its public class, if it has one."""
        public = re.search(r"^public (?:final |abstract )*class (\w+)", self.text, re.M)
        path = folder / self.package.replace(".", "/") / f"{public.group(1) if public else 'Snippet'}.{extension}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"package {self.package};\n{self.text}", encoding="utf-8")
        return path


def doc_snippets(language: str) -> list[Snippet]:
    """Each ```{language} block of the docs, but for one whose fence follows a line
    `<!-- not compiled: reason -->`."""
    found = []
    for doc in DOCS:
        lines = Path(doc).read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            if lines[index].strip() == f"```{language}":
                end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
                if not (index > 0 and lines[index - 1].startswith(NOT_COMPILED)):
                    found.append(Snippet(os.path.relpath(doc, ROOT), index + 1, "\n".join(lines[index + 1:end]) + "\n"))
                index = end
            index += 1
    return found


@dataclass
class Kotlin:
    stdlib: str
    junit: str  # JUnit 4's jar and the hamcrest-core its manifest names
    work: Path
    version: str = ""

    def compile(self, *args: str) -> None:
        """kotlinc with the flags both compilations share: -jvm-target 1.8 (bytecode any JDK from 8 on
        runs and Android's D8 takes), -Werror (a warning fails the build, deprecations included, so
        nothing 1.3 already warns about gets in), -no-reflect (an app need not add kotlin-reflect).
        Debian's launcher starts the compiler's JVM with -noverify, which JDK 13 and later warn
        about on every run: that line concerns the compiler's own JVM and is left out."""
        done = subprocess.run(["kotlinc", "-jvm-target", "1.8", "-Werror", "-no-reflect", *args],
                              capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        self.version = self.version or next(iter(re.findall(r"^info: kotlinc-jvm (\S+)", output, re.M)), "")
        shown = "\n".join(line for line in output.splitlines()
                          if "-noverify were deprecated" not in line and not line.startswith("info: kotlinc-jvm"))
        assert done.returncode == 0, f"kotlinc {' '.join(args)} failed ({self.versions()}):\n{shown}"

    def compile_java(self, classpath: str, out: Path, sources: list[str]) -> None:
        """javac --release 8 (the Java an Android app's code may be), every lint, a warning an error."""
        done = subprocess.run(["javac", "--release", "8", "-Xlint:all", "-Werror", "-cp", classpath, "-d", str(out), *sources],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"javac {' '.join(sources)} failed ({self.versions()}):\n{done.stdout}{done.stderr}"

    def versions(self) -> str:
        packaged = {name: subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                                         text=True).stdout for name in ("kotlin", "junit4")}
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
        return f"kotlinc {self.version or '?'} of Debian kotlin {packaged['kotlin'] or '?'}, JUnit {packaged['junit4'] or '4'}, {java}"


@pytest.fixture(scope="module")
def kotlin(tmp_path_factory: pytest.TempPathFactory) -> Kotlin:
    missing = [] if shutil.which("kotlinc") else ["kotlin"]
    missing += [] if os.path.isfile("/usr/share/java/junit4.jar") else ["junit4"]
    missing += [] if shutil.which("java") and shutil.which("javac") else ["default-jdk-headless"]
    install_packages(*missing)
    # The standard library beside the compiler (Debian links /usr/bin/kotlinc into its KOTLIN_HOME).
    home = os.path.dirname(os.path.dirname(os.path.realpath(str(shutil.which("kotlinc")))))
    stdlib = next((jar for jar in (os.path.join(home, "lib", "kotlin-stdlib.jar"), "/usr/share/java/kotlin-stdlib.jar")
                   if os.path.isfile(jar)), "")
    assert stdlib, f"no kotlin-stdlib.jar in {home}/lib nor /usr/share/java"
    junit = ":".join(jar for jar in ("/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar") if os.path.isfile(jar))
    return Kotlin(stdlib, junit, tmp_path_factory.mktemp("android-recorder"))


@pytest.fixture(scope="module")
def recorder_classes(kotlin: Kotlin) -> Path:
    out = kotlin.work / "main"
    kotlin.compile("-version", "-d", str(out), os.path.join(RECORDER, "src", "main", "kotlin"))
    return out


@pytest.fixture(scope="module")
def compiled_tests(kotlin: Kotlin, recorder_classes: Path) -> Path:
    out = kotlin.work / "test"
    kotlin.compile("-cp", f"{recorder_classes}:{kotlin.junit}", "-d", str(out), TESTS)
    java = sorted(str(path) for path in Path(JAVA_TESTS).rglob("*.java"))
    if java:
        kotlin.compile_java(f"{recorder_classes}:{out}:{kotlin.stdlib}:{kotlin.junit}", out, java)
    return out


def test_the_recorder_compiles_on_the_standard_library_and_the_jdk_alone(recorder_classes: Path) -> None:
    assert (recorder_classes / "dev" / "todaysim" / "recorder" / "TodayPageTraceRecorder.class").is_file(), \
        f"no TodayPageTraceRecorder.class in {sorted(str(p) for p in recorder_classes.rglob('*.class'))}"


def test_the_docs_kotlin_and_java_snippets_compile(kotlin: Kotlin, recorder_classes: Path) -> None:
    """Every ```kotlin block of the docs by kotlinc, every ```java block by javac, as the tests
    are, against the recorder, JUnit and the Android stubs (a block after `<!-- not compiled:
    reason -->` is left out: a Gradle script)."""
    kotlin_snippets, java_snippets = doc_snippets("kotlin"), doc_snippets("java")
    assert kotlin_snippets and java_snippets, f"no snippets found in {DOCS}"
    where = "\n".join(f"{snippet.package}: {snippet.doc}, the block at line {snippet.line}"
                      for snippet in kotlin_snippets + java_snippets)
    sources = kotlin.work / "snippets"
    out = kotlin.work / "snippets-classes"
    stubs = sorted(str(path) for path in Path(ANDROID_STUBS).rglob("*.java"))
    for snippet in kotlin_snippets:
        snippet.write(sources / "kotlin", "kt")
    try:
        # kotlinc reads the stubs' Java sources to resolve the snippets' calls; javac compiles them.
        kotlin.compile("-cp", f"{recorder_classes}:{kotlin.junit}", "-d", str(out), str(sources / "kotlin"), *stubs)
        kotlin.compile_java(f"{recorder_classes}:{kotlin.stdlib}:{kotlin.junit}", out,
                            [str(snippet.write(sources / "java", "java")) for snippet in java_snippets] + stubs)
    except AssertionError as failed:
        raise AssertionError(f"{failed}\nthe snippets:\n{where}") from None


def test_the_tests_compile_and_every_test_class_is_run_here(compiled_tests: Path) -> None:
    compiled = sorted(str(path.relative_to(compiled_tests).with_suffix("")).replace("/", ".")
                      for path in compiled_tests.rglob("*Test.class") if "$" not in path.name)
    assert compiled == sorted(JUNIT_CLASSES), f"compiled test classes {compiled}, run here {sorted(JUNIT_CLASSES)}"
    assert all(JUNIT_CLASSES.values()), f"a test class without a @Test: {JUNIT_CLASSES}"


@pytest.mark.parametrize("junit_class", sorted(JUNIT_CLASSES))
def test_the_junit_class_passes_every_test(junit_class: str, kotlin: Kotlin, recorder_classes: Path, compiled_tests: Path,
                                           binary: str) -> None:
    scratch = kotlin.work / "tmp"
    scratch.mkdir(exist_ok=True)
    done = subprocess.run(["java", f"-Djava.io.tmpdir={scratch}", "-cp",
                           f"{recorder_classes}:{compiled_tests}:{kotlin.stdlib}:{kotlin.junit}",
                           "org.junit.runner.JUnitCore", junit_class],
                          env={**os.environ, "TODAYSIM_BIN": binary}, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    expected = JUNIT_CLASSES[junit_class]
    assert done.returncode == 0 and f"OK ({expected} test{'s' if expected != 1 else ''})" in output, \
        f"{junit_class}: {expected} tests expected to pass ({kotlin.versions()}; verify-host: {binary}):\n{output}"


FAKE_HOSTS = os.path.join(ROOT, "systemtests", "fakehosts")


@pytest.fixture(scope="module")
def recorded_pair(kotlin: Kotlin, recorder_classes: Path) -> Callable[[int], tuple[Path, Path]]:
    """One scenario recorded by a fake iOS host through the real Swift recorder (swiftc) and by a
    fake Android host through the real Kotlin recorder (javac): `recorded_pair(threshold)` gives
    the two files, the Android host revalidating after `threshold` ms away."""
    if shutil.which("swiftc") is None:
        pytest.fail("no swiftc on PATH: the fake iOS host is built with this machine's Swift toolchain")
    ios_host = kotlin.work / "ios-host"
    built = subprocess.run(["swiftc", "-o", str(ios_host), os.path.join(ROOT, "Recorder", "TodayPageTraceRecorder.swift"),
                            os.path.join(FAKE_HOSTS, "ios", "main.swift")], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, f"swiftc failed:\n{built.stdout}{built.stderr}"
    android = kotlin.work / "fake-android-host"
    kotlin.compile_java(f"{recorder_classes}:{kotlin.stdlib}", android, [os.path.join(FAKE_HOSTS, "FakeAndroidHost.java")])
    count = iter(range(1_000))

    def record(android_threshold_ms: int) -> tuple[Path, Path]:
        number = next(count)
        ios, droid = kotlin.work / f"ios-{number}.jsonl", kotlin.work / f"android-{number}.jsonl"
        ran = subprocess.run([str(ios_host), str(ios), "5000"], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"the fake iOS host failed:\n{ran.stderr}"
        ran = subprocess.run(["java", "-cp", f"{recorder_classes}:{android}:{kotlin.stdlib}", "FakeAndroidHost", str(droid),
                              str(android_threshold_ms)], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"the fake Android host failed:\n{ran.stderr}"
        return ios, droid
    return record


def compare(binary: str, a: Path, b: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([binary, "compare-traces", str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), f"compare-traces exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.returncode, json.loads(done.stdout)


def test_one_scenario_recorded_on_ios_and_android_is_identical(recorded_pair: Callable[[int], tuple[Path, Path]],
                                                               binary: str) -> None:
    """Issue 44, item 6: the two recorders, each in its platform's host, record the same
    scenario; their host-minted ids differ (random UUIDs), and the comparison binds them."""
    ios, android = recorded_pair(5_000)
    assert ios.read_text().splitlines()[-1] == '{"atMs":10000,"kind":"end"}' == android.read_text().splitlines()[-1]
    code, comparison = compare(binary, ios, android)
    assert code == 0 and comparison["identical"] is True, json.dumps(comparison, indent=1)[:3000]
    assert comparison["a"]["conforms"] and comparison["b"]["conforms"], "each conforms on its own"
    assert comparison["compared"] == {"emit": 5, "navigation": 1, "pull": 2, "overlay": 1}, comparison["compared"]


def test_androids_return_after_4s_is_an_h15_difference_on_its_side(recorded_pair: Callable[[int], tuple[Path, Path]],
                                                                    binary: str) -> None:
    """The planted platform difference: the Android host revalidates after 4.5 s away (its
    threshold 4 s, the rules' 5 s): the one difference, named H15, on the Android side."""
    ios, android = recorded_pair(4_000)
    code, comparison = compare(binary, ios, android)
    assert code == 1 and comparison["identical"] is False
    found = [(d["problem"], d["kind"], d["type"], d["rule"], d.get("side"), d["b"]["atMs"]) for d in comparison["differences"]]
    assert found == [("onlyB", "emit", "todayPage.refreshRequested", "H15", "b", 5500)], json.dumps(comparison["differences"], indent=1)
    assert comparison["a"]["conforms"] and not comparison["b"]["conforms"]
